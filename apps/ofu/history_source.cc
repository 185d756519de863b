#include "history_source.h"

#include <utility>

#include <unistd.h>

#include <functional>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ofu/analysis/prometheus_history.h"
#include "ofu/analysis/prometheus_totals.h"
#include "ofu/analysis/store_report.h"
#include "ofu/formats/training_log.h"

namespace ofu::cli {

HistorySourceOptions AddHistorySourceOptions(CLI::App& cmd, HistorySourceArgs& args, bool with_job) {
  CLI::Option* store = cmd.add_option("--store", args.store, "The agent's history store (SQLite) to read");
  CLI::Option* prometheus = cmd.add_option(
      "--prometheus", args.prometheus, "Prometheus (query API) that scrapes the agents, e.g. http://prometheus:9090");
  store->excludes(prometheus);
  if (with_job) cmd.add_option("--job", args.job, "Only this job's GPUs and windows");
  cmd.add_option("--since", args.since,
                 "Windows ending after this time (Unix seconds, RFC 3339, or -2h, -7d); Prometheus default -1d");
  cmd.add_option("--until", args.until, "Windows ending at or before this time; Prometheus default now");
  cmd.add_option("--timeout", args.timeout_s, "Prometheus: seconds to wait for each query's answer")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--step", args.step_s,
                 "Prometheus, where windows are read (regress, --html, --per-window): their length in seconds. 0: "
                 "every scrape. Default: every scrape with --per-window; otherwise every scrape up to 2,000 per GPU "
                 "in the range, else the server reads the counters at the step that gives about 2,000 (a week at "
                 "15 s: 315 s)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_flag("--per-window", args.per_window,
               "Read every window instead of sums: Prometheus, every scrape instead of the server's sums of the "
               "counters (slower; gives percentiles); the store, every window instead of its hourly rollups "
               "(slower; exact percentiles)");
  return HistorySourceOptions{store, prometheus};
}

namespace {

// Progress of long queries, for people watching a terminal: one line,
// rewritten; nothing when stderr is not a terminal.
std::function<void(const std::string&)> TerminalProgress() {
  if (::isatty(STDERR_FILENO) != 1) return nullptr;
  return [](const std::string& line) { fmt::print(stderr, "\rofu: Prometheus: {}\033[K", line); };
}

void EndProgress() {
  if (::isatty(STDERR_FILENO) == 1) fmt::print(stderr, "\r\033[K");
}

Result<sinks::HistoryQuery> QueryOf(const HistorySourceArgs& args, double now_s) {
  if (args.store.empty() == args.prometheus.empty()) {
    return Error::InvalidArgument("give one of --store PATH (the agent's history) or --prometheus URL");
  }
  sinks::HistoryQuery query;
  query.job_id = args.job;
  for (auto [text, into] : {std::pair{&args.since, &query.since_s}, std::pair{&args.until, &query.until_s}}) {
    if (!*text) continue;
    OFU_ASSIGN_OR_RETURN(auto time, analysis::ParseTimeArgument(**text, now_s));
    *into = time;
  }
  if (args.store.empty()) {
    // A Prometheus range must be bounded: the last day unless told.
    if (!query.until_s) query.until_s = now_s;
    if (!query.since_s) query.since_s = *query.until_s - 86400;
  }
  return query;
}

analysis::PrometheusQueryOptions QueryOptionsOf(const HistorySourceArgs& args) {
  analysis::PrometheusQueryOptions options;
  options.timeout_s = args.timeout_s;
  options.progress = TerminalProgress();
  // --per-window asks for every scrape; regress and --html default to the
  // step chosen from the range.
  if (args.step_s) {
    options.step_s = *args.step_s;
  } else if (args.per_window) {
    options.step_s = 0;
  }
  return options;
}

}  // namespace

Result<sinks::StoredHistory> LoadFleetHistory(const HistorySourceArgs& args, double now_s) {
  OFU_ASSIGN_OR_RETURN(auto query, QueryOf(args, now_s));
  if (!args.store.empty()) {
    auto history = sinks::ReadHistory(args.store, query, args.max_windows);
    // kInvalidArgument: more windows than --max-windows; say how to narrow them.
    if (!history.ok() && history.error().code == ErrorCode::kInvalidArgument) {
      return Error{ErrorCode::kInvalidArgument,
                   history.error().message + "; narrow it with --since/--until or --job, or raise --max-windows"};
    }
    return history;
  }
  auto history = analysis::ReadPrometheusHistory(args.prometheus, query, QueryOptionsOf(args));
  EndProgress();
  return history;
}

Result<FleetReport> LoadFleetReport(const HistorySourceArgs& args, double now_s, const GpuSpecDatabase& specs,
                                    bool windows_needed) {
  FleetReport out;
  if (args.store.empty() && !args.per_window && !windows_needed) {
    OFU_ASSIGN_OR_RETURN(auto query, QueryOf(args, now_s));
    analysis::PrometheusTotalsOptions options;
    options.query = QueryOptionsOf(args);
    auto totals = analysis::ReadPrometheusTotals(args.prometheus, query, options);
    EndProgress();
    OFU_RETURN_IF_ERROR(totals);
    out.report = analysis::BuildTotalsReport(*totals, specs);
    out.has_data = !totals->of_gpu.empty();
    out.history = std::move(totals->history);
    out.summed_by_server = true;
    return out;
  }
  if (!args.store.empty() && !windows_needed) {
    // The store's rows stream through the report: memory does not grow with them.
    OFU_ASSIGN_OR_RETURN(auto query, QueryOf(args, now_s));
    OFU_ASSIGN_OR_RETURN(auto streamed,
                         analysis::ReadStoreReport(args.store, query, specs, {.rollups = !args.per_window}));
    out.history = std::move(streamed.head);
    out.report = std::move(streamed.report);
    out.has_data = streamed.rows > 0;
    return out;
  }
  OFU_ASSIGN_OR_RETURN(out.history, LoadFleetHistory(args, now_s));
  out.report = analysis::BuildStoreReport(out.history, specs);
  out.has_data = !out.history.windows.empty();
  return out;
}

