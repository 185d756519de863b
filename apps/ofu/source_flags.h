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

// Adds --clock-readings bound to `readings`: SM clock readings per window,
// in the one range sources::CheckSamplingSettings holds (0: automatic). The
// help is `what` followed by what 0 means. Returns the option so that a
// caller can add checks.
CLI::Option* AddClockReadingsFlag(CLI::App& command, int& readings, const std::string& what);

// A config file's settings with the flags given on top: each flag in
// `flags.given` overrides its value in `source` (the --source text) and
// `options`; the others keep theirs.
void OverrideWithGivenFlags(const SourceFlags& flags, std::string& source, sources::SourceOptions& options);

// Opens the --source named, or auto-detects one when none was, through
// BuiltinSourceRegistry().
Result<std::unique_ptr<sources::Source>> OpenSourceFromFlags(const SourceFlags& flags, sources::Clock& clock);

}  // namespace ofu::cli
