#include "format_flag.h"

namespace ofu::cli {

void AddFormatFlag(CLI::App& cmd, std::string& format, const std::vector<std::string>& allowed,
                   const std::string& help) {
  format = allowed.front();
  cmd.add_option("--format,-f", format, help)->check(CLI::IsMember(allowed))->capture_default_str();
}

}  // namespace ofu::cli
