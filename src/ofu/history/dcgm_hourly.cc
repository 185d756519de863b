#include "ofu/history/dcgm_hourly.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "ofu/core/gpu_identity.h"
#include "ofu/core/gpu_key.h"
#include "ofu/core/gpu_share.h"
#include "ofu/core/ofu_math.h"
#include "ofu/history/dcgm_exporter_rules.h"
#include "ofu/history/prometheus_client.h"
#include "ofu/history/prometheus_increase.h"

namespace ofu::history {
namespace {

constexpr double kHourS = 3600;
constexpr const char* kTensorNames[] = {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_TENSOR_UTIL_RATIO"};
constexpr const char* kClockName = "DCGM_FI_DEV_SM_CLOCK";
// The labels that name a device, and those that name its job: the rollups
// keep both, the reader sums by the first and the ones its jobs need.
constexpr const char* kKeyLabels = "UUID, uuid, Hostname, hostname, gpu, GPU_I_ID, GPU_I_PROFILE, modelName";
constexpr const char* kJobLabels = "hpc_job, namespace, pod, container";
// Raw pieces longer than this are summed in parts (the server's points per query).
constexpr double kRawPartS = 6 * kHourS;

std::string Joined(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + "," + b;
}

// The tensor metric names a scope reads.
std::vector<std::string> TensorNames(const DcgmStepScope& scope) {
  if (!scope.tensor_names.empty()) return scope.tensor_names;
  return {kTensorNames[0], kTensorNames[1]};
}

// The tensor activity of the scrape in each step, of the series `model`
// selects (a modelName matcher, or none).
std::string Tensor(const std::string& model, const DcgmStepScope& scope) {
  const std::string sel = Joined(model, scope.matchers);
  const std::string window = PromRange(scope.step_s - 0.001);
  std::string any;
  for (const std::string& name : TensorNames(scope)) {
    any += fmt::format("{}last_over_time({}{{{}}}{})", any.empty() ? "" : " or ", name, sel, window);
  }
  return fmt::format("(({}) < 1e12)", any);
}

// The time of the scrape in each step (of any tensor series), or, with
// `bounded`, of one in the scope's (after_s, until_s] only.
std::string ScrapeTime(const DcgmStepScope& scope, bool bounded) {
  std::string any;
  for (const std::string& name : TensorNames(scope)) {
    any += fmt::format("{}timestamp({}{{{}}})", any.empty() ? "" : " or ", name, scope.matchers);
  }
  std::string at = fmt::format("({}) > time() - {}", any, PromNumber(scope.step_s));
  if (bounded && scope.after_s) at += fmt::format(" > {:.3f}", *scope.after_s);
  if (bounded && scope.until_s) at += fmt::format(" <= {:.3f}", *scope.until_s);
  return at;
}

// The reported clock of the scrape in each step, per physical GPU.
std::string Clock(const DcgmStepScope& scope) {
  return fmt::format("max by (instance, gpu) (last_over_time({}{}) < 1e12)", kClockName,
                     PromRange(scope.step_s - 0.001));
}

// The reported clock with the labels of the tensor series of `model`.
std::string ReportedClock(const std::string& model, const DcgmStepScope& scope) {
  return fmt::format("({} * 0 + on (instance, gpu) group_left () {})", Tensor(model, scope), Clock(scope));
}

// f_run per scrape: the measured model where the board has one
// (dcgm_exporter_rules.h, as the zero-deploy rules apply it), else f.
std::string RunClock(const GpuSpecDatabase& specs, const DcgmStepScope& scope) {
  std::vector<std::string> terms;
  std::vector<std::string> names;
  for (const auto& [name, m] : DcgmMeasuredBoards(specs)) {
    names.push_back(name);
    if (scope.models && std::find(scope.models->begin(), scope.models->end(), name) == scope.models->end()) continue;
    const std::string model = "modelName=" + PromQuoted(name);
    terms.push_back(DcgmRunClockExpr(m, Tensor(model, scope), ReportedClock(model, scope)));
  }
  terms.push_back(ReportedClock(
      names.empty() ? "" : fmt::format("modelName!~{}", PromQuoted(PromExactAlternatives(names))), scope));
  std::string out;
  for (const std::string& term : terms) out += (out.empty() ? "" : " or ") + term;
  return "(" + out + ")";
}

long long MsOf(double seconds) { return std::llround(seconds * 1000); }

// The job of a series' labels: its id, name and scheduler; an empty id for none.
struct JobOfLabels {
  std::string id, name, scheduler;
};
JobOfLabels JobOf(const PromSeries& s, DcgmJobLabels jobs) {
  switch (jobs) {
    case DcgmJobLabels::kSlurm: return {s.Label("hpc_job"), "", "slurm"};
    case DcgmJobLabels::kKubernetes:
      if (s.Label("pod").empty()) return {};
      return {s.Label("namespace") + "/" + s.Label("pod"), s.Label("container"), "kubernetes"};
    case DcgmJobLabels::kNone: break;
  }
  return {};
}

// The labels a read sums by.
std::string ReadLabels(DcgmJobLabels jobs) {
  switch (jobs) {
    case DcgmJobLabels::kSlurm: return std::string(kKeyLabels) + ", hpc_job";
    case DcgmJobLabels::kKubernetes: return std::string(kKeyLabels) + ", namespace, pod, container";
    case DcgmJobLabels::kNone: break;
  }
  return kKeyLabels;
}

// The matchers of --job on the tensor series (and on the rollups, which keep their labels).
Result<std::string> JobMatchers(const HistoryQuery& query, DcgmJobLabels jobs) {
  if (!query.job_id) return std::string();
  switch (jobs) {
    case DcgmJobLabels::kSlurm: return "hpc_job=" + PromQuoted(*query.job_id);
    case DcgmJobLabels::kKubernetes: {
      const auto slash = query.job_id->find('/');
      if (slash == std::string::npos) {
        return Error::InvalidArgument("--job {:?}: a Kubernetes job is namespace/pod", *query.job_id);
      }
      return fmt::format("namespace={},pod={}", PromQuoted(query.job_id->substr(0, slash)),
                         PromQuoted(query.job_id->substr(slash + 1)));
    }
    case DcgmJobLabels::kNone: break;
  }
  return Error::InvalidArgument("--job with --series dcgm-exporter needs --job-labels slurm or kubernetes");
}

// The sums of one read (a run of rollups, a raw piece), by device and job,
// made into the agent's totals.
class SumsBuilder {
 public:
  explicit SumsBuilder(const DcgmTotalsOptions& options) : options_(options) {}

  void Add(DcgmSum sum, const PromSeries& s) {
    if (s.samples.empty()) return;
    const std::string key = KeyOf(s);
    if (key.empty()) return;
    const double value = s.samples.front().second;
    Slot(gpus_[key], sum) += value;
    const JobOfLabels job = JobOf(s, options_.jobs);
    if (!job.id.empty()) Slot(jobs_[{job.id, key}].sums, sum) += value;
  }

  void Seen(const PromSeries& s, bool last) {
    const JobOfLabels job = JobOf(s, options_.jobs);
    const std::string key = KeyOf(s);
    if (job.id.empty() || key.empty() || s.samples.empty()) return;
    JobSeen& seen = jobs_[{job.id, key}];
    seen.name = job.name;
    seen.scheduler = job.scheduler;
    (last ? seen.last : seen.first) = s.samples.front().second;
  }

  HistoryTotals Finish(const std::string& url, const HistoryQuery& query, double interval_s) {
    HistoryTotals totals;
    totals.history.path = url;
    totals.history.query = query;
    totals.window_s = interval_s;
    std::map<std::string, std::int64_t> ids;
    std::map<std::int64_t, std::optional<OfuScale>> scales;
    std::map<std::int64_t, std::uint32_t> clock_flags;
    for (const auto& [key, identity] : identities_) {
      StoredGpu gpu;
      gpu.id = static_cast<std::int64_t>(ids.size()) + 1;
      gpu.identity = identity;
      if (auto spec = options_.specs->Lookup(identity.model); spec.ok()) {
        gpu.sku = (*spec)->id;
        gpu.architecture = (*spec)->architecture;
        scales[gpu.id] = OfuScaleOf(**spec, identity);
        clock_flags[gpu.id] = (*spec)->ClockModelFor(identity.model) ? kHistoryClockModel : kHistoryClockReported;
      }
      ids[key] = gpu.id;
      totals.history.gpus.push_back(std::move(gpu));
    }
    const auto row_of = [&](const Sums& sums, std::int64_t id) {
      StoredWindow row;
      row.gpu_id = id;
      row.end_s = *query.until_s;
      row.counters.Set(kCounterObserved, sums.samples * interval_s);
      row.counters.Set(kCounterTensorActive, sums.tensor * interval_s);
      if (const auto& scale = scales[id]) {
        row.counters.Set(kCounterUtilized, ComputeOfu(sums.tensor_clock, 1, *scale) * interval_s);
        row.flags |= clock_flags[id];
      }
      if (sums.samples > 0) {
        row.clock_mhz = sums.sm_clock / sums.samples;
        row.clock_windows = static_cast<std::int64_t>(std::llround(sums.samples));
      }
      row.span_s = row.up_s = row.counters.observed_s();
      row.flags |= kHistoryDownsampled;
      return row;
    };
    for (const auto& [key, sums] : gpus_) totals.of_gpu[ids.at(key)] = row_of(sums, ids.at(key));
    for (const auto& [job_key, seen] : jobs_) {
      const auto& [job_id, key] = job_key;
      const std::int64_t id = ids.at(key);
      if (seen.sums.samples > 0) totals.of_job[{job_id, id}] = row_of(seen.sums, id);
      if (seen.first <= 0 || seen.last <= 0) continue;
      StoredJob job;
      job.gpu_id = id;
      job.job_id = job_id;
      job.job_name = seen.name;
      job.scheduler = seen.scheduler;
      job.start_s = seen.first - interval_s;
      job.end_s = seen.last;
      totals.history.jobs.push_back(std::move(job));
    }
    return totals;
  }

 private:
  struct Sums {
    double samples = 0, tensor = 0, tensor_clock = 0, sm_clock = 0;
  };
  struct JobSeen {
    Sums sums;
    std::string name, scheduler;
    double first = 0, last = 0;
  };
  static double& Slot(Sums& sums, DcgmSum sum) {
    switch (sum) {
      case DcgmSum::kSamples: return sums.samples;
      case DcgmSum::kTensor: return sums.tensor;
      case DcgmSum::kTensorClock: return sums.tensor_clock;
      case DcgmSum::kSmClock: break;
    }
    return sums.sm_clock;
  }
  // The device's key (core/gpu_identity.h), its identity kept the first time.
  std::string KeyOf(const PromSeries& s) {
    const std::string& uuid = s.Label("UUID").empty() ? s.Label("uuid") : s.Label("UUID");
    const std::string& host = s.Label("Hostname").empty() ? s.Label("hostname") : s.Label("Hostname");
    auto [key, parent] = GpuKeyOfLabels(uuid, host, s.Label("gpu"), s.Label("GPU_I_ID"));
    if (!key.empty() && !identities_.contains(key)) {
      GpuIdentity& identity = identities_[key];
      identity.key = key;
      identity.uuid = uuid;
      identity.hostname = host;
      identity.gpu_index = s.Label("gpu");
      identity.model = s.Label("modelName");
      identity.mig_profile = s.Label("GPU_I_PROFILE");
      identity.mig_instance = s.Label("GPU_I_ID");
    }
    return key;
  }

  const DcgmTotalsOptions& options_;
  std::map<std::string, GpuIdentity> identities_;
  std::map<std::string, Sums> gpus_;
  std::map<std::pair<std::string, std::string>, JobSeen> jobs_;  // (job id, device key)
};

// The instant queries of one read, each series to `consume`.
Status Instant(PrometheusClient& client, const std::string& promql, double at,
               const std::function<void(const PromSeries&)>& consume) {
  return QueryEachSeries(client, promql, at, "over dcgm-exporter's series", consume);
}

// The reads of a range, sharing its scrape interval and job matchers.
class DcgmReader {
 public:
  DcgmReader(std::string url, const HistoryQuery& query, const DcgmTotalsOptions& options, std::string matchers)
      : url_(std::move(url)), query_(query), options_(options), matchers_(std::move(matchers)) {}

  // One run of rolled-up hours.
  Result<HistoryTotals> ReadRun(PrometheusClient& client, const HourlyRun& run, double step_s) {
    step_s_ = step_s;
    const std::string range = PromRange(run.last_eval_s - run.first_eval_s + kHourS / 2);
    OFU_RETURN_IF_ERROR(Instant(client, fmt::format("max(last_over_time({}{}))", kDcgmHourlyIntervalName, range),
                                run.last_eval_s, [&](const PromSeries& s) { interval_s_ = s.samples.front().second; }));
    if (interval_s_ <= 0) return Error::NoData("{}: the rollups have no {}", url_, kDcgmHourlyIntervalName);
    SumsBuilder sums(options_);
    const std::string by = ReadLabels(options_.jobs);
    for (const DcgmSum sum : kDcgmSums) {
      OFU_RETURN_IF_ERROR(Instant(
          client, fmt::format("sum by ({}) (sum_over_time({}{{{}}}{}))", by, DcgmHourlyName(sum), matchers_, range),
          run.last_eval_s, [&](const PromSeries& s) { sums.Add(sum, s); }));
    }
    if (options_.jobs != DcgmJobLabels::kNone) {
      for (const bool last : {false, true}) {
        OFU_RETURN_IF_ERROR(Instant(client,
                                    fmt::format("{0} by ({1}) ({0}_over_time({2}{{{3}}}{4}))", last ? "max" : "min", by,
                                                DcgmHourlySeenName(last), matchers_, range),
                                    run.last_eval_s, [&](const PromSeries& s) { sums.Seen(s, last); }));
      }
    }
    HistoryQuery part = query_;
    part.since_s = run.after_s;
    part.until_s = run.until_s;
    HistoryTotals totals = sums.Finish(url_, part, interval_s_);
    totals.window_s = kHourS;
    return totals;
  }

  // The raw series over (piece.since_s, piece.until_s], in parts of at most kRawPartS.
  Result<HistoryTotals> ReadRaw(const HistoryQuery& piece) {
    OFU_ASSIGN_OR_RETURN(auto client, PrometheusClient::Open(url_, options_.query.timeout_s));
    if (interval_s_ <= 0) {
      OFU_RETURN_IF_ERROR(MeasureInterval(*client, piece));
    }
    if (step_s_ <= 0) {
      OFU_ASSIGN_OR_RETURN(step_s_, HourlyStep(interval_s_));
    }
    HistoryTotals totals;
    totals.history.path = url_;
    totals.history.query = piece;
    for (double from = *piece.since_s; from < *piece.until_s; from += kRawPartS) {
      const double to = std::min(*piece.until_s, from + kRawPartS);
      OFU_ASSIGN_OR_RETURN(auto part, ReadRawPart(*client, piece, from, to));
      AddTotals(totals, std::move(part), *piece.until_s);
    }
    totals.window_s = interval_s_;
    return totals;
  }

 private:
  // I from the densest 10 minutes of the range: 600 s over its scrapes.
  Status MeasureInterval(PrometheusClient& client, const HistoryQuery& piece) {
    const double span = *piece.until_s - *piece.since_s;
    const std::string names = fmt::format("{}|{}", kTensorNames[0], kTensorNames[1]);
    double most = 0;
    OFU_RETURN_IF_ERROR(Instant(client,
                                fmt::format("max(max_over_time(count_over_time({{__name__=~\"{}\"{}}}[599999ms])"
                                            "{}))",
                                            names, matchers_.empty() ? std::string() : "," + matchers_,
                                            PromSubqueryRange(std::max(span, 600.0), 600)),
                                *piece.until_s, [&](const PromSeries& s) { most = s.samples.front().second; }));
    if (most < 1) return Error::NoData("{}: no dcgm-exporter tensor activity in the range", url_);
    interval_s_ = 600 / most;
    return OkStatus();
  }

  Result<HistoryTotals> ReadRawPart(PrometheusClient& client, const HistoryQuery& piece, double from, double to) {
    DcgmStepScope scope{step_s_, matchers_, from, to, {}, std::nullopt};
    const long long step_ms = MsOf(step_s_);
    // The piece's ends on the step grid, in whole milliseconds: `to` up, `from` down.
    const long long end_ms = (MsOf(to) + step_ms - 1) / step_ms * step_ms;
    const long long start_ms = MsOf(from) / step_ms * step_ms;
    const double end = static_cast<double>(end_ms) / 1000, start = static_cast<double>(start_ms) / 1000;
    const std::string range = PromSubqueryRange(end - start, step_s_);
    // The expressions name only the tensor spelling and the boards the piece
    // has: each name less is a selector less at every step.
    std::set<std::string> names;
    std::vector<std::string> models;
    OFU_RETURN_IF_ERROR(Instant(
        client,
        fmt::format("count by (__name__, modelName) (last_over_time({{__name__=~\"{}|{}\"{}}}{}))", kTensorNames[0],
                    kTensorNames[1], matchers_.empty() ? std::string() : "," + matchers_, PromRange(end - start)),
        end, [&](const PromSeries& s) {
          names.insert(s.Label("__name__"));
          models.push_back(s.Label("modelName"));
        }));
    if (names.empty()) {
      HistoryQuery part = piece;
      part.since_s = from;
      part.until_s = to;
      return SumsBuilder(options_).Finish(url_, part, interval_s_);
    }
    scope.tensor_names.assign(names.begin(), names.end());
    scope.models = std::move(models);
    const std::string by = ReadLabels(options_.jobs);
    SumsBuilder sums(options_);
    for (const DcgmSum sum : kDcgmSums) {
      OFU_RETURN_IF_ERROR(Instant(client,
                                  fmt::format("sum by ({}) (sum_over_time(({}){}))", by,
                                              DcgmStepExpr(sum, *options_.specs, scope), range),
                                  end, [&](const PromSeries& s) { sums.Add(sum, s); }));
    }
    if (options_.jobs != DcgmJobLabels::kNone) {
      for (const bool last : {false, true}) {
        OFU_RETURN_IF_ERROR(Instant(client,
                                    fmt::format("{0} by ({1}) ({0}_over_time(({2}){3}))", last ? "max" : "min", by,
                                                DcgmStepTimeExpr(scope), range),
                                    end, [&](const PromSeries& s) { sums.Seen(s, last); }));
      }
    }
    HistoryQuery part = piece;
    part.since_s = from;
    part.until_s = to;
    return sums.Finish(url_, part, interval_s_);
  }

  std::string url_;
  const HistoryQuery& query_;
  const DcgmTotalsOptions& options_;
  std::string matchers_;
  double interval_s_ = 0;  // I: the rules', else measured
  double step_s_ = 0;      // S: the rules', else from I
};

}  // namespace

const char* DcgmJobLabelsName(DcgmJobLabels jobs) {
  switch (jobs) {
    case DcgmJobLabels::kSlurm: return "slurm";
    case DcgmJobLabels::kKubernetes: return "kubernetes";
    case DcgmJobLabels::kNone: break;
  }
  return "none";
}

std::optional<DcgmJobLabels> DcgmJobLabelsOfName(const std::string& name) {
  for (DcgmJobLabels jobs : {DcgmJobLabels::kNone, DcgmJobLabels::kSlurm, DcgmJobLabels::kKubernetes}) {
    if (name == DcgmJobLabelsName(jobs)) return jobs;
  }
  return std::nullopt;
}

std::string DcgmHourlyName(DcgmSum sum) {
  switch (sum) {
    case DcgmSum::kSamples: return "gpu_job:dcgm_samples:sum1h";
    case DcgmSum::kTensor: return "gpu_job:dcgm_tensor_active:sum1h";
    case DcgmSum::kTensorClock: return "gpu_job:dcgm_tensor_active_x_ofu_clock_mhz:sum1h";
    case DcgmSum::kSmClock: break;
  }
  return "gpu_job:dcgm_sm_clock_mhz:sum1h";
}

std::string DcgmHourlySeenName(bool last) {
  return last ? "gpu_job:dcgm_scrape_time:last_seen1h" : "gpu_job:dcgm_scrape_time:first_seen1h";
}

std::string DcgmStepExpr(DcgmSum sum, const GpuSpecDatabase& specs, const DcgmStepScope& scope) {
  std::string expr;
  switch (sum) {
    case DcgmSum::kSamples: expr = fmt::format("({} * 0 + 1)", ReportedClock("", scope)); break;
    case DcgmSum::kTensor:
      expr = fmt::format("({} + on (instance, gpu) group_left () ({} * 0))", Tensor("", scope), Clock(scope));
      break;
    case DcgmSum::kTensorClock: expr = fmt::format("({} * {})", Tensor("", scope), RunClock(specs, scope)); break;
    case DcgmSum::kSmClock: expr = ReportedClock("", scope); break;
  }
  // The range's ends, once: every term has the tensor series' labels.
  if (scope.after_s || scope.until_s) expr = fmt::format("({} and ({}))", expr, ScrapeTime(scope, true));
  return expr;
}

std::string DcgmStepTimeExpr(const DcgmStepScope& scope) { return ScrapeTime(scope, true); }

Result<std::string> DcgmHourlyRulesYaml(double scrape_interval_s, const GpuSpecDatabase& specs) {
  OFU_ASSIGN_OR_RETURN(const double step_s, HourlyStep(scrape_interval_s));
  const DcgmStepScope scope{step_s, "", std::nullopt, std::nullopt, {}, std::nullopt};
  const std::string steps = fmt::format("[{}:{}]", PromMs(kHourS - 0.001), PromMs(step_s));
  const std::string by = fmt::format("{}, {}", kKeyLabels, kJobLabels);
  std::string yaml = fmt::format(
      "# Hourly rollups of dcgm-exporter's series: exact sums per GPU (or MIG\n"
      "# instance), job labels and hour, from which `ofu report --prometheus URL\n"
      "# --series dcgm-exporter` reads long ranges (docs/prometheus.md, \"Hourly\n"
      "# rollups of dcgm-exporter's series\"). Generated by `ofu rules hourly --series\n"
      "# dcgm-exporter --scrape-interval {0}s` from the spec database (the clock\n"
      "# model per board) for dcgm-exporter scraped every {0} s (sum step S = {1} s:\n"
      "# it must divide 3600 and be below the scrape interval). Do not edit: regenerate.\n"
      "groups:\n"
      "  - name: ofu-dcgm-hourly\n"
      "    interval: 1h\n"
      "    rules:\n"
      "      # The hours rolled up, S, and the scrape interval a sample stands for.\n"
      "      - record: {2}\n"
      "        expr: vector({1})\n"
      "      - record: {3}\n"
      "        expr: vector({0})\n",
      scrape_interval_s, step_s, kDcgmHourlyMarkerName, kDcgmHourlyIntervalName);
  for (const bool last : {false, true}) {
    yaml += fmt::format(
        "      - record: {}\n"
        "        expr: {} by ({}) ({}_over_time(({}){}))\n",
        DcgmHourlySeenName(last), last ? "max" : "min", by, last ? "max" : "min", DcgmStepTimeExpr(scope), steps);
  }
  for (const DcgmSum sum : kDcgmSums) {
    yaml += fmt::format(
        "      - record: {}\n"
        "        expr: sum by ({}) (sum_over_time(({}){}))\n",
        DcgmHourlyName(sum), by, DcgmStepExpr(sum, specs, scope), steps);
  }
  return yaml;
}

Result<HistoryTotals> ReadDcgmTotals(const std::string& url, const HistoryQuery& query,
                                     const DcgmTotalsOptions& options, Resolution resolution) {
  if (options.specs == nullptr) return Error::InvalidArgument("dcgm-exporter's sums need the spec database");
  if (!query.since_s || !query.until_s || *query.until_s <= *query.since_s) {
    return Error::InvalidArgument("a Prometheus report needs a range with since before until");
  }
  OFU_ASSIGN_OR_RETURN(const std::string matchers, JobMatchers(query, options.jobs));
  DcgmReader reader(url, query, options, matchers);
  RollupReadWay way;
  way.marker = kDcgmHourlyMarkerName;
  way.rules = "the rules of `ofu rules hourly --series dcgm-exporter`";
  way.read_run = [&](PrometheusClient& client, const HourlyRun& run, double step_s) {
    return reader.ReadRun(client, run, step_s);
  };
  way.read_raw = [&](const HistoryQuery& piece) { return reader.ReadRaw(piece); };
  OFU_ASSIGN_OR_RETURN(auto totals, ReadTotalsOverRollups(url, query, options.query.timeout_s, resolution, way,
                                                          options.query.progress));
  JoinJobIntervals(totals.history.jobs);
  if (options.jobs != DcgmJobLabels::kNone) {
    totals.notes.push_back(fmt::format("jobs: dcgm-exporter's {} labels", options.jobs == DcgmJobLabels::kSlurm
                                                                              ? "hpc_job"
                                                                              : "namespace/pod (container)"));
  }
  return totals;
}

Result<bool> DcgmRollupsIn(const std::string& url, double since_s, double until_s, double timeout_s) {
  OFU_ASSIGN_OR_RETURN(auto client, PrometheusClient::Open(url, timeout_s));
  OFU_ASSIGN_OR_RETURN(auto evals, ReadRollupEvaluations(*client, kDcgmHourlyMarkerName, since_s, until_s));
  return !CoverageOfEvaluations(evals, since_s, until_s).runs.empty();
}

}  // namespace ofu::history
