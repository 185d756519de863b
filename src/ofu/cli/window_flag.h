// --window: the window length in seconds, declared the same way by every
// program that takes one (ofu's commands, ofu-gemm). Each caller names its
// range's upper end, a constant of its own (apps/ofu/window_flag.h holds
// ofu's two); the lower end is kMinWindowS (ofu/core/windows.h) for all.
//
// Thread-safety: main's thread, before parsing (cli/command.h).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace ofu::cli {

// Adds the option `names` ("--window" or "--window,-w") to `cmd`, bound to
// `window_s`: seconds from kMinWindowS to `max_s`. The help is `what`
// followed by the range and the default. Returns the option so that a
// caller can add checks.
CLI::Option* AddWindowFlag(CLI::App& cmd, const std::string& names, double& window_s, double max_s,
                           const std::string& what);

}  // namespace ofu::cli
