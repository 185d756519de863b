// --format (-f): how a command prints its result. Each command names the
// formats it has; the first is the default.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ofu::cli {

// Adds --format,-f to `cmd`, limited to `allowed`, and sets `format` to
// allowed.front() unless it is given. `help` says what each format is for.
void AddFormatFlag(CLI::App& cmd, std::string& format, const std::vector<std::string>& allowed,
                   const std::string& help);

}  // namespace ofu::cli
