// The --source flag and its companions, shared by every command that reads
// counters (top, record, agent; sources takes the library flags only).
#pragma once

#include <memory>
#include <set>
#include <string>

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/source.h"

namespace ofu::cli {

struct SourceFlags {
  std::string source;  // empty: auto-detect
  sources::SourceOptions options;
  // The flags given on the command line, by long name without dashes
  // ("source", "window", "clock-readings", "nvml-library", "dcgm-library").
  // The agent lets these, and only these, override its config file.
  std::set<std::string> given;
};

// Adds --source/-s, --window/-w, --clock-readings and the library flags.
// The --source help lists the kinds of BuiltinSourceRegistry().
void AddSourceFlags(CLI::App& command, SourceFlags& flags);

// Adds --nvml-library and --dcgm-library only: the per-source options a
// command needs even when it samples nothing (`ofu sources`).
void AddLibraryFlags(CLI::App& command, SourceFlags& flags);

// Opens the --source named, or auto-detects one when none was, through
// BuiltinSourceRegistry().
Result<std::unique_ptr<sources::Source>> OpenSourceFromFlags(const SourceFlags& flags, sources::Clock& clock);

}  // namespace ofu::cli
