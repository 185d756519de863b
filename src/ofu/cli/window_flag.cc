#include "ofu/cli/window_flag.h"

#include <fmt/format.h>

#include "ofu/core/windows.h"

namespace ofu::cli {

CLI::Option* AddWindowFlag(CLI::App& cmd, const std::string& names, double& window_s, double max_s,
                           const std::string& what) {
  const std::string days = max_s >= 86400 ? fmt::format(" ({} days)", max_s / 86400) : "";
  return cmd.add_option(names, window_s, fmt::format("{} in seconds, {} to {}{}", what, kMinWindowS, max_s, days))
      ->check(CLI::Range(kMinWindowS, max_s))
      ->capture_default_str();
}

}  // namespace ofu::cli
