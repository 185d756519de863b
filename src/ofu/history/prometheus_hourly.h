// A month of a fleet from hourly rollups: recording rules that keep, per GPU
// and hour, the exact sums of the agent's counters (deploy/prometheus/
// ofu-hourly-rules.yml, written by HourlyRulesYaml), and the reader that
// answers `ofu report`/`ofu reconcile --prometheus` from them for the hours
// they cover and from the raw counters (prometheus_totals.h) for the rest.
//
// Why: the raw sums cost the server one evaluation per scrape, GPU and
// counter; 10,000 GPUs × 30 days at 15 s is 2·10^9 samples a counter.
// Thanos and Mimir downsample to 1 h for such ranges; these rules do the same
// with sums that add up exactly, not averages of averages.
//
// The series (all one rule group, evaluated every hour at times t):
//   ofu:hourly_rollup:step_seconds            S, once per evaluation: the
//                                             reader's list of rolled-up hours
//   uuid_job_id:<counter>:increase1h          per GPU and job scraped with it
//                                             (job_id absent where none was):
//                                             the sum of each scrape's
//                                             increase (prometheus_increase.h)
//                                             in the hour (e − 3600, e],
//                                             e = ⌊t / S⌋·S
//   uuid:ofu_gpu_info:last1h                  the GPU's info (model, SKU,
//                                             clock_source) seen in the hour
//   uuid_job_id:ofu_gpu_job_info:first_seen1h the first and last scrape time
//   uuid_job_id:ofu_gpu_job_info:last_seen1h  of a job's info on the GPU in
//                                             the hour (labels user, job_name,
//                                             scheduler)
// S, the step of the sums, divides 3600 so that consecutive hours partition
// the steps; it is at most 0.9 × the scrape interval so that a step holds at
// most one scrape. The sums telescope: the hours (e₀ − 3600, e₁] add up to
// the counters' increase over that range, as the raw path counts it, to
// float rounding. Differences, documented in docs/prometheus.md: a scrape
// gap longer than the lookback (5 min) starts a counter afresh in the
// rollups, as in the raw path's step sums (its spans count the increase
// across the gap); a job's interval starts S before its first scrape (the
// raw path: one mean scrape interval).
//
// Reading (ReadTotalsAtResolution): the evaluations in (since, until + S]
// whose hours lie wholly in (since, until] are read from the rollups, in
// runs of consecutive hours; the rest of the range (the partial hours at the
// ends, an hour the rules missed) from the raw counters; the two are added
// per GPU and job. kAuto uses the rollups where they exist; kHourly refuses
// a range they do not cover at all; kRaw never reads them.
//
// Errors: those of prometheus_client.h; kInvalidArgument for a scrape
// interval below 2 s (HourlyRulesYaml); kNoData for kHourly without rollups.
// Thread-safety: no shared state.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ofu/core/output_counters.h"
#include "ofu/core/result.h"
#include "ofu/history/prometheus_client.h"
#include "ofu/history/prometheus_totals.h"

