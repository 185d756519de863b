// The per-phase table of a recording that carries phases: for each labelled
// interval (ofu_recording_phase_info, sources/replay.h) and each GPU, the OFU
// the counters give over the phase beside the true MFU the workload measured.
//
// Time model
//   A recorded sample is the mean of the interval_s seconds that end at its
//   timestamp (what `ofu record` and a live window write), so each sample is
//   one window (t - interval_s, t] (core/windows.h, WindowOfSample). A window
//   counts for a phase when it lies wholly inside [start, end]: one that
//   straddles an edge mixes in the work before or after. The report's
//   --window does not apply: phases are usually shorter than a report window.
//   The phase's OFU is the time-weighted mean of those windows' OFU, and its
//   SM clock the time-weighted mean of their clocks, like the report's.
//
// Absent, never 0: a phase with no window inside it that has an OFU (too
// short, a GPU without a SKU, a missing counter) has no OFU and no
// difference; a phase the recording gives no MFU has no MFU and no
// difference.
//
// Thread-safety: pure function of its inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ofu/core/ofu_math.h"
#include "ofu/core/sample.h"
#include "ofu/sources/replay.h"

namespace ofu::analysis {

// One GPU as the phase table needs it.
struct PhaseGpu {
  GpuIdentity identity;
  std::span<const CounterSample> samples;  // sorted by time
  std::optional<OfuScale> scale;           // absent without a SKU: no OFU
  double interval_s = 0;                   // the seconds each sample averages; > 0
};

struct PhaseRow {
  // The phase, as the recording gives it.
  std::string phase;
  std::string kind;       // empty when not stated
  std::string precision;  // empty when not stated
  double start_s = 0;     // epoch seconds
  double end_s = 0;
  std::optional<double> mfu;          // 0..1; from the recording
  std::optional<double> peak_tflops;  // what mfu is measured against; from the recording
  // The GPU and what its counters say over the phase.
  GpuIdentity gpu;
  int windows = 0;                          // windows wholly inside the phase with an OFU
  double seconds = 0;                       // their length in all
  std::optional<double> ofu;                // 0..1 (may exceed 1)
  std::optional<double> ofu_low, ofu_high;  // the run clock's range (core/clock_model.h)
  std::optional<double> ofu_clock_mhz;      // the clock OFU used, weighted by tensor activity
  std::uint8_t clock_sources = 0;           // OR of ClockSource bits of its windows
  std::optional<double> sm_clock_mhz;       // reported: time-weighted mean over the windows with a clock
  std::optional<double> ofu_minus_mfu_pp;   // 100 x (ofu - mfu), percentage points
};

// Rows in the order of the phases, and within a phase in the order of `gpus`.
std::vector<PhaseRow> BuildPhaseTable(std::span<const sources::RecordedPhase> phases, std::span<const PhaseGpu> gpus,
                                      double busy_threshold);

}  // namespace ofu::analysis
