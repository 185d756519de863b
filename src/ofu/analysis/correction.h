// From a kernel trace to what raw OFU cannot see by itself (DESIGN.md §2,
// properties 1, 2 and 5): the tile-quantization correction factor, the
// precision mix of tensor time, the share of GEMM time on CUDA cores, and the
// GEMMs that waste the most tensor time, with advice.
//
// Per GEMM kernel of the trace whose name gives its tile (kernel_name.h),
// whose framework op gives its shape (gemm_problem.h) and whose precision is
// known (from the name, else from the op's input types):
//
//     U = 2·M·N·K·batch          useful FLOPs
//     E = the same, padded       executed FLOPs (gemm_padding.h)
//     tensor time ∝ E / R_p      R_p: the tensor rate of precision p relative
//                                 to bf16 (2 for fp8, ½ for tf32 on Hopper)
//
// Tensor activity counts busy pipe cycles, and a pipe is busy E/R_p long,
// so the factor weighs kernels as the pipes see them:
//
//     factor = Σ U/R_p / Σ E/(R_p·t)      corrected OFU = OFU × factor
//     w_p    = Σ_p E/(R_p·t) / Σ E/(R_p·t)  (share of tensor time in precision p)
//     MFU_ref ≈ corrected OFU × Σ_p w_p · R_p / R_ref
//
// t is the kernel's FLOPs per tensor-active cycle relative to the GPU's own
// kernels (kernels/kernel_throughput.h): 1 for a native kernel; the measured
// figure for a kernel built for an older architecture (an sm75 s1688 kernel
// on an H100: 0.513), which keeps the pipe busy 1/t as long for the same
// work. A pre-native kernel with no measured figure is counted at t = 1 and
// named in a note with its share of tensor time. The factor splits exactly
// into padding_factor (Σ U/R_p / Σ E/R_p) × throughput_factor
// (Σ E/R_p / Σ E/(R_p·t)).
//
// R_p comes from the GPU's spec (flops_per_clock_per_sm relative to bf16)
// when the caller names one that lists p, else from the generic ratios
// fp16 = bf16 = 1, tf32 = ½, fp8 = int8 = 2, fp4 = 4 (with a note).
//
// Kernels left out of the factor are counted by reason (name not read, no
// shapes, precision unknown, ...), so coverage is always visible; kernels on
// CUDA cores (SIMT GEMMs) are reported as their own share, never folded in.
//
// Thread-safety: pure function of its inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/gpu_spec.h"
#include "ofu/core/result.h"
#include "ofu/formats/kernel_trace.h"
#include "ofu/kernels/gemm_padding.h"
#include "ofu/kernels/gemm_problem.h"
#include "ofu/kernels/kernel_name.h"
#include "ofu/kernels/kernel_throughput.h"

