#include "ofu/core/gpu_identity.h"

#include <cassert>
#include <utility>

namespace ofu {

namespace {

// True for a name that can be an SQL column and a Prometheus label as is.
[[maybe_unused]] bool PlainName(std::string_view name) {
  if (name.empty() || name[0] < 'a' || name[0] > 'z') return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace

const std::string& GpuIdentity::Added(std::string_view name) const {
  static const std::string kNone;
  const auto found = added.find(name);
  return found == added.end() ? kNone : found->second;
}

const std::string& IdentityField::Of(const GpuIdentity& identity) const {
  return member != nullptr ? identity.*member : identity.Added(name);
}

void IdentityField::Set(GpuIdentity& identity, std::string value) const {
  if (member != nullptr) {
    identity.*member = std::move(value);
  } else {
    identity.added[std::string(name)] = std::move(value);
  }
}

const IdentityFieldTable& IdentityFieldTable::Builtin() {
  static const IdentityFieldTable table = [] {
    std::vector<IdentityField> rows = {
        {"key", "The source's per-device key: the UUID, with /gi<N> for a MIG instance.", &GpuIdentity::key, false,
         true},
        {"uuid", "The GPU's UUID.", &GpuIdentity::uuid},
        {"hostname", "The host the GPU is in.", &GpuIdentity::hostname},
        {"gpu", "The driver's index of the GPU on its host.", &GpuIdentity::gpu_index},
        {"pci_bus_id", "The GPU's PCI bus id.", &GpuIdentity::pci_bus_id},
        {"mig_profile", "A MIG instance's profile, e.g. 1g.10gb.", &GpuIdentity::mig_profile, true},
        {"mig_instance", "A MIG instance's GPU instance id.", &GpuIdentity::mig_instance, true},
    };
    const std::size_t builtin = rows.size();
    return IdentityFieldTable(std::move(rows), builtin);
  }();
  return table;
}

IdentityFieldTable IdentityFieldTable::With(const IdentityField& row) const {
  assert(row.member == nullptr && PlainName(row.name) && row.name != "id" && row.name != "sku" &&
         row.name != "architecture" && row.name != "model" && row.name != "gpu_index");
  for ([[maybe_unused]] const IdentityField& have : rows_) assert(have.name != row.name);
  std::vector<IdentityField> rows = rows_;
  rows.push_back(row);
  return IdentityFieldTable(std::move(rows), builtin_);
}

std::pair<std::string, std::string> GpuKeyOfLabels(std::string_view uuid, std::string_view host, std::string_view index,
                                                   std::string_view mig_id) {
  std::string key;
  if (!uuid.empty()) {
    key = std::string(uuid);
  } else if (!index.empty()) {
    key = host.empty() ? "gpu" + std::string(index) : std::string(host) + "/gpu" + std::string(index);
  } else {
    return {};
  }
  std::string parent;
  if (!mig_id.empty()) {
    parent = key;
    key += "/gi" + std::string(mig_id);
  }
  return {std::move(key), std::move(parent)};
}

}  // namespace ofu
