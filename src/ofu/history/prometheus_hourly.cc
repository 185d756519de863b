#include "ofu/history/prometheus_hourly.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "ofu/history/prometheus_client.h"
#include "ofu/history/prometheus_history.h"
#include "ofu/history/prometheus_increase.h"

namespace ofu::history {
namespace {

constexpr double kHourS = 3600;
constexpr long long kHourMs = 3'600'000;
// Job intervals of one job on one GPU that meet within this are one: the
// server's lookback, beyond which a scrape gap breaks the counters anyway.
constexpr double kJoinJobsS = 300;

// The ofu_gpu_job_info labels a job's interval keeps (StoredJob).
constexpr const char* kJobLabels = "uuid, job_id, user, job_name, scheduler";

long long MsOf(double seconds) { return std::llround(seconds * 1000); }

// One instant query at `at` over the rollups (QueryEachSeries).
Status Instant(PrometheusClient& client, const std::string& promql, double at,
               const std::function<void(const PromSeries&)>& consume) {
  return QueryEachSeries(client, promql, at, "over hourly rollups", consume);
}

// The range selector that takes every evaluation of `run` and none before
// it: half an hour more than its evaluations' span (a selector's range is
// closed on Prometheus and open on the left elsewhere; either way the hour
// before is out).
std::string RunRange(const HourlyRun& run) { return PromRange(run.last_eval_s - run.first_eval_s + kHourS / 2); }

// The sums of one run of rolled-up hours: what the rules recorded, added up.
class RunReader {
 public:
  RunReader(PrometheusClient& client, const HistoryQuery& query, const OutputCounterTable& counters,
            const HourlyRun& run, double step_s)
      : client_(client), query_(query), counters_(counters), run_(run), step_s_(step_s) {}

  Result<HistoryTotals> Read() {
    totals_.history.path = client_.url();
    totals_.history.query = query_;
    totals_.history.query.since_s = run_.after_s;
    totals_.history.query.until_s = run_.until_s;
    totals_.window_s = kHourS;
    range_ = RunRange(run_);
    std::string filter = "uuid!=\"\"";
    std::string job_matcher;
    if (query_.job_id) {
      job_matcher = ",job_id=" + PromQuoted(*query_.job_id);
      std::set<std::string> uuids;
      OFU_RETURN_IF_ERROR(Instant(client_,
                                  fmt::format("count_over_time({}{{uuid!=\"\"{}}}{})",
                                              HourlyCounterName(counters_[kCounterObserved]), job_matcher, range_),
                                  run_.last_eval_s, [&](const PromSeries& s) { uuids.insert(s.Label("uuid")); }));
      if (uuids.empty()) return std::move(totals_);
      filter = fmt::format("uuid=~\"{}\"", PromExactAlternatives({uuids.begin(), uuids.end()}));
    }
    std::vector<PromSeries> info;
    OFU_RETURN_IF_ERROR(Instant(client_, fmt::format("last_over_time({}{{{}}}{})", kHourlyGpuInfoName, filter, range_),
                                run_.last_eval_s, [&](const PromSeries& s) { info.push_back(s); }));
    std::map<std::int64_t, std::uint32_t> clock_flags;
    ids_ = AddPrometheusGpus(info, totals_.history, &clock_flags);
    if (ids_.empty()) return std::move(totals_);

    for (std::size_t id = 0; id < counters_.size(); ++id) {
      const double scale = 1 / counters_[id].metric_scale;
      OFU_RETURN_IF_ERROR(Instant(client_,
                                  fmt::format("sum by (uuid, job_id) (sum_over_time({}{{{}{}}}{}))",
                                              HourlyCounterName(counters_[id]), filter, job_matcher, range_),
                                  run_.last_eval_s, [&](const PromSeries& s) {
                                    auto gpu = ids_.find(s.Label("uuid"));
                                    if (gpu == ids_.end()) return;
                                    const double value = s.samples.front().second * scale;
                                    if (!query_.job_id) totals_.of_gpu[gpu->second].counters.Add(id, value);
                                    if (!s.Label("job_id").empty())
                                      totals_.of_job[{s.Label("job_id"), gpu->second}].counters.Add(id, value);
                                  }));
    }
    if (query_.job_id) {
      for (const auto& [key, row] : totals_.of_job) totals_.of_gpu[key.second] = row;
    }
    OFU_RETURN_IF_ERROR(ReadJobs(filter + job_matcher));
    for (auto& [id, row] : totals_.of_gpu) Finish(row, id, clock_flags);
    for (auto& [key, row] : totals_.of_job) Finish(row, key.second, clock_flags);
    return std::move(totals_);
  }

