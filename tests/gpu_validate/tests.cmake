# The GPU validation (scripts/gpu-validate, docs/gpu-validation.md) on this
# machine, without a GPU, nvcc or torch:
#   GpuValidate.ScriptSyntax        bash -n and py_compile of every script
#   GpuValidate.ImportGraph         no import cycle among the Python scripts (function-level
#                                   imports included)
#   GpuValidate.PurePython          the arithmetic, joins and summaries on SYNTHETIC inputs
#   GpuValidate.StagesOnNvmlDouble  run-stage.sh A, B, C, K end to end on the NVML double
#   GpuValidate.OfuPerPhaseOnTheH100Run  gpuval.py with-phases + ofu report on the first H100 run
#   GpuValidate.StageK              stage K's ncu CSV parser, FLOPs, rates, family split and
#                                   candidate rows on SYNTHETIC inputs
#   GpuValidate.ExplainTrain        explain_train.py's split on SYNTHETIC inputs, then on the
#                                   committed H100 results (docs/results/2026-11-26-h100-sxm5)
#   GpuValidate.ClockProbeLibrary   libofu-clock-probe.so's span arithmetic through workload.py's
#                                   ctypes wrapper (where nvcc built it; SYNTHETIC records)
# scripts/gpu-validate/build.sh itself is too slow for CI; its figures are in the doc.
add_test(NAME GpuValidate.ScriptSyntax
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu_validate/check_syntax.sh ${PROJECT_SOURCE_DIR}
          ${Python3_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/pycache)
add_test(NAME GpuValidate.ImportGraph
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/gpu_validate/import_graph_test.py)
set_tests_properties(GpuValidate.ImportGraph PROPERTIES
  ENVIRONMENT "PYTHONPYCACHEPREFIX=${CMAKE_CURRENT_BINARY_DIR}/pycache")
add_test(NAME GpuValidate.PurePython
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/gpu_validate/gpuval_test.py)
set_tests_properties(GpuValidate.PurePython PROPERTIES
  ENVIRONMENT "PYTHONPYCACHEPREFIX=${CMAKE_CURRENT_BINARY_DIR}/pycache")
add_test(NAME GpuValidate.StageK
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/gpu_validate/stage_k_test.py)
set_tests_properties(GpuValidate.StageK PROPERTIES
  ENVIRONMENT "PYTHONPYCACHEPREFIX=${CMAKE_CURRENT_BINARY_DIR}/pycache")
add_test(NAME GpuValidate.ExplainTrain
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/gpu_validate/explain_train_test.py)
set_tests_properties(GpuValidate.ExplainTrain PROPERTIES
  ENVIRONMENT "PYTHONPYCACHEPREFIX=${CMAKE_CURRENT_BINARY_DIR}/pycache")
if(TARGET ofu-clock-probe)
  add_test(NAME GpuValidate.ClockProbeLibrary
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/gpu_validate/clock_probe_lib_test.py
            $<TARGET_FILE:ofu-clock-probe>)
  set_tests_properties(GpuValidate.ClockProbeLibrary PROPERTIES
    ENVIRONMENT "PYTHONPYCACHEPREFIX=${CMAKE_CURRENT_BINARY_DIR}/pycache")
endif()
add_test(NAME GpuValidate.OfuPerPhaseOnTheH100Run
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu_validate/with_phases_test.sh ${PROJECT_BINARY_DIR})
set_tests_properties(GpuValidate.OfuPerPhaseOnTheH100Run PROPERTIES
  ENVIRONMENT "PYTHONPYCACHEPREFIX=${CMAKE_CURRENT_BINARY_DIR}/pycache")
add_test(NAME GpuValidate.StagesOnNvmlDouble
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu_validate/dry_run_test.sh ${PROJECT_BINARY_DIR})
set_tests_properties(GpuValidate.StagesOnNvmlDouble PROPERTIES TIMEOUT 420)

# ofu-gpm-probe, Stage A's raw GPM reader, on the NVML double.
ofu_test(gpm_probe_cli_test gpu_validate/gpm_probe_cli_test.cc)
add_dependencies(gpm_probe_cli_test ofu-gpm-probe fake_nvml)
target_compile_definitions(gpm_probe_cli_test PRIVATE
  OFU_GPM_PROBE_BINARY="$<TARGET_FILE:ofu-gpm-probe>"
  OFU_FAKE_NVML_PATH="$<TARGET_SONAME_FILE:fake_nvml>")
