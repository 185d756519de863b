// Placeholder for `ofu reconcile` (issue 7).
#include "reconcile_command.h"

#include <fmt/format.h>

#include "exit_codes.h"

namespace ofu::cli {

CLI::App* AddReconcileCommand(CLI::App& app, ReconcileArgs& /*args*/) { return app.add_subcommand("reconcile", "not built yet"); }

int RunReconcile(const ReconcileArgs& /*args*/) {
  fmt::print(stderr, "ofu reconcile: not built yet\n");
  return kExitUsage;
}

}  // namespace ofu::cli