namespace ofu::history {

enum class Resolution { kAuto, kRaw, kHourly };

// "auto", "raw", "hourly"; and back (nullopt for another word).
const char* ResolutionName(Resolution resolution);
std::optional<Resolution> ResolutionOfName(const std::string& name);

inline constexpr const char* kHourlyMarkerName = "ofu:hourly_rollup:step_seconds";
inline constexpr const char* kHourlyGpuInfoName = "uuid:ofu_gpu_info:last1h";
inline constexpr const char* kHourlyJobFirstName = "uuid_job_id:ofu_gpu_job_info:first_seen1h";
inline constexpr const char* kHourlyJobLastName = "uuid_job_id:ofu_gpu_job_info:last_seen1h";

// The rollup of one counter: "uuid_job_id:ofu_observed_seconds:increase1h".
std::string HourlyCounterName(const OutputCounter& counter);

// S for a scrape interval: the largest whole number of seconds that divides
// 3600 and is at most 0.9 × the interval (15 s: 12 s; 60 s: 50 s).
Result<double> HourlyStep(double scrape_interval_s);

// The rule file for agents scraped every `scrape_interval_s` seconds.
Result<std::string> HourlyRulesYaml(double scrape_interval_s,
                                    const OutputCounterTable& table = OutputCounterTable::Builtin());

// The rolled-up hours in a range: runs of consecutive hours, each run's
// span (after_s, until_s] and its evaluations' first and last time.
struct HourlyRun {
  double after_s = 0, until_s = 0;
  double first_eval_s = 0, last_eval_s = 0;
  int hours = 0;
};
struct HourlyCoverage {
  double step_s = 0;  // S; 0 when there are no rollups in the range
  std::vector<HourlyRun> runs;
  // The rest of (since, until]: the pieces the raw counters answer.
  std::vector<std::pair<double, double>> raw_pieces;
  int hours() const;
};

// The coverage of (since_s, until_s] by evaluations at `evals` (time, S),
// in time order: the rule above, exposed for its unit tests.
HourlyCoverage CoverageOfEvaluations(const std::vector<std::pair<double, double>>& evals, double since_s,
                                     double until_s);

// The evaluations of a rollup group whose marker series is `marker` (its
// value S), in (since, until + 3600]: (time, S) in time order.
Result<std::vector<std::pair<double, double>>> ReadRollupEvaluations(PrometheusClient& client,
                                                                     const std::string& marker, double since_s,
                                                                     double until_s);

// What reads one kind of rollup: the agent's counters (below) or
// dcgm-exporter's gauges (dcgm_hourly.h). `read_run` sums one run of
// rolled-up hours; `read_raw` the raw series over a piece of the range
// (query's since_s and until_s); `rules` names what to load, for the
// refusal of kHourly without rollups.
struct RollupReadWay {
  std::string marker;
  std::string rules;
  std::function<Result<HistoryTotals>(PrometheusClient& client, const HourlyRun& run, double step_s)> read_run;
  std::function<Result<HistoryTotals>(const HistoryQuery& piece)> read_raw;
};

// The one reading rule of both kinds: the runs of whole rolled-up hours in
// (since, until] from `read_run`, the rest from `read_raw`, added by GPU and
// job (AddTotals), and a first note saying which (kAuto without rollups:
// `read_raw` over the whole range, with a note; kRaw: `read_raw` alone).
Result<HistoryTotals> ReadTotalsOverRollups(const std::string& url, const HistoryQuery& query, double timeout_s,
                                            Resolution resolution, const RollupReadWay& way,
                                            const std::function<void(const std::string&)>& progress);

// Totals over query's range at `resolution` (query.since_s and until_s set):
// the rollups' sums for the hours they cover, the raw counters' for the
// rest, and a note saying which. kRaw is ReadPrometheusTotals.
Result<HistoryTotals> ReadTotalsAtResolution(const std::string& url, const HistoryQuery& query,
                                             const PrometheusTotalsOptions& options, Resolution resolution);

// The windows for scans that need them (`ofu regress`), one batch of GPUs at
// a time as ReadPrometheusHistoryInBatches gives them: for the rolled-up
// hours, one window per GPU, hour and job scraped in it (ending at the job's
// last scrape in the hour; the part without a job at the hour's end), and
// job intervals of consecutive hours; for the rest of the range, the raw
// counters' windows at a step of at least 5 minutes. kRaw, or kAuto without
// rollups, is ReadPrometheusHistoryInBatches.
Result<StoredHistory> ReadHistoryAtResolutionInBatches(
    const std::string& url, const HistoryQuery& query, const PrometheusQueryOptions& options, Resolution resolution,
    const std::function<Status(const StoredHistory& batch)>& on_batch);

// Joins job intervals of the same job and GPU that meet (within 5 minutes)
// into one, sorted by job, GPU and start.
void JoinJobIntervals(std::vector<StoredJob>& jobs);

// Adds `part` (another stretch of the same range) into `into`: GPUs by uuid
// (ids renumbered in uuid order, as AddPrometheusGpus numbers them), sums by
// GPU and by (job, GPU), job intervals of the same job and GPU that meet
// (within 5 minutes) joined; a row's mean clock (clock_mhz) stays the mean
// over both, weighed by clock_windows. Rows end at `until_s`.
void AddTotals(HistoryTotals& into, HistoryTotals&& part, double until_s);

}  // namespace ofu::history
