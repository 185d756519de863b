// The GPU spec database a command uses: the compiled-in copy of
// data/gpu_specs.json, or the file given with --spec-db; and --gpu-model,
// the SKU a command takes from the command line instead of from its data.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "ofu/core/gpu_spec.h"
#include "ofu/core/result.h"

namespace ofu::cli {

// Adds --spec-db FILE to `cmd`; `path` stays empty unless it is given.
void AddSpecDbFlag(CLI::App& cmd, std::optional<std::string>& path);

// Errors: kIo when the file cannot be opened; the parser's kMalformedInput.
Result<GpuSpecDatabase> LoadSpecDatabase(const std::optional<std::string>& path);

// Adds --gpu-model to `cmd`; `model` stays empty unless it is given. `use`
// says what the command does with the GPU ("Treat every GPU as this
// model"); the help adds what a model is, the same for every command: a SKU
// id or a name that GpuSpecDatabase::Lookup knows.
void AddGpuModelFlag(CLI::App& cmd, std::optional<std::string>& model, std::string_view use);

// The SKU of --gpu-model in `specs`, or nullptr when it was not given. Every
// command resolves it here, so an unknown model fails the same way
// everywhere: kUnknownModel (exit 3), naming the spec file to extend.
Result<const GpuSpec*> ResolveGpuModel(const GpuSpecDatabase& specs, const std::optional<std::string>& model);

}  // namespace ofu::cli
