// `ofu top`: a live terminal view of OFU per GPU, in the spirit of nvtop.
//
// Interactive (curses): redraws every window; keys q quit, s cycles the
// sort order (OFU, tensor, power, GPU index), o/t/p/g pick one. A replay is
// played back in real time. `--once` prints one frame as plain text and
// exits: after one window of a live source, or after the whole of a replay
// (read without pacing), showing its last window and the OFU history.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"
#include "source_flags.h"

namespace ofu::cli {

struct TopArgs {
  SourceFlags source;
  bool once = false;
  std::string sort = "ofu";
  std::size_t history = 60;
  std::size_t width = 100;  // --once only; the terminal's width otherwise
  std::string proc_root = "/proc";
  std::optional<std::string> spec_db;
};

// Adds the command's flags to `cmd`; results land in `args` (command.h).
void AddTopFlags(CLI::App& cmd, TopArgs& args);

// Runs it: the exit status (exit_codes.h), or the error that stopped it.
Result<int> RunTop(const TopArgs& args);

}  // namespace ofu::cli
