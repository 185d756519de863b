// `ofu regress`: OFU change points within jobs and across runs of a job name,
// and precision shifts (src/ofu/analysis/regress.h; docs/fleet-analysis.md).
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "history_source.h"
#include "ofu/core/result.h"
#include "ofu/render/output_format.h"

namespace ofu::cli {

struct RegressArgs {
  HistorySourceArgs history;
  render::OutputFormat format = render::OutputFormat::kTable;  // --format; AddFormatFlag sets the default
  int min_windows = 10;
  double threshold = 6;
  double min_ratio = 1.25;
  double min_share_shift = 0.2;
  int min_runs = 3;
  double group_s = 900;
  bool fail_on_finding = false;
  std::optional<std::string> spec_db;
};

// Adds the command's flags to `cmd`; results land in `args` (command.h).
void AddRegressFlags(CLI::App& cmd, RegressArgs& args);
Result<int> RunRegress(const RegressArgs& args);

}  // namespace ofu::cli
