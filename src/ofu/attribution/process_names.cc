#include "ofu/attribution/process_names.h"

#include <fstream>

#include <fmt/format.h>

namespace ofu::attribution {

std::string ReadProcessName(const std::string& proc_root, std::uint32_t pid) {
  std::ifstream file(fmt::format("{}/{}/comm", proc_root, pid));
  std::string name;
  if (!file || !std::getline(file, name) || name.empty()) return "?";
  return name;
}

}  // namespace ofu::attribution