 private:
  // Each job's interval on each GPU: from S before its first scrape in the
  // run to its last.
  Status ReadJobs(const std::string& matchers) {
    std::map<std::tuple<std::string, std::int64_t>, StoredJob> jobs;  // (job id, gpu id)
    for (const bool last : {false, true}) {
      const std::string promql = fmt::format("{0} by ({1}) ({0}_over_time({2}{{{3}}}{4}))", last ? "max" : "min",
                                             kJobLabels, last ? kHourlyJobLastName : kHourlyJobFirstName, matchers,
                                             range_);
      OFU_RETURN_IF_ERROR(Instant(client_, promql, run_.last_eval_s, [&](const PromSeries& s) {
        auto gpu = ids_.find(s.Label("uuid"));
        if (gpu == ids_.end() || s.Label("job_id").empty()) return;
        StoredJob& job = jobs[{s.Label("job_id"), gpu->second}];
        job.gpu_id = gpu->second;
        job.job_id = s.Label("job_id");
        job.user = s.Label("user");
        job.job_name = s.Label("job_name");
        job.scheduler = s.Label("scheduler");
        if (last) {
          job.end_s = s.samples.front().second;
        } else {
          job.start_s = s.samples.front().second - step_s_;
        }
      }));
    }
    for (auto& [key, job] : jobs) totals_.history.jobs.push_back(std::move(job));
    return OkStatus();
  }

  void Finish(StoredWindow& row, std::int64_t id, const std::map<std::int64_t, std::uint32_t>& clock_flags) const {
    row.gpu_id = id;
    row.end_s = run_.until_s;
    row.span_s = row.up_s = row.counters.observed_s();
    row.flags |= kHistoryDownsampled;
    if (auto flags = clock_flags.find(id); flags != clock_flags.end() && row.counters.observed_s() > 0) {
      row.flags |= flags->second;
    }
  }

