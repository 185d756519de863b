#include "ofu/attribution/chain_attributor.h"

#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ofu::attribution {

ChainAttributor::ChainAttributor(std::vector<std::unique_ptr<Attributor>> methods) : methods_(std::move(methods)) {}

std::string ChainAttributor::Describe() const {
  std::vector<std::string> names;
  for (const auto& method : methods_) names.push_back(method->Describe());
  return fmt::format("chain: {}", fmt::join(names, ", then "));
}

Result<Attribution> ChainAttributor::Attribute(const std::vector<GpuRef>& gpus) {
  Attribution out;
  std::vector<std::string> errors;
  std::vector<GpuRef> remaining = gpus;
  for (const auto& method : methods_) {
    if (remaining.empty()) break;
    Result<Attribution> answer = method->Attribute(remaining);
    if (!answer.ok()) {
      errors.push_back(fmt::format("{}: {}", method->Describe(), answer.error().message));
      out.notes.push_back(errors.back());
      continue;
    }
    for (std::string& note : answer->notes) {
      out.notes.push_back(fmt::format("{}: {}", method->Describe(), note));
    }
    std::vector<GpuRef> still;
    for (GpuRef& gpu : remaining) {
      auto it = answer->jobs.find(gpu.uuid);
      if (it == answer->jobs.end()) {
        still.push_back(std::move(gpu));
      } else {
        out.jobs.emplace(it->first, std::move(it->second));
      }
    }
    remaining = std::move(still);
  }
  if (!methods_.empty() && errors.size() == methods_.size()) {
    return Error::Unavailable("every attribution method failed: {}", fmt::join(errors, "; "));
  }
  return out;
}

}  // namespace ofu::attribution
