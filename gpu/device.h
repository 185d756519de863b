// The CUDA device ofu-gemm measures.
//
// OpenCudaDevice makes `index` current and describes it. With no driver or
// no GPU it fails with kUnavailable and a message that says so and what
// still works without one (--list, --summary): ofu-gemm then exits 5.
//
// Thread-safety: call from the thread that then runs the GEMMs.
#pragma once

#include <cstddef>
#include <string>

#include "ofu/core/result.h"

namespace ofu::gpu {

struct CudaDevice {
  int index = 0;
  std::string name;  // as CUDA names it, e.g. "NVIDIA H100 80GB HBM3"
  std::string uuid;  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML writes it
  int compute_major = 0, compute_minor = 0;
  int sm_count = 0;
  std::size_t memory_bytes = 0;
  int runtime_version = 0, driver_version = 0;  // CUDA's encoding: 13000 = 13.0
};

Result<CudaDevice> OpenCudaDevice(int index);

}  // namespace ofu::gpu