  PrometheusClient& client_;
  const HistoryQuery& query_;
  const OutputCounterTable& counters_;
  const HourlyRun& run_;
  const double step_s_;
  std::string range_;
  HistoryTotals totals_;
  std::map<std::string, std::int64_t> ids_;
};

}  // namespace

const char* ResolutionName(Resolution resolution) {
  switch (resolution) {
    case Resolution::kRaw: return "raw";
    case Resolution::kHourly: return "hourly";
    case Resolution::kAuto: break;
  }
  return "auto";
}

std::optional<Resolution> ResolutionOfName(const std::string& name) {
  for (Resolution r : {Resolution::kAuto, Resolution::kRaw, Resolution::kHourly}) {
    if (name == ResolutionName(r)) return r;
  }
  return std::nullopt;
}

std::string HourlyCounterName(const OutputCounter& counter) {
  return fmt::format("uuid_job_id:{}:increase1h", counter.metric);
}

Result<double> HourlyStep(double scrape_interval_s) {
  const auto most = static_cast<long long>(std::floor(0.9 * scrape_interval_s + 1e-9));
  for (long long s = std::min(most, 3600LL); s >= 1; --s) {
    if (3600 % s == 0) return static_cast<double>(s);
  }
  return Error::InvalidArgument("a scrape interval of {} s is too short for hourly rollups (at least 2 s)",
                                scrape_interval_s);
}

Result<std::string> HourlyRulesYaml(double scrape_interval_s, const OutputCounterTable& table) {
  OFU_ASSIGN_OR_RETURN(const double step_s, HourlyStep(scrape_interval_s));
  const std::string steps = fmt::format("[{}:{}]", PromMs(kHourS - 0.001), PromMs(step_s));
  std::string yaml = fmt::format(
      "# Hourly rollups of the agent's counters: exact sums per GPU, job and hour,\n"
      "# from which `ofu report --prometheus` reads long ranges (docs/prometheus.md,\n"
      "# \"Hourly rollups\"). Generated by `ofu rules hourly --scrape-interval {0}s`\n"
      "# for agents scraped every {0} s (sum step S = {1} s: it must divide 3600 and\n"
      "# be below the scrape interval). Do not edit: regenerate.\n"
      "groups:\n"
      "  - name: ofu-hourly\n"
      "    interval: 1h\n"
      "    rules:\n"
      "      # The hours rolled up, and S: the reader's list of evaluations.\n"
      "      - record: {2}\n"
      "        expr: vector({1})\n"
      "      - record: {3}\n"
      "        expr: last_over_time(ofu_gpu_info{{uuid!=\"\"}}[1h])\n",
      scrape_interval_s, step_s, kHourlyMarkerName, kHourlyGpuInfoName);
  for (const bool last : {false, true}) {
    // A scrape counts in the step it falls in: its time, where it is newer
    // than the step's start.
    yaml += fmt::format(
        "      - record: {}\n"
        "        expr: {} by ({}) ({}_over_time((timestamp(ofu_gpu_job_info{{uuid!=\"\"}}) > time() - {}){}))\n",
        last ? kHourlyJobLastName : kHourlyJobFirstName, last ? "max" : "min", kJobLabels, last ? "max" : "min", step_s,
        steps);
  }
  const std::string job_in = PromJobIn("uuid!=\"\"", step_s);
  for (std::size_t id = 0; id < table.size(); ++id) {
    const std::string x = table[id].sample_name() + "{uuid!=\"\"}";
    const std::string d = PromIncreaseOver(x, step_s, PrometheusTotalsOptions{}.max_gap_s);
    yaml += fmt::format(
        "      - record: {}\n"
        "        expr: sum by (uuid, job_id) (sum_over_time(({}){}))\n",
        HourlyCounterName(table[id]), PromSplitByJob(d, job_in, false), steps);
  }
  return yaml;
}

int HourlyCoverage::hours() const {
  int n = 0;
  for (const HourlyRun& run : runs) n += run.hours;
  return n;
}

HourlyCoverage CoverageOfEvaluations(const std::vector<std::pair<double, double>>& evals, double since_s,
                                     double until_s) {
  HourlyCoverage coverage;
  const long long since_ms = MsOf(since_s), until_ms = MsOf(until_s);
  long long previous_end_ms = 0;
  for (const auto& [t, step_s] : evals) {
    const long long step_ms = MsOf(step_s);
    if (step_ms <= 0 || kHourMs % step_ms != 0) continue;
    const long long end_ms = MsOf(t) / step_ms * step_ms;
    if (end_ms - kHourMs < since_ms || end_ms > until_ms) continue;
    coverage.step_s = step_s;
    if (!coverage.runs.empty() && end_ms - previous_end_ms == kHourMs) {
      HourlyRun& run = coverage.runs.back();
      run.until_s = static_cast<double>(end_ms) / 1000;
      run.last_eval_s = t;
      ++run.hours;
    } else if (coverage.runs.empty() || end_ms - previous_end_ms >= kHourMs) {
      coverage.runs.push_back({static_cast<double>(end_ms - kHourMs) / 1000, static_cast<double>(end_ms) / 1000, t, t,
                               1});
    } else {
      continue;  // overlaps the hour before (S changed): the raw counters answer
    }
    previous_end_ms = end_ms;
  }
  double from = since_s;
  for (const HourlyRun& run : coverage.runs) {
    if (run.after_s > from) coverage.raw_pieces.emplace_back(from, run.after_s);
    from = run.until_s;
  }
  if (until_s > from) coverage.raw_pieces.emplace_back(from, until_s);
  return coverage;
}

void JoinJobIntervals(std::vector<StoredJob>& jobs) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const StoredJob& a, const StoredJob& b) {
    return std::tie(a.job_id, a.gpu_id, a.start_s) < std::tie(b.job_id, b.gpu_id, b.start_s);
  });
  std::vector<StoredJob> joined;
  for (StoredJob& job : jobs) {
    if (!joined.empty()) {
      StoredJob& before = joined.back();
      if (before.job_id == job.job_id && before.gpu_id == job.gpu_id && before.end_s &&
          job.start_s <= *before.end_s + kJoinJobsS) {
        if (!job.end_s || *job.end_s > *before.end_s) before.end_s = job.end_s;
        continue;
      }
    }
    joined.push_back(std::move(job));
  }
  jobs = std::move(joined);
}

