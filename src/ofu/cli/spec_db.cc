#include "ofu/cli/spec_db.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace ofu::cli {

void AddSpecDbFlag(CLI::App& cmd, std::optional<std::string>& path) {
  cmd.add_option("--spec-db", path, "GPU spec database to use instead of the built-in data/gpu_specs.json");
}

Result<GpuSpecDatabase> LoadSpecDatabase(const std::optional<std::string>& path) {
  if (!path) return GpuSpecDatabase::Embedded();
  std::ifstream file(*path);
  if (!file) return Error::Io("{}: cannot open spec database", *path);
  std::stringstream text;
  text << file.rdbuf();
  return GpuSpecDatabase::Parse(text.str(), *path);
}

}  // namespace ofu::cli
