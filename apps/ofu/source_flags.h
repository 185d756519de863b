// The --source flag and its companions, shared by every command that reads
// counters (top, record, sources, agent).
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/source.h"

namespace ofu::cli {

struct SourceFlags {
  std::string source;  // empty: auto-detect
  sources::SourceOptions options;
};

// Adds --source, --window, --clock-readings, --nvml-library, --dcgm-library.
void AddSourceFlags(CLI::App& command, SourceFlags& flags);

// Opens the --source named, or auto-detects one when none was.
Result<std::unique_ptr<sources::Source>> OpenSourceFromFlags(const SourceFlags& flags, sources::Clock& clock);

}  // namespace ofu::cli
