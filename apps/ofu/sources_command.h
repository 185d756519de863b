// `ofu sources`: which counter sources work on this machine, and why not.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "source_flags.h"

namespace ofu::cli {

struct SourcesArgs {
  std::string format = "table";
  SourceFlags source;  // only the library paths matter here
};

CLI::App* AddSourcesCommand(CLI::App& app, SourcesArgs& args);

// Exit 0 when a source auto-detection tries (NVML, DCGM) works, 5 when none
// does. The listing itself is sources::ListSources (sources_listing.h).
int RunSources(const SourcesArgs& args);

}  // namespace ofu::cli
