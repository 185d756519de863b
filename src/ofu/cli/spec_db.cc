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

void AddGpuModelFlag(CLI::App& cmd, std::optional<std::string>& model, std::string_view use) {
  cmd.add_option("--gpu-model", model,
                 fmt::format("{}: a SKU id (h100-sxm5) or a model name as the driver reports it (\"NVIDIA H100 "
                             "80GB HBM3\"), as data/gpu_specs.json (or --spec-db) lists them",
                             use));
}

Result<const GpuSpec*> ResolveGpuModel(const GpuSpecDatabase& specs, const std::optional<std::string>& model) {
  if (!model) return nullptr;
  return specs.Lookup(*model);
}

}  // namespace ofu::cli
