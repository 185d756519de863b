// The counter rule: what one GPU window adds to the cumulative counters that
// every sink keeps. The agent's exposition (metrics_state.h, the
// ofu_*_seconds_total counters of docs/prometheus.md §1) and the history
// store (history_store.h, the rows of docs/agent.md) both take a window's
// increments from CountersOfWindow, so the two cannot drift apart.
//
// Units: seconds (window_s, and every field of CounterSeconds); activities
// and OFU are ratios in 0..1 (OFU may pass 1).
//
// Valid windows. A window is valid when it has an OFU and tensor activity.
// core/windows.h gives a window an OFU only when it has tensor activity, a
// clock reading and a known model, so in practice "has an OFU" is enough;
// a window built by hand with an OFU but no tensor activity is treated as
// invalid, never as 0 tensor activity measured. Only a valid window advances
// the counters, and it advances them together:
//   observed_s        window_s
//   utilized_s        OFU x window_s
//   tensor_active_s   tensor activity x window_s
//   busy_s            window_s when the window was busy, else 0
//   busy_utilized_s   OFU x window_s when the window was busy, else 0
// An invalid window (no tensor data, no clock, unknown model, GPU down) adds
// 0 to each of these: 0 observed seconds is a fact, not a missing value, and
// it keeps every ratio of sums (utilized / observed, tensor_active / observed)
// from being diluted or inflated by windows without data.
//
// Absent, not 0. The per-pipe counters (HMMA, IMMA, DFMA, and the CUDA-core
// FP64, FP32, FP16 pipes) are absent when the source did not deliver that
// pipe in the window, or the window is invalid. So is the non-tensor bound
// (core/non_tensor.h), which also needs the SKU's CUDA-core lanes:
//   non_tensor_tflop      flops_upper_bound_tflops x window_s (TFLOP)
//   non_tensor_peak_s     share_of_peak x window_s
// The sinks keep "absent" each in their own way, on purpose:
//   - the exposition has no series for a pipe until the first valid window
//     that delivers it, and an absent increment does not advance it;
//   - the store writes NULL in that window's pipe column (and NULL + x = x
//     when it sums rows: AddCounters).
// The five counters above are never absent: the exposition exports them
// from the moment it sees the GPU, at 0, and the store's columns are NOT
// NULL, with flags (kHistoryNoTensor, ...) saying what a row lacked.
//
// Thread-safety: pure functions on plain values.
#pragma once

#include <optional>

#include "ofu/core/windows.h"
#include "ofu/sinks/window_batch.h"

namespace ofu::sinks {

// Counter seconds: one window's increments, or a sum of them.
struct CounterSeconds {
  double observed_s = 0;
  double utilized_s = 0;
  double busy_s = 0;
  double busy_utilized_s = 0;
  double tensor_active_s = 0;
  std::optional<double> hmma_active_s;  // absent: the pipe was not measured
  std::optional<double> imma_active_s;
  std::optional<double> dfma_active_s;
  std::optional<double> fp64_active_s;  // CUDA-core pipes (DCGM 1006-1008)
  std::optional<double> fp32_active_s;
  std::optional<double> fp16_active_s;
  std::optional<double> non_tensor_tflop;   // the bound's TFLOP over the window
  std::optional<double> non_tensor_peak_s;  // share_of_peak x window_s
};

// True when the window advances the counters (see above).
bool AdvancesCounters(const OfuWindow& window);

// The increments of one GPU window of length `window_s`.
CounterSeconds CountersOfWindow(const GpuWindow& gpu, double window_s);

// Adds `part` to `total`. A pipe stays absent while every part of it is
// absent; once present, an absent part adds nothing.
void AddCounters(CounterSeconds& total, const CounterSeconds& part);

}  // namespace ofu::sinks
