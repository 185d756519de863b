// Placeholder for `ofu regress` (issue 7).
#include "regress_command.h"

#include <fmt/format.h>

#include "exit_codes.h"

namespace ofu::cli {

CLI::App* AddRegressCommand(CLI::App& app, RegressArgs& /*args*/) { return app.add_subcommand("regress", "not built yet"); }

int RunRegress(const RegressArgs& /*args*/) {
  fmt::print(stderr, "ofu regress: not built yet\n");
  return kExitUsage;
}

}  // namespace ofu::cli
