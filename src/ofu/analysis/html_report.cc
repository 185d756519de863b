#include "ofu/analysis/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ofu/analysis/correction.h"
#include "ofu/analysis/mfu_inputs.h"
#include "ofu/analysis/store_report.h"
#include "ofu/core/clock_model.h"
#include "ofu/kernels/kernel_throughput.h"

namespace ofu::analysis {
namespace {

using history::StoredGpu;
using history::StoredJob;
using history::StoredWindow;

// Rows of one GPU, in end_s order (ReadHistory's order).
using GpuRows = std::vector<const StoredWindow*>;

// Sums of utilized and observed seconds per bucket index, each row weighted
// by its GPU's share of a physical GPU (1, or a MIG slice's; gpu_share.h);
// and of FP32 pipe seconds over the observed seconds of the rows that have
// them, as store_report.cc sums a job's.
class BucketSums {
 public:
  explicit BucketSums(double bucket_s) : bucket_s_(bucket_s) {}

  void Add(const StoredWindow& row, double weight = 1) {
    Sum& sum = sums_[static_cast<std::int64_t>(std::ceil(row.end_s / bucket_s_))];
    sum.utilized += row.counters.utilized_s() * weight;
    sum.observed += row.counters.observed_s() * weight;
    if (row.counters[kCounterFp32Active]) {
      sum.fp32 += *row.counters[kCounterFp32Active] * weight;
      sum.fp32_observed += row.counters.observed_s() * weight;
    }
  }

  // One point per bucket with rows, plus one without OFU at the first bucket
  // of each run of buckets without rows, so that the line breaks there.
  std::vector<TimelinePoint> Points() const {
    std::vector<TimelinePoint> points;
    std::optional<std::int64_t> previous;
    for (const auto& [k, sum] : sums_) {
      if (previous && k > *previous + 1) points.push_back({static_cast<double>(*previous + 1) * bucket_s_, {}});
      TimelinePoint point{static_cast<double>(k) * bucket_s_, {}};
      if (sum.observed > 0) point.ofu = sum.utilized / sum.observed;
      if (sum.fp32_observed > 0) point.fp32_active = sum.fp32 / sum.fp32_observed;
      points.push_back(point);
      previous = k;
    }
    return points;
  }

 private:
  struct Sum {
    double utilized = 0, observed = 0;
    double fp32 = 0, fp32_observed = 0;
  };
  double bucket_s_;
  std::map<std::int64_t, Sum> sums_;
};

// The rows of `rows` (in end_s order) that belong to `job`: the store's rule
// (history_reader.h) is that a row belongs to a job when its end lies inside
// the job's interval (start_s, end_s] on that GPU.
std::pair<GpuRows::const_iterator, GpuRows::const_iterator> RowsInInterval(const GpuRows& rows, const StoredJob& job) {
  auto first = std::upper_bound(rows.begin(), rows.end(), job.start_s,
                                [](double t, const StoredWindow* row) { return t < row->end_s; });
  auto last = job.end_s ? std::upper_bound(first, rows.end(), *job.end_s,
                                           [](double t, const StoredWindow* row) { return t < row->end_s; })
                        : rows.end();
  return {first, last};
}

double Quantile(const std::vector<double>& sorted, double p) {
  const double at = p * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(at));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - static_cast<double>(below));
}

int OfuBin(double ofu) {
  const double scaled = std::floor(std::max(ofu, 0.0) * kOfuBinsPerUnit);
  return static_cast<int>(std::min(scaled, static_cast<double>(kOfuBins - 1)));
}

// Keeps the `keep` indices of `weights` with the largest weight, in index order.
std::vector<std::size_t> Heaviest(const std::vector<double>& weights, std::size_t keep) {
  std::vector<std::size_t> order(weights.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (order.size() > keep) {
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return weights[a] > weights[b]; });
    order.resize(keep);
    std::sort(order.begin(), order.end());
  }
  return order;
}

