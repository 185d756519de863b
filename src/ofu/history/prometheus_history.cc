#include "ofu/history/prometheus_history.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "ofu/core/clock_model.h"
#include "ofu/history/prometheus_client.h"

namespace ofu::history {
namespace {

using Samples = std::vector<std::pair<double, double>>;  // (time, value), in time order

// How far before `since` the scrape that opens the first row may lie: the
// server's default lookback delta.
constexpr double kLookBackS = 300;

}  // namespace

double StepOf(const PrometheusQueryOptions& options, double range_s, double most_scrapes) {
  if (options.step_s >= 0) return options.step_s;
  const double points = std::max(1, options.auto_step_points);
  if (most_scrapes <= points || range_s <= 0) return 0;
  const double scrape_s = std::max(1.0, std::round(range_s / most_scrapes));
  return std::ceil(range_s / points / scrape_s) * scrape_s;
}

std::map<std::string, int64_t> AddPrometheusGpus(const std::vector<PromSeries>& info, StoredHistory& history,
                                                 std::map<std::int64_t, std::uint32_t>* clock_flags) {
  std::map<std::string, const PromSeries*> newest;
  for (const PromSeries& series : info) {
    const PromSeries*& slot = newest[series.Label("uuid")];
    if (slot == nullptr || (!series.samples.empty() && !slot->samples.empty() &&
                            series.samples.back().first >= slot->samples.back().first)) {
      slot = &series;
    }
  }
  std::map<std::string, int64_t> ids;
  for (const auto& [uuid, series] : newest) {
    StoredGpu gpu;
    gpu.id = static_cast<int64_t>(ids.size()) + 1;
    gpu.identity.key = uuid;
    gpu.identity.gpu_index = series->Label("gpu");
    gpu.identity.model = series->Label("model");
    gpu.sku = series->Label("sku");
    gpu.architecture = series->Label("architecture");
    gpu.identity.hostname = series->Label("instance");
    gpu.identity.mig_profile = series->Label("mig_profile");
    gpu.identity.mig_instance = series->Label("mig_instance");
    ids[uuid] = gpu.id;
    history.gpus.push_back(gpu);
  }
  if (clock_flags != nullptr) {
    for (const PromSeries& series : info) {
      if (auto source = ClockSourceOfName(series.Label("clock_source"))) {
        (*clock_flags)[ids.at(series.Label("uuid"))] |= FlagsOfClockSources(static_cast<std::uint8_t>(*source));
      }
    }
  }
  return ids;
}

namespace {

// One job-info series of a GPU, its samples gathered over the pieces.
struct JobInfoSeries {
  StoredJob identity;        // gpu_id and labels
  std::set<double> present;  // scrape times
};

// Job intervals, as the store keeps them: (start, end] where a row ending
// in it belongs to the job. A run of consecutive scrapes showing the job on
// a GPU is one interval, opening at the scrape before the run's first (the
// start of the first row it labels) and closing at its last.
void AddJobIntervals(const JobInfoSeries& info, const Samples& scrapes, StoredHistory& history) {
  StoredJob job = info.identity;
  bool open = false;
  for (size_t i = 0; i < scrapes.size(); ++i) {
    const double t = scrapes[i].first;
    if (info.present.count(t) != 0) {
      if (!open) job.start_s = i > 0 ? scrapes[i - 1].first : t;
      open = true;
      job.end_s = t;
    } else if (open) {
      history.jobs.push_back(job);
      open = false;
    }
  }
  if (open) history.jobs.push_back(job);
}

// Jobs and windows in the order the SQLite store gives them.
void SortLikeTheStore(StoredHistory& history) {
  std::stable_sort(history.jobs.begin(), history.jobs.end(), [](const StoredJob& a, const StoredJob& b) {
    return std::tie(a.job_id, a.gpu_id, a.start_s) < std::tie(b.job_id, b.gpu_id, b.start_s);
  });
  std::stable_sort(history.windows.begin(), history.windows.end(), [](const StoredWindow& a, const StoredWindow& b) {
    return a.gpu_id != b.gpu_id ? a.gpu_id < b.gpu_id : a.end_s < b.end_s;
  });
}

// Appends `samples` newer than what `into` holds (pieces of a range meet at
// their ends, which Prometheus 2 includes in both).
void AppendNewer(const Samples& samples, Samples& into) {
  for (const auto& sample : samples) {
    if (into.empty() || sample.first > into.back().first) into.push_back(sample);
  }
}

class Reader {
 public:
  // With `on_batch`, each batch's windows and jobs go to it and are dropped.
  Reader(PrometheusClient& client, const HistoryQuery& query, const PrometheusQueryOptions& options,
         std::function<Status(const StoredHistory&)> on_batch = nullptr)
      : client_(client),
        query_(query),
        options_(options),
        budget_(std::max<int64_t>(1, options.max_samples_per_query)),
        on_batch_(std::move(on_batch)) {}

