# ofu-gemm's parsers (src/ofu/gemm): sweep files and result CSVs.
ofu_fuzzer(fuzz_gemm_sweep gemm_sweep_fuzz.cc)
target_link_libraries(fuzz_gemm_sweep PRIVATE ofu_gemm)
ofu_fuzzer(fuzz_gemm_csv gemm_csv_fuzz.cc)
target_link_libraries(fuzz_gemm_csv PRIVATE ofu_gemm)
