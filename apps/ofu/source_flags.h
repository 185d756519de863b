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

// Adds --source, --window, --clock-readings and the library flags below.
// The --source help lists the kinds of BuiltinSourceRegistry().
void AddSourceFlags(CLI::App& command, SourceFlags& flags);

// Adds --nvml-library and --dcgm-library: the per-source options a command
// needs even when it samples nothing (`ofu sources`).
void AddSourceLibraryFlags(CLI::App& command, sources::SourceOptions& options);

// Opens the --source named, or auto-detects one when none was, through
// BuiltinSourceRegistry().
Result<std::unique_ptr<sources::Source>> OpenSourceFromFlags(const SourceFlags& flags, sources::Clock& clock);

}  // namespace ofu::cli
