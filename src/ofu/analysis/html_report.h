// The visual report (`ofu report --html OUT.html`): the view model of one
// self-contained HTML page with OFU timelines per job and per GPU, OFU
// distributions by SKU, the OFU-vs-MFU scatter, regression markers, and the
// work outside the tensor cores (CUDA-core pipe activity, the non-tensor FLOP
// bound and the CUDA-core advice of cuda_core_advice.h).
//
// Two steps, so that each analysis fills its own part:
//
//   Report totals = BuildStoreReport(history, specs);
//   HtmlReportView view = BuildHtmlReportView(history, totals, options);
//   view.scatter = ...;   // from the reconciliation (reconcile.h), if run
//   view.markers = ...;   // from the regression scan (regress.h), if run
//   std::string html = render::RenderHtmlReport(view);   // render/html_page.h
//
// The view model holds only what the page shows; the render layer writes
// the page.
//
// Timelines. Every series shares one grid of buckets (k-1)·bucket_s <
// t <= k·bucket_s in epoch seconds. A bucket's OFU is exactly
// sum(utilized_s) / sum(observed_s) over the stored rows that end in it (the
// rows of a job: those of its GPUs that end inside its intervals), so a
// downsampled row counts the same as the windows it sums. A bucket with
// rows but no observed second, or the first bucket of a run without rows
// between two buckets with rows, is a point without OFU: the page draws a
// gap there, never a zero. bucket_s is the smallest of 0.1, 0.2, 0.5, 1, 2,
// 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h, then whole days, that is at
// least the longest stored row and keeps the grid over the rows' range to at
// most max_points_per_series buckets; so a series has at most that many
// points, whatever the store's resolution (a 30-day store of 1 s windows
// gives 2 h buckets at the default 500).
//
// Work outside the tensor cores. Per GPU, per job and for the fleet the page
// shows the non-tensor figures of `ofu report --store` (store_report.h and
// report.h compute them; this file only copies them), and per bucket the
// FP32 pipe activity beside OFU: sum(fp32_active_s) / sum(observed_s) over
// the bucket's rows that have the counter, weighted like OFU. A figure is
// absent when its counter is, never 0. The CUDA-core advice is
// AdviseCudaCores (the same thresholds and text as `ofu report`) for each GPU
// and for each job (its OFU and non-tensor totals; the gain needs one SKU
// for all of the job's GPUs).
//
// GEMM findings from a kernel trace. With `ofu report --html --trace`, the
// page also shows what `ofu correct` finds in the trace (correction.h): the
// correction factor and its two parts, and per GEMM the pre-native kernels
// (built for an older architecture: fewer FLOPs per tensor-active cycle, so
// OFU reads high) and the tile padding that wastes tensor time, each with its
// advice. KernelFindingsOfCorrection copies them; nothing is recomputed here.
// Without a trace the view has no findings and the page no such section.
//
// Size. At most max_gpu_timelines GPU series and max_job_timelines job
// series are drawn (those with the most observed seconds; the page says how
// many are left out); the distributions and totals cover every GPU and job.
// At most max_advice pieces of advice are kept (jobs first, then GPUs).
// With the defaults the JSON stays under about 10 MB for any store.
//
// Thread-safety: pure functions of their inputs; the types are plain values.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ofu/analysis/correction.h"
#include "ofu/analysis/cuda_core_advice.h"
#include "ofu/analysis/reconcile.h"
#include "ofu/analysis/regress.h"
#include "ofu/analysis/run_page.h"
#include "ofu/analysis/store_report.h"
#include "ofu/core/non_tensor.h"
// Header-only dependency on the stored row types; no link dependency.
#include "ofu/history/history_reader.h"

namespace ofu::analysis {

// OFU histogram bins: [0, 0.05), [0.05, 0.10), ... [0.95, 1.0), and the last
// bin for OFU >= 1.0 (a GPU above f_spec; OFU is never clamped).
inline constexpr int kOfuBinsPerUnit = 20;
inline constexpr int kOfuBins = kOfuBinsPerUnit + 1;

struct TimelinePoint {
  TimelinePoint() = default;
  TimelinePoint(double t, std::optional<double> ofu_, std::optional<double> fp32 = std::nullopt)
      : t_s(t), ofu(ofu_), fp32_active(fp32) {}

