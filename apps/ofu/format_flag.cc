#include "format_flag.h"

namespace ofu::cli {

void AddFormatFlag(CLI::App& cmd, render::OutputFormat& format, const std::vector<render::OutputFormat>& allowed,
                   const std::string& help) {
  format = allowed.front();
  std::vector<std::string> names;
  for (const render::OutputFormat allowed_format : allowed) {
    names.emplace_back(render::OutputFormatName(allowed_format));
  }
  // The check runs before the function: the name is one of `names`.
  cmd.add_option_function<std::string>(
         "--format,-f", [&format](const std::string& name) { format = *render::OutputFormatOfName(name); }, help)
      ->check(CLI::IsMember(names))
      ->default_str(names.front());
}

}  // namespace ofu::cli