using RowsByGpu = std::map<std::int64_t, GpuRows>;
using ShareByGpu = std::map<std::int64_t, std::optional<double>>;  // by GPU id; absent: in no fleet figure

// One SKU's distribution, and its share-weighted sums for the SKU's OFU.
struct SkuSums {
  SkuDistribution distribution;
  double utilized_s = 0, observed_s = 0;
};

// Each SKU's box of GPU OFUs and its OFU, into the view; the GPUs of no
// known SKU last.
void AddSkus(std::map<std::string, SkuSums>& skus, HtmlReportView& view) {
  for (auto& [id, sums] : skus) {
    SkuDistribution& sku = sums.distribution;
    std::sort(sku.gpu_ofu.begin(), sku.gpu_ofu.end());
    if (!sku.gpu_ofu.empty()) {
      const auto& v = sku.gpu_ofu;
      sku.box = BoxSummary{v.front(), Quantile(v, 0.25), Quantile(v, 0.5), Quantile(v, 0.75), v.back()};
    }
    if (sums.observed_s > 0) sku.ofu = sums.utilized_s / sums.observed_s;
  }
  for (auto& [id, sums] : skus) {
    if (!id.empty()) view.skus.push_back(std::move(sums.distribution));
  }
  if (auto unknown = skus.find(""); unknown != skus.end()) view.skus.push_back(std::move(unknown->second.distribution));
}

// Per GPU: its timeline, and its rows into its SKU's distribution. The
// heaviest timelines go into the view; returns each GPU's share.
ShareByGpu AddGpusAndSkus(const history::StoredHistory& history, const Report& totals, RowsByGpu& rows_of,
                          const HtmlReportOptions& options, HtmlReportView& view) {
  std::map<std::string, SkuSums> skus;
  ShareByGpu share_of;
  std::vector<GpuTimeline> gpus;
  std::vector<double> gpu_observed_s;
  for (std::size_t i = 0; i < history.gpus.size(); ++i) {
    const StoredGpu& stored = history.gpus[i];
    const GpuIdentity& id = stored.identity;
    GpuTimeline gpu{id.key, id.gpu_index, id.model, stored.sku, id.hostname, {}, 0, {}, {}, {}};
    gpu.ofu = totals.gpus[i].summary.ofu;
    gpu.non_tensor = totals.gpus[i].summary.non_tensor;
    gpu.clock_source = ClockSourcesName(totals.gpus[i].summary.clock_sources);
    const std::optional<double> share = totals.gpus[i].share;
    share_of[stored.id] = share;
    SkuSums& sums = skus[stored.sku];
    SkuDistribution& sku = sums.distribution;
    if (sku.gpus++ == 0) {
      sku.sku = stored.sku;
      sku.model = stored.identity.model;
      sku.observed_hours_by_bin.assign(kOfuBins, 0.0);
    }
    if (gpu.ofu) sku.gpu_ofu.push_back(*gpu.ofu);
    BucketSums buckets(view.bucket_s);
    double observed_s = 0;
    for (const StoredWindow* row : rows_of[stored.id]) {
      buckets.Add(*row);
      observed_s += row->counters.observed_s();
      if (row->counters.observed_s() <= 0) continue;
      sku.observed_hours_by_bin[static_cast<std::size_t>(
          OfuBin(row->counters.utilized_s() / row->counters.observed_s()))] += row->counters.observed_s() / 3600;
      if (share) {
        sums.utilized_s += row->counters.utilized_s() * *share;
        sums.observed_s += row->counters.observed_s() * *share;
      }
    }
    gpu.observed_hours = observed_s / 3600;
    sku.observed_hours += gpu.observed_hours;
    if (!stored.sku.empty()) view.observed_hours += gpu.observed_hours;
    gpu.points = buckets.Points();
    gpus.push_back(std::move(gpu));
    gpu_observed_s.push_back(observed_s);
  }
  for (std::size_t i : Heaviest(gpu_observed_s, options.max_gpu_timelines)) view.gpus.push_back(std::move(gpus[i]));
  AddSkus(skus, view);
  return share_of;
}

