// One row of ofu-gemm's output: what a GEMM case ran, how fast, and how far
// each OFU estimate lies from the true MFU.
//
// Units: sizes in elements; times in seconds (time_per_iteration_us in µs);
// throughput in TFLOP/s (10^12 FLOP/s); clocks in MHz; tensor_active,
// MFU, OFU and padding_factor as ratios (0.5 = 50 %, OFU may pass 1); errors
// in percentage points, signed: err_x_pp = (ofu_x - mfu) * 100.
//
// Every measured value is optional: absent means "not measured" (no
// counters, no such precision peak, no kernel record), never 0.
//
// Plain values; no shared state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ofu/kernels/kernel_name.h"

namespace ofu::gemm {

// A kernel's tiling as one side reports it (cuBLASLt's algorithm
// attributes, or the kernel-name parser): the kernel's M, N and K tile,
// pipeline stages and thread-block cluster. Sides say what they know.
struct Tiling {
  std::optional<int> tile_m, tile_n, tile_k, stages, cluster_m, cluster_n;
  friend bool operator==(const Tiling&, const Tiling&) = default;
};

// How the algorithm's tiling compares with the parsed name's, over the
// fields both give: every one equal (kAgree); equal with M and N exchanged
// in tile and cluster (kSwapped: one side's orientation is the other's
// transpose); otherwise kDisagree. kUnknown when they share no tile field.
enum class TileCheck { kUnknown, kAgree, kSwapped, kDisagree };
std::string_view TileCheckName(TileCheck check);  // "unknown", "agree", "swapped", "disagree"
std::optional<TileCheck> TileCheckFromName(std::string_view name);
TileCheck CompareTiling(const Tiling& algorithm, const Tiling& name);

struct CaseResult {
  // The case.
  std::string sweep, group;
  int64_t m = 0, n = 0, k = 0;
  kernels::Precision precision = kernels::Precision::kBf16;
  std::string layout;
  std::optional<double> power_limit_w;  // set for a reduced-limit clock-study run
  std::string gpu;                      // model name as the driver gives it

  // The kernel.
  std::string kernel_name;          // empty: no CUPTI record
  std::string kernel_family;        // the parser's family; empty when unparsed
  std::optional<bool> tensor_core;  // from the name
  Tiling algorithm_tiling;          // cuBLASLt's algorithm attributes
  Tiling name_tiling;               // the kernel-name parser's
  TileCheck tile_check = TileCheck::kUnknown;
  std::string correction_tiling;  // "name", "name+algorithm-cluster", "algorithm" or empty

  // The steady loop, timed with CUDA events.
  int64_t iterations = 0;
  double elapsed_s = 0;
  double time_per_iteration_us = 0;
  // achieved_tflops and mfu cover the counter windows' span, mfu_span_s
  // long, where the loop's checkpoints allow; absent mfu_span_s: the whole
  // loop (elapsed_s).
  double achieved_tflops = 0;
  std::optional<double> peak_tflops;  // the spec database's dense peak of the precision
  std::optional<double> mfu;          // achieved / peak
  std::optional<double> mfu_span_s;

  // Counters over the windows that lie wholly inside the loop.
  int windows = 0;
  std::optional<double> tensor_active;       // ofu's NVML source
  std::optional<double> sm_clock_mhz;        // oversampled by the harness
  std::optional<double> sm_clock_point_mhz;  // one reading per window
  std::optional<double> source_clock_mhz;    // the clock the source used
  // The clock the SMs ran over the steady loop, from a probe kernel before
  // and after it (clock_probe.h): median over the SMs, their min and max;
  // and NVML's oversampled clock over it (sm_clock_mhz / sm_clock_run_mhz).
  std::optional<double> sm_clock_run_mhz, sm_clock_run_min_mhz, sm_clock_run_max_mhz;
  std::optional<double> nvml_over_run;
  std::optional<double> padding_factor;  // U / E
  // The kernel's FLOPs per tensor-active cycle relative to the GPU's own
  // kernels (kernels/kernel_throughput.h): 1 for a native kernel, the
  // measured figure for one built for an older architecture; absent for a
  // pre-native family nobody measured, or without a kernel name.
  std::optional<double> throughput_factor;
  std::optional<double> ofu_raw;          // as ofu reports it live
  std::optional<double> ofu_point;        // with one clock reading per window
  std::optional<double> ofu_oversampled;  // with the harness's oversampled clock
  std::optional<double> ofu_exact;        // from cycle counters, where they exist
  std::optional<double> ofu_run;          // tensor_active x sm_clock_run_mhz / f_spec: the SMs' own clock
  std::optional<double> ofu_corrected;    // ofu_raw * padding_factor * throughput_factor (1 where absent)
  std::optional<double> err_raw_pp, err_point_pp, err_oversampled_pp, err_exact_pp, err_corrected_pp, err_run_pp;

  std::string note;  // why something is absent or the case was skipped
};

}  // namespace ofu::gemm
