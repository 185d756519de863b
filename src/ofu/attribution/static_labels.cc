#include "ofu/attribution/static_labels.h"

#include <utility>

#include <fmt/format.h>

namespace ofu::attribution {

StaticAttributor::StaticAttributor(std::map<std::string, JobInfo> by_uuid_or_index)
    : labels_(std::move(by_uuid_or_index)) {
  for (auto& [key, job] : labels_) {
    if (job.scheduler.empty()) job.scheduler = "static";
  }
}

std::string StaticAttributor::Describe() const { return fmt::format("static labels ({} entries)", labels_.size()); }

Result<Attribution> StaticAttributor::Attribute(const std::vector<GpuRef>& gpus) {
  Attribution out;
  for (const GpuRef& gpu : gpus) {
    if (gpu.uuid.empty()) continue;
    auto it = labels_.find(gpu.uuid);
    if (it == labels_.end() && gpu.index >= 0) it = labels_.find(std::to_string(gpu.index));
    if (it != labels_.end()) out.jobs.emplace(gpu.uuid, it->second);
  }
  return out;
}

}  // namespace ofu::attribution