void AddTotals(HistoryTotals& into, HistoryTotals&& part, double until_s) {
  // GPUs by uuid, renumbered in uuid order.
  std::map<std::string, StoredGpu> gpus;
  std::map<std::int64_t, std::string> into_uuid, part_uuid;
  for (const StoredGpu& gpu : into.history.gpus) {
    into_uuid[gpu.id] = gpu.key();
    gpus.try_emplace(gpu.key(), gpu);
  }
  for (const StoredGpu& gpu : part.history.gpus) {
    part_uuid[gpu.id] = gpu.key();
    gpus.try_emplace(gpu.key(), gpu);
  }
  std::map<std::string, std::int64_t> id_of;
  into.history.gpus.clear();
  for (auto& [uuid, gpu] : gpus) {
    gpu.id = static_cast<std::int64_t>(id_of.size()) + 1;
    id_of[uuid] = gpu.id;
    into.history.gpus.push_back(gpu);
  }
  std::map<std::int64_t, StoredWindow> of_gpu;
  std::map<std::pair<std::string, std::int64_t>, StoredWindow> of_job;
  std::vector<StoredJob> jobs;
  const auto add = [&](HistoryTotals& from, const std::map<std::int64_t, std::string>& uuid_of) {
    const auto id = [&](std::int64_t old) { return id_of.at(uuid_of.at(old)); };
    const auto add_row = [](StoredWindow& to, const StoredWindow& row) {
      to.counters.Add(row.counters);
      to.flags |= row.flags;
      // A mean clock (dcgm_hourly.h's sums) stays the mean over both, by readings.
      if (row.clock_mhz && row.clock_windows > 0) {
        const auto n = static_cast<double>(to.clock_windows), m = static_cast<double>(row.clock_windows);
        to.clock_mhz = (to.clock_mhz.value_or(0) * n + *row.clock_mhz * m) / (n + m);
        to.clock_windows += row.clock_windows;
      }
    };
    for (const auto& [old, row] : from.of_gpu) add_row(of_gpu[id(old)], row);
    for (const auto& [key, row] : from.of_job) add_row(of_job[{key.first, id(key.second)}], row);
    for (StoredJob job : from.history.jobs) {
      job.gpu_id = id(job.gpu_id);
      jobs.push_back(std::move(job));
    }
  };
  add(into, into_uuid);
  add(part, part_uuid);
  const auto finish = [&](StoredWindow& row, std::int64_t id) {
    row.gpu_id = id;
    row.end_s = until_s;
    row.span_s = row.up_s = row.counters.observed_s();
  };
  for (auto& [id, row] : of_gpu) finish(row, id);
  for (auto& [key, row] : of_job) finish(row, key.second);
  into.of_gpu = std::move(of_gpu);
  into.of_job = std::move(of_job);

  JoinJobIntervals(jobs);
  into.history.jobs = std::move(jobs);
  // The finest the sums were made at: the scrape interval where raw counters took part.
  if (part.window_s > 0 && (into.window_s <= 0 || part.window_s < into.window_s)) into.window_s = part.window_s;
  for (std::string& note : part.notes) into.notes.push_back(std::move(note));
}

