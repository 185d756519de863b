#include "fill.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace ofu::gpu {
namespace {

// A counter-based hash (lowbias32): the same element gets the same value
// whatever the launch shape, and no random state is needed.
__device__ std::uint32_t Hash(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

__device__ float Uniform(std::size_t i, std::uint32_t seed) {
  const std::uint32_t h = Hash(static_cast<std::uint32_t>(i) ^ Hash(seed ^ static_cast<std::uint32_t>(i >> 32)));
  return static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

__global__ void FillKernel(void* data, std::size_t count, FillKind kind, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    switch (kind) {
      case FillKind::kFloat32: static_cast<float*>(data)[i] = Uniform(i, seed); break;
      case FillKind::kFloat16: static_cast<__half*>(data)[i] = __float2half(Uniform(i, seed)); break;
      case FillKind::kBfloat16: static_cast<__nv_bfloat16*>(data)[i] = __float2bfloat16(Uniform(i, seed)); break;
      case FillKind::kFp8E4M3: static_cast<__nv_fp8_e4m3*>(data)[i] = __nv_fp8_e4m3(Uniform(i, seed)); break;
      case FillKind::kRandomBytes:
        static_cast<std::uint8_t*>(data)[i] = static_cast<std::uint8_t>(Hash(static_cast<std::uint32_t>(i) ^ seed));
        break;
      case FillKind::kScaleOne: static_cast<std::uint8_t*>(data)[i] = 0x38; break;
    }
  }
}

}  // namespace

cudaError_t FillDevice(void* data, std::size_t count, FillKind kind, std::uint32_t seed, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  constexpr unsigned kThreads = 256;
  const std::size_t wanted = (count + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(wanted < 65536 ? wanted : 65536);
  FillKernel<<<blocks, kThreads, 0, stream>>>(data, count, kind, seed);
  return cudaGetLastError();
}

}  // namespace ofu::gpu
