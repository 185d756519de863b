#include "history_source.h"

#include <utility>

#include <unistd.h>

#include <functional>

#include <fmt/format.h>

#include "ofu/analysis/store_report.h"
#include "ofu/formats/text_file.h"
#include "ofu/history/prometheus_servers.h"

namespace ofu::cli {

HistorySourceOptions AddHistorySourceOptions(CLI::App& cmd, HistorySourceArgs& args, bool with_job) {
  CLI::Option* store = cmd.add_option("--store", args.store, "The agent's history store (SQLite) to read");
  CLI::Option* prometheus = cmd.add_option(
      "--prometheus", args.prometheus,
      "Prometheus (query API) that scrapes the agents, e.g. http://prometheus:9090. Give it once per server of a "
      "fleet sharded over several: each is read in parallel and their sums added; a GPU on two (an HA pair) counts "
      "once (docs/prometheus.md, \"Several servers\")");
  CLI::Option* prometheus_file =
      cmd.add_option("--prometheus-file", args.prometheus_file,
                     "A file of Prometheus servers, one URL a line ('#' comments), read as more --prometheus");
  store->excludes(prometheus);
  store->excludes(prometheus_file);
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
  cmd.add_option("--resolution", args.resolution,
                 "Prometheus (report, reconcile, regress): hourly reads the hourly rollups "
                 "(deploy/prometheus/ofu-hourly-rules.yml) for the whole hours they cover and the raw counters for "
                 "the rest (regress: one window per GPU, hour and job); raw reads only the raw counters; auto uses the "
                 "rollups where the server has them")
      ->check(CLI::IsMember({"auto", "raw", "hourly"}))
      ->capture_default_str();
  return HistorySourceOptions{store, prometheus, prometheus_file};
}

void AddSeriesFlags(CLI::App& cmd, HistorySourceArgs& args, const HistorySourceOptions& source) {
  cmd.add_option("--series", args.series,
                 "With --prometheus: whose series to read: ofu (the agent's counters) or dcgm-exporter (its gauges: "
                 "the hourly rollups of `ofu rules hourly --series dcgm-exporter` where they cover the range and "
                 "its raw series for the rest; report without --job-labels: else every sample, read as a recording)")
      ->excludes(source.store)  // --prometheus or --prometheus-file; checked by the command
      ->check(CLI::IsMember({"ofu", "dcgm-exporter"}))
      ->capture_default_str();
  cmd.add_option("--job-labels", args.job_labels,
                 "With --series dcgm-exporter: which of its labels name jobs: slurm (hpc_job, from its "
                 "--hpc-job-mapping-dir), kubernetes (namespace/pod; container its name) or none. Jobs read the "
                 "server's sums (per-job table, --job)")
      ->check(CLI::IsMember({"none", "slurm", "kubernetes"}))
      ->capture_default_str();
}

namespace {

// Progress of long queries, for people watching a terminal: one line,
// rewritten; nothing when stderr is not a terminal.
std::function<void(const std::string&)> TerminalProgress() {
  if (::isatty(STDERR_FILENO) != 1) return nullptr;
  return [](const std::string& line) { fmt::print(stderr, "\rofu: Prometheus: {}\033[K", line); };
}

}  // namespace

void EndProgress(const history::HistorySource& source) {
  if (!source.prometheus.empty() && ::isatty(STDERR_FILENO) == 1) fmt::print(stderr, "\r\033[K");
}

Result<ResolvedSource> ResolveHistorySource(const HistorySourceArgs& args, double now_s) {
  ResolvedSource out;
  out.source.store = args.store;
  out.source.prometheus = args.prometheus;
  if (!args.prometheus_file.empty()) {
    OFU_ASSIGN_OR_RETURN(const std::string text, formats::ReadTextFile(args.prometheus_file));
    OFU_ASSIGN_OR_RETURN(auto listed, history::ParseServerList(text, args.prometheus_file));
    out.source.prometheus.insert(out.source.prometheus.end(), listed.begin(), listed.end());
  }
  out.source.timeout_s = args.timeout_s;
  out.source.per_window = args.per_window;
  out.source.step_s = args.step_s;
  out.source.resolution = history::ResolutionOfName(args.resolution).value_or(history::Resolution::kAuto);
  out.source.max_windows = args.max_windows;
  out.source.dcgm_exporter = args.series == "dcgm-exporter";
  out.source.dcgm_jobs = history::DcgmJobLabelsOfName(args.job_labels).value_or(history::DcgmJobLabels::kNone);
  out.source.progress = TerminalProgress();
  history::HistoryQuery query;
  query.job_id = args.job;
  OFU_RETURN_IF_ERROR(history::CheckOneSource(out.source));  // before the times: the first thing to say
  for (auto [text, into] : {std::pair{&args.since, &query.since_s}, std::pair{&args.until, &query.until_s}}) {
    if (!*text) continue;
    OFU_ASSIGN_OR_RETURN(auto time, analysis::ParseTimeArgument(**text, now_s));
    *into = time;
  }
  OFU_ASSIGN_OR_RETURN(out.query, history::BoundQuery(out.source, std::move(query), now_s));
  return out;
}

Result<analysis::FleetReport> LoadFleetReport(const ResolvedSource& resolved, const GpuSpecDatabase& specs,
                                              bool windows_needed) {
  auto report = analysis::LoadFleetReport(resolved.source, resolved.query, specs, windows_needed);
  EndProgress(resolved.source);
  return report;
}

Result<analysis::FleetReport> ScanFleetHistory(
    const ResolvedSource& resolved, const GpuSpecDatabase& specs,
    const std::function<Status(const history::StoredHistory& batch)>& on_batch) {
  auto report = analysis::ScanFleetHistory(resolved.source, resolved.query, specs, on_batch);
  EndProgress(resolved.source);
  return report;
}

}  // namespace ofu::cli
