// What `ofu run` reports about one job: which GPUs it used and why, their
// OFU over the run and its busy part, the job's phases and stalls
// (phase_finder.h), and the MFU the job printed beside OFU with reconcile's
// verdict (reconcile.h).
//
// Which GPUs, in order (ChooseRunGpus):
//   1. CUDA_VISIBLE_DEVICES, when set: its entries, up to the first that is
//      not valid (CUDA ignores the rest), by index ("0"), by UUID or a
//      unique prefix of one ("GPU-8f2a..."); a MIG UUID ("MIG-...") is not
//      matched, since the sources name MIG instances by GPU and instance,
//      and is noted. Set but empty: no GPU is visible to the job, and none
//      is chosen.
//   2. else the GPUs on which NVML listed a process of the job's tree (the
//      command and its descendants, torchrun's workers included);
//   3. else every GPU the source saw.
//   A chosen GPU on which NVML also listed processes outside the job is
//   shared, and said so.
//
// The OFU the job's MFU is set beside is the steady phases' (time-weighted
// over every chosen GPU): MFU is what the job printed over its training
// steps, which are the steady work, not its start-up or stalls. Without a
// steady phase it is the busy part's. The verdict is reconcile's
// (ClassifyRatio) of MFU over OFU, with no correction for tiles or
// precision (`ofu correct` with a trace gives those).
//
// Absent, never 0: a GPU without an OFU has no phases; a job that printed no
// MFU has none, and the reason is kept.
//
// Thread-safety: pure functions of their inputs.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ofu/analysis/phase_finder.h"
#include "ofu/analysis/reconcile.h"
#include "ofu/analysis/report.h"
#include "ofu/core/gpu_identity.h"
#include "ofu/formats/training_log.h"

namespace ofu::analysis {

// One GPU as the run saw it.
struct RunGpu {
  GpuIdentity identity;
  std::set<int> pids;  // every process NVML listed on it during the run
};

struct RunGpuChoice {
  std::string rule;                 // "CUDA_VISIBLE_DEVICES", "processes", "all"
  std::string why;                  // for people, e.g. "CUDA_VISIBLE_DEVICES=1,3"
  std::vector<std::string> keys;    // the chosen GPUs' keys, in the order the source saw them
  std::vector<std::string> shared;  // chosen GPUs that other processes used too, with those pids
  std::vector<std::string> notes;   // entries that matched nothing, and the like
};

RunGpuChoice ChooseRunGpus(const std::optional<std::string>& cuda_visible_devices, const std::vector<RunGpu>& gpus,
                           const std::set<int>& job_pids);

// The MFU the job printed during one phase: the median of the step lines
// it printed inside the phase (TrainingLogStep::printed_s in (start_s,
// end_s]), over the GPU's own peak as RunMfu's; absent when no step line
// fell in the phase, the lines have no time, or the GPU has no peak.
struct PhaseMfu {
  std::optional<double> mfu;
  int steps = 0;  // step lines printed in the phase
};

// One chosen GPU's figures.
struct RunGpuFigures {
  std::string key;
  std::string model;
  std::optional<double> ofu;         // over the run
  std::optional<double> active_ofu;  // over its busy windows
  std::uint8_t clock_sources = 0;    // ClockSource bits behind its OFU
  PhaseFinding phases;
  std::vector<PhaseMfu> phase_mfu;  // parallel to phases.phases; empty when the job printed no MFU
};

// The job's MFU as printed, beside OFU.
struct RunMfu {
  std::string framework;        // the training-log reader's format, e.g. "nanoGPT", "generic rule"
  int steps = 0;                // step lines read
  OwnPeakMfu mfu;               // over the GPU's own peak of the log's precision
  std::optional<double> ofu;    // the OFU it is set beside (see above)
  std::string ofu_basis;        // "steady phases" or "busy part"
  std::optional<double> ratio;  // mfu / ofu
  std::optional<Classification> verdict;
  std::vector<std::string> notes;  // the reader's checks and notes
};

struct RunReport {
  std::vector<std::string> command;
  int exit_status = 0;
  double seconds = 0;  // from start to exit
  int windows = 0;
  RunGpuChoice gpus;
  std::vector<RunGpuFigures> figures;     // one per chosen GPU with data
  std::optional<double> ofu, active_ofu;  // over the chosen GPUs (time-weighted)
  // Stall seconds over the chosen GPUs' seconds with an OFU; absent without any.
  std::optional<double> stall_share;
  double stall_s = 0;
  std::optional<RunMfu> mfu;
  std::string mfu_missing;  // why there is none: the reader's error, "no line reports an MFU ..."
  std::vector<std::string> notes;
};

// The phases of `gpu`'s samples in `recording` (phase_finder.h, with the
// default counters as signals, one window per sample); absent when the
// recording lacks the GPU, it has no SKU, or no sampling interval.
std::optional<PhaseFinding> FindPhasesOfGpu(const GpuReport& gpu, const sources::Recording& recording);

// `report` is BuildReport of the run's recording restricted to the chosen
// GPUs; `recording` that recording (for the phases' samples). `log` is what
// the job printed, or `log_error` why it gave no MFU.
RunReport BuildRunReport(const Report& report, const sources::Recording& recording, const RunGpuChoice& choice,
                         const std::optional<formats::TrainingLog>& log, const std::optional<Error>& log_error);

}  // namespace ofu::analysis
