// The GEMM a framework op asked for, read from the op's name and input shapes
// as a profiler records them (PyTorch's `Input Dims`, or the `sizes` of an
// emit_nvtx range).
//
// Orientation: the framework's. C[m, n] = A[m, k] · B[k, n], done `batch`
// times; useful work is 2·m·n·k·batch FLOPs. Which of m and n the GEMM
// kernel sees as its own M is a separate question (gemm_padding.h).
//
// Ops and the inputs they read (PyTorch's ATen signatures):
//   mm(A[m,k], B[k,n])             addmm(bias, A[m,k], B[k,n])
//   bmm(A[b,m,k], B[b,k,n])        baddbmm(bias, A[b,m,k], B[b,k,n])
//   _scaled_mm(A[m,k], B[k,n], …)  linear(X[…,k], W[n,k], [bias]): m = ∏ leading dims of X
//   matmul(A, B): 1-D operands are promoted ([k] → [1,k] first, [k,1] second);
//     B 2-D: m = ∏ leading dims of A; otherwise the leading (batch) dims
//     broadcast and batch is the product of the broadcast shape.
// The "aten::" prefix is optional.
//
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/kernels/kernel_name.h"

namespace ofu::kernels {

struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  friend bool operator==(const GemmProblem&, const GemmProblem&) = default;
};

// Errors (kMalformedInput, message for a person): an op that is not one of
// the above, too few inputs, a rank the op does not take, inner dimensions
// that disagree, a negative size, or sizes whose product passes 2^53.
// A zero-sized GEMM is valid (m, n or k 0: no work).
Result<GemmProblem> GemmProblemFromOp(std::string_view op_name, const std::vector<std::vector<int64_t>>& input_dims);

// The precision of a PyTorch dtype as the profiler names it ("c10::BFloat16",
// "c10::Half", "float", "c10::Float8_e4m3fn", "signed char", ...). Absent
// for types that do not run on tensor cores or that ofu does not know.
std::optional<Precision> PrecisionFromTorchType(std::string_view type);

}  // namespace ofu::kernels
