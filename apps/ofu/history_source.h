// Where `ofu report`, `ofu reconcile` and `ofu regress` read the fleet's
// inputs from. The history: the agent's store (--store PATH) or a Prometheus server that
// scrapes the agents (--prometheus URL), with --job, --since and --until.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "ofu/analysis/store_report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/core/result.h"
#include "ofu/formats/mfu_log.h"
#include "ofu/sinks/history_reader.h"

namespace ofu::cli {

struct HistorySourceArgs {
  std::string store;
  std::string prometheus;
  std::optional<std::string> job;
  std::optional<std::string> since;  // Unix seconds, RFC 3339 or relative ("-2h")
  std::optional<std::string> until;
  double timeout_s = 60;         // per query to Prometheus
  bool per_window = false;       // read every scrape or stored window even where sums would do
  std::optional<double> step_s;  // Prometheus: windows' length where scrapes are read; unset: auto
  // Where every window is held (the store's, for --html): refuse a range of
  // more than this many, about 300 bytes each in memory, rather than run out.
  std::size_t max_windows = kDefaultMaxWindows;
  static constexpr std::size_t kDefaultMaxWindows = 20'000'000;
};

// The options added, for a command that relates them to its own
// (`ofu report --input` excludes both).
struct HistorySourceOptions {
  CLI::Option* store = nullptr;
  CLI::Option* prometheus = nullptr;
};

// Adds --store, --prometheus, --since, --until (and --job when `with_job`).
HistorySourceOptions AddHistorySourceOptions(CLI::App& cmd, HistorySourceArgs& args, bool with_job);

// What `ofu report` and `ofu reconcile` need: the history and its report.
// Unless windows are needed (--html, --per-window), `history` has the GPUs
// and job intervals only: from Prometheus the server sums the counters
// (prometheus_totals.h); from the store the rows stream through the report
// (sinks::HistoryStream, analysis::StoreReportBuilder), so memory does not
// grow with them.
struct FleetReport {
  sinks::StoredHistory history;
  analysis::StoreReport report;
  bool summed_by_server = false;
  bool has_data = false;  // a window, or a sum, in the range
};
// `specs` must outlive the result.
Result<FleetReport> LoadFleetReport(const HistorySourceArgs& args, double now_s, const GpuSpecDatabase& specs,
                                    bool windows_needed);

// For scans that need windows but only one GPU's at a time (`ofu regress`):
// the history goes to `on_batch` in batches of GPUs, each GPU's windows and
// job intervals in one batch (the store's one GPU at a time, Prometheus's as
// many as a query holds), so that the fleet's windows are never held at once.
// The result's report covers the whole range (from Prometheus: the server's
// sums) and its history has the GPUs.
Result<FleetReport> ScanFleetHistory(const HistorySourceArgs& args, double now_s, const GpuSpecDatabase& specs,
                                     const std::function<Status(const sinks::StoredHistory& batch)>& on_batch);

// Reads the store (all of it unless --since/--until say otherwise) or
// Prometheus (the last day before `now_s` unless they do). kInvalidArgument
// unless exactly one source is given, for a time that does not parse, or
// when the store's selection has more than args.max_windows windows (the
// read stops there; the message says how to narrow it). From Prometheus the
// step bounds the windows instead (at most about 2,000 per GPU unless
// --step or --per-window asks for more).
Result<sinks::StoredHistory> LoadFleetHistory(const HistorySourceArgs& args, double now_s);

// What the jobs reported: the MFU log (--mfu), the training logs
// (--training-log JOB=PATH, each one more job after the MFU log's) and,
// when given, the per-job corrections (--corrections), as `ofu reconcile`
// and `ofu report --html` read them. kInvalidArgument for a training log
// flag without "JOB=" or a job named twice; the readers' errors otherwise.
struct MfuInputs {
  formats::MfuLog log;
  std::map<std::string, formats::JobCorrection> corrections;
  // Training logs that could not be used (unreadable, no MFU, every value
  // impossible): their jobs are left out and the others reconciled. An
  // error only when nothing at all is left to reconcile.
  std::vector<Error> refused_logs;
};
// `flops_precision`: the precision whose peak divides a training log that
// prints FLOP/s per GPU (Megatron-LM, MaxText, nanotron).
Result<MfuInputs> ReadMfuInputs(const std::optional<std::string>& mfu_path,
                                const std::vector<std::string>& training_logs,
                                const std::optional<std::string>& corrections_path,
                                Precision flops_precision = Precision::kBf16);

}  // namespace ofu::cli
