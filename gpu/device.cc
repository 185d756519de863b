#include "device.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "cuda_status.h"

namespace ofu::gpu {
namespace {

// NVML's spelling of a UUID, so the two libraries' devices can be matched.
std::string UuidText(const cudaUUID_t& uuid) {
  std::string hex;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) hex += '-';
    hex += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
  }
  return "GPU-" + hex;
}

}  // namespace

Result<CudaDevice> OpenCudaDevice(int index) {
  int count = 0;
  const cudaError_t counted = cudaGetDeviceCount(&count);
  if (counted != cudaSuccess || count == 0) {
    const std::string why = counted != cudaSuccess ? CudaStatus(counted, "cudaGetDeviceCount").error().message
                                                   : std::string("cudaGetDeviceCount found none");
    return Error::Unavailable(
        "no CUDA device ({}); run the sweep on a machine with an NVIDIA GPU and its driver "
        "(--list and --summary work without one)",
        why);
  }
  if (index < 0 || index >= count) {
    return Error::InvalidArgument("--device {}: this machine has CUDA devices 0 to {}", index, count - 1);
  }
  OFU_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(index), "cudaSetDevice"));
  cudaDeviceProp prop{};
  OFU_RETURN_IF_ERROR(CudaStatus(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties"));
  CudaDevice device;
  device.index = index;
  device.name = prop.name;
  device.uuid = UuidText(prop.uuid);
  device.compute_major = prop.major;
  device.compute_minor = prop.minor;
  device.sm_count = prop.multiProcessorCount;
  device.memory_bytes = prop.totalGlobalMem;
  OFU_RETURN_IF_ERROR(CudaStatus(cudaRuntimeGetVersion(&device.runtime_version), "cudaRuntimeGetVersion"));
  OFU_RETURN_IF_ERROR(CudaStatus(cudaDriverGetVersion(&device.driver_version), "cudaDriverGetVersion"));
  return device;
}

}  // namespace ofu::gpu