  Result<StoredHistory> Read() {
    history_.path = client_.url();
    history_.query = query_;
    const double since = *query_.since_s, until = *query_.until_s;

    // The job's GPUs, when asked for one job.
    std::string uuid_filter;
    if (query_.job_id) {
      OFU_ASSIGN_OR_RETURN(auto uuids, UuidsOf(fmt::format("count_over_time(ofu_gpu_job_info{{job_id={}}}{{range}})",
                                                           PromQuoted(*query_.job_id))));
      if (uuids.empty()) return std::move(history_);  // the job left no trace in the range
      uuid_filter = fmt::format(",uuid=~\"{}\"", PromExactAlternatives({uuids.begin(), uuids.end()}));
    }
    std::vector<PromSeries> info;
    OFU_RETURN_IF_ERROR(Vector(fmt::format("last_over_time(ofu_gpu_info{{uuid!=\"\"{}}}{{range}})", uuid_filter),
                               [&](PromAnswer&& answer, double) {
                                 for (auto& s : answer.series) info.push_back(std::move(s));
                                 return OkStatus();
                               }));
    ids_ = AddPrometheusGpus(info, history_, &clock_flags_);

    // Samples per GPU over the range, to cut it into pieces of about budget_.
    std::map<std::string, double> samples_of;
    OFU_RETURN_IF_ERROR(Vector(fmt::format("count_over_time(ofu_observed_seconds_total{{uuid!=\"\"{}}}{{range}})",
                                           uuid_filter),
                               [&](PromAnswer&& answer, double) {
                                 for (const auto& s : answer.series) {
                                   if (!s.samples.empty()) samples_of[s.Label("uuid")] += s.samples.front().second;
                                 }
                                 return OkStatus();
                               }));

    std::vector<std::string> uuids;
    double most = 0;  // scrapes of the busiest GPU
    for (const auto& [uuid, id] : ids_) {
      if (!samples_of.count(uuid)) continue;
      uuids.push_back(uuid);
      most = std::max(most, samples_of[uuid]);
    }
    step_s_ = StepOf(options_, until - since, most);
    history_.step_s = step_s_;
    const double range_s = until - since + kLookBackS;
    // A batch never spans two of the groups whose UUIDs fit one regex.
    std::vector<bool> starts_group(uuids.size(), false);
    std::size_t at = 0;
    for (const std::vector<std::string>& group : SplitAlternatives(uuids)) {
      starts_group[at] = true;
      at += group.size();
    }
    size_t next = 0;
    while (next < uuids.size()) {
      // As many GPUs as the budget holds, or one GPU in time chunks.
      std::vector<std::string> batch;
      double cost = 0;
      while (next < uuids.size()) {
        const double points = step_s_ > 0 ? range_s / step_s_ : samples_of[uuids[next]];
        // The agent's counters per GPU, and its job info: what one GPU costs per scrape.
        const double series_per_gpu = static_cast<double>(options_.counters->size() + 1);
        const double gpu_cost = (points + 1) * series_per_gpu;
        if (!batch.empty() && (cost + gpu_cost > static_cast<double>(budget_) || starts_group[next])) break;
        batch.push_back(uuids[next++]);
        cost += gpu_cost;
      }
      const double chunks = std::max(1.0, std::ceil(cost / static_cast<double>(budget_)));
      OFU_RETURN_IF_ERROR(ReadBatch(batch, since - kLookBackS, until, range_s / chunks));
      if (on_batch_) {
        SortLikeTheStore(history_);
        OFU_RETURN_IF_ERROR(on_batch_(history_));
        history_.windows = {};
        history_.jobs = {};
      }
      Progress(fmt::format("{} of {} GPUs", next, uuids.size()));
    }
    SortLikeTheStore(history_);
    return std::move(history_);
  }

 private:
  // An instant query over the whole range, in time pieces if refused.
  Status Vector(const std::string& text, const std::function<Status(PromAnswer&&, double)>& consume) {
    const double since = *query_.since_s, until = *query_.until_s;
    double piece_s = until - since;
    return QueryOverPieces(
        client_, since, until, piece_s, 1,
        [&](double length_s) {
          std::string promql = text;
          promql.replace(promql.find("{range}"), 7, PromRange(length_s));
          return promql;
        },
        consume);
  }

