// `ofu sources`: which counter sources work on this machine, and why not.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"
#include "ofu/render/output_format.h"
#include "source_flags.h"

namespace ofu::cli {

struct SourcesArgs {
  render::OutputFormat format = render::OutputFormat::kTable;  // --format; AddFormatFlag sets the default
  SourceFlags source;  // the library paths; with --cost also the window and clock readings
  // --cost: run a source and print what its library calls cost
  // (sources/source_cost.h) instead of the listing.
  bool cost = false;
  double seconds = 5;       // --seconds: how long to measure; windows = seconds / window, at least 1
  std::string cost_source;  // --source: "nvml" or "dcgm"; empty: the first that works
};

// Adds the command's flags to `cmd`; results land in `args` (command.h).
void AddSourcesFlags(CLI::App& cmd, SourcesArgs& args);

// Exit 0 when a source auto-detection tries (NVML, DCGM) works, 5 when none
// does. The listing itself is sources::ListSources (sources_listing.h).
// With --cost: exit 0 after printing the table, or an error (the source
// cannot be opened or read).
Result<int> RunSources(const SourcesArgs& args);

}  // namespace ofu::cli
