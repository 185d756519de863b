// A SYNTHETIC GPU fleet for the fleet analysis' tests and benchmarks
// (`ofu-fleet-sim`). Nothing here is measured on a GPU.
//
// Layout: `gpus` H100 SXM5 GPUs in groups of `gpus_per_job` (one host per
// group); `jobs` jobs run back to back on the groups, round robin, each
// `windows_per_job` windows of `window_s`. Every window of a GPU with a job
// has OFU = the job's level × (1 + noise·N(0,1)), tensor activity and SM clock
// to match, and HMMA/IMMA shares (DFMA present as 0 on even GPUs, absent on
// odd ones: a counter the source lacks). GPUs without a job are idle (OFU 0).
//
// Planted (the ground truth), chosen by the seed among jobs of groups 1..:
//   FLOPs miscalculations in the MFU log, one job each: causal attention in
//   full (reported 1.6× what was done), MoE by total parameters (4.5×),
//   wrong-precision peak (2×: an fp8 run divided by the bf16 peak... declared
//   fp8), and recomputation (0.75×, recompute declared on); and non-tensor
//   work (issue 18): a job whose matmuls run on the CUDA cores, OFU level
//   0.02, FP32 pipe 0.7 (every other job's is 0.05), reporting 10× the MFU
//   its OFU allows
//   a regression: one job's OFU drops 2.5× half-way, on all its GPUs
//   a precision switch: one job's tensor time moves from HMMA to IMMA half-way
//   a regression across runs: group 0 runs one job name; its later half of
//   runs has 2.5× lower OFU (the paper's debug-overhead case)
// Reported MFU of the other jobs = what the hardware did (realised mean OFU ×
// factor × precision scale) × (1 + mfu_noise·N(0,1)).
//
// Deterministic: the same options give byte-identical files.
// Thread-safety: no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ofu/core/result.h"

namespace ofu::simulation {

// What every file the simulator writes says of itself.
inline constexpr const char* kSynthetic = "SYNTHETIC data from ofu-fleet-sim, not measured on a GPU";

struct FleetSimOptions {
  std::uint64_t seed = 1;
  int gpus = 16;
  int gpus_per_job = 4;
  int jobs = 24;
  int windows_per_job = 120;
  double window_s = 60;         // whole seconds keep timestamps exact
  double start_s = 1790000000;  // 2026-09-21T14:13:20Z
  double ofu_noise = 0.03;      // relative, per window
  double mfu_noise = 0.03;      // relative, per job
  // 0: one metrics.om. Otherwise one metrics-<slice start, Unix s>.om per
  // slice of this many seconds, aligned to multiples of it: 7200 matches
  // promtool's 2 h blocks, so that promtool reads each sample once.
  double openmetrics_slice_s = 0;
};

struct PlantedJob {
  std::string job_id;
  std::string job_name;
  std::vector<std::string> gpus;  // UUIDs
  double start_s = 0;
  double end_s = 0;
  double ofu_level = 0;
  double realised_ofu = 0;  // mean over its windows
  double factor = 1;        // tile-quantization factor (1: no correction file)
  bool correction_file = false;
  std::string reference_precision;  // "bf16" or "fp8"
  bool recompute = false;
  double expected_mfu = 0;  // realised_ofu × factor × scale (scale is 1 here)
  double reported_mfu = 0;
  std::string plant = "none";  // or a reconcile flag (reconcile.h)
  double planted_ratio = 1;    // reported / expected before the MFU noise
};

struct PlantedChange {
  std::string job_id;
  std::string job_name;
  double time_s = 0;  // end of the last window before the change
  double ratio = 0;   // after / before (OFU)
  std::string what;   // "ofu" or "hmma->imma"
  std::vector<std::string> gpus;
};

struct PlantedRunChange {
  std::string job_name;
  std::string first_job_id;
  double ratio = 0;
};

struct FleetTruth {
  FleetSimOptions options;
  std::vector<PlantedJob> jobs;
  std::vector<PlantedChange> regressions;
  std::vector<PlantedChange> precision_shifts;
  std::vector<PlantedRunChange> run_regressions;
  double end_s = 0;  // end of the last window
  // Files written under the output directory.
  std::string store, mfu_log, corrections_dir;
  std::vector<std::string> openmetrics;  // in time order
};

// Writes into `out_dir` (created if missing; files there are replaced):
//   history.sqlite      the agent's store, through the real HistoryStore
//   metrics.om          OpenMetrics for `promtool tsdb create-blocks-from openmetrics`
//                       (or metrics-<start>.om slices, written as the store
//                       passes them: see openmetrics_slice_s)
//   mfu.csv             the MFU log (reconcile's --mfu)
//   corrections/        <job_id>.json in `ofu correct --format json` form
// and returns what was planted (ofu-fleet-sim writes it as ground_truth.json,
// render/fleet_sim_output.h).
// kInvalidArgument for inconsistent options; kIo when a file cannot be written.
Result<FleetTruth> SimulateFleet(const FleetSimOptions& options, const std::string& out_dir);

}  // namespace ofu::simulation
