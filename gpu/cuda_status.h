// CUDA runtime and cuBLASLt return codes as ofu Errors (kUnavailable),
// with the call that failed and the library's own name for the code.
//
// Thread-safety: pure.
#pragma once

#include <string_view>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "ofu/core/result.h"

namespace ofu::gpu {

Status CudaStatus(cudaError_t code, std::string_view call);
Status LtStatus(cublasStatus_t code, std::string_view call);

}  // namespace ofu::gpu
