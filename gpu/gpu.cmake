# The GEMM characterization harness ofu-gemm (gpu/, docs/gemm-harness.md):
# CUDA C++ with cuBLASLt, built only where nvcc is found. Its host logic
# (src/ofu/gemm) is built and tested everywhere regardless, and so is
# ofu-gpm-probe (below), which needs no CUDA.
#
#   OFU_NVCC  the nvcc to use; found on PATH or in /usr/local/cuda/bin

if(OFU_FUZZ)
  # Fuzz builds use clang with libFuzzer instrumentation on every target;
  # nvcc's host compilation would not take those flags, and the parsers the
  # fuzzers exercise live in ofu_gemm, which is built anyway.
  message(STATUS "ofu-gemm: not built in fuzz builds (OFU_FUZZ)")
  return()
endif()

# ofu-gpm-probe reads NVML GPM raw for the GPU validation
# (docs/gpu-validation.md). It needs no CUDA, so it is built everywhere and
# tested against the NVML double; $ORIGIN first in its RUNPATH, like
# ofu-gemm, so that scripts/gpu-validate/build.sh's folder carries its
# libraries.
add_executable(ofu-gpm-probe ${PROJECT_SOURCE_DIR}/gpu/gpm_probe.cc)
target_link_libraries(ofu-gpm-probe PRIVATE
  ofu_cli ofu_sources ofu_core CLI11::CLI11 fmt::fmt nlohmann_json::nlohmann_json ${CMAKE_DL_LIBS})
target_link_options(ofu-gpm-probe PRIVATE -Wl,--as-needed)
set_target_properties(ofu-gpm-probe PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/gpu
  BUILD_WITH_INSTALL_RPATH ON
  INSTALL_RPATH "\$ORIGIN")

find_program(OFU_NVCC nvcc HINTS /usr/local/cuda/bin ENV CUDA_PATH PATH_SUFFIXES bin)
if(NOT OFU_NVCC)
  message(STATUS "ofu-gemm: nvcc not found (PATH, /usr/local/cuda/bin): gpu/ is not built")
  return()
endif()

set(CMAKE_CUDA_COMPILER ${OFU_NVCC})
set(CMAKE_CUDA_HOST_COMPILER ${CMAKE_CXX_COMPILER})
# Hopper (H100/H200) always; Blackwell (B200/GB200, NVFP4) where nvcc knows
# it. Real code for each, plus PTX of the newest for GPUs after it. Set
# before enable_language so that CMake does not probe for a default.
execute_process(COMMAND ${OFU_NVCC} --list-gpu-arch OUTPUT_VARIABLE OFU_NVCC_ARCHES ERROR_QUIET)
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  if(OFU_NVCC_ARCHES MATCHES "compute_100")
    set(CMAKE_CUDA_ARCHITECTURES 90-real 100)
  else()
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
endif()
enable_language(CUDA)
if(OFU_SANITIZE)
  # Host code is built with ASan and UBSan like the rest of the tree; the
  # one .cu file (a fill kernel) is not, because nvcc does not pass
  # -fsanitize through. At run time under ASan, CUDA needs
  # ASAN_OPTIONS=protect_shadow_gap=0 (the tests set it).
  message(STATUS "ofu-gemm: built with nvcc ${CMAKE_CUDA_COMPILER_VERSION} (host code sanitized, .cu not), architectures ${CMAKE_CUDA_ARCHITECTURES}")
else()
  message(STATUS "ofu-gemm: built with nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
endif()
add_subdirectory(${PROJECT_SOURCE_DIR}/gpu ${PROJECT_BINARY_DIR}/gpu)
