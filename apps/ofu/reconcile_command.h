// `ofu reconcile`: per job, OFU against the MFU the application reported,
// with the most likely explanation of a gap, and fleet statistics
// (src/ofu/analysis/reconcile.h; docs/fleet-analysis.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "history_source.h"
#include "ofu/core/result.h"
#include "ofu/render/output_format.h"

namespace ofu::cli {

struct ReconcileArgs {
  HistorySourceArgs history;
  std::optional<std::string> mfu;
  std::vector<std::string> training_logs;  // --training-log JOB=PATH
  std::optional<std::string> corrections;
  std::string reference_precision = "bf16";                    // whose peak divides a log of TFLOP/s per GPU
  render::OutputFormat format = render::OutputFormat::kTable;  // --format; AddFormatFlag sets the default
  double tolerance = 0.15;
  double match = 0.15;
  std::optional<std::string> spec_db;
};

// Adds the command's flags to `cmd`; results land in `args` (command.h).
void AddReconcileFlags(CLI::App& cmd, ReconcileArgs& args);
Result<int> RunReconcile(const ReconcileArgs& args);

}  // namespace ofu::cli
