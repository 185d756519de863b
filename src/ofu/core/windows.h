// Cutting one GPU's samples into fixed windows and computing OFU per window.
//
// Time model
//   Windows are (k*W, (k+1)*W] in epoch seconds, so windows of different GPUs
//   line up. Activity samples (tensor_active, gr_engine_active) are means
//   over the interval that ends at their timestamp: sample i covers
//   (t[i-1], t[i]]. Its weight in a window is the overlap of that interval
//   with the window, so the window's activity is a time-weighted mean.
//   Point readings (SM clock, power) belong to the window their timestamp
//   falls in; the window's SM clock is the plain mean of its readings.
//
// OFU pairs each activity with its own clock
//   A window's OFU is the time-weighted mean of the products A_i x f_i at the
//   finest grain the input has: each tensor sample's activity times the
//   clock of that same interval (the mean of the clock readings whose
//   timestamps fall in (t[i-1], t[i]], which for a source that reads both at
//   once is the sample's own clock). Only a tensor sample with no reading in
//   its interval borrows the window's mean clock. So a window's OFU does not
//   depend on how the windows cut the samples, and the overall OFU is the
//   same for any window length. f_i is the clock the SMs ran as the SKU's
//   measured model estimates it from the reported one (clock_model.h); a SKU
//   without a model uses the reported clock, and the window says which.
//
// Gaps
//   The nominal interval is the median spacing of the tensor samples (or
//   WindowOptions::interval_s), at most kMaxIntervalS. When two tensor
//   samples are more than gap_factor nominal intervals apart, the silence
//   between them is a gap: it
//   is reported and excluded, never filled; the sample after it covers one
//   nominal interval. The first sample also covers one nominal interval.
//
// The FP64/FP32/FP16 pipe activities are time-weighted like tensor activity;
// the non-tensor bound needs a clock reading and the scale's pipes.
//
// A row added to the counter table (core/sample.h) that the samples carry in
// CounterSample::added is averaged the same way by its kind: an activity
// time-weighted like tensor activity, a reading as the plain mean of the
// readings in the window. The window holds it in OfuWindow::added.
//
// A window's OFU is present only when it has both tensor activity and at
// least one clock reading, and the GPU's scale (its SKU) is known. Absent
// stays absent.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ofu/core/ofu_math.h"
#include "ofu/core/sample.h"

namespace ofu {

// The longest nominal interval: samples further apart than an hour are gaps
// whatever their median spacing, so one sample never spreads over days.
inline constexpr double kMaxIntervalS = 3600;

// The shortest window: the fastest sources sample every 100 ms.
inline constexpr double kMinWindowS = 0.1;

struct WindowOptions {
  double window_s = 60;              // at least kMinWindowS
  std::optional<double> interval_s;  // nominal sampling interval; measured when absent
  double fallback_interval_s = 30;   // when it cannot be measured (one sample): dcgm-exporter's default
  double gap_factor = 3;
  // A window is busy when the graphics engine (or, where the source has no
  // engine activity, the tensor pipes) was active at least this fraction.
  double busy_threshold = 0.01;
  // Rows added to the counter table whose values the samples carry
  // (sources::Recording::added_fields); empty for the built-in table. They
  // must outlive the call.
  std::span<const CounterFieldInfo> added_fields;
};

struct OfuWindow {
  double start_s = 0;    // exclusive
  double end_s = 0;      // inclusive
  double covered_s = 0;  // seconds of tensor data inside the window
  std::optional<double> tensor_active;
  std::optional<double> gr_engine_active;
  std::optional<double> sm_clock_mhz;  // mean of the readings
  std::optional<double> sm_clock_min_mhz;
  std::optional<double> sm_clock_max_mhz;
  int clock_readings = 0;
  std::optional<double> power_w;                     // mean of the readings
  std::optional<std::uint64_t> clock_event_reasons;  // OR of the readings
  std::optional<double> ofu;
  // Present with ofu: the OFU at the low and high end of the run clock's
  // range (equal to ofu where the clock is not in doubt).
  std::optional<double> ofu_low, ofu_high;
  // Present with ofu: the clock the OFU used, time-weighted over the tensor
  // samples (the run clock where a model applies; else the reported one).
  std::optional<double> ofu_clock_mhz;
  // Set with ofu when computed here; absent for a window read back from a
  // store, which does not keep it.
  std::optional<ClockSource> clock_source;
  bool busy = false;
  // CUDA-core pipe activities (time-weighted like tensor_active) and the
  // non-tensor FLOP bound they allow at the window's clock (non_tensor.h).
  NonTensorFigures non_tensor;
  // The window's mean of each added counter the samples had in it, by row
  // name (see above); empty for the built-in table.
  AddedValues added;
};

struct Gap {
  double start_s = 0;
  double end_s = 0;
  double seconds() const { return end_s - start_s; }
};

struct WindowedGpu {
  std::vector<OfuWindow> windows;  // in time order; only windows with some data
  std::vector<Gap> gaps;
  double interval_s = 0;          // the nominal interval used
  bool interval_assumed = false;  // true when the data could not tell it
};

// `samples` must be sorted by time_s. Windows with neither tensor activity
// nor a clock reading are not produced.
WindowedGpu BuildWindows(std::span<const CounterSample> samples, const std::optional<OfuScale>& scale,
                         const WindowOptions& options);

// The window a live source already averaged: one sample holding the means of
// the `window_s` seconds that end at sample.time_s. OFU and busy follow the
// same rules as BuildWindows. `exact_cycles`: the sample's clock came from
// elapsed-cycle counters, so it is the clock the SMs ran; no clock model
// applies and the window's clock_source is kExactCycles.
OfuWindow WindowOfSample(const CounterSample& sample, double window_s, const std::optional<OfuScale>& scale,
                         double busy_threshold, bool exact_cycles = false);

}  // namespace ofu
