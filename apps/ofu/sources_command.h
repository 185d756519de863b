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

// Exit 0 when a live source (NVML or DCGM) works, 5 when none does.
int RunSources(const SourcesArgs& args);

}  // namespace ofu::cli
