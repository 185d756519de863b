// The HTML page of one run or one recording (`ofu report --input FILE
// --html`, `ofu run --html FILE`): beside the page's timelines
// (html_report.h), the run's phases on each GPU with the OFU and the MFU of
// each, and for `ofu run` what ran and what it printed.
//
// Which phases:
//   - a recording that carries its own (ofu_recording_phase_info, as the
//     bundled H100 one does) gives those: each phase on each GPU as the
//     report's phase table has it (phase_table.h), with the true MFU the
//     workload measured;
//   - else the phases found without labels (phase_finder.h: start-up,
//     steady work, stalls, tail), with, for `ofu run`, the MFU the job
//     printed during each (run_report.h PhaseMfu).
// The page's timeline is the recording at its own resolution: the report
// it is drawn from has one window per sample (OwnResolutionS).
//
// Absent, never 0: a phase without a window that has an OFU has no OFU; a
// phase with no MFU (none recorded, no step line printed in it) has none.
//
// Thread-safety: pure functions of their inputs; the types are plain values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ofu/analysis/report.h"
#include "ofu/analysis/run_report.h"
#include "ofu/sources/replay.h"

namespace ofu::analysis {

struct PagePhase {
  std::string gpu;  // the GPU's key on the page (core/gpu_key.h GpuKey, as HistoryOfRecording keys it)
  // Recorded: the recording's name ("bf16-8192") and kind ("gemm", may be
  // empty); found: the kind's word for both ("startup", "steady", "stall", "tail").
  std::string name;
  std::string kind;
  double start_s = 0;  // epoch seconds
  double end_s = 0;
  double seconds = 0;  // the seconds its OFU is over
  std::optional<double> ofu;
  std::optional<double> mfu;  // 0..1: recorded, the workload's true MFU; found, what the job printed in it
  int mfu_steps = 0;          // found: the step lines printed in it; 0 for a recorded phase
};

// `ofu run`'s summary, as its text report gives it.
struct PageRun {
  std::vector<std::string> command;
  int exit_status = 0;
  double seconds = 0;
  std::string gpu_rule;  // run_report.h RunGpuChoice
  std::string gpu_why;
  std::vector<std::string> shared;
  std::optional<double> stall_share;
  double stall_s = 0;
  // The MFU the job printed over all its steps, and the OFU it is set beside.
  std::optional<double> mfu;
  std::string framework;
  int steps = 0;
  std::optional<double> mfu_ofu;
  std::string ofu_basis;
  std::string verdict;  // reconcile's flag; empty without one
  std::string explanation;
  std::string mfu_missing;  // why no MFU was read; empty when one was
};

struct RunPage {
  std::string phases_basis;       // "recorded" or "found"
  std::vector<PagePhase> phases;  // by GPU in the report's order, then by time
  std::optional<PageRun> run;     // `ofu run` only
};

// The phases of a recording's report (`report`, built from `recording`):
// its own where it has them, else those found on each GPU.
RunPage RunPageOfRecording(const Report& report, const sources::Recording& recording);

// The page of `ofu run`: `run` is BuildRunReport of `report`.
RunPage RunPageOfRun(const RunReport& run, const Report& report);

// The recording's own resolution: the shortest sampling interval of its
// GPUs (core/windows.h WindowedGpu::interval_s, their samples' median
// spacing), at least kMinWindowS; else the report's window.
double OwnResolutionS(const Report& report);

}  // namespace ofu::analysis
