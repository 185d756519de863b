// The non-tensor (CUDA-core) FLOP bound, free of any I/O.
//
// OFU sees only the tensor pipes. Work on the CUDA cores (FP32 SIMT GEMMs
// such as `sgemm` or `..._ffma` kernels, softmax, norms, the optimizer) shows
// in the FP64/FP32/FP16 pipe activities instead (DCGM 1006/1007/1008, NVML
// GPM 11/12/13). For a window with mean SM clock f_SM:
//
//     bound_p = A_p * SMs * lanes_p * 2 * f_SM        (FLOP/s, one pipe)
//     bound   = sum of bound_p over the pipes with an activity and a lane count
//     share   = sum of bound_p / peak_p               (peak_p: the vendor's quoted peak)
//
// e.g. H100 SXM5, FP32 pipe 0.6 at 1755 MHz: 0.6 * 132 * 128 * 2 * 1.755e9
// = 35.58 TFLOP/s; share 35.58 / 66.9 = 0.532.
//
// It is an upper bound, not a FLOP count: pipe activity counts the cycles in
// which the pipe issued an instruction, whatever it computed (an add is 1
// FLOP, not the 2 of an FMA; a predicated-off lane computes nothing; FP32
// pipe instructions include conversions and moves). `share` measures each
// pipe against its own peak and adds them up, so a GPU that saturates one
// pipe reads 1 at the quoted clock; it is not clamped.
//
// Absent, never 0: no pipe activity gives no figures; a bound needs a clock
// and at least one pipe with both an activity and a lane count.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "ofu/core/gpu_spec.h"
#include "ofu/core/sample.h"

namespace ofu {

// The CUDA-core pipes, in the order every table, CSV and JSON object lists
// them (the order of CounterField). A pipe is added here, in the table
// CudaCorePipes() returns, in the sample's fields and in the output-counter
// table (output_counters.h); everything else loops over the table.
enum class CudaCorePipe : std::uint8_t { kFp64, kFp32, kFp16 };
inline constexpr std::size_t kCudaCorePipes = 3;

constexpr std::size_t IndexOf(CudaCorePipe pipe) { return static_cast<std::size_t>(pipe); }

struct CudaCorePipeInfo {
  CudaCorePipe pipe;
  // The sample field that carries the pipe's activity. Its name
  // (InfoFor(activity).name, e.g. "fp32_active") is also the figure's JSON
  // key and CSV column everywhere a report shows it.
  CounterField activity;
  std::string_view name;   // the precision it computes: "fp16", as GPU specs and advice name it
  std::string_view label;  // for people and column heads: "FP16"
  // The pipe's lanes and peak in a GPU spec (gpu_spec.h).
  std::optional<PipeSpec> NonTensorSpec::*spec;

  std::string_view key() const { return InfoFor(activity).name; }
};

// Every pipe, in CudaCorePipe order.
std::span<const CudaCorePipeInfo> CudaCorePipes();
const CudaCorePipeInfo& InfoFor(CudaCorePipe pipe);

// One CUDA-core pipe of a device: its lanes and the vendor's peak.
struct PipeRate {
  int lanes_per_sm = 0;
  double peak_tflops = 0;  // for the whole GPU; 0 when unknown (then no share)
};

// What the bound needs to know about a device. `sms` is the SMs the
// activities are averaged over: the GPU's, or a MIG instance's.
struct NonTensorScale {
  double sms = 0;
  // The device's fraction of the GPU the peaks are quoted for (SMs / GPU SMs).
  double share_of_gpu = 1;
  std::array<std::optional<PipeRate>, kCudaCorePipes> rates{};  // by CudaCorePipe
};

// The per-window and summary figures; every field absent when unknown.
struct NonTensorFigures {
  std::array<std::optional<double>, kCudaCorePipes> active{};  // 0..1, by CudaCorePipe
  std::optional<double> flops_upper_bound_tflops;              // TFLOP/s
  std::optional<double> share_of_peak;                         // see above; may pass 1

  std::optional<double>& operator[](CudaCorePipe pipe) { return active[IndexOf(pipe)]; }
  const std::optional<double>& operator[](CudaCorePipe pipe) const { return active[IndexOf(pipe)]; }
  bool any_activity() const;
};

// The busiest pipe of `figures` at or above `threshold` (0..1), absent when
// none is. Ties go to FP32, then FP16, then FP64: the pipe a model left in
// fp32 keeps busy, and the one the advice for it is about.
std::optional<CudaCorePipe> BusiestPipe(const NonTensorFigures& figures, double threshold = 0);

// The scale of a device of `spec` with `sms` SMs (spec.sm_count for a whole
// GPU, fewer for a MIG instance). Absent when the spec lists no pipes.
std::optional<NonTensorScale> NonTensorScaleOf(const GpuSpec& spec, double sms);

// Fills the bound and share of `figures` from its activities and the mean SM
// clock; leaves them absent where the rule above says so.
void CompleteNonTensor(NonTensorFigures& figures, std::optional<double> sm_clock_mhz,
                       const std::optional<NonTensorScale>& scale);

}  // namespace ofu