Result<std::vector<std::pair<double, double>>> ReadRollupEvaluations(PrometheusClient& client,
                                                                     const std::string& marker, double since_s,
                                                                     double until_s) {
  const double at = until_s + kHourS;
  std::vector<std::pair<double, double>> evals;
  OFU_RETURN_IF_ERROR(Instant(client, fmt::format("{}{}", marker, PromRange(at - since_s - 0.001)), at,
                              [&](const PromSeries& s) {
                                evals.insert(evals.end(), s.samples.begin(), s.samples.end());
                              }));
  std::sort(evals.begin(), evals.end());
  evals.erase(std::unique(evals.begin(), evals.end(),
                          [](const auto& a, const auto& b) { return MsOf(a.first) == MsOf(b.first); }),
              evals.end());
  return evals;
}

Result<HistoryTotals> ReadTotalsOverRollups(const std::string& url, const HistoryQuery& query, double timeout_s,
                                            Resolution resolution, const RollupReadWay& way,
                                            const std::function<void(const std::string&)>& progress) {
  if (resolution == Resolution::kRaw) return way.read_raw(query);
  if (!query.since_s || !query.until_s || *query.until_s <= *query.since_s) {
    return Error::InvalidArgument("a Prometheus report needs a range with since before until");
  }
  const double since = *query.since_s, until = *query.until_s;
  OFU_ASSIGN_OR_RETURN(auto client, PrometheusClient::Open(url, timeout_s));
  OFU_ASSIGN_OR_RETURN(auto evals, ReadRollupEvaluations(*client, way.marker, since, until));
  const HourlyCoverage coverage = CoverageOfEvaluations(evals, since, until);
  if (coverage.runs.empty()) {
    if (resolution == Resolution::kHourly) {
      return Error::NoData(
          "{}: no hourly rollup covers a whole hour of the range ({} evaluations of {} near it): load {} "
          "(docs/prometheus.md, \"Hourly rollups\"), or read the raw counters with --resolution raw",
          url, evals.size(), way.marker, way.rules);
    }
    OFU_ASSIGN_OR_RETURN(auto totals, way.read_raw(query));
    totals.notes.insert(totals.notes.begin(), "resolution: raw counters (no hourly rollups in the range)");
    return totals;
  }
  HistoryTotals totals;
  totals.history.path = url;
  totals.history.query = query;
  for (const HourlyRun& run : coverage.runs) {
    OFU_ASSIGN_OR_RETURN(auto part, way.read_run(*client, run, coverage.step_s));
    AddTotals(totals, std::move(part), until);
    if (progress) progress(fmt::format("summed {} rolled-up hours ({} queries)", run.hours, client->queries()));
  }
  // The scrape interval, as the report shows it: the longest raw piece's
  // (a piece of a few seconds at an end says little), else the hour's.
  double window_s = kHourS, longest_s = 0;
  for (const auto& [from, to] : coverage.raw_pieces) {
    HistoryQuery piece = query;
    piece.since_s = from;
    piece.until_s = to;
    OFU_ASSIGN_OR_RETURN(auto part, way.read_raw(piece));
    if (to - from > longest_s && part.window_s > 0) longest_s = to - from, window_s = part.window_s;
    AddTotals(totals, std::move(part), until);
  }
  totals.window_s = longest_s >= kHourS / 6 ? window_s : kHourS;
  std::string pieces;
  for (const auto& [from, to] : coverage.raw_pieces) {
    pieces += fmt::format("{}{:.0f} s", pieces.empty() ? "" : ", ", to - from);
  }
  totals.notes.insert(totals.notes.begin(),
                      fmt::format("resolution: hourly rollups for {} hours ({} run{}, sum step {:.3g} s), raw "
                                  "counters for the rest ({})",
                                  coverage.hours(), coverage.runs.size(), coverage.runs.size() == 1 ? "" : "s",
                                  coverage.step_s, pieces.empty() ? "none" : pieces));
  return totals;
}

Result<HistoryTotals> ReadTotalsAtResolution(const std::string& url, const HistoryQuery& query,
                                             const PrometheusTotalsOptions& options, Resolution resolution) {
  RollupReadWay way;
  way.marker = kHourlyMarkerName;
  way.rules = "deploy/prometheus/ofu-hourly-rules.yml";
  way.read_run = [&](PrometheusClient& client, const HourlyRun& run, double step_s) {
    RunReader reader(client, query, *options.query.counters, run, step_s);
    return reader.Read();
  };
  way.read_raw = [&](const HistoryQuery& piece) { return ReadPrometheusTotals(url, piece, options); };
  return ReadTotalsOverRollups(url, query, options.query.timeout_s, resolution, way, options.query.progress);
}

