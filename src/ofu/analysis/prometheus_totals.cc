#include "ofu/analysis/prometheus_totals.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "ofu/analysis/prometheus_client.h"

namespace ofu::analysis {
namespace {

// The agent's counters and the row field each one sums into.
struct Counter {
  const char* name;
  double sinks::StoredWindow::*field;                // the five always present
  std::optional<double> sinks::StoredWindow::*pipe;  // the per-pipe ones: absent when not exported
  double scale = 1;                                  // counter unit -> row unit
};
constexpr Counter kCounters[] = {
    {"ofu_observed_seconds_total", &sinks::StoredWindow::observed_s, nullptr},
    {"ofu_utilized_seconds_total", &sinks::StoredWindow::utilized_s, nullptr},
    {"ofu_busy_seconds_total", &sinks::StoredWindow::busy_s, nullptr},
    {"ofu_busy_utilized_seconds_total", &sinks::StoredWindow::busy_utilized_s, nullptr},
    {"ofu_tensor_active_seconds_total", &sinks::StoredWindow::tensor_active_s, nullptr},
    {"ofu_hmma_active_seconds_total", nullptr, &sinks::StoredWindow::hmma_active_s},
    {"ofu_imma_active_seconds_total", nullptr, &sinks::StoredWindow::imma_active_s},
    {"ofu_dfma_active_seconds_total", nullptr, &sinks::StoredWindow::dfma_active_s},
    {"ofu_fp64_active_seconds_total", nullptr, &sinks::StoredWindow::fp64_active_s},
    {"ofu_fp32_active_seconds_total", nullptr, &sinks::StoredWindow::fp32_active_s},
    {"ofu_fp16_active_seconds_total", nullptr, &sinks::StoredWindow::fp16_active_s},
    {"ofu_non_tensor_peak_seconds_total", nullptr, &sinks::StoredWindow::non_tensor_peak_s},
    // FLOP in the agent's counter, TFLOP in the rows.
    {"ofu_non_tensor_flop_upper_bound_total", nullptr, &sinks::StoredWindow::non_tensor_tflop, 1e-12},
};

// Samples the server holds per GPU and step of a sum (x and p twice, their
// differences, the set operations, the sum): measured on Prometheus 2.42.
constexpr double kSamplesPerGpuStep = 6;

std::string Ms(double seconds) { return fmt::format("{}ms", static_cast<long long>(std::llround(seconds * 1000))); }

void Add(sinks::StoredWindow& row, const Counter& counter, double value) {
  value *= counter.scale;
  if (counter.field != nullptr) {
    row.*counter.field += value;
  } else {
    row.*counter.pipe = (row.*counter.pipe).value_or(0) + value;
  }
}

class TotalsReader {
 public:
  TotalsReader(PrometheusClient& client, const sinks::HistoryQuery& query, const PrometheusTotalsOptions& options)
      : client_(client), query_(query), options_(options) {}

