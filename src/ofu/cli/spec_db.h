// The GPU spec database a command uses: the compiled-in copy of
// data/gpu_specs.json, or the file given with --spec-db.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "ofu/core/gpu_spec.h"
#include "ofu/core/result.h"

namespace ofu::cli {

// Adds --spec-db FILE to `cmd`; `path` stays empty unless it is given.
void AddSpecDbFlag(CLI::App& cmd, std::optional<std::string>& path);

// Errors: kIo when the file cannot be opened; the parser's kMalformedInput.
Result<GpuSpecDatabase> LoadSpecDatabase(const std::optional<std::string>& path);

}  // namespace ofu::cli
