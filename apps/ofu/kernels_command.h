// `ofu kernels parse NAME...`: what GEMM kernel names say about their tiles,
// clusters and precision (src/ofu/kernels/kernel_name.h).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ofu::cli {

struct KernelsArgs {
  std::vector<std::string> names;  // "-" reads names from stdin, one per line
  std::string format = "table";
};

// Adds `kernels` with its one subcommand `parse`.
CLI::App* AddKernelsCommand(CLI::App& app, KernelsArgs& args);

// Prints every name, parsed or not. Exit 0 when all parsed, 2 when any name
// could not be read, 1 when no name was given.
int RunKernels(const KernelsArgs& args);

}  // namespace ofu::cli