  Result<HistoryTotals> Read() {
    totals_.history.path = client_.url();
    totals_.history.query = query_;
    const double since = *query_.since_s, until = *query_.until_s;
    std::string filter = "uuid!=\"\"";
    if (query_.job_id) {
      std::set<std::string> uuids;
      OFU_RETURN_IF_ERROR(Whole(fmt::format("count_over_time(ofu_gpu_job_info{{job_id={}}}{{range}})",
                                            PromQuoted(*query_.job_id)),
                                [&](PromAnswer&& answer) {
                                  for (const auto& s : answer.series) uuids.insert(s.Label("uuid"));
                                }));
      if (uuids.empty()) return std::move(totals_);
      filter = fmt::format("uuid=~\"{}\"", PromExactAlternatives({uuids.begin(), uuids.end()}));
    }
    std::vector<PromSeries> info;
    OFU_RETURN_IF_ERROR(Whole(fmt::format("last_over_time(ofu_gpu_info{{{}}}{{range}})", filter),
                              [&](PromAnswer&& answer) {
                                for (auto& s : answer.series) info.push_back(std::move(s));
                              }));
    ids_ = AddPrometheusGpus(info, totals_.history);
    if (ids_.empty()) return std::move(totals_);

    // The scrape interval: the range over the most samples any GPU has.
    std::map<std::string, double> samples_of;
    OFU_RETURN_IF_ERROR(Whole(fmt::format("count_over_time(ofu_observed_seconds_total{{{}}}{{range}})", filter),
                              [&](PromAnswer&& answer) {
                                for (const auto& s : answer.series) {
                                  if (!s.samples.empty()) samples_of[s.Label("uuid")] += s.samples.front().second;
                                }
                              }));
    double most = 0;
    std::string densest;
    for (const auto& [uuid, n] : samples_of) {
      if (n > most) most = n, densest = uuid;
    }
    if (most < 1) return std::move(totals_);
    // The scrape interval: the range over the samples, or less where scrapes
    // are denser than that (gaps lower the mean), from the most samples any
    // 10 minutes of the densest GPU hold.
    scrape_s_ = mean_scrape_s_ = (until - since) / most;
    OFU_RETURN_IF_ERROR(
        Instant(fmt::format("max_over_time(count_over_time(ofu_observed_seconds_total{{uuid={}}}[10m])[{}:10m])",
                            PromQuoted(densest), Ms(until - since)),
                until, [&](const PromSeries& s) {
                  if (s.samples.front().second >= 2) scrape_s_ = std::min(scrape_s_, 600 / s.samples.front().second);
                }));
    step_s_ = options_.step_s > 0 ? options_.step_s : std::max(0.001, std::floor(scrape_s_ * 0.9 * 1000) / 1000);
    totals_.window_s = mean_scrape_s_;
    piece_s_ = std::max(step_s_, static_cast<double>(options_.query.max_samples_per_query) /
                                     (kSamplesPerGpuStep * static_cast<double>(ids_.size())) * step_s_);

    job_filter_ = filter + (query_.job_id ? ",job_id=" + PromQuoted(*query_.job_id) : "");
    // Steps at multiples of S in (since, until]: the first step's increase
    // reaches back before since, and the last step lies before until. Two
    // edge queries make the sums those of the scrapes in (since, until].
    const auto step_ms = static_cast<long long>(std::llround(step_s_ * 1000));
    const auto since_ms = static_cast<long long>(std::llround(since * 1000));
    const auto until_ms = static_cast<long long>(std::llround(until * 1000));
    const long long first_step_ms = (since_ms / step_ms + 1) * step_ms;
    const long long last_step_ms = until_ms / step_ms * step_ms;
    const double head_s = static_cast<double>(since_ms - (first_step_ms - step_ms)) / 1000;
    const double tail_s = static_cast<double>(until_ms - last_step_ms) / 1000;
    for (const Counter& counter : kCounters) {
      const std::string x = fmt::format("{}{{{}}}", counter.name, filter);
      const std::string d = IncreaseOver(x, step_s_);
      // One query gives both: per (GPU, job) where a job was scraped, per GPU
      // (job_id "") where none was; a GPU's total is the sum of its series.
      OFU_RETURN_IF_ERROR(Pieces(fmt::format("sum by (uuid, job_id) (sum_over_time(({}){{range}}))", Split(d, step_s_)),
                                 [&](const PromSeries& s) { AddToBoth(counter, s, 1); }));
      // The edges: add what the last step left before until, take off what
      // the first step took from before since.
      for (const auto& [at, window_s, sign] : {std::tuple{until, tail_s, 1.0}, std::tuple{since, head_s, -1.0}}) {
        if (window_s < 0.002) continue;
        OFU_RETURN_IF_ERROR(Instant(fmt::format("sum by (uuid, job_id) ({})",
                                                Split(IncreaseOver(x, window_s), window_s)),
                                    at, [&](const PromSeries& s) { AddToBoth(counter, s, sign); }));
      }
      Progress(counter.name);
    }
    OFU_RETURN_IF_ERROR(ReadJobIntervals());
    if (query_.job_id) {
      for (const auto& [key, row] : totals_.of_job) totals_.of_gpu[key.second] = row;
    }
    for (auto& [id, row] : totals_.of_gpu) Finish(row, id);
    for (auto& [key, row] : totals_.of_job) Finish(row, key.second);
    totals_.notes.push_back(fmt::format(
        "Prometheus summed the agent's counters (path: counters): increases at {:.3g} s steps over the range, "
        "scrape interval about {:.3g} s; percentiles need the windows (ofu report --html, ofu regress)",
        step_s_, scrape_s_));
    return std::move(totals_);
  }

