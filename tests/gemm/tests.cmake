# ofu-gemm's host logic (src/ofu/gemm): sweep files, MFU and OFU arithmetic,
# the result CSV and the summary. Built and run everywhere.
ofu_test(gemm_test
  gemm/sweep_test.cc
  gemm/evaluate_test.cc
  gemm/result_csv_test.cc
  gemm/summary_test.cc
  gemm/clock_probe_test.cc)
target_link_libraries(gemm_test PRIVATE ofu_gemm)

# ofu-gemm as a program, where nvcc built it (gpu/gpu.cmake); needs no GPU.
if(TARGET ofu-gemm)
  ofu_test(gemm_cli_test gemm/gemm_cli_test.cc)
  add_dependencies(gemm_cli_test ofu-gemm)
  target_compile_definitions(gemm_cli_test PRIVATE OFU_GEMM_BINARY="$<TARGET_FILE:ofu-gemm>")
endif()
