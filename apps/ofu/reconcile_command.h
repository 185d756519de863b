// `ofu reconcile`: per job, OFU against the MFU the application reported,
// with the most likely explanation of a gap, and fleet statistics
// (src/ofu/analysis/reconcile.h; docs/fleet-analysis.md).
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"
#include "ofu/sinks/history_reader.h"

namespace ofu::cli {

// Where the fleet's history comes from: shared by reconcile and regress.
struct HistorySourceArgs {
  std::string store;
  std::string prometheus;
  std::optional<std::string> job;
  std::optional<std::string> since;
  std::optional<std::string> until;
};

// Adds --store, --prometheus, --since, --until (and --job when `with_job`).
void AddHistorySourceOptions(CLI::App& cmd, HistorySourceArgs& args, bool with_job);
// Reads the store or Prometheus (the last day unless --since/--until say
// otherwise; the store: all of it). kInvalidArgument unless exactly one
// source is given.
Result<sinks::StoredHistory> LoadFleetHistory(const HistorySourceArgs& args);

struct ReconcileArgs {
  HistorySourceArgs history;
  std::string mfu;
  std::optional<std::string> corrections;
  std::string format = "table";
  double tolerance = 0.15;
  double match = 0.15;
  std::optional<std::string> spec_db;
};

CLI::App* AddReconcileCommand(CLI::App& app, ReconcileArgs& args);
int RunReconcile(const ReconcileArgs& args);

}  // namespace ofu::cli
