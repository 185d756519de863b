// The summary of a result file (`ofu-gemm --summary results.csv`): per
// precision, how far each OFU estimate lies from true MFU, and which cases
// miss the 1 percentage-point goal and the most likely reason.
//
// Statistics are over the absolute errors |err_x_pp| of the rows that have
// that estimate (rows without it are not counted, so `cases` may differ
// between estimates):
//   max   the largest |error|
//   mean  the mean |error|
//   p95   the 95th percentile of |error|, by linear interpolation between
//         closest ranks (numpy's default; core/ofu_math.h Percentile): for
//         sorted values v[0..n-1] it is v[i] + f·(v[i+1] - v[i]) with
//         i + f = 0.95·(n - 1).
//
// A case "exceeds" when |err_corrected_pp| > 1 (or, without a corrected
// value, |err_raw_pp| > 1). Reasons, tested in this order, the first that
// fits is reported:
//   SIMT              fp32 or a kernel the name says runs on CUDA cores:
//                     tensor activity cannot see it (non-tensor undercounting)
//   tile orientation  padding with the tile's M and N exchanged brings the
//                     corrected error within 1 pp (or halves it)
//   cluster padding   padding without the cluster (or with the algorithm's
//                     cluster where the name gives none) does so
//   clock             exact-cycle OFU is within 1 pp while the sampled one is
//                     not, or the point, oversampled and source clocks differ
//                     by more than 1 %
//   launch gaps       an iteration takes under 20 µs: host launch overhead
//                     and the loop's edges weigh on the counter windows
//   unexplained       none of the above
// SIMT rows are summarized apart: achieved TFLOP/s against the tensor OFU.
//
// Pure; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ofu/gemm/case_result.h"

namespace ofu::gemm {

inline constexpr double kGoalPp = 1.0;
inline constexpr double kLaunchGapIterationUs = 20.0;

struct ErrorStats {
  int cases = 0;
  double max_pp = 0, mean_pp = 0, p95_pp = 0;  // of |error|; 0 when cases == 0
};

// Statistics of |values|; cases 0 for none.
ErrorStats StatsOf(const std::vector<double>& errors_pp);

struct PrecisionSummary {
  kernels::Precision precision = kernels::Precision::kBf16;
  ErrorStats raw, corrected, exact, point, oversampled;
};

struct Exceedance {
  CaseResult row;
  double error_pp = 0;  // the corrected error, or the raw one without it
  std::string reason;   // "tile orientation", ...
  std::string detail;   // the figures behind the reason
};

struct SimtSummary {
  kernels::Precision precision = kernels::Precision::kFp32;
  int cases = 0;
  double mean_achieved_tflops = 0;
  std::optional<double> mean_ofu_raw;  // what tensor activity shows for them
};

struct Summary {
  std::vector<PrecisionSummary> precisions;  // tensor-core cases, in precision order
  std::vector<Exceedance> exceedances;       // in file order
  std::vector<SimtSummary> simt;
  int measured = 0;  // rows with an MFU or achieved TFLOP/s
  int skipped = 0;   // rows whose note starts "skipped:"
  std::map<std::string, int> skip_reasons;
};

// The reason a row misses the goal, and its figures (see the file comment).
// Precondition: the row has err_corrected_pp or err_raw_pp.
Exceedance Explain(const CaseResult& row);

Summary Summarize(const std::vector<CaseResult>& rows);

// The summary for people: one table of errors per precision, then the
// cases above 1 pp with their reasons, then SIMT undercounting and skips.
std::string FormatSummary(const Summary& summary, const std::string& source_name);

}  // namespace ofu::gemm
