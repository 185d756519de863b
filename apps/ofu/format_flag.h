// --format (-f): how a command prints its result. Each command names the
// formats it has; the first is the default. The text is parsed into a
// render::OutputFormat here, once, so a command compares values, not text.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ofu/render/output_format.h"

namespace ofu::cli {

// Adds --format,-f to `cmd`, limited to the spellings of `allowed`
// (render::OutputFormatName), and sets `format` to allowed.front() unless it
// is given. `help` says what each format is for.
void AddFormatFlag(CLI::App& cmd, render::OutputFormat& format, const std::vector<render::OutputFormat>& allowed,
                   const std::string& help);

}  // namespace ofu::cli
