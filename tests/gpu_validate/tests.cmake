# ofu-gpm-probe, Stage A's raw GPM reader, on the NVML double.
ofu_test(gpm_probe_cli_test gpu_validate/gpm_probe_cli_test.cc)
add_dependencies(gpm_probe_cli_test ofu-gpm-probe fake_nvml)
target_compile_definitions(gpm_probe_cli_test PRIVATE
  OFU_GPM_PROBE_BINARY="$<TARGET_FILE:ofu-gpm-probe>"
  OFU_FAKE_NVML_PATH="$<TARGET_SONAME_FILE:fake_nvml>")
