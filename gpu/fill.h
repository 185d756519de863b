// Filling GEMM operands on the device with finite pseudo-random values.
//
// Operands are not left as zeros: the power a tensor core draws depends on
// the data, and power sets the clock, so zeros would flatter both the clock
// and the measured MFU. Values are uniform in [-1, 1) converted to the
// element type (finite in every type, so no NaN or Inf reaches the GEMM).
//
// Thread-safety: enqueues on the given stream; the caller owns the memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace ofu::gpu {

enum class FillKind {
  kFloat32,  // fp32 and tf32 operands
  kFloat16,
  kBfloat16,
  kFp8E4M3,
  kRandomBytes,  // packed NVFP4 (E2M1) pairs: every bit pattern is finite
  kScaleOne,     // UE4M3 block scales of 1.0 (0x38), one byte each
};

// Fills `count` elements (bytes for kRandomBytes and kScaleOne) at `data`.
cudaError_t FillDevice(void* data, std::size_t count, FillKind kind, std::uint32_t seed, cudaStream_t stream);

}  // namespace ofu::gpu
