// Rolling windows up into per-GPU, per-job or fleet figures.
//
// Add the windows of one GPU to get that GPU's summary; add the windows of
// many GPUs to get their overall summary. A window weighs its covered
// seconds times the `weight` it is added with: 1 for a whole GPU, so every
// GPU-second weighs the same, and a MIG instance's share of its GPU
// (gpu_share.h), so that a slice counts as the part of the chip it is.
//
//   seconds        GPU-seconds with a valid OFU (tensor activity and a clock),
//                  weighted: GPU-equivalent seconds
//   ofu            time-weighted mean OFU over those seconds
//   active_ofu     the same over busy windows only (see WindowOptions)
//   p10/p50/p90    percentiles of window OFU, every window weighing the same;
//                  exact up to kExactPercentileWindows windows, then from a
//                  fixed histogram of 2,048 bins of 1/1024 over [0, 2) (OFU
//                  above 2 in the last bin): within half a bin, 0.05
//                  percentage points, of the exact value. Memory per
//                  Summarizer is bounded (32 KiB of exact values, then 8 KiB)
//   idle_fraction  idle share of the (weighted) seconds that have tensor data
//   tensor_active  weighted mean over the seconds that have tensor data
//   sm_clock_mhz   mean of all clock readings; min/max over all readings
//   non_tensor     CUDA-core pipe activities and share_of_peak: weighted means
//                  over the seconds that have each; flops_upper_bound_tflops:
//                  the bound's FLOPs over the weighted seconds that have a
//                  bound, i.e. TFLOP/s per GPU (a MIG instance counting as
//                  its share of one). A window without tensor data weighs its
//                  length instead of its covered seconds.
//   added          each counter added to the counter table (core/sample.h)
//                  that some window has: its weighted mean over the seconds
//                  that have it, weighed as the CUDA-core pipes are. Empty
//                  for the built-in table; sums (WindowTotals) carry none.
//
// Windows can also come already summed (WindowTotals: a history store's
// hourly rollup). They add what their windows would have added, except that
// their OFUs come as histogram counts: a Summarizer given any totals gives
// its percentiles from the histogram, within half a bin of exact.
//
// Absent inputs give absent outputs: with no valid window, ofu is absent.
// Thread-safety: one Summarizer per thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ofu/core/windows.h"

namespace ofu {

struct Summary {
  double seconds = 0;
  std::optional<double> ofu;
  // The OFU at the ends of the run clock's range, time-weighted like ofu;
  // absent when some of its windows carry no range (sums read from a store).
  std::optional<double> ofu_low, ofu_high;
  // The clock OFU used, weighted like ofu by tensor activity (ofu =
  // tensor_active x ofu_clock_mhz / f_spec where every window has both).
  std::optional<double> ofu_clock_mhz;
  // The clock sources of the windows with an OFU (OR of ClockSource bits);
  // 0 when unknown (windows or sums read from a store).
  std::uint8_t clock_sources = 0;
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
  NonTensorFigures non_tensor;
  std::map<std::string, double, std::less<>> added;  // by row name; see above
  int windows = 0;                                   // windows with a valid OFU
  int windows_without_clock = 0;                     // tensor data but no clock reading
  int windows_without_tensor = 0;                    // clock readings but no tensor data
};

// Windows of one device summed before they reach a Summarizer: what
// Summarizer::Add of each at weight 1 would have added. Seconds are covered
// seconds (OfuWindow::covered_s); a window without an OFU adds only to
// seconds_without_ofu (OverallBuilder's seconds left out), its clock and its
// counts.
struct WindowTotals {
  double seconds = 0;      // with an OFU
  double ofu_seconds = 0;  // OFU x those seconds
  double busy_seconds = 0, busy_ofu_seconds = 0;
  double tensor_seconds = 0;         // with tensor data
  double tensor_active_seconds = 0;  // tensor activity x those seconds
  double idle_seconds = 0;           // the part of tensor_seconds not busy
  double seconds_without_ofu = 0;    // covered, or length without tensor data
  double clock_sum_mhz = 0;          // clock x readings
  std::int64_t clock_readings = 0;
  std::optional<double> clock_min_mhz, clock_max_mhz;
  std::int64_t windows_without_clock = 0, windows_without_tensor = 0;
  // (Summarizer::HistogramBin, windows): one count per window with an OFU.
  std::vector<std::pair<int, std::int64_t>> ofu_bins;
  // Non-tensor figures: figure x seconds, and the seconds that have it.
  struct Weighted {
    double value_seconds = 0, seconds = 0;
  };
  std::array<Weighted, kCudaCorePipes> pipes{};  // by CudaCorePipe
  Weighted share_of_peak;
  double bound_tflop = 0, bound_seconds = 0;
};

class Summarizer {
 public:
  static constexpr std::size_t kExactPercentileWindows = 4096;
  static constexpr int kHistogramBins = 2048;
  static constexpr double kHistogramBinWidth = 1.0 / 1024;

  // `weight` > 0: the device's share of a GPU (1 for a whole GPU).
  void Add(const OfuWindow& window, double weight = 1);
  // Windows summed already; their seconds are weighted as Add's.
  void Add(const WindowTotals& totals, double weight = 1);
  // Clock sources (OR of ClockSource bits) of windows added as sums, which
  // carry no OfuWindow::clock_source of their own (a stored row's flags).
  void AddClockSources(std::uint8_t sources) { clock_sources_ |= sources; }
  Summary Finish() const;

  // The histogram bin of a window's OFU (0 .. kHistogramBins - 1).
  static int HistogramBin(double ofu);

 private:
  double ofu_weighted_ = 0, seconds_ = 0;
  double ofu_low_weighted_ = 0, ofu_high_weighted_ = 0, range_seconds_ = 0;
  double clock_activity_weighted_ = 0, activity_seconds_weighted_ = 0;  // for ofu_clock_mhz
  std::uint8_t clock_sources_ = 0;
  double active_weighted_ = 0, busy_seconds_ = 0;
  double tensor_weighted_ = 0, tensor_seconds_ = 0, idle_seconds_ = 0;
  double clock_sum_ = 0;
  int clock_readings_ = 0;
  std::optional<double> clock_min_, clock_max_;
  double power_sum_ = 0;
  int power_windows_ = 0;
  std::optional<std::uint64_t> reasons_;
  // Window OFUs: every one up to kExactPercentileWindows, then counts per bin.
  std::vector<double> window_ofus_;
  std::vector<std::uint32_t> histogram_;
  std::int64_t windows_ = 0;
  void AddToHistogram(double ofu);
  void UseHistogram();  // from now on, counts per bin
  double HistogramPercentile(double q) const;
  int without_clock_ = 0, without_tensor_ = 0;
  // Non-tensor sums: value x weighted seconds, and the weighted seconds.
  struct Mean {
    double weighted = 0, seconds = 0;
    void Add(const std::optional<double>& v, double s) {
      if (!v) return;
      weighted += *v * s;
      seconds += s;
    }
    std::optional<double> Get() const { return seconds > 0 ? std::optional(weighted / seconds) : std::nullopt; }
  };
  std::array<Mean, kCudaCorePipes> pipes_{};        // by CudaCorePipe
  std::map<std::string, Mean, std::less<>> added_;  // by row name
  Mean share_;
  double bound_tflop_ = 0, bound_seconds_ = 0;  // TFLOP (x s) and weighted seconds
};

}  // namespace ofu
