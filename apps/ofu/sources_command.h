// `ofu sources`: which counter sources work on this machine, and why not.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"
#include "source_flags.h"

namespace ofu::cli {

struct SourcesArgs {
  std::string format;  // --format; AddFormatFlag sets the default
  SourceFlags source;  // only the library paths matter here
};

// Adds the command's flags to `cmd`; results land in `args` (command.h).
void AddSourcesFlags(CLI::App& cmd, SourcesArgs& args);

// Exit 0 when a source auto-detection tries (NVML, DCGM) works, 5 when none
// does. The listing itself is sources::ListSources (sources_listing.h).
Result<int> RunSources(const SourcesArgs& args);

}  // namespace ofu::cli
