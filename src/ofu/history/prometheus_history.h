// A GPU history read back from Prometheus (or anything that speaks its HTTP
// query API: Thanos, Mimir, VictoriaMetrics), window by window, as the same
// StoredHistory the agent's SQLite store gives, so that one report builder,
// one reconciliation and one regression scan serve both. This is the
// fine-grained path: `ofu regress`, `ofu report --html`, and `ofu report`
// with --per-window. Totals alone (`ofu report`, `ofu reconcile`) come from
// prometheus_totals.h, which lets the server do the sums.
//
// What it asks (docs/prometheus.md, "Queries ofu sends"):
//   last_over_time(ofu_gpu_info[R])                 the GPUs (model, SKU)
//   count_over_time(ofu_observed_seconds_total[R])  samples per GPU, to plan
//   {__name__=~"<every counter of core/output_counters.h, _total>",uuid=~"…"}[D]
//   ofu_gpu_job_info{uuid=~"…"}[D]                  raw samples, in pieces
// The raw samples are asked for in pieces of a few GPUs × a time chunk,
// planned so that no piece loads more than max_samples_per_query samples.
// When the server refuses a piece for its size (--query.max-samples, or the
// limits of Thanos/Mimir/VictoriaMetrics), the piece is split (GPUs first,
// then time) and the budget for later pieces halved, down to one GPU and
// one scrape interval; only a refusal of that is an error, which names the
// server's limit. Memory: the pieces of one batch of GPUs at a time, plus
// the rows they make.
//
// Rows: each pair of consecutive scrapes of a GPU (t0, t1] with since < t1 ≤
// until is one row (the scrape before `since` is looked for up to 5 minutes
// before it) whose values are the counters' increases, the rule of
// Prometheus's increase() without its extrapolation: a decrease is a restart
// of the agent (a counter reset), and the value after it is the increase.
// A scrape gap is one longer row; its increase is the counters' difference
// across it (the agent kept counting) or, after a restart, the new value. A
// per-pipe counter the GPU does not export (tensor pipes, CUDA-core pipes,
// the non-tensor bound, whose FLOP become the rows' TFLOP) leaves the row's
// field absent. The counters follow the counter rule (core/output_counters.h),
// as the store's rows do, so the two read alike: windows without data add 0
// observed and 0 tensor seconds in both. Once a pipe's series exists, a
// scrape interval without that pipe reads as an increase of 0 where the
// store has NULL; sums, and every ratio built from them, are the same.
// With a job, a row counts when the job's info series was present on that
// GPU at the row's end, which is exact attribution per scrape interval, like
// the store's job intervals. Job intervals (every job's, or the one's) are
// runs of scrapes showing the job on a GPU, each (scrape before the run, last
// scrape of the run], so a row belongs to a job exactly when the job's info
// was present at the row's end.
//
// Errors: those of prometheus_client.h; kUnavailable also for a piece the
// server refuses even at one GPU and one scrape interval.
//
// Thread-safety: no shared state.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/formats/prometheus_api.h"
#include "ofu/history/history_reader.h"

namespace ofu::history {

struct PrometheusQueryOptions {
  double timeout_s = 30;  // per HTTP request
  // The agent's counters to read, the rows' columns (core/output_counters.h);
  // not owned, outlives the read.
  const OutputCounterTable* counters = &OutputCounterTable::Builtin();
  // Samples one query may load (Prometheus's default --query.max-samples is
  // 50,000,000; smaller pieces keep ofu's own memory small: the answer is
  // parsed whole, about 150 bytes a sample, so 2,000,000 took `ofu regress`
  // to 406 MiB at 1,024 GPUs; see docs/BENCHMARKS.md, "Fleet scale").
  std::int64_t max_samples_per_query = 500'000;
  // The windows' length where scrapes are read (ReadPrometheusHistory*).
  // 0: every scrape, the store's windows. > 0: each counter read on the
  // server every step_s seconds (a subquery, steps at multiples of step_s
  // since the epoch), so a window is step_s long and a reset inside one
  // loses the increase before it. kAutoStep: every scrape while no GPU has
  // more than auto_step_points in the range; beyond that the multiple of
  // the scrape interval that gives at most that many (a week at 15 s: 315 s).
  // Why: a regression scan of 1,024 GPUs over a week is 475M raw samples.
  static constexpr double kAutoStep = -1;
  double step_s = kAutoStep;
  int auto_step_points = 2000;
  // Called after each query with a line for people (done so far); may be empty.
  std::function<void(const std::string&)> progress;
};

// `query.until_s` and `query.since_s` must be set (the caller defaults them).
Result<StoredHistory> ReadPrometheusHistory(const std::string& url, const HistoryQuery& query,
                                            const PrometheusQueryOptions& options = {});

// The same, one batch of GPUs at a time (as many as max_samples_per_query
// holds): `on_batch` sees every GPU of the range and the windows and job
// intervals of the batch's GPUs only, in the store's order; its error stops
// the reading. Returns the GPUs, without windows or jobs. For scans that
// need one GPU's windows at a time (RegressScanner).
Result<StoredHistory> ReadPrometheusHistoryInBatches(const std::string& url, const HistoryQuery& query,
                                                     const PrometheusQueryOptions& options,
                                                     const std::function<Status(const StoredHistory& batch)>& on_batch);

// The windows' length for a range of `range_s` where the busiest GPU has
// `most_scrapes` scrapes: options.step_s, or with kAutoStep the rule there.
double StepOf(const PrometheusQueryOptions& options, double range_s, double most_scrapes);

// The rule above for one GPU, exposed for its unit tests: `samples` maps a
// counter's name (ofu_observed_seconds_total, …) to its samples (time s,
// value) in time order; rows end after `since_s`. `job_times`: with a job,
// only rows ending at one of these times count; null: every row does.
using CounterSamples = std::map<std::string, std::vector<std::pair<double, double>>>;
std::vector<StoredWindow> RowsOfCounterSamples(std::int64_t gpu_id, const CounterSamples& samples, double since_s,
                                               const std::set<double>* job_times = nullptr,
                                               const OutputCounterTable& table = OutputCounterTable::Builtin());

// Shared with prometheus_totals.h: the GPUs of ofu_gpu_info series (labels
// uuid, gpu, model, sku, architecture, instance, mig_*) into `history`, ids
// in uuid order; the newest series of a uuid names it. Returns uuid -> id.
// With `clock_flags`: per GPU id, the kHistoryClock* bits of every clock_source
// its series carried over the range (a label value changes the series, so a
// GPU whose OFU changed clock has one series per value), which the readers OR
// into its rows with an OFU, as the store keeps them per window. An agent
// from before 2026-11-27 has no such label: no bits, the source unknown.
using PromSeries = formats::PromSeries;
std::map<std::string, std::int64_t> AddPrometheusGpus(const std::vector<PromSeries>& info, StoredHistory& history,
                                                      std::map<std::int64_t, std::uint32_t>* clock_flags = nullptr);

}  // namespace ofu::history
