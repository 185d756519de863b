// Placeholder for `ofu reconcile` (issue 7).
#pragma once

#include <CLI/CLI.hpp>

namespace ofu::cli {

struct ReconcileArgs {};

CLI::App* AddReconcileCommand(CLI::App& app, ReconcileArgs& args);
int RunReconcile(const ReconcileArgs& args);

}  // namespace ofu::cli
