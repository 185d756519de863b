// Advice when the math misses the tensor cores.
//
// The most common efficiency bug in the field: FP32 GEMMs on the CUDA cores
// because TF32 or bf16 was not enabled (`torch.backends.cuda.matmul.allow_tf32
// = False`, a model left in fp32). It shows as OFU near 0 on a GPU whose
// FP32 (or FP16, FP64) pipe is busy. For each GPU of a report whose OFU is
// below kLowOfu while one of its CUDA-core pipes is at least kBusyPipe active,
// one CudaCoreAdvice says so, with the evidence and the most a fix can gain:
// the tensor peak over the CUDA-core peak at that precision (H100 SXM5, FP32:
// TF32 494.7 / 66.9 = 7.4x, bf16 989.4 / 66.9 = 14.8x). A gain is absent when
// the spec lacks either peak. Only the busiest pipe of a GPU is named.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ofu/analysis/correction.h"
#include "ofu/analysis/report.h"

namespace ofu::analysis {

inline constexpr double kLowOfu = 0.10;    // OFU below this is "low"
inline constexpr double kBusyPipe = 0.30;  // a pipe at least this active is "busy"

struct CudaCoreAdvice {
  std::string gpu;   // the GPU's key
  std::string pipe;  // "fp32", "fp16" or "fp64"
  double pipe_active = 0;
  double ofu = 0;
  // Tensor peak / CUDA-core peak of the pipe's precision; absent when unknown.
  std::optional<double> gain_upper_bound;
  std::string tensor_precision;                 // the precision gain_upper_bound uses ("tf32", ...)
  std::optional<double> bf16_gain_upper_bound;  // FP32 pipe only: with bf16 autocast
  std::string text;                             // for people: what, the evidence, the fix, the gain
};

// Advice for one GPU's summary; absent when OFU is not low or no pipe is busy.
std::optional<CudaCoreAdvice> AdviseCudaCores(const std::string& gpu, const GpuSpec* spec, const Summary& summary);

// Advice for every GPU of the report, in report order.
std::vector<CudaCoreAdvice> AdviseCudaCores(const Report& report);

// Whether `spec`'s tensor cores take TF32: false on Volta and Turing, whose
// tensor cores take FP16 only (data/gpu_specs.json lists no tf32 for them),
// so FP32 math reaches them only through fp16 autocast.
bool HasTf32(const GpuSpec& spec);

// Advice for a kernel trace whose GEMMs ran on the CUDA cores: SIMT GEMM
// kernels while no tensor-core GEMM could be corrected, or at least half the
// GEMM time on CUDA cores. Recording shapes cannot help such a trace (ofu
// needs shapes only to pad tensor-core tiles); a precision the GPU's tensor
// cores take can: TF32 or bf16/fp16 autocast where the GPU has TF32, fp16
// autocast on V100/T4-class GPUs. `gpu` null when the trace's GPU is not
// known. Absent when the trace's GEMMs are mostly on tensor cores.
std::optional<std::string> AdviseSimtGemms(const CorrectionReport& report, const GpuSpec* gpu);

}  // namespace ofu::analysis