namespace {

// The hourly windows of the rolled-up runs, one batch of GPUs at a time.
class HourlyWindowsReader {
 public:
  HourlyWindowsReader(PrometheusClient& client, const HistoryQuery& query, const PrometheusQueryOptions& options,
                      const HourlyCoverage& coverage)
      : client_(client), query_(query), options_(options), coverage_(coverage) {}

  Result<StoredHistory> Read(const std::string& url, const std::function<Status(const StoredHistory&)>& on_batch) {
    history_.path = client_.url();
    history_.query = query_;
    history_.step_s = kHourS;
    // The raw pieces first (short: the partial hours at the ends, an hour
    // the rules missed), held by GPU until its batch.
    PrometheusQueryOptions raw_options = options_;
    if (raw_options.step_s == PrometheusQueryOptions::kAutoStep) raw_options.step_s = 300;
    std::vector<PromSeries> info;
    std::map<std::string, std::vector<StoredWindow>> raw_windows;  // uuid ->
    std::map<std::string, std::vector<StoredJob>> raw_jobs;        // uuid ->
    for (const auto& [from, to] : coverage_.raw_pieces) {
      HistoryQuery piece = query_;
      piece.since_s = from;
      piece.until_s = to;
      OFU_ASSIGN_OR_RETURN(auto part, ReadPrometheusHistory(url, piece, raw_options));
      std::map<std::int64_t, std::string> uuid_of;
      for (const StoredGpu& gpu : part.gpus) {
        uuid_of[gpu.id] = gpu.key();
        PromSeries s;  // as an info series, so that one numbering takes both
        s.labels = {{"uuid", gpu.key()},
                    {"gpu", gpu.identity.gpu_index},
                    {"model", gpu.identity.model},
                    {"sku", gpu.sku},
                    {"architecture", gpu.architecture},
                    {"instance", gpu.identity.hostname},
                    {"mig_profile", gpu.identity.mig_profile},
                    {"mig_instance", gpu.identity.mig_instance}};
        s.samples = {{to, 1}};
        info.push_back(std::move(s));
      }
      for (const StoredWindow& w : part.windows) raw_windows[uuid_of.at(w.gpu_id)].push_back(w);  // trivially copyable
      for (StoredJob& j : part.jobs) raw_jobs[uuid_of.at(j.gpu_id)].push_back(std::move(j));
    }
    std::string matchers = "uuid!=\"\"";
    if (query_.job_id) matchers += ",job_id=" + PromQuoted(*query_.job_id);
    for (const HourlyRun& run : coverage_.runs) {
      OFU_RETURN_IF_ERROR(Instant(client_,
                                  fmt::format("last_over_time({}{{uuid!=\"\"}}{})", kHourlyGpuInfoName, RunRange(run)),
                                  run.last_eval_s, [&](const PromSeries& s) { info.push_back(s); }));
    }
    std::map<std::int64_t, std::uint32_t> clock_flags;
    ids_ = AddPrometheusGpus(info, history_, &clock_flags);
    if (query_.job_id) {
      // Only the job's GPUs: those its rollups or raw intervals name.
      std::set<std::string> of_job;
      for (const auto& [uuid, jobs] : raw_jobs) of_job.insert(uuid);
      for (const HourlyRun& run : coverage_.runs) {
        OFU_RETURN_IF_ERROR(
            Instant(client_, fmt::format("count_over_time({}{{{}}}{})", kHourlyJobLastName, matchers, RunRange(run)),
                    run.last_eval_s, [&](const PromSeries& s) { of_job.insert(s.Label("uuid")); }));
      }
      std::vector<StoredGpu> gpus;
      for (const StoredGpu& gpu : history_.gpus) {
        if (of_job.contains(gpu.key())) gpus.push_back(gpu);
      }
      history_.gpus = std::move(gpus);
    }
    // Batches of GPUs whose rollups fit a query's budget.
    const double hours = std::max(1, coverage_.hours());
    const auto per_batch =
        static_cast<std::size_t>(std::max(1.0, static_cast<double>(options_.max_samples_per_query) /
                                                   (hours * static_cast<double>(options_.counters->size() + 2) * 1.5)));
    std::vector<std::string> uuids;
    for (const StoredGpu& gpu : history_.gpus) uuids.push_back(gpu.key());
    // Batches of at most per_batch GPUs whose UUIDs fit one regex.
    std::vector<std::vector<std::string>> batches;
    for (const std::vector<std::string>& group : SplitAlternatives(uuids)) {
      for (std::size_t begin = 0; begin < group.size(); begin += per_batch) {
        batches.emplace_back(group.begin() + static_cast<std::ptrdiff_t>(begin),
                             group.begin() + static_cast<std::ptrdiff_t>(std::min(group.size(), begin + per_batch)));
      }
    }
    std::size_t read = 0;
    for (const std::vector<std::string>& batch_uuids : batches) {
      read += batch_uuids.size();
      StoredHistory batch;
      batch.path = history_.path;
      batch.query = history_.query;
      batch.gpus = history_.gpus;
      batch.step_s = kHourS;
      for (const HourlyRun& run : coverage_.runs) OFU_RETURN_IF_ERROR(ReadRun(run, batch_uuids, batch));
      for (const std::string& uuid : batch_uuids) {
        const std::int64_t id = ids_.at(uuid);
        for (StoredWindow w : raw_windows[uuid]) {
          w.gpu_id = id;
          batch.windows.push_back(w);
        }
        for (StoredJob j : raw_jobs[uuid]) {
          j.gpu_id = id;
          batch.jobs.push_back(std::move(j));
        }
      }
      for (StoredWindow& w : batch.windows) {
        if (auto flags = clock_flags.find(w.gpu_id); flags != clock_flags.end() && w.counters.observed_s() > 0) {
          w.flags |= flags->second;
        }
      }
      std::stable_sort(batch.windows.begin(), batch.windows.end(), [](const StoredWindow& a, const StoredWindow& b) {
        return std::tie(a.gpu_id, a.end_s) < std::tie(b.gpu_id, b.end_s);
      });
      JoinJobIntervals(batch.jobs);
      OFU_RETURN_IF_ERROR(on_batch(batch));
      if (options_.progress) {
        options_.progress(fmt::format("read the rollups of {} of {} GPUs ({} queries)", read, uuids.size(),
                                      client_.queries()));
      }
    }
    return std::move(history_);
  }

