// Placeholder for `ofu regress` (issue 7).
#pragma once

#include <CLI/CLI.hpp>

namespace ofu::cli {

struct RegressArgs {};

CLI::App* AddRegressCommand(CLI::App& app, RegressArgs& args);
int RunRegress(const RegressArgs& args);

}  // namespace ofu::cli