Result<FleetReport> ScanFleetHistory(const HistorySourceArgs& args, double now_s, const GpuSpecDatabase& specs,
                                     const std::function<Status(const sinks::StoredHistory& batch)>& on_batch) {
  if (!args.store.empty()) {
    // One pass: every row to the report, and each GPU's rows to `on_batch`
    // once the stream moves on to the next GPU (it reads GPU by GPU).
    OFU_ASSIGN_OR_RETURN(auto query, QueryOf(args, now_s));
    OFU_ASSIGN_OR_RETURN(auto stream, sinks::HistoryStream::Open(args.store, query));
    const sinks::StoredHistory& head = stream->history();
    analysis::StoreReportBuilder report(head, specs);
    sinks::StoredHistory batch;
    batch.path = head.path;
    batch.query = head.query;
    batch.gpus = head.gpus;
    // A GPU's rows and job intervals; a GPU with intervals and no rows in
    // the range too, as ScanRegressions over the whole history sees it.
    std::map<std::int64_t, std::vector<sinks::StoredJob>> jobs_of;  // GPU id -> its intervals
    for (const sinks::StoredJob& job : head.jobs) jobs_of[job.gpu_id].push_back(job);
    const auto send = [&](std::int64_t gpu) -> Status {
      auto jobs = jobs_of.extract(gpu);
      batch.jobs = jobs ? std::move(jobs.mapped()) : std::vector<sinks::StoredJob>{};
      if (batch.windows.empty() && batch.jobs.empty()) return OkStatus();
      OFU_RETURN_IF_ERROR(on_batch(batch));
      batch.windows.clear();
      return OkStatus();
    };
    sinks::StoredWindow row;
    while (true) {
      OFU_ASSIGN_OR_RETURN(const bool more, stream->Next(row));
      if (!more) break;
      if (!batch.windows.empty() && row.gpu_id != batch.windows.front().gpu_id) {
        OFU_RETURN_IF_ERROR(send(batch.windows.front().gpu_id));
      }
      report.Add(row);
      batch.windows.push_back(row);
    }
    if (!batch.windows.empty()) OFU_RETURN_IF_ERROR(send(batch.windows.front().gpu_id));
    while (!jobs_of.empty()) OFU_RETURN_IF_ERROR(send(jobs_of.begin()->first));
    FleetReport out;
    out.has_data = report.rows() > 0;
    out.report = report.Finish();
    out.history = head;
    return out;
  }
  OFU_ASSIGN_OR_RETURN(FleetReport out, LoadFleetReport(args, now_s, specs, /*windows_needed=*/false));
  OFU_ASSIGN_OR_RETURN(auto query, QueryOf(args, now_s));
  auto gpus = analysis::ReadPrometheusHistoryInBatches(args.prometheus, query, QueryOptionsOf(args), on_batch);
  EndProgress();
  OFU_RETURN_IF_ERROR(gpus);
  out.history.step_s = gpus->step_s;
  return out;
}

Result<MfuInputs> ReadMfuInputs(const std::optional<std::string>& mfu_path,
                                const std::vector<std::string>& training_logs,
                                const std::optional<std::string>& corrections_path, Precision flops_precision) {
  MfuInputs inputs;
  if (mfu_path) {
    OFU_ASSIGN_OR_RETURN(auto log, formats::ReadMfuLog(*mfu_path));
    inputs.log = std::move(log);
  }
  std::set<std::string> jobs;
  for (const formats::ReportedMfu& row : inputs.log.jobs) jobs.insert(row.job_id);
  std::string log_path;  // the one training log's, to name the input when there is no MFU log
  for (const std::string& flag : training_logs) {
    const size_t equals = flag.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == flag.size()) {
      return Error::InvalidArgument("--training-log '{}': expected JOB=PATH (the scheduler's job id, then the log)",
                                    flag);
    }
    const std::string job_id = flag.substr(0, equals), path = flag.substr(equals + 1);
    if (!jobs.insert(job_id).second) {
      return Error::InvalidArgument("--training-log '{}': job {} already has a reported MFU", flag, job_id);
    }
    auto log = formats::ReadTrainingLog(path);
    if (!log.ok()) {
      inputs.refused_logs.push_back(log.error().WithContext(fmt::format("--training-log {}", flag)));
      continue;
    }
    if (log->quantity == formats::TrainingLogQuantity::kFlopsPerGpu) log->reference_precision = flops_precision;
    inputs.log.jobs.push_back(formats::ReportedMfuOf(*log, job_id));
    log_path = path;
  }
  if (inputs.log.jobs.empty() && !mfu_path && !inputs.refused_logs.empty()) {
    // Nothing left to reconcile: the refusals are the answer.
    std::vector<std::string> why;
    for (const Error& error : inputs.refused_logs) why.push_back(error.message);
    return Error{inputs.refused_logs.front().code, fmt::format("{}", fmt::join(why, "; "))};
  }
  if (inputs.log.path.empty()) {
    inputs.log.path = training_logs.size() == 1 ? log_path : fmt::format("{} training logs", training_logs.size());
  }
  if (corrections_path) {
    OFU_ASSIGN_OR_RETURN(auto corrections, formats::ReadCorrections(*corrections_path));
    inputs.corrections = std::move(corrections);
  }
  return inputs;
}

}  // namespace ofu::cli
