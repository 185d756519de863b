// From what a GEMM case measured to its result row: true MFU, each OFU
// estimate, the tile-padding correction and the errors.
//
//   true MFU   = 2·M·N·K · iterations / elapsed_s / Peak_precision,
//                over the counter windows' span (below)
//   OFU        = A_tensor · f_SM / f_spec · k_arch       (core/ofu_math.h)
//   corrected  = OFU_raw · U / E                         (kernels/gemm_padding.h)
//   error (pp) = (OFU - MFU) · 100
//
// Peak_precision and f_spec come from the spec database entry of the GPU
// that ran the case. fp32 (SIMT) has no tensor peak there, so its MFU and
// errors are absent: the row shows what tensor activity misses instead.
//
// MFU and OFU cover the same interval. The OFU figures cover the windows'
// span [first window's start, last window's end], which lies inside the
// loop but is shorter than it; the loop's first part (often at a higher
// clock, before the power limit pulls it down) and its last fraction of a
// window lie in no window. So the MFU is taken over that span too: the
// iterations done by time t are interpolated linearly between the loop's
// checkpoints (host timestamps the GPU reached between chunks of the loop,
// on the windows' clock), and MFU = 2·M·N·K · (I(span end) − I(span start))
// / span length / Peak. Without windows with times, or without checkpoints
// that enclose the span, the MFU falls back to the whole loop (CUDA events)
// and the note says so; mfu_span_s is then absent.
//
// Each OFU is the mean over the counter windows of that window's OFU; an
// estimate needs its inputs in every window, else it is absent (a mean over
// some windows would hide a gap). ofu_exact needs every window to be
// exact-cycle.
//
// The padding uses the tile the kernel name gives, completed with the
// algorithm's cluster when the name gives none, else the algorithm's tile;
// shapes are in cuBLAS's orientation, so the tile applies directly.
//
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ofu/core/gpu_spec.h"
#include "ofu/core/result.h"
#include "ofu/gemm/case_result.h"
#include "ofu/gemm/clock_probe.h"
#include "ofu/gemm/sweep.h"
#include "ofu/kernels/gemm_padding.h"
#include "ofu/kernels/kernel_throughput.h"

namespace ofu::gemm {

// One counter window lying wholly inside the steady loop.
struct CounterWindow {
  std::optional<double> tensor_active;          // 0..1, ofu's NVML source
  std::optional<double> source_clock_mhz;       // the f_SM the source used
  bool exact_cycles = false;                    // the source derived both from cycle counters
  std::optional<double> point_clock_mhz;        // one reading at the window's end
  std::optional<double> oversampled_clock_mhz;  // the mean of readings spread over the window
  // When the window began and ended, in seconds on the clock the loop's
  // checkpoints use; absent when not recorded (then MFU covers the whole loop).
  std::optional<double> start_s, end_s;
};

// How far the GPU had got through the steady loop: `iterations` matmuls
// done by `time_s` (seconds, the windows' clock).
struct LoopCheckpoint {
  double time_s = 0;
  int64_t iterations = 0;
};

struct Measurement {
  int64_t iterations = 0;
  double elapsed_s = 0;  // CUDA events around the steady loop
  // In time order, iterations non-decreasing: the loop's start (0), one
  // after each chunk, its end (iterations). Empty: not recorded.
  std::vector<LoopCheckpoint> checkpoints;
  std::vector<CounterWindow> windows;
  // The clock probe's launches (clock_probe.h), in time order: one just
  // before the steady loop and one just after. Empty: not run (no device
  // code, or the probe failed).
  std::vector<ProbeLaunch> probes;
};

struct CaseRun {
  GemmCase gemm_case;
  std::string gpu_model;
  std::string kernel_name;  // empty when CUPTI gave none
  Tiling algorithm_tiling;
  std::optional<double> power_limit_w;
  Measurement measurement;
  std::string note;
};

// The dense peak (TFLOP/s) of `precision` on `spec`; absent when the
// database lists none (fp32 SIMT everywhere, fp8 before Hopper, fp4 before
// Blackwell).
std::optional<double> PeakTflops(const GpuSpec& spec, kernels::Precision precision);

// The padding granularity the correction uses (see the file comment), and
// where it came from: "name", "name+algorithm-cluster" or "algorithm".
// Absent when neither side gives a tile.
struct CorrectionTile {
  kernels::TileShape shape;
  std::string origin;
};
std::optional<CorrectionTile> ChooseCorrectionTile(const Tiling& name, const Tiling& algorithm);

// Errors (kInvalidArgument): iterations or elapsed_s not positive. Unusable
// checkpoints (out of order, not enclosing the windows) are no error: the
// MFU falls back to the whole loop with a note. `throughput` (may be null:
// every kernel counts as native) gives the kernel family's throughput on
// spec's architecture for the corrected OFU (throughput_factor).
Result<CaseResult> EvaluateCase(const CaseRun& run, const GpuSpec& spec,
                                const kernels::KernelThroughputTable* throughput = nullptr);

// A row for a case that did not run (precision not on this GPU, no
// permission for the power limit, cuBLASLt had no algorithm, ...): the
// case's identity and the reason, nothing measured.
CaseResult SkippedCase(const GemmCase& c, std::string gpu_model, std::string reason);

}  // namespace ofu::gemm
