// Regression and precision-shift detection (`ofu regress`): change points in
// OFU timelines, per GPU of each job and across runs of one job name, and
// shifts in the tensor-pipe precision shares (HMMA/IMMA/DFMA).
//
// Method: binary segmentation for a change in mean.
//   A series x_0..x_{n-1} (one value per window) is split at the k that
//   maximises  T_k = |mean(x_a..x_{k-1}) − mean(x_k..x_{b-1})| / σ × sqrt(nL·nR/(nL+nR))
//   (the CUSUM statistic; nL, nR ≥ min_segment), and each side is searched
//   again, up to max_changes. A split is a change when
//     T_k ≥ threshold                      (significance: 6 by default, which
//                                           noise of n ≤ 10^6 windows crosses
//                                           with probability ~1e-6), and
//     max(mL,mR)/min(mL,mR) ≥ min_ratio    (effect size for OFU: 1.25 by default)
//     |mR − mL| ≥ min_difference           (effect size for shares: 0.2)
//   σ is robust to the changes themselves: 1.4826 · median|x_{i+1} − x_i| / √2
//   over the whole series (the MAD of first differences), floored at
//   1e-6 + 1e-3·|median x| so that a noiseless series can still change.
//   Assumes roughly independent noise between windows; strongly
//   autocorrelated noise makes σ too small and T too large.
//
// Series:
//   per (job, GPU)   window OFU = utilized_s / observed_s over the job's
//                    windows with observed_s > 0, in time order
//   per job name     each run's (job id's) OFU from BuildStoreReport, runs in
//                    order of their first start; min_segment = min_runs
//   precision        per (job, GPU) and pipe: pipe_s / tensor_active_s over
//                    windows that have that pipe's counter
// Changes of one job on several GPUs within group_s of each other and in the
// same direction are one event: its time is the median, its ratio the median
// of the GPUs' ratios, with the GPUs listed.
//
// Thread-safety: pure functions of their inputs.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ofu/analysis/store_report.h"

namespace ofu::analysis {

struct ChangeOptions {
  int min_segment = 10;       // values on each side of a change
  double threshold = 6;       // T_k at least this
  double min_ratio = 1.25;    // larger mean / smaller mean at least this (1: off)
  double min_difference = 0;  // |after − before| at least this (0: off)
  int max_changes = 8;
};

struct ChangePoint {
  size_t index = 0;   // first value of the new segment
  double before = 0;  // mean of the segment before
  double after = 0;   // mean of the segment after
  double statistic = 0;
};

// Change points of `values`, by index. Reuses no state: O(n) memory for
// prefix sums, O(n · depth) time.
std::vector<ChangePoint> DetectChanges(std::span<const double> values, const ChangeOptions& options);

// The robust noise scale σ used by DetectChanges.
double RobustNoise(std::span<const double> values);

struct RegressOptions {
  ChangeOptions ofu;                         // per-GPU OFU timelines
  ChangeOptions shares{10, 6, 1.0, 0.2, 8};  // precision shares
  int min_runs = 3;                          // per side, across runs
  double group_s = 900;                      // one event across GPUs
};

struct OfuChange {
  std::string job_id;
  std::string job_name;
  double time_s = 0;  // end of the last window before the change (median over GPUs)
  double before = 0;
  double after = 0;
  double ratio = 0;  // after / before: 0.4 is a 2.5x drop
  double statistic = 0;
  std::vector<std::string> gpus;  // UUIDs
};

struct PipeShift {
  std::string pipe;  // hmma, imma, dfma
  double before = 0;
  double after = 0;
};

struct PrecisionShift {
  std::string job_id;
  std::string job_name;
  double time_s = 0;
  std::vector<PipeShift> pipes;
  std::vector<std::string> gpus;
};

struct RunChange {
  std::string job_name;
  std::string first_job_id;  // the first run after the change
  double time_s = 0;         // its start
  double before = 0;         // mean run OFU before
  double after = 0;
  double ratio = 0;
  int runs_before = 0;
  int runs_after = 0;
};

struct RegressReport {
  std::string source;
  RegressOptions options;
  std::vector<OfuChange> changes;
  std::vector<PrecisionShift> precision_shifts;
  std::vector<RunChange> run_changes;
  int series = 0;         // (job, GPU) timelines scanned
  long long windows = 0;  // windows in them
  int job_names = 0;      // job names with at least 2 * min_runs runs
  std::vector<std::string> notes;
};

RegressReport ScanRegressions(const history::StoredHistory& history, const Report& store,
                              const RegressOptions& options);

// ScanRegressions in parts, so that a fleet's scan holds one batch of GPUs'
// windows rather than the fleet's: each batch's (job, GPU) timelines are
// scanned as it comes (Add), the changes are grouped across GPUs and runs
// at the end (Finish). A GPU's windows and job intervals must all come in
// one batch; `store` (for the runs of a job name) covers the whole range.
// Adding the whole history as one batch is ScanRegressions.
class RegressScanner {
 public:
  explicit RegressScanner(const RegressOptions& options);
  ~RegressScanner();
  RegressScanner(const RegressScanner&) = delete;
  RegressScanner& operator=(const RegressScanner&) = delete;

  void Add(const history::StoredHistory& batch);
  RegressReport Finish(const std::string& source, const Report& store);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ofu::analysis