  Result<std::set<std::string>> UuidsOf(const std::string& text) {
    std::set<std::string> uuids;
    OFU_RETURN_IF_ERROR(Vector(text, [&](PromAnswer&& answer, double) {
      for (const auto& s : answer.series) uuids.insert(s.Label("uuid"));
      return OkStatus();
    }));
    return uuids;
  }

  // The raw samples of `batch` over (start, end] in pieces of about piece_s,
  // then their rows. A piece refused for its size is split: the GPUs first,
  // then time; the budget for the next batches shrinks with it.
  Status ReadBatch(const std::vector<std::string>& batch, double start, double end, double piece_s) {
    std::map<std::string, CounterSamples> counters;                     // uuid -> counter -> samples
    std::map<std::pair<std::string, std::string>, JobInfoSeries> jobs;  // (uuid, job_id) -> its info
    const std::string filter = fmt::format("uuid=~\"{}\"", PromExactAlternatives(batch));
    const std::string job_filter = query_.job_id ? ",job_id=" + PromQuoted(*query_.job_id) : "";
    const auto refused = [&](const std::string&) { budget_ = std::max<int64_t>(1000, budget_ / 2); };
    for (const bool job_info : {false, true}) {
      const std::string selector = Selector(job_info, filter, job_filter);
      // Several GPUs: a refusal splits the GPUs; one GPU: time, down to a
      // second (a step, when resampled).
      const double min_piece_s = batch.size() > 1 ? piece_s : std::max(1.0, step_s_);
      double piece = piece_s;
      Status status = QueryOverPieces(
          client_, start, end, piece, min_piece_s,
          [&](double length_s) {
            return step_s_ > 0 ? selector + PromSubqueryRange(length_s, step_s_) : selector + PromRange(length_s);
          },
          [&](PromAnswer&& answer, double) {
            for (const PromSeries& series : answer.series) {
              const std::string& uuid = series.Label("uuid");
              if (!job_info) {
                AppendNewer(series.samples, counters[uuid][series.Label("__name__")]);
                continue;
              }
              JobInfoSeries& info = jobs[{uuid, series.Label("job_id")}];
              info.identity.job_id = series.Label("job_id");
              info.identity.user = series.Label("user");
              info.identity.job_name = series.Label("job_name");
              info.identity.scheduler = series.Label("scheduler");
              for (const auto& [t, v] : series.samples) info.present.insert(t);
            }
            Progress(fmt::format("{} queries, {} samples", client_.queries(), client_.samples_read()));
            return OkStatus();
          });
      if (!status.ok() && batch.size() > 1 && IsRefusalForSize(status.error().message)) {
        // Fewer GPUs at a time, for this batch and the next ones.
        refused(status.error().message);
        const size_t half = batch.size() / 2;
        OFU_RETURN_IF_ERROR(ReadBatch({batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(half)}, start, end,
                                      piece_s));
        return ReadBatch({batch.begin() + static_cast<std::ptrdiff_t>(half), batch.end()}, start, end, piece_s);
      }
      OFU_RETURN_IF_ERROR(status);
      // Time was split: plan the next batches at the size answered.
      if (piece < piece_s) {
        budget_ = std::max<int64_t>(1000, static_cast<int64_t>(static_cast<double>(budget_) * piece / piece_s));
      }
    }
    const double since = *query_.since_s;
    for (const std::string& uuid : batch) {
      const int64_t id = ids_.at(uuid);
      const CounterSamples& of_gpu = counters[uuid];
      std::set<double> job_times;
      for (auto& [key, info] : jobs) {
        if (key.first != uuid) continue;
        info.identity.gpu_id = id;
        job_times.insert(info.present.begin(), info.present.end());
      }
      for (StoredWindow& row :
           RowsOfCounterSamples(id, of_gpu, since, query_.job_id ? &job_times : nullptr, *options_.counters)) {
        if (row.counters.observed_s() > 0) row.flags |= clock_flags_[id];
        history_.windows.push_back(row);
      }
      auto observed = of_gpu.find("ofu_observed_seconds_total");
      if (observed == of_gpu.end()) continue;  // no counters: no scrape to anchor an interval
      for (const auto& [key, info] : jobs) {
        if (key.first == uuid) AddJobIntervals(info, observed->second, history_);
      }
    }
    return OkStatus();
  }

