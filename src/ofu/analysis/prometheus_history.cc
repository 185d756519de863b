#include "ofu/analysis/prometheus_history.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

namespace ofu::analysis {
namespace {

using nlohmann::json;

struct Endpoint {
  std::string origin;     // scheme://host[:port]
  std::string base_path;  // "" or "/prefix"
};

Result<Endpoint> ParseEndpoint(const std::string& url) {
  const size_t scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  if ((scheme != "http" && scheme != "https") || url.size() == scheme_end + 3) {
    return Error::InvalidArgument(
        "Prometheus URL '{}' must be http(s)://host[:port][/path], e.g. http://prometheus:9090", url);
  }
  const size_t slash = url.find('/', scheme_end + 3);
  Endpoint endpoint{url.substr(0, slash), slash == std::string::npos ? "" : url.substr(slash)};
  while (!endpoint.base_path.empty() && endpoint.base_path.back() == '/') endpoint.base_path.pop_back();
  return endpoint;
}

// One series of a matrix result: its labels and (time, value) samples.
struct Series {
  std::map<std::string, std::string> labels;
  std::vector<std::pair<double, double>> samples;
};

class QueryClient {
 public:
  QueryClient(const std::string& url, Endpoint endpoint, const PrometheusQueryOptions& options)
      : url_(url), endpoint_(std::move(endpoint)), client_(endpoint_.origin) {
    const auto timeout = std::chrono::duration<double>(options.timeout_s);
    client_.set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
    client_.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  }

  // An instant query returning a matrix (a range selector), at `time_s`.
  Result<std::vector<Series>> Matrix(const std::string& promql, double time_s) {
    const httplib::Params params = {{"query", promql}, {"time", fmt::format("{:.3f}", time_s)}};
    auto response = client_.Post((endpoint_.base_path + "/api/v1/query").c_str(), params);
    if (!response) {
      return Error::Unavailable("{}: cannot query Prometheus: {}", url_, httplib::to_string(response.error()));
    }
    json body = json::parse(response->body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded() || !body.is_object()) {
      return Error{response->status == 200 ? ErrorCode::kMalformedInput : ErrorCode::kUnavailable,
                   fmt::format("{}: HTTP {} and not the query API's JSON", url_, response->status)};
    }
    if (body.value("status", "") != "success") {
      return Error::MalformedInput("{}: query {} failed: {}: {}", url_, promql, body.value("errorType", "error"),
                                   body.value("error", "(no message)"));
    }
    const json& data = body["data"];
    if (!data.is_object() || data.value("resultType", "") != "matrix" || !data["result"].is_array()) {
      return Error::MalformedInput("{}: query {} did not return a matrix", url_, promql);
    }
    std::vector<Series> out;
    for (const json& item : data["result"]) {
      Series series;
      if (!item.is_object() || !item["metric"].is_object() || !item["values"].is_array()) {
        return Error::MalformedInput("{}: a series in the answer has no metric or values", url_);
      }
      for (const auto& [name, value] : item["metric"].items()) {
        if (value.is_string()) series.labels[name] = value.get<std::string>();
      }
      for (const json& pair : item["values"]) {
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_string()) {
          return Error::MalformedInput("{}: a sample is not [time, \"value\"]", url_);
        }
        series.samples.emplace_back(pair[0].get<double>(), std::strtod(pair[1].get<std::string>().c_str(), nullptr));
      }
      out.push_back(std::move(series));
    }
    return out;
  }

