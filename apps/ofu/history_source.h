// Where `ofu report`, `ofu reconcile` and `ofu regress` read the fleet's
// inputs from. The history: the agent's store (--store PATH) or the Prometheus servers that
// scrape the agents (--prometheus URL, once or more, and --prometheus-file), with --job,
// --since and --until; the flags
// only: how it is read is the library's (history/history_source.h, analysis/fleet_report.h).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ofu/analysis/fleet_report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/core/result.h"
#include "ofu/history/history_reader.h"
#include "ofu/history/history_source.h"

namespace ofu::cli {

struct HistorySourceArgs {
  std::string store;
  std::vector<std::string> prometheus;  // --prometheus, once or more
  std::string prometheus_file;          // --prometheus-file: more servers, one URL a line
  std::optional<std::string> job;
  std::optional<std::string> since;  // Unix seconds, RFC 3339 or relative ("-2h")
  std::optional<std::string> until;
  double timeout_s = 60;            // per query to Prometheus
  bool per_window = false;          // read every scrape or stored window even where sums would do
  std::optional<double> step_s;     // Prometheus: windows' length where scrapes are read; unset: auto
  std::string resolution = "auto";  // Prometheus sums: auto, raw or hourly (history/prometheus_hourly.h)
  // Whose series a Prometheus holds: "ofu" (the agent's counters) or
  // "dcgm-exporter" (history/dcgm_hourly.h, analysis/prometheus_recording.h),
  // and which of dcgm-exporter's labels name jobs: none, slurm, kubernetes.
  std::string series = "ofu";
  std::string job_labels = "none";
  // Where every window is held (the store's, for --html): history::HistorySource::max_windows.
  std::size_t max_windows = history::HistorySource::kDefaultMaxWindows;
};

// The options added, for a command that relates them to its own
// (`ofu report --input` excludes both).
struct HistorySourceOptions {
  CLI::Option* store = nullptr;
  CLI::Option* prometheus = nullptr;
  CLI::Option* prometheus_file = nullptr;
};

// Adds --store, --prometheus, --since, --until (and --job when `with_job`).
HistorySourceOptions AddHistorySourceOptions(CLI::App& cmd, HistorySourceArgs& args, bool with_job);

// --series (ofu or dcgm-exporter) and --job-labels, with --prometheus or
// --prometheus-file, never --store (report and reconcile: the server's sums
// of dcgm-exporter's series, history/dcgm_hourly.h).
void AddSeriesFlags(CLI::App& cmd, HistorySourceArgs& args, const HistorySourceOptions& source);

// The flags as the library takes them (history/history_source.h): the
// source, with a progress line on a terminal, and the query, its times
// parsed relative to `now_s` and Prometheus's range bounded (the last day
// unless told). kInvalidArgument unless exactly one source is given, or for
// a time that does not parse.
struct ResolvedSource {
  history::HistorySource source;
  history::HistoryQuery query;
};
Result<ResolvedSource> ResolveHistorySource(const HistorySourceArgs& args, double now_s);

// Clears the progress line of a Prometheus read on a terminal (source.progress
// writes it); nothing otherwise.
void EndProgress(const history::HistorySource& source);

// analysis::LoadFleetReport and ScanFleetHistory (analysis/fleet_report.h)
// of the flags as ResolveHistorySource resolved them (once per command),
// clearing the progress line after a Prometheus read. `specs` must outlive
// the result.
Result<analysis::FleetReport> LoadFleetReport(const ResolvedSource& resolved, const GpuSpecDatabase& specs,
                                              bool windows_needed);
Result<analysis::FleetReport> ScanFleetHistory(
    const ResolvedSource& resolved, const GpuSpecDatabase& specs,
    const std::function<Status(const history::StoredHistory& batch)>& on_batch);

}  // namespace ofu::cli