  double t_s = 0;             // end of the bucket, epoch seconds
  std::optional<double> ofu;  // absent: nothing observed in the bucket (a gap)
  // FP32 (CUDA-core) pipe activity, 0-1; absent: no row of the bucket has the counter.
  std::optional<double> fp32_active;
};

struct GpuTimeline {
  std::string uuid;
  std::string gpu_index;
  std::string model;
  std::string sku;  // empty when the model is not in the spec database
  std::string hostname;
  std::optional<double> ofu;  // over the whole range
  double observed_hours = 0;
  std::vector<TimelinePoint> points;
  NonTensorFigures non_tensor;  // over the whole range (report.h GpuReport summary)
  // Where its OFU took the SM clock (ClockSourcesName: "measured-model",
  // "exact-cycles+measured-model", ...); empty when the rows do not say.
  std::string clock_source;
};

struct JobTimeline {
  std::string job_id;
  std::string user;
  std::string job_name;
  int gpus = 0;
  double gpu_hours = 0;
  std::optional<double> ofu;          // the job's OFU over the range (store_report.h JobTotals)
  std::vector<TimelinePoint> points;  // over all its GPUs together
  NonTensorFigures non_tensor;        // over the range (store_report.h JobTotals)
};

// Quartiles by linear interpolation between order statistics (at
// p·(n-1)), so one GPU gives min = q1 = median = q3 = max.
struct BoxSummary {
  double min = 0;
  double q1 = 0;
  double median = 0;
  double q3 = 0;
  double max = 0;
};

struct SkuDistribution {
  std::string sku;                // empty: GPUs whose model is not in the spec database
  std::string model;              // the first model name seen with this SKU
  int gpus = 0;                   // every GPU of the SKU in the range, with or without OFU
  std::vector<double> gpu_ofu;    // OFU of each GPU that has one, ascending
  std::optional<BoxSummary> box;  // of gpu_ofu; absent when it is empty
  // Observed hours of stored rows by the row's OFU (kOfuBins bins). A
  // downsampled row falls in the bin of its mean.
  std::vector<double> observed_hours_by_bin;
  std::optional<double> ofu;  // sum(utilized_s) / sum(observed_s) over the SKU's rows, MIG instances weighted by share
  double observed_hours = 0;
};

// One job of the OFU-vs-MFU reconciliation (reconcile.h fills these).
struct ScatterPoint {
  std::string job_id;
  double expected_mfu = 0;  // x: MFU implied by the job's OFU at its reference precision, 0-1
  double reported_mfu = 0;  // y: what the application reported, 0-1
  bool flagged = false;
  std::string reason;  // why it is flagged (the most likely explanation); may be set when not flagged
};

struct MfuScatter {
  std::vector<ScatterPoint> points;
  std::optional<double> pearson_r;
  std::optional<double> spearman_rho;
  std::optional<double> mean_abs_error;  // |reported - expected| averaged, 0-1
  std::string note;                      // where the MFU came from, the reference precision, ...
};

// A change found by the regression scan (regress.h fills these). Drawn on
// the timeline of its job (job_id) and of its GPU (gpu_uuid) when they are
// in the report, and listed in a table either way.
struct RegressionMarker {
  std::string job_id;    // may be empty
  std::string gpu_uuid;  // may be empty
  double t_s = 0;        // when it changed, epoch seconds
  std::optional<double> before_ofu;
  std::optional<double> after_ofu;
  std::optional<double> ratio;  // after / before: 0.4 is a 2.5x drop
  std::string kind;             // "regression", "precision shift", ...
  std::string description;
};

// One piece of CUDA-core advice: for a job (job_id set) or a GPU (gpu_uuid set).
struct CudaCoreFinding {
  std::string job_id;
  std::string gpu_uuid;
  CudaCoreAdvice advice;
};

// One GEMM of the trace that `ofu correct` has a finding for.
// The GEMM (GemmIdentity: kernel, op, shape in framework orientation,
// precision, launches, share of the trace's tensor time 0-1) and what was
// found about it.
struct GemmFinding : GemmIdentity {
  std::string kind;  // "pre-native kernel" (PreNativeGemm) or "tile padding" (WastefulGemm)
  // Pre-native: the tensor time a native kernel would not spend; tile
  // padding: the tensor time spent on padding; both over the trace's, 0-1.
  // Absent for a pre-native family nobody measured (no relative throughput).
  std::optional<double> lost_share;
  std::string family;                  // pre-native only: "sm75 s1688 bf16"
  std::vector<std::string> unaligned;  // pre-native only: "K = 8191"; empty when every dimension is aligned
  std::string advice;                  // for a person, as `ofu correct` prints it
};

struct KernelFindings {
  std::vector<std::string> traces;  // the paths given, for people
  // The GPU whose rates weighed the precisions: its SKU id and name; both
  // empty when none was known (generic rates).
  std::string gpu_sku;
  std::string gpu_name;
  std::optional<double> factor;  // absent: no kernel could be corrected
  std::optional<double> padding_factor;
  std::optional<double> throughput_factor;
  // Pre-native kernels first (largest tensor time first), then tile padding
  // (most waste first), as correction.h orders each list.
  std::vector<GemmFinding> gemms;
  std::vector<std::string> notes;  // the correction's notes (coverage, unmeasured families, ...)
};

// The findings of `report` (ComputeCorrection of the trace(s) at `traces`,
// with the rates of `gpu`, null for generic rates).
KernelFindings KernelFindingsOfCorrection(const CorrectionReport& report, std::vector<std::string> traces,
                                          const GpuSpec* gpu);

// What `ofu correct` finds in `trace` (read from `traces`), with its default
// options, the compiled-in kernel-throughput table (kernels/kernel_throughput.h)
// and the rates of `gpu` (null: generic); `gpu_note`, when not empty, joins
// the notes (why the trace named no GPU ofu knows). Errors: the table's.
Result<KernelFindings> KernelFindingsOfTrace(const formats::KernelTrace& trace, std::vector<std::string> traces,
                                             const GpuSpec* gpu, const std::string& gpu_note);

struct HtmlReportOptions {
  std::string title = "OFU report";
  // What was read, for people: a store path or a Prometheus URL.
  std::string source;
  double generated_at_s = 0;                // epoch seconds; injected, no clock here
  bool synthetic = false;                   // the data is made up: the page says so on top
  std::size_t max_points_per_series = 500;  // at least 3
  std::size_t max_gpu_timelines = 128;
  std::size_t max_job_timelines = 100;
  std::size_t max_advice = 200;
};

struct HtmlReportView {
  std::string title;
  std::string source;
  double generated_at_s = 0;
  bool synthetic = false;
  history::HistoryQuery query;  // the range and job asked for
  // The rows' range (first row start, last row end); absent without rows.
  std::optional<double> start_s;
  std::optional<double> end_s;
  double bucket_s = 0;

