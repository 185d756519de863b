#include "ofu/sources/dcgm/dcgm_devices.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ofu/core/gpu_key.h"
#include "ofu/sources/dcgm/dcgm_values.h"

namespace ofu::sources {
namespace {

// One discovery on one connection.
class Discovery {
 public:
  Discovery(DcgmLibrary& lib, dcgm::Handle handle, const std::optional<GpuSpecDatabase>& specs)
      : lib_(lib), handle_(handle), specs_(specs) {}

  std::optional<DcgmFailure> Run(const std::string& where, std::vector<unsigned int>& gpu_ids,
                                 std::vector<DcgmGpu>& gpus) {
    unsigned int ids[dcgm::kMaxDevices] = {};
    int count = 0;
    if (dcgm::Return rc = lib_.get_all_supported_devices(handle_, ids, &count); rc != dcgm::kOk) {
      return DcgmFailure{rc, fmt::format("{} did not list its GPUs: {}", where, lib_.ErrorText(rc))};
    }
    if (count <= 0) {
      return DcgmFailure{dcgm::kNoData, fmt::format("{} sees no GPU it supports", where)};
    }
    std::vector<DcgmGpu> whole;
    gpu_ids.clear();
    for (int i = 0; i < std::min(count, dcgm::kMaxDevices); ++i) {
      DcgmGpu gpu;
      gpu.id = ids[i];
      gpu.identity.gpu_index = std::to_string(ids[i]);
      gpu_ids.push_back(ids[i]);
      whole.push_back(std::move(gpu));
    }
    ReadIdentities(whole);
    return AddMigInstances(where, whole, gpus);
  }

 private:
  // Replaces each MIG-mode GPU of `whole` by its GPU instances, in `gpus`,
  // the way dcgm-exporter reads them: the hierarchy gives each instance's
  // DCGM entity and its NVML GPU instance id (GPU_I_ID), field 50 read on
  // the instance gives its profile name (GPU_I_PROFILE). A MIG-mode GPU whose
  // instances cannot be listed stays whole, with a problem that says why.
  std::optional<DcgmFailure> AddMigInstances(const std::string& where, std::vector<DcgmGpu>& whole,
                                             std::vector<DcgmGpu>& gpus) {
    std::vector<DcgmGpu> instances;
    std::string cannot_list;  // why no MIG-mode GPU's instances could be listed
    GpuHealth cannot_list_health = GpuHealth::kNotSupported;
    if (!lib_.CanEnumerateMig()) {
      cannot_list = fmt::format(
          "MIG is on, and this DCGM library ({}) cannot enumerate its GPU instances (it does not "
          "export dcgmGetGpuInstanceHierarchy and dcgmGroupAddEntity); install DCGM 3 or 4 "
          "(datacenter-gpu-manager) to read them",
          lib_.path());
    } else {
      auto hierarchy = std::make_unique<dcgm::MigHierarchyV2>();
      hierarchy->version = dcgm::kMigHierarchyVersion2;
      const dcgm::Return rc = lib_.get_gpu_instance_hierarchy(handle_, hierarchy.get());
      if (rc == dcgm::kConnectionNotValid) {
        return DcgmFailure{rc, fmt::format("{} went away: {}", where, lib_.ErrorText(rc))};
      }
      if (rc != dcgm::kOk) {
        if (rc == dcgm::kNoPermission || rc == dcgm::kRequiresRoot) cannot_list_health = GpuHealth::kNoPermission;
        cannot_list = fmt::format(
            "MIG is on, and {} did not list its GPU instances ({}); DCGM reads MIG instances "
            "only when the hostengine runs as root",
            where, lib_.ErrorText(rc));
      } else {
        const unsigned listed = std::min<unsigned>(hierarchy->count, dcgm::kMaxHierarchyInfo);
        for (unsigned i = 0; i < listed; ++i) {
          const dcgm::MigHierarchyInfoV2& entry = hierarchy->entityList[i];
          // Compute instances (DCGM_FE_GPU_CI) share their GPU instance's
          // SMs' counters; a GPU instance is the unit NVML GPM and
          // dcgm-exporter's GPU_I_ID name.
          if (entry.entity.entityGroupId != dcgm::kEntityGpuInstance ||
              entry.parent.entityGroupId != dcgm::kEntityGpu) {
            continue;
          }
          auto parent = std::find_if(whole.begin(), whole.end(),
                                     [&](const DcgmGpu& gpu) { return gpu.id == entry.parent.entityId; });
          if (parent == whole.end()) continue;
          DcgmGpu instance;
          instance.id = parent->id;
          instance.instance_entity = entry.entity.entityId;
          instance.identity = parent->identity;
          instance.identity.mig_instance = std::to_string(entry.info.nvmlInstanceId);
          instance.identity.key = MigInstanceKey(parent->identity.key, instance.identity.mig_instance);
          instances.push_back(std::move(instance));
        }
      }
    }
    ReadInstanceProfiles(instances, whole);

    gpus.clear();
    for (DcgmGpu& gpu : whole) {
      const auto mine = [&](const DcgmGpu& instance) { return instance.id == gpu.id; };
      if (std::any_of(instances.begin(), instances.end(), mine)) {
        std::copy_if(instances.begin(), instances.end(), std::back_inserter(gpus), mine);
        continue;
      }
      if (gpu.mig_mode) {
        gpu.mig_health = cannot_list.empty() ? GpuHealth::kNotSupported : cannot_list_health;
        gpu.mig_problem = cannot_list.empty()
                              ? "MIG is on but no GPU instance exists: create one (nvidia-smi mig -cgi) to measure it"
                              : cannot_list;
      }
      gpus.push_back(std::move(gpu));
    }
    return std::nullopt;
  }

