// Rolling windows up into per-GPU, per-job or fleet figures.
//
// Add the windows of one GPU to get that GPU's summary; add the windows of
// many GPUs to get their overall summary (every GPU-second weighs the same).
//
//   seconds        GPU-seconds with a valid OFU (tensor activity and a clock)
//   ofu            time-weighted mean OFU over those seconds
//   active_ofu     the same over busy windows only (see WindowOptions)
//   p10/p50/p90    percentiles of window OFU, every window weighing the same
//   idle_fraction  idle share of the seconds that have tensor data
//   tensor_active  time-weighted mean over the seconds that have tensor data
//   sm_clock_mhz   mean of all clock readings; min/max over all readings
//
// Absent inputs give absent outputs: with no valid window, ofu is absent.
// Thread-safety: one Summarizer per thread.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ofu/core/windows.h"

namespace ofu {

struct Summary {
  double seconds = 0;
  std::optional<double> ofu;
  double busy_seconds = 0;
  std::optional<double> active_ofu;
  std::optional<double> p10, p50, p90;
  double tensor_seconds = 0;
  std::optional<double> tensor_active;
  std::optional<double> idle_fraction;
  std::optional<double> sm_clock_mhz;
  std::optional<double> sm_clock_min_mhz;
  std::optional<double> sm_clock_max_mhz;
  std::optional<double> power_w;
  std::optional<std::uint64_t> clock_event_reasons;
  int windows = 0;                // windows with a valid OFU
  int windows_without_clock = 0;  // tensor data but no clock reading
  int windows_without_tensor = 0; // clock readings but no tensor data
};

class Summarizer {
 public:
  void Add(const OfuWindow& window);
  Summary Finish() const;

 private:
  double ofu_weighted_ = 0, seconds_ = 0;
  double active_weighted_ = 0, busy_seconds_ = 0;
  double tensor_weighted_ = 0, tensor_seconds_ = 0, idle_seconds_ = 0;
  double clock_sum_ = 0;
  int clock_readings_ = 0;
  std::optional<double> clock_min_, clock_max_;
  double power_sum_ = 0;
  int power_windows_ = 0;
  std::optional<std::uint64_t> reasons_;
  std::vector<double> window_ofus_;
  int without_clock_ = 0, without_tensor_ = 0;
};

}  // namespace ofu