 private:
  std::string url_;
  Endpoint endpoint_;
  httplib::Client client_;
};

std::string Label(const Series& series, const std::string& name) {
  auto it = series.labels.find(name);
  return it == series.labels.end() ? "" : it->second;
}

// PromQL string literal.
std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

// The regex alternative matching exactly these values.
std::string ExactAlternatives(const std::set<std::string>& values) {
  std::string out;
  for (const std::string& value : values) {
    if (!out.empty()) out += '|';
    for (char c : value) {
      if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
  }
  return out;
}

using Samples = std::vector<std::pair<double, double>>;  // (time, value), in time order

// With --job: on which GPUs, at which scrape times, the job's info series
// was present, and the PromQL label filter that limits later queries to
// those GPUs.
struct JobPresence {
  std::map<std::string, std::set<double>> times;  // uuid -> scrape times
  std::string uuid_filter;                        // ",uuid=~\"a|b\""; empty: no GPU carried the job
};

JobPresence PresenceOfJob(const std::vector<Series>& job_info) {
  JobPresence presence;
  std::set<std::string> uuids;
  for (const Series& series : job_info) {
    const std::string uuid = Label(series, "uuid");
    uuids.insert(uuid);
    for (const auto& [t, v] : series.samples) presence.times[uuid].insert(t);
  }
  if (!uuids.empty()) presence.uuid_filter = fmt::format(",uuid=~\"{}\"", ExactAlternatives(uuids));
  return presence;
}

// The GPUs of the info series into `history`, ids in uuid order; the newest
// info sample names the model. Returns uuid -> id.
std::map<std::string, int64_t> AddGpus(const std::vector<Series>& info, sinks::StoredHistory& history) {
  std::map<std::string, int64_t> ids;
  for (const Series& series : info) {
    const std::string uuid = Label(series, "uuid");
    if (ids.count(uuid)) continue;
    sinks::StoredGpu gpu;
    gpu.id = static_cast<int64_t>(ids.size()) + 1;
    gpu.uuid = uuid;
    gpu.gpu_index = Label(series, "gpu");
    gpu.model = Label(series, "model");
    gpu.sku = Label(series, "sku");
    gpu.architecture = Label(series, "architecture");
    gpu.hostname = Label(series, "instance");
    gpu.mig_profile = Label(series, "mig_profile");
    gpu.mig_instance = Label(series, "mig_instance");
    ids[uuid] = gpu.id;
    history.gpus.push_back(gpu);
  }
  return ids;
}

// One GPU's counters: one row per pair of consecutive scrapes, holding the
// counters' increases. `job_times`: with --job, only rows ending at one of
// these times count; null: every row does.
void AddWindowsOfGpu(int64_t gpu_id, const std::map<std::string, Samples>& counters_of,
                     const std::set<double>* job_times, sinks::StoredHistory& history) {
  auto observed_it = counters_of.find("ofu_observed_seconds_total");
  if (observed_it == counters_of.end()) return;  // no scrape times, so no rows
  const Samples& observed = observed_it->second;
  // Values of a counter at each scrape time.
  std::map<std::string, std::map<double, double>> at;
  for (const auto& [name, samples] : counters_of) {
    for (const auto& [t, v] : samples) at[name][t] = v;
  }
  const auto increase = [&](const std::string& name, double t0, double t1) {
    const auto& values = at[name];
    auto a = values.find(t0), b = values.find(t1);
    if (a == values.end() || b == values.end()) return 0.0;
    return b->second >= a->second ? b->second - a->second : b->second;  // a reset: the agent restarted
  };
  // A pipe counter the GPU does not export stays absent in its rows.
  const auto pipe_increase = [&](const std::string& name, double t0, double t1) -> std::optional<double> {
    const auto& values = at[name];
    if (values.count(t0) == 0 || values.count(t1) == 0) return std::nullopt;
    return increase(name, t0, t1);
  };
  for (size_t i = 1; i < observed.size(); ++i) {
    const double t0 = observed[i - 1].first, t1 = observed[i].first;
    if (job_times != nullptr && job_times->count(t1) == 0) continue;
    sinks::StoredWindow row;
    row.gpu_id = gpu_id;
    row.end_s = t1;
    row.span_s = t1 - t0;
    row.observed_s = increase("ofu_observed_seconds_total", t0, t1);
    row.utilized_s = increase("ofu_utilized_seconds_total", t0, t1);
    row.busy_s = increase("ofu_busy_seconds_total", t0, t1);
    row.busy_utilized_s = increase("ofu_busy_utilized_seconds_total", t0, t1);
    row.tensor_active_s = increase("ofu_tensor_active_seconds_total", t0, t1);
    row.hmma_active_s = pipe_increase("ofu_hmma_active_seconds_total", t0, t1);
    row.imma_active_s = pipe_increase("ofu_imma_active_seconds_total", t0, t1);
    row.dfma_active_s = pipe_increase("ofu_dfma_active_seconds_total", t0, t1);
    row.fp64_active_s = pipe_increase("ofu_fp64_active_seconds_total", t0, t1);
    row.fp32_active_s = pipe_increase("ofu_fp32_active_seconds_total", t0, t1);
    row.fp16_active_s = pipe_increase("ofu_fp16_active_seconds_total", t0, t1);
    row.non_tensor_peak_s = pipe_increase("ofu_non_tensor_peak_seconds_total", t0, t1);
    // The agent counts FLOP; the rows hold TFLOP.
    if (auto flop = pipe_increase("ofu_non_tensor_flop_upper_bound_total", t0, t1))
      row.non_tensor_tflop = *flop * 1e-12;
    row.up_s = row.span_s;
    history.windows.push_back(row);
  }
}

// Job intervals, as the store keeps them: (start, end] where a row ending
// in it belongs to the job. A run of consecutive scrapes showing the job on
// a GPU is one interval, opening at the scrape before the run's first (the
// start of the first row it labels) and closing at its last.
void AddJobIntervals(const std::vector<Series>& job_info, const std::map<std::string, int64_t>& ids,
                     const std::map<std::string, Samples>& scrape_times, sinks::StoredHistory& history) {
  for (const Series& series : job_info) {
    const std::string uuid = Label(series, "uuid");
    auto id = ids.find(uuid);
    if (id == ids.end() || series.samples.empty()) continue;
    std::set<double> present;
    for (const auto& [t, v] : series.samples) present.insert(t);
    sinks::StoredJob job;
    job.gpu_id = id->second;
    job.job_id = Label(series, "job_id");
    job.user = Label(series, "user");
    job.job_name = Label(series, "job_name");
    job.scheduler = Label(series, "scheduler");
    auto times_it = scrape_times.find(uuid);
    if (times_it == scrape_times.end()) continue;  // no counters: no scrape to anchor an interval
    const Samples& times = times_it->second;
    bool open = false;
    for (size_t i = 0; i < times.size(); ++i) {
      const double t = times[i].first;
      if (present.count(t) != 0) {
        if (!open) job.start_s = i > 0 ? times[i - 1].first : t;
        open = true;
        job.end_s = t;
      } else if (open) {
        history.jobs.push_back(job);
        open = false;
      }
    }
    if (open) history.jobs.push_back(job);
  }
}

// Jobs and windows in the order the SQLite store gives them.
void SortLikeTheStore(sinks::StoredHistory& history) {
  std::stable_sort(history.jobs.begin(), history.jobs.end(), [](const sinks::StoredJob& a, const sinks::StoredJob& b) {
    return std::tie(a.job_id, a.gpu_id, a.start_s) < std::tie(b.job_id, b.gpu_id, b.start_s);
  });
  std::stable_sort(history.windows.begin(), history.windows.end(),
                   [](const sinks::StoredWindow& a, const sinks::StoredWindow& b) {
                     return a.gpu_id != b.gpu_id ? a.gpu_id < b.gpu_id : a.end_s < b.end_s;
                   });
}

}  // namespace

Result<sinks::StoredHistory> ReadPrometheusHistory(const std::string& url, const sinks::HistoryQuery& query,
                                                   const PrometheusQueryOptions& options) {
  if (!query.since_s || !query.until_s || *query.until_s <= *query.since_s) {
    return Error::InvalidArgument("a Prometheus report needs a range with since before until");
  }
  OFU_ASSIGN_OR_RETURN(auto endpoint, ParseEndpoint(url));
  QueryClient client(url, endpoint, options);
  const double until = *query.until_s;
  const long range_s = static_cast<long>(std::ceil(until - *query.since_s));
  const std::string range = fmt::format("[{}s]", range_s);

  sinks::StoredHistory history;
  history.path = url;
  history.query = query;

  // Which GPUs carried which job at which scrape times. With a job, only its
  // GPUs are asked for; without, every job's info series (for per-job totals).
  const std::string job_selector = query.job_id
                                       ? fmt::format("ofu_gpu_job_info{{job_id={}}}{}", Quoted(*query.job_id), range)
                                       : fmt::format("ofu_gpu_job_info{{uuid!=\"\"}}{}", range);
  OFU_ASSIGN_OR_RETURN(auto jobs, client.Matrix(job_selector, until));
  JobPresence presence;
  if (query.job_id) {
    presence = PresenceOfJob(jobs);
    if (presence.uuid_filter.empty()) return history;  // the job left no trace in the range
  }

  OFU_ASSIGN_OR_RETURN(
      auto info, client.Matrix(fmt::format("ofu_gpu_info{{uuid!=\"\"{}}}{}", presence.uuid_filter, range), until));
  OFU_ASSIGN_OR_RETURN(
      auto counters,
      client.Matrix(
          fmt::format(
              "{{__name__=~\"ofu_((observed|utilized|busy|busy_utilized|tensor_active|hmma_active|imma_active|"
              "dfma_active|fp64_active|fp32_active|fp16_active|non_tensor_peak)_seconds|non_tensor_flop_upper_bound)"
              "_total\"{}}}{}",
              presence.uuid_filter, range),
          until));

  const std::map<std::string, int64_t> ids = AddGpus(info, history);
  std::map<std::string, std::map<std::string, Samples>> by_gpu;  // uuid -> counter name -> samples
  for (const Series& series : counters) by_gpu[Label(series, "uuid")][Label(series, "__name__")] = series.samples;
  std::map<std::string, Samples> scrape_times;  // uuid -> its observed samples
  for (const auto& [uuid, counters_of] : by_gpu) {
    auto id = ids.find(uuid);
    if (id == ids.end()) continue;  // counters without info: not an ofu agent's GPU
    AddWindowsOfGpu(id->second, counters_of, query.job_id ? &presence.times[uuid] : nullptr, history);
    auto observed = counters_of.find("ofu_observed_seconds_total");
    scrape_times[uuid] = observed == counters_of.end() ? Samples() : observed->second;
  }
  AddJobIntervals(jobs, ids, scrape_times, history);
  SortLikeTheStore(history);
  return history;
}

}  // namespace ofu::analysis