 private:
  // The increase of `x` over the `window_s` seconds before each evaluation:
  // the rule of increase() without extrapolation (a decrease is a reset:
  // the new value is the increase); absent without a sample G before.
  std::string IncreaseOver(const std::string& x, double window_s) const {
    const std::string p = fmt::format("last_over_time({}[{}] offset {})", x, Ms(options_.max_gap_s), Ms(window_s));
    return fmt::format("(({x} - {p}) >= 0 or (({x} + 0) and {p}))", fmt::arg("x", x), fmt::arg("p", p));
  }

  // The job scraped on each GPU in the `window_s` seconds before evaluation.
  std::string JobIn(double window_s) const {
    return fmt::format("max by (uuid, job_id) (last_over_time(ofu_gpu_job_info{{{}}}[{}]))", job_filter_,
                       Ms(window_s - 0.001));
  }

  // `d` per (GPU, job scraped in the window), and per GPU alone (no job_id)
  // where no job was scraped; with --job, only the job's part.
  std::string Split(const std::string& d, double window_s) const {
    const std::string with_job = fmt::format("{} * on(uuid) group_left(job_id) {}", d, JobIn(window_s));
    if (query_.job_id) return with_job;
    return fmt::format("({}) or ({} unless on(uuid) {})", with_job, d, JobIn(window_s));
  }

  void AddToBoth(const Counter& counter, const PromSeries& s, double sign) {
    if (!query_.job_id) AddToGpu(counter, s, sign);
    if (!s.Label("job_id").empty()) AddToJob(counter, s, sign);
  }

  void AddToGpu(const Counter& counter, const PromSeries& s, double sign) {
    auto id = ids_.find(s.Label("uuid"));
    if (id != ids_.end()) Add(totals_.of_gpu[id->second], counter, sign * s.samples.front().second);
  }

  void AddToJob(const Counter& counter, const PromSeries& s, double sign) {
    auto id = ids_.find(s.Label("uuid"));
    if (id == ids_.end()) return;
    sinks::StoredWindow& row = totals_.of_job[{s.Label("job_id"), id->second}];
    row.gpu_id = id->second;
    Add(row, counter, sign * s.samples.front().second);
  }

  // One instant query at `at`, each series' value to `consume`.
  Status Instant(const std::string& promql, double at, const std::function<void(const PromSeries&)>& consume) {
    OFU_ASSIGN_OR_RETURN(auto answer, client_.Query(promql, at));
    if (answer.too_large) {
      return Error::Unavailable("{}: the server refuses a query of one scrape interval for its size ({})",
                                client_.url(), answer.refusal);
    }
    for (const PromSeries& s : answer.series) {
      if (!s.samples.empty()) consume(s);
    }
    return OkStatus();
  }

  // An instant query over the whole range ({range}), in time pieces if refused.
  Status Whole(const std::string& text, const std::function<void(PromAnswer&&)>& consume) {
    double piece_s = *query_.until_s - *query_.since_s;
    return QueryOverPieces(
        client_, *query_.since_s, *query_.until_s, piece_s, 1,
        [&](double length_s) {
          std::string promql = text;
          promql.replace(promql.find("{range}"), 7, PromRange(length_s));
          return promql;
        },
        [&](PromAnswer&& answer, double) {
          consume(std::move(answer));
          return OkStatus();
        });
  }

  // A sum over steps ({range} becomes the subquery [piece − 1 ms:S]), in pieces
  // of about piece_s_, each series' one value handed to `consume`.
  Status Pieces(const std::string& text, const std::function<void(const PromSeries&)>& consume) {
    return QueryOverPieces(
        client_, *query_.since_s, *query_.until_s, piece_s_, step_s_,
        [&](double length_s) {
          std::string promql = text;
          promql.replace(promql.find("{range}"), 7, fmt::format("[{}:{}]", Ms(length_s - 0.001), Ms(step_s_)));
          return promql;
        },
        [&](PromAnswer&& answer, double) {
          for (const PromSeries& s : answer.series) {
            if (!s.samples.empty()) consume(s);
          }
          return OkStatus();
        });
  }

