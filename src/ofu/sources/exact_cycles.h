// Exact-cycle OFU from cumulative cycle counters (DCGM 1084/1086, NVML GPM
// 248/250), shared by every source that has them.
//
// Between two readings dt seconds apart,
//     tensor_active = Δtensor_cycles / Δelapsed_cycles
//     f_SM          = Δelapsed_cycles / (basis × dt)
// so tensor_active × f_SM / f_spec = Δtensor_cycles / (basis × f_spec × dt),
// the exact-cycle OFU, with no clock sampling at all. `basis` is N_SM when
// the counters are summed over the SMs and 1 when they are per-SM averages.
// Which one a driver reports must be established, not assumed, so every
// window is checked against a clock measured another way (oversampled or
// point readings): Δelapsed/dt must lie within a factor kBasisTolerance of
// that clock times the basis. The two bases differ by N_SM (132 on an H100
// SXM), so a clock that moved within the window cannot confuse them.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "ofu/core/result.h"

namespace ofu::sources {

inline constexpr double kBasisTolerance = 2.0;

// Cumulative counter values at one instant, in cycles.
struct CycleCounters {
  double sm_cycles_elapsed = 0;
  double tensor_cycles_active = 0;
};

enum class CycleBasis { kSummedOverSms, kPerSmAverage };
std::string_view CycleBasisName(CycleBasis basis);  // "summed over SMs", "per-SM average"

struct ExactCycleWindow {
  double tensor_active = 0;  // 0..1
  double sm_clock_mhz = 0;   // mean over the window
  CycleBasis basis = CycleBasis::kSummedOverSms;
};

// Errors (kNoData, with the reason; the caller falls back to sampled
// clocks): a counter went backwards or did not advance (reset, wrap, or a
// window too short), dt or sm_count not positive, no reference clock, or
// Δelapsed/dt fits neither basis.
Result<ExactCycleWindow> DeriveExactCycles(const CycleCounters& before, const CycleCounters& after, double dt_s,
                                           int sm_count, std::optional<double> reference_clock_mhz);

}  // namespace ofu::sources
