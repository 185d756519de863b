// One GEMM case on cuBLASLt: operands, the heuristic's algorithm, its tiling
// attributes, and the timed loop.
//
// Create() allocates A, B and D (column-major, leading dimensions rounded up
// to 32 elements so that every precision meets cuBLASLt's alignment; the
// shape itself is unchanged), fills them (fill.h), and asks the heuristic
// for its first algorithm with a 32 MiB workspace. Precisions:
//   fp16, bf16   A, B, D in that type, fp32 accumulation
//   tf32         fp32 operands, CUBLAS_COMPUTE_32F_FAST_TF32
//   fp32         fp32 operands, CUBLAS_COMPUTE_32F: CUDA-core (SIMT) GEMM
//   fp8          E4M3 A and B, bf16 D, unit scales; layout tn
//   fp4          NVFP4: E2M1 A and B with UE4M3 scales per 16 elements
//                (all 1.0), bf16 D; layout tn; Blackwell only
// Errors: kUnavailable naming the CUDA or cuBLASLt call (out of memory, no
// algorithm for this shape and precision, ...); the harness records the
// case as skipped with that message.
//
// Thread-safety: one thread; the object owns its device memory and
// descriptors and releases them when it dies.
#pragma once

#include <cstdint>
#include <memory>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "ofu/core/result.h"
#include "ofu/gemm/case_result.h"
#include "ofu/gemm/sweep.h"

namespace ofu::gpu {

inline constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

class LtGemm {
 public:
  static Result<std::unique_ptr<LtGemm>> Create(const gemm::GemmCase& gemm_case, cublasLtHandle_t handle,
                                                cudaStream_t stream);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // The algorithm's tile (cuBLASLt's M×N), K-tile and stages (its stages
  // id, "64x3" = K-tile 64, 3 stages; "64xAUTO" leaves stages absent) and
  // cluster. Fields the algorithm leaves undefined or automatic are absent.
  const gemm::Tiling& tiling() const { return tiling_; }
  int split_k() const { return split_k_; }  // 1 when K is not split

  // Enqueues `iterations` matmuls on the stream; returns at once.
  Status Enqueue(int64_t iterations);

 private:
  LtGemm() = default;
  Status Build(const gemm::GemmCase& c);

  cublasLtHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, d_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  void* a_ = nullptr;
  void* b_ = nullptr;
  void* d_ = nullptr;
  void* a_scale_ = nullptr;
  void* b_scale_ = nullptr;
  void* workspace_ = nullptr;
  float alpha_ = 1.0f, beta_ = 0.0f;
  gemm::Tiling tiling_;
  int split_k_ = 1;
};

}  // namespace ofu::gpu
