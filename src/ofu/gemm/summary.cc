#include "ofu/gemm/summary.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ofu/core/ofu_math.h"
#include "ofu/gemm/evaluate.h"
#include "ofu/kernels/gemm_padding.h"

namespace ofu::gemm {
namespace {

using kernels::Precision;

bool IsSimt(const CaseResult& row) {
  return row.precision == Precision::kFp32 || (row.tensor_core.has_value() && !*row.tensor_core);
}

bool IsSkipped(const CaseResult& row) { return row.note.rfind("skipped:", 0) == 0; }

// The error of the corrected OFU had the padding used `shape` instead.
std::optional<double> ErrorWithTile(const CaseResult& row, const kernels::TileShape& shape) {
  if (!row.ofu_raw || !row.mfu) return std::nullopt;
  auto padded = kernels::PadGemm(kernels::GemmProblem{row.m, row.n, row.k, 1}, shape);
  if (!padded.ok() || padded->executed_flops <= 0) return std::nullopt;
  return (*row.ofu_raw * padded->useful_flops / padded->executed_flops - *row.mfu) * 100.0;
}

// An alternative explains the error when it meets the goal or halves it.
bool Explains(std::optional<double> alternative_pp, double error_pp) {
  return alternative_pp &&
         (std::abs(*alternative_pp) <= kGoalPp || std::abs(*alternative_pp) <= std::abs(error_pp) / 2);
}

std::string Tile(const kernels::TileShape& s) {
  return fmt::format("{}x{} tile, {}x{} cluster", s.tile_m, s.tile_n, s.cluster_m, s.cluster_n);
}

std::string Stat(const ErrorStats& s, double value) { return s.cases > 0 ? fmt::format("{:.2f}", value) : "-"; }

std::string CaseName(const CaseResult& row) {
  std::string text = fmt::format("{}x{}x{} {} {}", row.m, row.n, row.k, kernels::PrecisionName(row.precision),
                                 row.layout);
  if (row.power_limit_w) text += fmt::format(" @{:.0f} W", *row.power_limit_w);
  return text;
}

}  // namespace

ErrorStats StatsOf(const std::vector<double>& errors_pp) {
  ErrorStats stats;
  if (errors_pp.empty()) return stats;
  std::vector<double> magnitudes;
  for (double e : errors_pp) magnitudes.push_back(std::abs(e));
  stats.cases = static_cast<int>(magnitudes.size());
  double sum = 0;
  for (double m : magnitudes) {
    stats.max_pp = std::max(stats.max_pp, m);
    sum += m;
  }
  stats.mean_pp = sum / static_cast<double>(magnitudes.size());
  stats.p95_pp = Percentile(magnitudes, 0.95);
  return stats;
}

Exceedance Explain(const CaseResult& row) {
  Exceedance e;
  e.row = row;
  e.error_pp = row.err_corrected_pp ? *row.err_corrected_pp : row.err_raw_pp.value_or(0);
  if (IsSimt(row)) {
    e.reason = "SIMT";
    e.detail = "runs on CUDA cores, which tensor activity does not see";
    return e;
  }
  if (auto tile = ChooseCorrectionTile(row.name_tiling, row.algorithm_tiling)) {
    kernels::TileShape swapped = tile->shape;
    std::swap(swapped.tile_m, swapped.tile_n);
    std::swap(swapped.cluster_m, swapped.cluster_n);
    const std::optional<double> swapped_pp = ErrorWithTile(row, swapped);
    if (swapped.tile_m != tile->shape.tile_m && Explains(swapped_pp, e.error_pp)) {
      e.reason = "tile orientation";
      e.detail = fmt::format("padding with a {} (M and N exchanged) gives {:+.2f} pp", Tile(swapped), *swapped_pp);
      return e;
    }
    kernels::TileShape other_cluster = tile->shape;
    if (other_cluster.cluster_m * other_cluster.cluster_n > 1) {
      other_cluster.cluster_m = other_cluster.cluster_n = 1;
    } else if (row.algorithm_tiling.cluster_m && row.algorithm_tiling.cluster_n) {
      other_cluster.cluster_m = *row.algorithm_tiling.cluster_m;
      other_cluster.cluster_n = *row.algorithm_tiling.cluster_n;
    }
    const std::optional<double> cluster_pp = ErrorWithTile(row, other_cluster);
    if ((other_cluster.cluster_m != tile->shape.cluster_m || other_cluster.cluster_n != tile->shape.cluster_n) &&
        Explains(cluster_pp, e.error_pp)) {
      e.reason = "cluster padding";
      e.detail = fmt::format("padding with a {} gives {:+.2f} pp", Tile(other_cluster), *cluster_pp);
      return e;
    }
  }
  if (row.err_exact_pp && std::abs(*row.err_exact_pp) <= kGoalPp) {
    e.reason = "clock";
    e.detail = fmt::format("exact-cycle OFU is within {:+.2f} pp: the sampled clock misses the mean",
                           *row.err_exact_pp);
    return e;
  }
  if (row.err_run_pp && std::abs(*row.err_run_pp) <= kGoalPp && row.sm_clock_run_mhz && row.nvml_over_run) {
    e.reason = "clock";
    e.detail = fmt::format("with the SMs' own clock ({:.0f} MHz; NVML reads {:.3f} of it) OFU is within {:+.2f} pp",
                           *row.sm_clock_run_mhz, *row.nvml_over_run, *row.err_run_pp);
    return e;
  }
  std::vector<double> clocks;
  for (const auto& clock : {row.sm_clock_mhz, row.sm_clock_point_mhz, row.source_clock_mhz}) {
    if (clock && *clock > 0) clocks.push_back(*clock);
  }
  if (clocks.size() >= 2) {
    const auto [low, high] = std::minmax_element(clocks.begin(), clocks.end());
    if (*high > *low * 1.01) {
      e.reason = "clock";
      e.detail = fmt::format("clock readings disagree: {:.0f} to {:.0f} MHz", *low, *high);
      return e;
    }
  }
  if (row.time_per_iteration_us > 0 && row.time_per_iteration_us < kLaunchGapIterationUs) {
    e.reason = "launch gaps";
    e.detail = fmt::format("{:.1f} µs per iteration: launch overhead and the loop's edges weigh",
                           row.time_per_iteration_us);
    return e;
  }
  e.reason = "unexplained";
  e.detail = fmt::format("tile check: {}", TileCheckName(row.tile_check));
  return e;
}

Summary Summarize(const std::vector<CaseResult>& rows) {
  Summary summary;
  struct Errors {
    std::vector<double> raw, corrected, exact, point, oversampled;
  };
  std::map<Precision, Errors> by_precision;
  std::map<Precision, std::vector<const CaseResult*>> simt;
  for (const CaseResult& row : rows) {
    if (IsSkipped(row)) {
      summary.skipped += 1;
      constexpr std::string_view kPrefix = "skipped:";
      std::string reason = row.note.substr(kPrefix.size());
      if (!reason.empty() && reason.front() == ' ') reason.erase(0, 1);
      summary.skip_reasons[reason] += 1;
      continue;
    }
    if (row.iterations <= 0 && !row.mfu) continue;
    summary.measured += 1;
    if (IsSimt(row)) {
      simt[row.precision].push_back(&row);
    } else {
      Errors& errors = by_precision[row.precision];
      if (row.err_raw_pp) errors.raw.push_back(*row.err_raw_pp);
      if (row.err_corrected_pp) errors.corrected.push_back(*row.err_corrected_pp);
      if (row.err_exact_pp) errors.exact.push_back(*row.err_exact_pp);
      if (row.err_point_pp) errors.point.push_back(*row.err_point_pp);
      if (row.err_oversampled_pp) errors.oversampled.push_back(*row.err_oversampled_pp);
    }
    const std::optional<double> judged = row.err_corrected_pp ? row.err_corrected_pp : row.err_raw_pp;
    if (judged && std::abs(*judged) > kGoalPp) summary.exceedances.push_back(Explain(row));
  }
  for (const auto& [precision, errors] : by_precision) {
    summary.precisions.push_back(PrecisionSummary{precision, StatsOf(errors.raw), StatsOf(errors.corrected),
                                                  StatsOf(errors.exact), StatsOf(errors.point),
                                                  StatsOf(errors.oversampled)});
  }
  for (const auto& [precision, list] : simt) {
    SimtSummary s;
    s.precision = precision;
    s.cases = static_cast<int>(list.size());
    double tflops = 0, ofu = 0;
    bool all_ofu = true;
    for (const CaseResult* row : list) {
      tflops += row->achieved_tflops;
      if (row->ofu_raw) {
        ofu += *row->ofu_raw;
      } else {
        all_ofu = false;
      }
    }
    s.mean_achieved_tflops = tflops / static_cast<double>(list.size());
    if (all_ofu) s.mean_ofu_raw = ofu / static_cast<double>(list.size());
    summary.simt.push_back(s);
  }
  return summary;
}

std::string FormatSummary(const Summary& summary, const std::string& source_name) {
  std::string out = fmt::format("ofu-gemm summary of {}: {} cases measured, {} skipped\n\n", source_name,
                                summary.measured, summary.skipped);
  out += "Error of OFU against true MFU, percentage points: |OFU - MFU| x 100\n";
  out += "(p95 by linear interpolation between closest ranks; goal: corrected max <= 1 pp)\n\n";
  out += fmt::format("{:<10} {:<12} {:>6} {:>8} {:>8} {:>8}\n", "precision", "estimate", "cases", "max", "mean", "p95");
  for (const PrecisionSummary& p : summary.precisions) {
    const std::pair<const char*, const ErrorStats*> estimates[] = {{"raw", &p.raw},
                                                                   {"corrected", &p.corrected},
                                                                   {"exact-cycle", &p.exact},
                                                                   {"point-clock", &p.point},
                                                                   {"oversampled", &p.oversampled}};
    for (const auto& [name, stats] : estimates) {
      const bool always = std::string_view(name) == "raw" || std::string_view(name) == "corrected";
      if (!always && stats->cases == 0) continue;
      out += fmt::format("{:<10} {:<12} {:>6} {:>8} {:>8} {:>8}\n", kernels::PrecisionName(p.precision), name,
                         stats->cases, Stat(*stats, stats->max_pp), Stat(*stats, stats->mean_pp),
                         Stat(*stats, stats->p95_pp));
    }
  }
  if (summary.precisions.empty()) out += "(no tensor-core case with an MFU)\n";

  out += fmt::format("\nCases above {} pp (corrected error, else raw): {}\n", kGoalPp, summary.exceedances.size());
  for (const Exceedance& e : summary.exceedances) {
    out += fmt::format("  {:<28} {:<16} {:+7.2f} pp  {}: {}\n", CaseName(e.row), e.row.group, e.error_pp, e.reason,
                       e.detail);
  }
  if (!summary.simt.empty()) {
    out += "\nSIMT GEMMs (CUDA cores; tensor activity does not count them):\n";
    for (const SimtSummary& s : summary.simt) {
      out += fmt::format("  {}: {} cases, {:.1f} TFLOP/s mean achieved, tensor OFU {}\n",
                         kernels::PrecisionName(s.precision), s.cases, s.mean_achieved_tflops,
                         s.mean_ofu_raw ? fmt::format("{:.4f}", *s.mean_ofu_raw) : std::string("absent"));
    }
  }
  if (!summary.skip_reasons.empty()) {
    out += "\nSkipped cases:\n";
    for (const auto& [reason, count] : summary.skip_reasons) out += fmt::format("  {} x {}\n", count, reason);
  }
  return out;
}

}  // namespace ofu::gemm