// Per job: the rows of its GPUs inside its intervals, all GPUs together;
// the heaviest jobs' timelines go into the view.
void AddJobs(const history::StoredHistory& history, const Report& totals, RowsByGpu& rows_of, ShareByGpu& share_of,
             const HtmlReportOptions& options, HtmlReportView& view) {
  std::map<std::string, BucketSums> job_buckets;
  for (const StoredJob& job : history.jobs) {
    auto [it, added] = job_buckets.try_emplace(job.job_id, view.bucket_s);
    const std::optional<double> share = share_of[job.gpu_id];
    if (!share) continue;  // as in the job's totals (store_report.h)
    auto [first, last] = RowsInInterval(rows_of[job.gpu_id], job);
    for (; first != last; ++first) it->second.Add(**first, *share);
  }
  std::vector<double> job_observed_hours;
  for (const JobTotals& job : totals.jobs) job_observed_hours.push_back(job.observed_hours);
  for (std::size_t i : Heaviest(job_observed_hours, options.max_job_timelines)) {
    const JobTotals& job = totals.jobs[i];
    JobTimeline timeline{job.job_id, job.user, job.job_name, job.gpus, job.gpu_hours, job.ofu, {}, job.non_tensor};
    if (auto it = job_buckets.find(job.job_id); it != job_buckets.end()) timeline.points = it->second.Points();
    view.jobs.push_back(std::move(timeline));
  }
}

// The CUDA-core advice of every job and then every GPU (cuda_core_advice.h),
// at most options.max_advice of it. A job is judged on its totals; its gain
// uses its GPUs' spec when they all have the same one.
void AddCudaCoreAdvice(const history::StoredHistory& history, const Report& totals, ShareByGpu& share_of,
                       const HtmlReportOptions& options, HtmlReportView& view) {
  std::map<std::int64_t, const GpuSpec*> spec_of;
  for (std::size_t i = 0; i < history.gpus.size(); ++i) spec_of[history.gpus[i].id] = totals.gpus[i].spec;
  // Per job id: the one spec of its GPUs with a share; null when they differ.
  std::map<std::string, const GpuSpec*> job_spec;
  for (const StoredJob& job : history.jobs) {
    if (!share_of[job.gpu_id]) continue;  // not in the job's totals either
    const GpuSpec* spec = spec_of[job.gpu_id];
    auto [it, added] = job_spec.try_emplace(job.job_id, spec);
    if (!added && it->second != spec) it->second = nullptr;
  }
  std::vector<CudaCoreFinding> found;
  for (const JobTotals& job : totals.jobs) {
    Summary summary;
    summary.ofu = job.ofu;
    summary.non_tensor = job.non_tensor;
    auto spec = job_spec.find(job.job_id);
    if (auto advice = AdviseCudaCores("job " + job.job_id, spec == job_spec.end() ? nullptr : spec->second, summary)) {
      found.push_back({job.job_id, "", std::move(*advice)});
    }
  }
  for (std::size_t i = 0; i < totals.gpus.size(); ++i) {
    const GpuReport& gpu = totals.gpus[i];
    if (auto advice = AdviseCudaCores(gpu.identity.key, gpu.spec, gpu.summary)) {
      found.push_back({"", history.gpus[i].key(), std::move(*advice)});
    }
  }
  view.cuda_core_advice_total = static_cast<int>(found.size());
  if (found.size() > options.max_advice) found.resize(options.max_advice);
  view.cuda_core_advice = std::move(found);
}

}  // namespace

double ChooseBucketSeconds(double range_s, double longest_row_s, std::size_t max_points) {
  // Up to two buckets go to the alignment of the grid at the range's ends.
  const double buckets = static_cast<double>(std::max<std::size_t>(max_points, 3) - 2);
  const double at_least = std::max({range_s / buckets, longest_row_s, 1e-9});
  static constexpr double kSteps[] = {0.1, 0.2, 0.5, 1,    2,    5,    10,    15,    30,    60,   120,
                                      300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400};
  for (double step : kSteps) {
    // A row of 0.1 s still gets 0.1 s buckets when its span, a difference
    // of epoch seconds (whose unit in the last place is 2.4e-7 s), reads a
    // few parts in a million long.
    if (step * (1 + 1e-3) >= at_least) return step;
  }
  return std::ceil(at_least / 86400) * 86400;
}