  // Field 50 of a GPU instance is its profile name ("3g.40gb": DCGM makes it
  // from the profile's slices and memory), what dcgm-exporter labels
  // GPU_I_PROFILE. Its SM count comes from the spec database where the
  // profile is listed there.
  void ReadInstanceProfiles(std::vector<DcgmGpu>& instances, const std::vector<DcgmGpu>& whole) {
    if (instances.empty()) return;
    std::vector<dcgm::GroupEntityPair> entities;
    for (const DcgmGpu& instance : instances) entities.push_back({dcgm::kEntityGpuInstance, *instance.instance_entity});
    unsigned short fields[] = {dcgm::kFieldName};
    std::vector<dcgm::FieldValueV2> values(entities.size(), dcgm::FieldValueV2{});
    for (auto& v : values) v.version = dcgm::kFieldValueVersion2;
    const dcgm::Return rc = lib_.entities_get_latest_values(handle_, entities.data(),
                                                            static_cast<unsigned>(entities.size()), fields, 1,
                                                            dcgm::kLiveData, values.data());
    for (DcgmGpu& instance : instances) {
      if (rc == dcgm::kOk) {
        for (const auto& v : values) {
          if (v.entityGroupId == dcgm::kEntityGpuInstance && v.entityId == *instance.instance_entity &&
              v.fieldId == dcgm::kFieldName) {
            instance.identity.mig_profile = DcgmText(v);
          }
        }
      }
      instance.sm_count.reset();
      if (!specs_ || instance.identity.mig_profile.empty()) continue;
      for (const DcgmGpu& gpu : whole) {
        if (gpu.id != instance.id || gpu.identity.model.empty()) continue;
        if (auto spec = specs_->Lookup(gpu.identity.model); spec.ok()) {
          instance.sm_count = (*spec)->MigSmCount(instance.identity.mig_profile);
        }
      }
    }
  }

  // Names, UUIDs, PCI bus ids and MIG mode, read live (no watch needed). A
  // GPU whose names cannot be read is still counted, keyed by its DCGM id.
  void ReadIdentities(std::vector<DcgmGpu>& gpus) {
    std::vector<dcgm::GroupEntityPair> entities;
    for (const DcgmGpu& gpu : gpus) entities.push_back({dcgm::kEntityGpu, gpu.id});
    unsigned short fields[] = {dcgm::kFieldName, dcgm::kFieldUuid, dcgm::kFieldPciBusId, dcgm::kFieldMigMode};
    std::vector<dcgm::FieldValueV2> values(entities.size() * std::size(fields), dcgm::FieldValueV2{});
    for (auto& v : values) v.version = dcgm::kFieldValueVersion2;
    const dcgm::Return rc = lib_.entities_get_latest_values(handle_, entities.data(),
                                                            static_cast<unsigned>(entities.size()), fields,
                                                            static_cast<unsigned>(std::size(fields)), dcgm::kLiveData,
                                                            values.data());
    for (DcgmGpu& gpu : gpus) {
      if (rc == dcgm::kOk) {
        for (const auto& v : values) {
          if (v.entityGroupId != dcgm::kEntityGpu || v.entityId != gpu.id) continue;
          if (v.fieldId == dcgm::kFieldName) gpu.identity.model = DcgmText(v);
          if (v.fieldId == dcgm::kFieldUuid) gpu.identity.uuid = DcgmText(v);
          if (v.fieldId == dcgm::kFieldPciBusId) gpu.identity.pci_bus_id = DcgmText(v);
          if (v.fieldId == dcgm::kFieldMigMode) gpu.mig_mode = DcgmNumber(v) == 1.0;
        }
      }
      gpu.identity.key = WholeGpuKey(gpu.identity.uuid, "", std::to_string(gpu.id));
      if (specs_ && !gpu.identity.model.empty()) {
        if (auto spec = specs_->Lookup(gpu.identity.model); spec.ok()) gpu.sm_count = (*spec)->sm_count;
      }
    }
  }

  DcgmLibrary& lib_;
  dcgm::Handle handle_;
  const std::optional<GpuSpecDatabase>& specs_;
};

}  // namespace

std::optional<DcgmFailure> DiscoverDcgmDevices(DcgmLibrary& lib, dcgm::Handle handle,
                                               const std::optional<GpuSpecDatabase>& specs, const std::string& where,
                                               std::vector<unsigned int>& gpu_ids, std::vector<DcgmGpu>& gpus) {
  return Discovery(lib, handle, specs).Run(where, gpu_ids, gpus);
}

}  // namespace ofu::sources
