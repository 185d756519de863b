#!/usr/bin/env bash
# `make bench`: every benchmark, then the side-by-side reader comparison with
# promtool. Record what it prints in docs/BENCHMARKS.md with machine and date.
set -euo pipefail
build=${1:-build}
echo "== machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC')"
for bench in "$build"/bench/bench_*; do
  echo "== $(basename "$bench")"
  "$bench" --benchmark_min_time=1
done
echo "== the agent's predicted CPU on the H100 from driver calls x per-call cost (bench/nvml_cost_model.cc)"
"$build"/bench/nvml_cost_model
echo "== reader vs promtool check metrics"
bash bench/compare_promtool.sh "$build"
echo "== fleet scale: Prometheus and the store (bench/fleet_scale.sh)"
bash bench/fleet_scale.sh "$build"
echo "== the store's report at scale: 10^6 to 10^8 rows (bench/store_report.sh)"
bash bench/store_report.sh "$build"