namespace ofu::analysis {

struct CorrectionOptions {
  kernels::TileOrientation orientation = kernels::TileOrientation::kSwapped;
  const GpuSpec* gpu = nullptr;  // tensor rates per precision; null: generic ratios
  // Kernel-family throughput on the GPU's architecture; null (or no gpu):
  // every kernel counts as native and no pre-native finding is made.
  const kernels::KernelThroughputTable* throughput = nullptr;
  kernels::Precision reference_precision = kernels::Precision::kBf16;
  size_t max_wasteful = 10;  // rows of the advice table
};

struct PrecisionShare {
  kernels::Precision precision = kernels::Precision::kBf16;
  double tensor_time_share = 0;  // w_p
  double relative_rate = 0;      // R_p (bf16 = 1)
};

// One GEMM (kernel name, op, shape, precision) and how much tensor time its
// padding wastes.
// What names a GEMM in every list of GEMMs (the correction's table and
// JSON, the HTML report's findings): its kernel, the op that launched it, its
// shape and precision, how often it ran and its share of tensor time.
struct GemmIdentity {
  std::string kernel_name;
  std::string op_name;
  kernels::GemmProblem problem;  // framework orientation
  kernels::Precision precision = kernels::Precision::kBf16;
  int64_t launches = 0;
  double tensor_time_share = 0;  // its E/R_p over the trace's Σ E/R_p (pre-native: at its t)
};

struct WastefulGemm : GemmIdentity {
  kernels::PaddedGemm padded;  // kernel orientation
  double wasted_share = 0;     // its (E − U)/R_p over the trace's Σ E/R_p
  std::string advice;          // for a person: which dimension, what multiple
};

// A GEMM that ran on a kernel built for an older architecture than the
// GPU's (cuBLAS's choice for unaligned or small shapes), what it cost and
// what to change.
struct PreNativeGemm : GemmIdentity {
  std::string family;  // "sm75 s1688 bf16"
  int kernel_sm = 0, native_sm = 0;
  std::optional<double> relative_throughput;  // the measured t; absent: nobody measured this family here
  std::string throughput_source;              // where t comes from (the table's measured_on and source)
  // Tensor time a native kernel would not spend, over the trace's: its
  // share × (1 − t). Absent without a measured t.
  std::optional<double> lost_share;
  // The dimensions (framework M, N, K) that are not multiples of
  // kernels::NativeAlignment(precision): "K = 8191". Empty when all are,
  // and then alignment is not the cause.
  std::vector<std::string> unaligned;
  std::string advice;  // for a person: cause, cost, what to change
};

// Why a kernel of a GEMM op, or a GEMM-named kernel, is not in the factor.
struct LeftOut {
  std::string reason;
  int64_t kernels = 0;
  double time_us = 0;
  std::string example;  // one kernel name, and the detail for it
};

// GEMM kernel time in one precision, as the kernels' names give it.
struct PrecisionTime {
  std::optional<kernels::Precision> precision;  // absent: the name does not give it
  double time_us = 0;
  double gemm_time_share = 0;  // time_us / Coverage::gemm_time_us
};

struct Coverage {
  int64_t kernels = 0;  // every kernel of the trace
  double kernel_time_us = 0;
  int64_t gemm_kernels = 0;  // named as a GEMM (kernels::ClassifyKernelName), or launched by a GEMM op
  double gemm_time_us = 0;
  int64_t corrected_kernels = 0;  // in the factor
  double corrected_time_us = 0;
  int64_t simt_kernels = 0;  // GEMMs the name says run on CUDA cores, read in full or not
  double simt_time_us = 0;
  std::vector<LeftOut> left_out;  // the rest of gemm_kernels, by reason
  // Every GEMM kernel's time by the precision its name gives, corrected or
  // not, largest first (precision_mix weighs only the corrected kernels).
  std::vector<PrecisionTime> gemm_time_by_precision;
  // Block-scaled GEMMs (MX, NVFP4, blockwise fp8; KernelInfo::block_scaled)
  // with no shape in the trace, as when a custom op launches them: counted
  // in gemm_kernels, left out of the factor and the prediction, and named
  // in a note with their share of GEMM time.
  int64_t block_scaled_without_shape_kernels = 0;
  double block_scaled_without_shape_time_us = 0;
  // Kernels that are GEMMs only because a GEMM op launched them: their names
  // are no family ofu reads and mark no helper (KernelClass::helper), so tile
  // and precision are not known (Marlin-like libraries ofu has no row for,
  // generated kernels). Counted in gemm_kernels, left out of the factor, and
  // named in a note with their share of GEMM time.
  int64_t gemm_by_op_kernels = 0;
  double gemm_by_op_time_us = 0;
};

struct CorrectionReport {
  std::optional<double> factor;               // absent when no kernel could be corrected
  std::optional<double> padding_factor;       // Σ U/R_p / Σ E/R_p: tiles and clusters alone
  std::optional<double> throughput_factor;    // Σ E/R_p / Σ E/(R_p·t): pre-native kernels alone
  std::vector<PrecisionShare> precision_mix;  // largest share first
  std::optional<double> mfu_scale;            // Σ w_p · R_p / R_ref
  kernels::Precision reference_precision = kernels::Precision::kBf16;
  std::optional<double> non_tensor_gemm_share;  // simt_time_us / gemm_time_us
  Coverage coverage;
  std::vector<WastefulGemm> wasteful;     // worst first, only those that waste
  std::vector<PreNativeGemm> pre_native;  // largest tensor time first
  std::vector<std::string> notes;
};

// The left-out reason of a kernel that is a GEMM only because a GEMM op
// launched it (Coverage::gemm_by_op_kernels); its detail names the op.
inline constexpr std::string_view kGemmByOpReason =
    "a GEMM by the op that launched it: tile and precision not readable from the name";

CorrectionReport ComputeCorrection(const formats::KernelTrace& trace, const CorrectionOptions& options);

// OK for a trace of an NVIDIA GPU (or one that does not say). For a trace the
// reader found recorded on another vendor's device (KernelTrace::other_platform:
// AMD ROCm, Meta MTIA): kNoData naming the device and what in the file says
// so, since OFU here is defined for NVIDIA tensor cores; kInvalidArgument when
// the user gave --gpu-model (`gpu_model_flag`, empty when not given), which an
// NVIDIA model cannot answer.
Status RequireNvidiaTrace(const formats::KernelTrace& trace, std::string_view trace_name,
                          std::string_view gpu_model_flag);

// The tensor FLOP rate of a precision relative to bf16 where a GPU's spec
// does not list it: what Ampere, Hopper and Blackwell have in common (fp16 =
// bf16 = 1, tf32 = 1/2, fp8 = int8 = 2, fp4 = 4). Absent for fp32, which does
// not run on the tensor pipes.
std::optional<double> GenericRelativeRate(kernels::Precision precision);

}  // namespace ofu::analysis