HtmlReportView BuildHtmlReportView(const history::StoredHistory& history, const Report& totals,
                                   const HtmlReportOptions& options) {
  HtmlReportView view;
  view.title = options.title;
  view.source = options.source;
  view.generated_at_s = options.generated_at_s;
  view.synthetic = options.synthetic;
  view.query = history.query;

  view.overall_ofu = totals.overall.ofu;
  view.overall_clock_source = ClockSourcesName(totals.overall.clock_sources);
  view.overall_non_tensor = totals.overall.non_tensor;
  view.gpus_total = static_cast<int>(history.gpus.size());
  view.jobs_total = static_cast<int>(totals.jobs.size());
  for (const GpuReport& gpu : totals.gpus) {
    for (const std::string& problem : gpu.problems) {
      view.notes.push_back(fmt::format("GPU {} ({}): {}", gpu.identity.gpu_index, gpu.identity.uuid, problem));
    }
  }

  RowsByGpu rows_of;
  double longest_row_s = 0;
  for (const StoredWindow& row : history.windows) {
    rows_of[row.gpu_id].push_back(&row);
    longest_row_s = std::max(longest_row_s, row.span_s);
    view.start_s = std::min(view.start_s.value_or(INFINITY), row.end_s - row.span_s);
    view.end_s = std::max(view.end_s.value_or(-INFINITY), row.end_s);
  }
  if (!view.start_s) return view;
  view.bucket_s = ChooseBucketSeconds(*view.end_s - *view.start_s, longest_row_s, options.max_points_per_series);

  ShareByGpu share_of = AddGpusAndSkus(history, totals, rows_of, options, view);
  AddJobs(history, totals, rows_of, share_of, options, view);
  AddCudaCoreAdvice(history, totals, share_of, options, view);
  return view;
}

KernelFindings KernelFindingsOfCorrection(const CorrectionReport& report, std::vector<std::string> traces,
                                          const GpuSpec* gpu) {
  KernelFindings findings;
  findings.traces = std::move(traces);
  if (gpu != nullptr) {
    findings.gpu_sku = gpu->id;
    findings.gpu_name = gpu->name;
  }
  findings.factor = report.factor;
  findings.padding_factor = report.padding_factor;
  findings.throughput_factor = report.throughput_factor;
  for (const PreNativeGemm& g : report.pre_native) {
    findings.gemms.push_back({g, "pre-native kernel", g.lost_share, g.family, g.unaligned, g.advice});
  }
  for (const WastefulGemm& w : report.wasteful) {
    findings.gemms.push_back({w, "tile padding", w.wasted_share, "", {}, w.advice});
  }
  findings.notes = report.notes;
  return findings;
}

MfuScatter ScatterOfReconciliation(const ReconcileReport& report) {
  MfuScatter scatter;
  for (const ReconciledJob& job : report.jobs) {
    if (!job.expected_mfu) continue;
    ScatterPoint point;
    point.job_id = job.job_id;
    point.expected_mfu = *job.expected_mfu;
    point.reported_mfu = job.reported_mfu;
    point.flagged = job.flagged();
    point.reason = job.explanation;
    scatter.points.push_back(std::move(point));
  }
  scatter.pearson_r = report.all.pearson_r;
  scatter.spearman_rho = report.all.spearman_rho;
  scatter.mean_abs_error = report.all.mean_absolute_error;
  scatter.note = fmt::format("MFU reported in {}; expected MFU from OFU at each job's reference precision",
                             report.mfu_log);
  if (report.unflagged.pearson_r) {
    scatter.note += fmt::format("; without the {} flagged jobs r = {:.2f}", report.all.jobs - report.unflagged.jobs,
                                *report.unflagged.pearson_r);
  }
  return scatter;
}

