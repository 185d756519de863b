// `ofu record`: counters from any source into an OpenMetrics recording that
// `ofu report`, `--source replay:FILE` and `promtool tsdb
// create-blocks-from openmetrics` read.
#pragma once

#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"

#include "source_flags.h"

namespace ofu::cli {

struct RecordArgs {
  SourceFlags source;
  std::string duration;  // "90", "30s", "5m", "1h"
  std::string out;
  std::string description;
  std::string format = "text";
};

// Registers the subcommand and its flags on `app`; results land in `args`.
CLI::App* AddRecordCommand(CLI::App& app, RecordArgs& args);

// "90" -> 90, "30s" -> 30, "5m" -> 300, "1.5h" -> 5400 (seconds, > 0).
// Errors: kInvalidArgument saying the accepted forms.
Result<double> ParseDuration(std::string_view text);

// Runs it; returns the process exit status (exit_codes.h).
int RunRecord(const RecordArgs& args);

}  // namespace ofu::cli