  // One interval per (job, GPU): (first scrape − scrape interval, last scrape].
  Status ReadJobIntervals() {
    const std::string& filter = job_filter_;
    std::map<std::pair<std::string, std::string>, sinks::StoredJob> jobs;  // (uuid, job id) -> interval
    for (const bool last : {false, true}) {
      OFU_RETURN_IF_ERROR(Pieces(fmt::format("{}_over_time(timestamp(ofu_gpu_job_info{{{}}}){{range}})",
                                             last ? "max" : "min", filter),
                                 [&](const PromSeries& s) {
                                   auto id = ids_.find(s.Label("uuid"));
                                   if (id == ids_.end()) return;
                                   const double t = s.samples.front().second;
                                   auto [it, inserted] = jobs.try_emplace({s.Label("uuid"), s.Label("job_id")});
                                   sinks::StoredJob& job = it->second;
                                   if (inserted) {
                                     job.gpu_id = id->second;
                                     job.job_id = s.Label("job_id");
                                     job.user = s.Label("user");
                                     job.job_name = s.Label("job_name");
                                     job.scheduler = s.Label("scheduler");
                                     job.start_s = INFINITY;
                                     job.end_s = -INFINITY;
                                   }
                                   if (last) job.end_s = std::max(*job.end_s, t);
                                   if (!last) job.start_s = std::min(job.start_s, t - mean_scrape_s_);
                                 }));
    }
    // Scrapes after the last step.
    OFU_RETURN_IF_ERROR(Instant(fmt::format("timestamp(ofu_gpu_job_info{{{}}})", filter), *query_.until_s,
                                [&](const PromSeries& s) {
                                  auto it = jobs.find({s.Label("uuid"), s.Label("job_id")});
                                  if (it != jobs.end())
                                    it->second.end_s = std::max(*it->second.end_s, s.samples.front().second);
                                }));
    for (auto& [key, job] : jobs) totals_.history.jobs.push_back(job);
    std::stable_sort(totals_.history.jobs.begin(), totals_.history.jobs.end(),
                     [](const sinks::StoredJob& a, const sinks::StoredJob& b) {
                       return std::tie(a.job_id, a.gpu_id, a.start_s) < std::tie(b.job_id, b.gpu_id, b.start_s);
                     });
    return OkStatus();
  }

  // A sum as a downsampled row: it stands for its observed seconds.
  void Finish(sinks::StoredWindow& row, std::int64_t id) {
    row.gpu_id = id;
    row.end_s = *query_.until_s;
    row.span_s = row.up_s = row.observed_s;
    row.flags |= sinks::kHistoryDownsampled;
  }

  void Progress(const std::string& what) {
    if (options_.query.progress) {
      options_.query.progress(fmt::format("summed {} ({} queries)", what, client_.queries()));
    }
  }

  PrometheusClient& client_;
  sinks::HistoryQuery query_;
  const PrometheusTotalsOptions& options_;
  HistoryTotals totals_;
  std::map<std::string, std::int64_t> ids_;
  double scrape_s_ = 0, mean_scrape_s_ = 0, step_s_ = 0, piece_s_ = 0;
  std::string job_filter_;  // the GPUs' label filter, and the job's
};

}  // namespace

Result<HistoryTotals> ReadPrometheusTotals(const std::string& url, const sinks::HistoryQuery& query,
                                           const PrometheusTotalsOptions& options) {
  if (!query.since_s || !query.until_s || *query.until_s <= *query.since_s) {
    return Error::InvalidArgument("a Prometheus report needs a range with since before until");
  }
  OFU_ASSIGN_OR_RETURN(auto client, PrometheusClient::Open(url, options.query.timeout_s));
  TotalsReader reader(*client, query, options);
  return reader.Read();
}

}  // namespace ofu::analysis
