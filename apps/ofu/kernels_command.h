// `ofu kernels parse NAME...`: what GEMM kernel names say about their tiles,
// clusters and precision (src/ofu/kernels/kernel_name.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"
#include "ofu/render/output_format.h"

namespace ofu::cli {

struct KernelsArgs {
  std::vector<std::string> names;                              // "-" reads names from stdin, one per line
  render::OutputFormat format = render::OutputFormat::kTable;  // --format; AddFormatFlag sets the default
  std::optional<std::string> gpu_model;  // --gpu-model: judge kernels against this GPU's architecture
  std::optional<std::string> spec_db;    // --spec-db
};

// Adds `kernels`' one subcommand `parse` to `cmd`, and its flags.
void AddKernelsFlags(CLI::App& cmd, KernelsArgs& args);

// Prints every name, parsed or not. Exit 0 when all parsed, 2 when any name
// could not be read; kInvalidArgument (exit 1) when no name was given.
Result<int> RunKernels(const KernelsArgs& args);

}  // namespace ofu::cli