 private:
  // The run's windows and job intervals of `uuids`, into `batch`.
  Status ReadRun(const HourlyRun& run, const std::vector<std::string>& uuids, StoredHistory& batch) {
    const long long step_ms = MsOf(coverage_.step_s);
    const auto end_of = [&](double t) {
      const long long step_end_ms = MsOf(t) / step_ms * step_ms;  // down to a whole step
      return static_cast<double>(step_end_ms) / 1000;
    };
    std::string matchers = fmt::format("uuid=~\"{}\"", PromExactAlternatives(uuids));
    if (query_.job_id) matchers += ",job_id=" + PromQuoted(*query_.job_id);
    // (uuid, hour end, job id) -> the window; the job's first and last scrape in the hour.
    std::map<std::tuple<std::string, double, std::string>, StoredWindow> windows;
    struct Seen {
      double first = 0, last = 0;
      std::string user, job_name, scheduler;
    };
    std::map<std::tuple<std::string, std::string, double>, Seen> seen;  // (uuid, job, hour end)
    const std::string range = RunRange(run);
    for (const bool last : {false, true}) {
      OFU_RETURN_IF_ERROR(
          Instant(client_, fmt::format("{}{{{}}}{}", last ? kHourlyJobLastName : kHourlyJobFirstName, matchers, range),
                  run.last_eval_s, [&](const PromSeries& s) {
                    for (const auto& [t, value] : s.samples) {
                      Seen& at = seen[{s.Label("uuid"), s.Label("job_id"), end_of(t)}];
                      (last ? at.last : at.first) = value;
                      at.user = s.Label("user");
                      at.job_name = s.Label("job_name");
                      at.scheduler = s.Label("scheduler");
                    }
                  }));
    }
    std::map<std::string, std::size_t> id_of_name;
    for (std::size_t id = 0; id < options_.counters->size(); ++id) {
      id_of_name[HourlyCounterName((*options_.counters)[id])] = id;
    }
    std::string names;
    for (const auto& [name, id] : id_of_name) names += (names.empty() ? "" : "|") + name;
    OFU_RETURN_IF_ERROR(Instant(
        client_, fmt::format("{{__name__=~\"{}\",{}}}{}", names, matchers, range), run.last_eval_s,
        [&](const PromSeries& s) {
          auto counter = id_of_name.find(s.Label("__name__"));
          if (counter == id_of_name.end() || !ids_.contains(s.Label("uuid"))) return;
          const double scale = 1 / (*options_.counters)[counter->second].metric_scale;
          for (const auto& [t, value] : s.samples) {
            windows[{s.Label("uuid"), end_of(t), s.Label("job_id")}].counters.Add(counter->second, value * scale);
          }
        }));
    for (auto& [key, w] : windows) {
      const auto& [uuid, hour_end, job_id] = key;
      if (w.counters.observed_s() <= 0 && w.counters.utilized_s() == 0) continue;  // steps without a scrape
      w.gpu_id = ids_.at(uuid);
      w.end_s = hour_end;
      if (!job_id.empty()) {
        if (auto at = seen.find({uuid, job_id, hour_end}); at != seen.end() && at->second.last > 0) {
          w.end_s = at->second.last;
        }
      }
      w.span_s = w.up_s = w.counters.observed_s();
      w.flags |= kHistoryDownsampled;
      batch.windows.push_back(w);
    }
    for (const auto& [key, at] : seen) {
      const auto& [uuid, job_id, hour_end] = key;
      if (job_id.empty() || at.first <= 0 || at.last <= 0) continue;
      StoredJob job;
      job.gpu_id = ids_.at(uuid);
      job.job_id = job_id;
      job.user = at.user;
      job.job_name = at.job_name;
      job.scheduler = at.scheduler;
      job.start_s = at.first - coverage_.step_s;
      job.end_s = at.last;
      batch.jobs.push_back(std::move(job));
    }
    return OkStatus();
  }

