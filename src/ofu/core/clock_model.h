// The clock OFU multiplies: the SM clock the driver reports against the
// clock the SMs run.
//
// NVML's SM clock (nvmlDeviceGetClockInfo(SM)) and DCGM field 100, the same
// reading, are not the clock the SMs run while tensor cores work. Measured on
// an H100 and an H200 (docs/results/2026-11-27-clock-truth/) with each SM's
// cycle counter over the global timer: the reading is 5-22 % high in GEMM
// bursts, in mixed work and, on the H200, in every steady state; it agrees
// only with steady work held at the H100's power cap, and whenever the tensor
// pipes are idle. GPM's tensor activity is right. So for a SKU that was
// measured, ofu estimates the clock the SMs ran from what a sample shows:
//
//   tensor activity A < idle_tensor_below        the reported clock
//   A <= burst_tensor_at_most (bursts, mixed)    f / ((1 - A) + A r_burst)
//   A >= steady_tensor_at_least (steady work)    f / r_steady
//   in between                                   the two, linearly in A,
//                                                with both as the range
//
// The burst form is cycle-weighted: A is the share of the SMs' cycles in
// which a tensor pipe was busy, those cycles ran at f / r_burst and the
// others at f, so the mean clock over the sample's time is
// f / ((1 - A) + A r_burst). r_burst is the one measured while the power cap
// held the clock (clock event reason sw_power_cap) or the one measured below
// it; when a sample has no reasons, the estimate is the mean of the two and
// the range spans both. Every figure is a measurement with its source in
// data/gpu_specs.json; a SKU nobody measured has no model and keeps the
// reported clock, and every output says which clock it used.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ofu {

// One SKU's measured relation between the reported and the run clock. All
// ratios are reported ÷ run (>= 1 where the reading is high).
struct ClockModel {
  double steady_ratio = 1;                 // steady tensor work
  double burst_ratio_at_power_cap = 1;     // tensor cycles in mixed or bursty work, sw_power_cap set
  double burst_ratio_below_power_cap = 1;  // the same with the power cap not holding the clock
  double idle_tensor_below = 0.01;         // below this tensor activity, no correction
  double burst_tensor_at_most = 0.45;      // the highest activity measured in bursty or mixed work
  double steady_tensor_at_least = 0.75;    // the lowest activity measured in steady work
};

// Where a window's OFU took its clock from, best first.
enum class ClockSource : std::uint8_t {
  kExactCycles = 1,    // elapsed-cycle counters (GPM 248, DCGM 1084): the SMs' own cycles
  kMeasuredModel = 2,  // the reported clock corrected by the SKU's ClockModel
  kReported = 4,       // the reported clock as it is: no measurement for this SKU
};
// "exact-cycles", "measured-model", "reported".
std::string_view ClockSourceName(ClockSource source);
// For a table column: "exact", "model", "reported".
std::string_view ClockSourceShortName(ClockSource source);
// The source ClockSourceName spells `name`; nullopt for any other text
// (an info label from an agent that did not know, or a newer one).
std::optional<ClockSource> ClockSourceOfName(std::string_view name);
// A set of sources (OR of ClockSource bits) as text, best first: one name,
// several joined by "+", or "" for none; `name` spells each.
std::string ClockSourcesName(std::uint8_t sources, std::string_view (*name)(ClockSource) = ClockSourceName);

// The clock the SMs ran, MHz, with the range the measurements leave open
// (low == mhz == high where the state is told apart).
struct RunClock {
  double mhz = 0;
  double low_mhz = 0;
  double high_mhz = 0;
};

// The run clock of a sample whose reported clock is `reported_mhz` and whose
// tensor activity (0..1) is `tensor_active`; `reasons` are its clock event
// reasons, absent when the source gave none.
RunClock EstimateRunClock(const ClockModel& model, double tensor_active, double reported_mhz,
                          std::optional<std::uint64_t> reasons);

}  // namespace ofu
