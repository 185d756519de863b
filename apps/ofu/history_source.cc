#include "history_source.h"

#include <utility>

#include "ofu/analysis/prometheus_history.h"
#include "ofu/analysis/store_report.h"

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
  return HistorySourceOptions{store, prometheus};
}

Result<sinks::StoredHistory> LoadFleetHistory(const HistorySourceArgs& args, double now_s) {
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
  if (!args.store.empty()) return sinks::ReadHistory(args.store, query);
  // A Prometheus range must be bounded: the last day unless told.
  if (!query.until_s) query.until_s = now_s;
  if (!query.since_s) query.since_s = *query.until_s - 86400;
  return analysis::ReadPrometheusHistory(args.prometheus, query);
}

Result<MfuInputs> ReadMfuInputs(const std::string& mfu_path, const std::optional<std::string>& corrections_path) {
  MfuInputs inputs;
  OFU_ASSIGN_OR_RETURN(auto log, analysis::ReadMfuLog(mfu_path));
  inputs.log = std::move(log);
  if (corrections_path) {
    OFU_ASSIGN_OR_RETURN(auto corrections, analysis::ReadCorrections(*corrections_path));
    inputs.corrections = std::move(corrections);
  }
  return inputs;
}

}  // namespace ofu::cli
