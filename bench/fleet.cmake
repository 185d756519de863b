# Fleet analysis: reconciliation of 100k jobs and a regression scan of 10k
# GPU-days at 1 s windows (streamed from a generator). Figures in
# docs/BENCHMARKS.md, "Fleet analysis".
ofu_benchmark(bench_fleet fleet_bench.cc)
target_link_libraries(bench_fleet PRIVATE ofu_render)
