#include "cuda_status.h"

#include <fmt/format.h>

namespace ofu::gpu {

Status CudaStatus(cudaError_t code, std::string_view call) {
  if (code == cudaSuccess) return OkStatus();
  return Error::Unavailable("{}: {} ({})", call, cudaGetErrorName(code), cudaGetErrorString(code));
}

Status LtStatus(cublasStatus_t code, std::string_view call) {
  if (code == CUBLAS_STATUS_SUCCESS) return OkStatus();
  return Error::Unavailable("{}: {} ({})", call, cublasLtGetStatusName(code), cublasLtGetStatusString(code));
}

}  // namespace ofu::gpu
