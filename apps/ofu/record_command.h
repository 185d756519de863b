// `ofu record`: counters from any source into an OpenMetrics recording that
// `ofu report`, `--source replay:FILE` and `promtool tsdb
// create-blocks-from openmetrics` read.
#pragma once

#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"
#include "ofu/render/output_format.h"

#include "source_flags.h"

namespace ofu::cli {

struct RecordArgs {
  SourceFlags source;
  std::string duration;  // "90", "30s", "5m", "1h"
  std::string out;
  std::string description;
  render::OutputFormat format = render::OutputFormat::kTable;  // --format; AddFormatFlag sets the default
};

// Adds the command's flags to `cmd`; results land in `args` (command.h).
void AddRecordFlags(CLI::App& cmd, RecordArgs& args);

// "90" -> 90, "30s" -> 30, "5m" -> 300, "1.5h" -> 5400 (seconds, > 0).
// Errors: kInvalidArgument saying the accepted forms.
Result<double> ParseDuration(std::string_view text);

// Runs it: the exit status (exit_codes.h), or the error that stopped it.
Result<int> RunRecord(const RecordArgs& args);

}  // namespace ofu::cli