  PrometheusClient& client_;
  const HistoryQuery& query_;
  const PrometheusQueryOptions& options_;
  const HourlyCoverage& coverage_;
  StoredHistory history_;
  std::map<std::string, std::int64_t> ids_;
};

}  // namespace

Result<StoredHistory> ReadHistoryAtResolutionInBatches(
    const std::string& url, const HistoryQuery& query, const PrometheusQueryOptions& options, Resolution resolution,
    const std::function<Status(const StoredHistory& batch)>& on_batch) {
  if (resolution == Resolution::kRaw) return ReadPrometheusHistoryInBatches(url, query, options, on_batch);
  if (!query.since_s || !query.until_s || *query.until_s <= *query.since_s) {
    return Error::InvalidArgument("a Prometheus scan needs a range with since before until");
  }
  OFU_ASSIGN_OR_RETURN(auto client, PrometheusClient::Open(url, options.timeout_s));
  OFU_ASSIGN_OR_RETURN(auto evals, ReadRollupEvaluations(*client, kHourlyMarkerName, *query.since_s, *query.until_s));
  const HourlyCoverage coverage = CoverageOfEvaluations(evals, *query.since_s, *query.until_s);
  if (coverage.runs.empty()) {
    if (resolution == Resolution::kHourly) {
      return Error::NoData(
          "{}: no hourly rollup covers a whole hour of the range: load "
          "deploy/prometheus/ofu-hourly-rules.yml (docs/prometheus.md, \"Hourly rollups\"), or "
          "read the raw counters with --resolution raw",
          url);
    }
    return ReadPrometheusHistoryInBatches(url, query, options, on_batch);
  }
  HourlyWindowsReader reader(*client, query, options, coverage);
  return reader.Read(url, on_batch);
}

}  // namespace ofu::history