  std::optional<double> overall_ofu;  // every GPU with a SKU, every second observed
  std::string overall_clock_source;   // as GpuTimeline::clock_source, over every GPU counted
  double observed_hours = 0;
  int gpus_total = 0;  // in the range, drawn or not
  int jobs_total = 0;
  std::vector<GpuTimeline> gpus;      // drawn ones, in store order
  std::vector<JobTimeline> jobs;      // drawn ones, by job id
  std::vector<SkuDistribution> skus;  // by SKU id, unknown models last
  std::vector<std::string> notes;     // data-quality problems, for people

  NonTensorFigures overall_non_tensor;            // the fleet's (report.h overall)
  std::vector<CudaCoreFinding> cuda_core_advice;  // jobs first (by job id), then GPUs (store order)
  int cuda_core_advice_total = 0;                 // before max_advice

  // Absent: the analysis was not run; the page prints the *_absent text.
  std::optional<MfuScatter> scatter;
  std::string scatter_absent =
      "No MFU log given, so there is nothing to compare OFU with. The scatter needs the MFU each job "
      "reported (see ofu reconcile).";
  std::optional<std::vector<RegressionMarker>> markers;
  std::string markers_absent = "The regression scan was not run for this report (see ofu regress).";
  // Absent: no trace was given, and the page has no section for it.
  std::optional<KernelFindings> kernel_findings;
  // The page of one run or recording (run_page.h): its phases and, for
  // `ofu run`, the run. Absent for a store's or Prometheus's page, which
  // shows jobs instead.
  std::optional<RunPage> run_page;
};

// Timelines, distributions and totals of `history`. `totals` is
// BuildStoreReport of the same history: job totals and per-GPU OFU come from
// it, so they match `ofu report --store`, and a caller that also runs the
// analyses builds it once. Both are only read during the call.
HtmlReportView BuildHtmlReportView(const history::StoredHistory& history, const Report& totals,
                                   const HtmlReportOptions& options);

// The bucket width for rows spanning `range_s` seconds whose longest row is
// `longest_row_s` (see the header comment).
double ChooseBucketSeconds(double range_s, double longest_row_s, std::size_t max_points);

// The scatter of a reconciliation (reconcile.h): one point per job with
// both an expected and a reported MFU, flagged as the reconciliation flags
// it, with its explanation; the fit statistics over all those jobs.
MfuScatter ScatterOfReconciliation(const ReconcileReport& report);

// The markers of a regression scan (regress.h): OFU changes within jobs
// (kind "regression" or "improvement"), precision shifts, and changes across
// runs of one job name ("regression across runs", "improvement across runs").
std::vector<RegressionMarker> MarkersOfRegressions(const RegressReport& report);

// The analyses of a page whose history has jobs: the regression scan's
// markers, and, given an MFU log (`mfu`, with per-job `corrections`; read
// as mfu_inputs.h reads them), the reconciliation's scatter (`specs` weigh
// the corrections). A history without jobs (a recording's) gets neither.
// `progress` (may be empty) is told each analysis as it starts, for people.
// Errors: ReadMfuInputs's.
struct FleetAnalysesInput {
  std::optional<std::string> mfu;
  std::optional<std::string> corrections;
  const GpuSpecDatabase* specs = nullptr;
  std::function<void(const char*)> progress;
};
Status AddFleetAnalyses(HtmlReportView& view, const history::StoredHistory& history, const Report& store,
                        const FleetAnalysesInput& input);

}  // namespace ofu::analysis
