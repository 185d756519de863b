// Phases of one GPU's OFU time series, found without labels: where a job
// started up, worked steadily, stalled (OFU near zero: evaluation, checkpoint
// saves, data waits) and wound down. `ofu run` reports them as the job's
// stalls (docs/phases.md).
//
// Input
//   The GPU's windows in time order (core/windows.h: each (start_s, end_s]
//   in epoch seconds, OFU a 0..1 ratio that may exceed 1), e.g. one per
//   recorded sample (PhaseSeriesOf, below: a sample is the mean of the
//   interval_s seconds ending at its timestamp, as in phase_table.h), and
//   optionally other counters per window (PhaseSignal: DRAM activity, a
//   CUDA-core pipe, ...), each with the change in its level that marks a
//   boundary.
//
// The rule (deterministic; O(n log n) in the windows, times the signals)
//   A boundary is a change in level: adjacent phases differ by more than
//   PhaseFinderOptions::ofu_threshold in mean OFU (default 5 pp) or by more
//   than its threshold in the mean of some signal that both have. Call
//   D(a, b) = the largest |mean_a - mean_b| / threshold over OFU and the
//   signals both a and b have; a boundary needs D > 1.
//   1. Runs: walk the windows; a window joins the current run unless
//      D(window, run so far) > 1, then it starts a new one. A stretch with
//      no OFU longer than min_windows median window lengths also starts one
//      and is never bridged (see Gaps). A run shorter than min_windows is a
//      blip; the windows of the other runs are the core.
//   2. Blips: while some run has fewer than min_windows windows (the
//      shortest first, then the earliest), merge it away: into both
//      neighbours at once when they do not differ (D <= 1: a blip inside
//      one level leaves no trace), else into the neighbour it differs least
//      from (the earlier one on a tie). So no phase is shorter than
//      min_windows unless gaps isolate it: a window that straddles a change
//      (half one loop, half the next) joins one side, which is why a found
//      boundary is within one window of the true change.
//   3. Levels: while two adjacent runs do not differ (D <= 1), merge them,
//      the pair with the smallest D first (then the earliest); means are
//      recomputed after each merge.
//   In steps 2 and 3 a run's level is the mean over its core windows (all
//   of its windows when it has none): a blip merged into a phase counts in
//   its time and reported means, but does not move the level that decides
//   boundaries and kind, so one straddling window cannot tip a phase over a
//   threshold.
//   Every phase then differs from its neighbours by more than a threshold
//   and has at least min_windows windows. Ties break by position, so the
//   same input gives the same phases.
//
//   Why: a steady loop's 1 s windows vary by well under 1 pp of OFU, while
//   the project's real recordings change level by 6 pp or more where the
//   work changes (data/recordings: fp8 | bf16 4097³, tf32 | fp8); 5 pp lies
//   between, and is the same in the activities' 0..1 units. Three windows
//   keep one straddling or hiccup window from being reported as a phase.
//   min_windows is in windows: choose it so that a phase lasts about a
//   second or more; at 100 ms windows a power cap's 300 ms clock dip is a
//   5 pp change of OFU that min_windows = 10 keeps out (docs/phases.md).
//
// Kinds
//   A phase is low when its OFU level (above) is below PhaseFinderOptions::low_ofu
//   (default 0.05: within one threshold of zero). Low phases before the
//   first phase that is not low are startup, those after the last are
//   tail, those between are stalls (kLow); the others are steady. With no
//   phase above low_ofu every phase is kLow: the job did no tensor work, so
//   all of its time is lost to OFU. A low phase may still be busy on CUDA
//   cores or copies (its signals' means say so): kind is about OFU only.
//
// Gaps: absent, never 0
//   A window without an OFU (no tensor activity or clock, no SKU) is left
//   out: it belongs to no phase's windows or seconds and is counted in
//   windows_without_ofu. A stretch without OFU of at most min_windows median
//   window lengths is bridged (the phase spans it; its `seconds` do not
//   count it); a longer one cuts, and phases on either side are never
//   merged across it. A signal absent in a window is left out of that
//   signal's mean; a phase without any value of a signal has no mean for it
//   and that signal does not separate it from its neighbours.
//
// Preconditions: windows sorted by time, not overlapping, end_s > start_s;
// each signal's values parallel to the windows (a missing entry is absent);
// thresholds > 0 (a signal with a threshold <= 0 is ignored).
//
// Thread-safety: pure functions of their inputs.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/ofu_math.h"
#include "ofu/core/sample.h"
#include "ofu/core/windows.h"

namespace ofu::analysis {

// A counter besides OFU that may also mark a boundary.
struct PhaseSignal {
  std::string name;                           // for people: "dram_active"
  std::vector<std::optional<double>> values;  // one per window, in the windows' order
  double threshold = 0.05;                    // a change in level larger than this is a boundary; its units
};

struct PhaseFinderOptions {
  double ofu_threshold = 0.05;  // 5 pp of OFU
  int min_windows = 3;          // the shortest phase, in windows with an OFU; at least 1
  double low_ofu = 0.05;        // a phase below this mean OFU is low (startup, stall or tail)
};

enum class PhaseKind { kStartup, kSteady, kLow, kTail };

// "startup", "steady", "low", "tail".
std::string_view PhaseKindName(PhaseKind kind);
// The same for people: a low phase between busy ones is a "stall".
std::string_view PhaseKindWord(PhaseKind kind);

struct FoundPhase {
  PhaseKind kind = PhaseKind::kSteady;
  double start_s = 0;  // the start of its first window (exclusive, like a window's)
  double end_s = 0;    // the end of its last window
  int windows = 0;     // its windows with an OFU
  double seconds = 0;  // their length in all (end_s - start_s less bridged stretches without OFU)
  double ofu = 0;      // time-weighted mean over its windows
  // Each signal's time-weighted mean over its windows that have a value, in
  // the order of the signals given; absent when none has.
  std::vector<std::optional<double>> signals;
};

struct PhaseFinding {
  std::vector<FoundPhase> phases;  // in time order
  double seconds = 0;              // all windows with an OFU
  double startup_s = 0;
  double steady_s = 0;
  double low_s = 0;  // the stalls
  double tail_s = 0;
  // low_s / seconds: the share of the GPU's observed time lost in stalls;
  // absent when no window has an OFU.
  std::optional<double> stall_share;
  int windows_without_ofu = 0;
};

PhaseFinding FindPhases(std::span<const OfuWindow> windows, std::span<const PhaseSignal> signals = {},
                        const PhaseFinderOptions& options = {});

// A recorded counter to use as a signal, and the change in it that is a boundary.
struct PhaseCounter {
  CounterField field;
  double threshold = 0.05;
};

// Every recorded activity besides the tensor pipes (which OFU already is),
// each a boundary when it changes by more than 5 pp: the engine, SM activity
// and occupancy, DRAM, and the CUDA-core pipes. What `ofu run` cuts a job by.
std::span<const PhaseCounter> DefaultPhaseCounters();

struct PhaseSeries {
  std::vector<OfuWindow> windows;    // one per sample
  std::vector<PhaseSignal> signals;  // one per counter asked for, named as the counter table names it
};

// One window per recorded sample (WindowOfSample: the mean of the interval_s
// seconds ending at its timestamp) and each counter's value in it. Samples
// sorted by time, interval_s > 0.
PhaseSeries PhaseSeriesOf(std::span<const CounterSample> samples, double interval_s,
                          const std::optional<OfuScale>& scale, std::span<const PhaseCounter> counters = {});

}  // namespace ofu::analysis