std::vector<RegressionMarker> MarkersOfRegressions(const RegressReport& report) {
  std::vector<RegressionMarker> markers;
  for (const OfuChange& change : report.changes) {
    RegressionMarker marker;
    marker.job_id = change.job_id;
    if (change.gpus.size() == 1) marker.gpu_uuid = change.gpus.front();
    marker.t_s = change.time_s;
    marker.before_ofu = change.before;
    marker.after_ofu = change.after;
    marker.ratio = change.ratio;
    marker.kind = change.ratio < 1 ? "regression" : "improvement";
    marker.description = fmt::format("OFU {:.1f} % -> {:.1f} % on {} GPU{}", 100 * change.before, 100 * change.after,
                                     change.gpus.size(), change.gpus.size() == 1 ? "" : "s");
    markers.push_back(std::move(marker));
  }
  for (const PrecisionShift& shift : report.precision_shifts) {
    RegressionMarker marker;
    marker.job_id = shift.job_id;
    if (shift.gpus.size() == 1) marker.gpu_uuid = shift.gpus.front();
    marker.t_s = shift.time_s;
    marker.kind = "precision shift";
    std::vector<std::string> pipes;
    for (const PipeShift& pipe : shift.pipes) {
      pipes.push_back(fmt::format("{} share {:.0f} % -> {:.0f} %", pipe.pipe, 100 * pipe.before, 100 * pipe.after));
    }
    marker.description = fmt::format("{} on {} GPU{}", fmt::join(pipes, ", "), shift.gpus.size(),
                                     shift.gpus.size() == 1 ? "" : "s");
    markers.push_back(std::move(marker));
  }
  for (const RunChange& change : report.run_changes) {
    RegressionMarker marker;
    marker.job_id = change.first_job_id;
    marker.t_s = change.time_s;
    marker.before_ofu = change.before;
    marker.after_ofu = change.after;
    marker.ratio = change.ratio;
    marker.kind = change.ratio < 1 ? "regression across runs" : "improvement across runs";
    marker.description = fmt::format("runs of {}: mean OFU {:.1f} % over {} runs, then {:.1f} % over {} from this one",
                                     change.job_name, 100 * change.before, change.runs_before, 100 * change.after,
                                     change.runs_after);
    markers.push_back(std::move(marker));
  }
  std::sort(markers.begin(), markers.end(),
            [](const RegressionMarker& a, const RegressionMarker& b) { return a.t_s < b.t_s; });
  return markers;
}

Result<KernelFindings> KernelFindingsOfTrace(const formats::KernelTrace& trace, std::vector<std::string> traces,
                                             const GpuSpec* gpu, const std::string& gpu_note) {
  OFU_ASSIGN_OR_RETURN(const kernels::KernelThroughputTable throughput, kernels::KernelThroughputTable::Embedded());
  CorrectionOptions options;
  options.gpu = gpu;
  options.throughput = &throughput;
  CorrectionReport report = ComputeCorrection(trace, options);
  if (!gpu_note.empty()) report.notes.push_back(gpu_note);
  return KernelFindingsOfCorrection(report, std::move(traces), gpu);
}

Status AddFleetAnalyses(HtmlReportView& view, const history::StoredHistory& history, const Report& store,
                        const FleetAnalysesInput& input) {
  if (history.jobs.empty()) return OkStatus();
  if (input.progress) input.progress("scanning for regressions");
  view.markers = MarkersOfRegressions(ScanRegressions(history, store, {}));
  if (!input.mfu) return OkStatus();
  OFU_ASSIGN_OR_RETURN(const MfuInputs mfu, ReadMfuInputs(input.mfu, {}, input.corrections));
  if (input.progress) input.progress("reconciling OFU with the MFU log");
  view.scatter = ScatterOfReconciliation(Reconcile(history, store, mfu.log, mfu.corrections, input.specs,
                                                   ReconcileOptions{}));
  return OkStatus();
}

}  // namespace ofu::analysis