  void Progress(const std::string& line) {
    if (options_.progress) options_.progress(line);
  }

  // What one piece reads, before its range: the counters (name kept), or
  // the job info. Resampled, the counters are read at each step, and a job
  // holds a step's window only if it was seen at every scrape of it (so a
  // window where the job started or ended is not the job's).
  std::string Selector(bool job_info, const std::string& filter, const std::string& job_filter) const {
    if (!job_info) return fmt::format("{{__name__=~\"{}\",{}}}", CounterNamesRegex(*options_.counters), filter);
    if (step_s_ <= 0) return fmt::format("ofu_gpu_job_info{{{}{}}}", filter, job_filter);
    const std::string window = PromRange(step_s_);
    return fmt::format(
        "(count_over_time(ofu_gpu_job_info{{{0}{1}}}{2}) >= on(uuid) group_left() "
        "max by (uuid) (count_over_time(ofu_observed_seconds_total{{{0}}}{2})))",
        filter, job_filter, window);
  }

  PrometheusClient& client_;
  HistoryQuery query_;
  const PrometheusQueryOptions& options_;
  int64_t budget_;
  std::function<Status(const StoredHistory&)> on_batch_;
  StoredHistory history_;
  std::map<std::string, int64_t> ids_;
  std::map<int64_t, std::uint32_t> clock_flags_;  // gpu id -> kHistoryClock* bits (AddPrometheusGpus)
  double step_s_ = 0;                             // 0: raw scrapes
};

}  // namespace

std::vector<StoredWindow> RowsOfCounterSamples(std::int64_t gpu_id, const CounterSamples& samples, double since_s,
                                               const std::set<double>* job_times, const OutputCounterTable& table) {
  std::vector<StoredWindow> rows;
  auto observed_it = samples.find("ofu_observed_seconds_total");
  if (observed_it == samples.end()) return rows;  // no scrape times, so no rows
  const Samples& observed = observed_it->second;
  // Values of a counter at each scrape time.
  std::map<std::string, std::map<double, double>> at;
  for (const auto& [name, values] : samples) {
    for (const auto& [t, v] : values) at[name][t] = v;
  }
  // The increase between two scrapes; absent when either has no value.
  const auto increase = [&](const std::string& name, double t0, double t1) -> std::optional<double> {
    const auto& values = at[name];
    auto a = values.find(t0), b = values.find(t1);
    if (a == values.end() || b == values.end()) return std::nullopt;
    return b->second >= a->second ? b->second - a->second : b->second;  // a reset: the agent restarted
  };
  std::vector<std::string> names;
  for (const OutputCounter& row : table.rows()) names.push_back(row.sample_name());
  for (size_t i = 1; i < observed.size(); ++i) {
    const double t0 = observed[i - 1].first, t1 = observed[i].first;
    if (t1 <= since_s) continue;
    if (job_times != nullptr && job_times->count(t1) == 0) continue;
    StoredWindow row;
    row.gpu_id = gpu_id;
    row.end_s = t1;
    row.span_s = t1 - t0;
    // Each counter's increase, in the row's unit. One the GPU does not export
    // stays absent in its rows (a kAlways one reads 0).
    for (std::size_t id = 0; id < table.size(); ++id) {
      if (const auto value = increase(names[id], t0, t1)) row.counters.Set(id, *value * (1 / table[id].metric_scale));
    }
    row.up_s = row.span_s;
    rows.push_back(row);
  }
  return rows;
}

namespace {

Result<StoredHistory> Read(const std::string& url, const HistoryQuery& query, const PrometheusQueryOptions& options,
                           std::function<Status(const StoredHistory&)> on_batch) {
  if (!query.since_s || !query.until_s || *query.until_s <= *query.since_s) {
    return Error::InvalidArgument("a Prometheus report needs a range with since before until");
  }
  OFU_ASSIGN_OR_RETURN(auto client, PrometheusClient::Open(url, options.timeout_s));
  Reader reader(*client, query, options, std::move(on_batch));
  return reader.Read();
}

}  // namespace

Result<StoredHistory> ReadPrometheusHistory(const std::string& url, const HistoryQuery& query,
                                            const PrometheusQueryOptions& options) {
  return Read(url, query, options, nullptr);
}

Result<StoredHistory> ReadPrometheusHistoryInBatches(
    const std::string& url, const HistoryQuery& query, const PrometheusQueryOptions& options,
    const std::function<Status(const StoredHistory& batch)>& on_batch) {
  return Read(url, query, options, on_batch);
}

}  // namespace ofu::history
