#include "ofu/sources/dcgm/dcgm_watches.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

namespace ofu::sources {
namespace {

// Every device field the source can read (CounterField order is not DCGM's).
const std::vector<unsigned short>& DeviceFields() {
  static const std::vector<unsigned short> kFields = {100, 112, 113, 155, 156};
  return kFields;
}

// Samples kept by the hostengine, in windows: enough to ride out one late read.
constexpr double kKeepWindows = 4;

}  // namespace

bool IsDcgmProfilingField(unsigned short id) { return id >= 1001 && id <= 1015; }

bool IsDcgmDeviceField(unsigned short id) {
  const auto& fields = DeviceFields();
  return std::find(fields.begin(), fields.end(), id) != fields.end();
}

bool IsLentToDcgmInstances(unsigned short id) { return id == 100 || id == 112 || id == 113; }

DcgmWatchPlan PlanDcgmWatches(const SourceOptions& options) {
  DcgmWatchPlan plan;
  for (const CounterFieldInfo& info : AllCounterFields()) {
    if (!options.Wants(info.field) || info.dcgm_field_id == 0) continue;
    const auto id = static_cast<unsigned short>(info.dcgm_field_id);
    if (IsDcgmProfilingField(id)) plan.profiling.push_back(id);
    if (std::find(DeviceFields().begin(), DeviceFields().end(), id) != DeviceFields().end()) {
      plan.device.push_back(id);
    }
  }
  // The SM clock always: it is what tells a GPU that answers from one that
  // does not, and the instances' device values come from it.
  if (std::find(plan.device.begin(), plan.device.end(), dcgm::kFieldSmClock) == plan.device.end()) {
    plan.device.insert(plan.device.begin(), dcgm::kFieldSmClock);
  }
  std::sort(plan.device.begin(), plan.device.end());
  std::sort(plan.profiling.begin(), plan.profiling.end());
  if (options.Wants(CounterField::kTensorActive) || options.Wants(CounterField::kSmClockMhz)) {
    plan.cycles = {dcgm::kFieldSmCyclesElapsedTotal, dcgm::kFieldMmaCyclesActiveTotal};
  }
  return plan;
}

std::optional<DcgmFailure> DcgmWatches::Create(dcgm::Handle handle, const std::string& where, const std::string& prefix,
                                               const std::vector<unsigned int>& gpu_ids,
                                               const std::vector<DcgmGpu>& gpus) {
  handle_ = handle;
  if (dcgm::Return rc = lib_.group_create(handle_, dcgm::kGroupEmpty, prefix.c_str(), &group_); rc != dcgm::kOk) {
    return DcgmFailure{rc, fmt::format("{} did not create a GPU group: {}", where, lib_.ErrorText(rc))};
  }
  have_group_ = true;
  for (unsigned int id : gpu_ids) {
    if (dcgm::Return rc = lib_.group_add_device(handle_, group_, id); rc != dcgm::kOk) {
      return DcgmFailure{rc, fmt::format("{} did not add GPU {} to a group: {}", where, id, lib_.ErrorText(rc))};
    }
  }

  read_fields_.clear();
  instance_fields_.clear();
  profiling_health_ = GpuHealth::kOk;
  profiling_problem_.clear();
  if (dcgm::Return rc = Watch(group_, plan_.device, prefix + "-device", read_fields_); rc != dcgm::kOk) {
    return DcgmFailure{rc, fmt::format("{} did not watch the clock and power fields: {}", where, lib_.ErrorText(rc))};
  }
  const dcgm::Return profiling_rc = Watch(group_, plan_.profiling, prefix + "-profiling", read_fields_);
  if (profiling_rc == dcgm::kConnectionNotValid) {
    return DcgmFailure{profiling_rc, fmt::format("{} went away: {}", where, lib_.ErrorText(profiling_rc))};
  }
  if (profiling_rc != dcgm::kOk) {
    std::tie(profiling_health_, profiling_problem_) = ProfilingRefused(profiling_rc);
  } else {
    // Cycle counters exist from DCGM 4.6; an older library refuses the
    // field ids, and the point clock serves instead.
    if (Watch(group_, plan_.cycles, prefix + "-cycles", read_fields_) == dcgm::kConnectionNotValid) {
      return DcgmFailure{dcgm::kConnectionNotValid, fmt::format("{} went away", where)};
    }
  }
  return WatchInstances(where, prefix, gpus);
}

void DcgmWatches::Destroy(dcgm::Handle handle) {
  for (dcgm::FieldGroup fg : field_groups_) lib_.field_group_destroy(handle, fg);
  if (have_group_) lib_.group_destroy(handle, group_);
  if (have_instance_group_) lib_.group_destroy(handle, instance_group_);
}

void DcgmWatches::Forget() {
  field_groups_.clear();
  have_group_ = false;
  have_instance_group_ = false;
}

// What to tell when DCGM refuses to watch the profiling fields.
std::pair<GpuHealth, std::string> DcgmWatches::ProfilingRefused(dcgm::Return rc) const {
  if (rc == dcgm::kNoPermission || rc == dcgm::kRequiresRoot) {
    return {GpuHealth::kNoPermission,
            fmt::format("DCGM refused to watch the profiling fields ({}): tensor activity needs a hostengine "
                        "running as root; run nv-hostengine as root (systemctl start nvidia-dcgm) and connect to "
                        "it; clocks and power still flow",
                        lib_.ErrorText(rc))};
  }
  return {GpuHealth::kNotSupported,
          fmt::format("DCGM cannot watch the profiling fields ({}): they need DCGM 2 or newer and a data-center GPU "
                      "(V100, A100, H100 or newer), and no other DCGM profiling session; clocks and power still "
                      "flow",
                      lib_.ErrorText(rc))};
}

// Watches the profiling fields on a second group holding the MIG
// instances, when there are any, and when the GPUs' own watch was allowed.
std::optional<DcgmFailure> DcgmWatches::WatchInstances(const std::string& where, const std::string& prefix,
                                                       const std::vector<DcgmGpu>& gpus) {
  instance_profiling_health_ = profiling_health_;
  instance_profiling_problem_ = profiling_problem_;
  const bool any = std::any_of(gpus.begin(), gpus.end(), [](const DcgmGpu& gpu) { return gpu.instance_entity; });
  if (!any || profiling_health_ != GpuHealth::kOk) return std::nullopt;

  const std::string name = prefix + "-mig";
  dcgm::Return rc = lib_.group_create(handle_, dcgm::kGroupEmpty, name.c_str(), &instance_group_);
  if (rc == dcgm::kOk) {
    have_instance_group_ = true;
    for (const DcgmGpu& gpu : gpus) {
      if (!gpu.instance_entity) continue;
      rc = lib_.group_add_entity(handle_, instance_group_, dcgm::kEntityGpuInstance, *gpu.instance_entity);
      if (rc != dcgm::kOk) break;
    }
  }
  if (rc == dcgm::kConnectionNotValid) {
    return DcgmFailure{rc, fmt::format("{} went away: {}", where, lib_.ErrorText(rc))};
  }
  if (rc != dcgm::kOk) {
    instance_profiling_health_ = GpuHealth::kNotSupported;
    instance_profiling_problem_ = fmt::format(
        "DCGM did not make a group of the MIG instances ({}), so their tensor activity cannot be watched; the "
        "clock still flows",
        lib_.ErrorText(rc));
    return std::nullopt;
  }
  rc = Watch(instance_group_, plan_.profiling, prefix + "-mig-profiling", instance_fields_);
  if (rc == dcgm::kOk) {
    rc = Watch(instance_group_, plan_.cycles, prefix + "-mig-cycles", instance_fields_);
    if (rc != dcgm::kConnectionNotValid) rc = dcgm::kOk;  // as on the GPUs: the point clock serves instead
  }
  if (rc == dcgm::kConnectionNotValid) {
    return DcgmFailure{rc, fmt::format("{} went away: {}", where, lib_.ErrorText(rc))};
  }
  if (rc != dcgm::kOk) {
    instance_fields_.clear();
    std::tie(instance_profiling_health_, instance_profiling_problem_) = ProfilingRefused(rc);
    instance_profiling_problem_ = "on the MIG instances: " + instance_profiling_problem_;
  }
  return std::nullopt;
}

// Creates a field group and watches it on `group`; on success its fields
// are added to `read`, to be read each window. No fields: nothing to do.
dcgm::Return DcgmWatches::Watch(dcgm::GpuGroup group, const std::vector<unsigned short>& fields,
                                const std::string& name, std::vector<unsigned short>& read) {
  if (fields.empty()) return dcgm::kOk;
  std::vector<unsigned short> ids = fields;
  dcgm::FieldGroup fg = 0;
  dcgm::Return rc = lib_.field_group_create(handle_, static_cast<int>(ids.size()), ids.data(), name.c_str(), &fg);
  if (rc != dcgm::kOk) return rc;
  const auto update_us = static_cast<long long>(std::llround(options_.window_s * 1e6));
  rc = lib_.watch_fields(handle_, group, fg, update_us, options_.window_s * kKeepWindows, 0);
  if (rc != dcgm::kOk) {
    lib_.field_group_destroy(handle_, fg);
    return rc;
  }
  field_groups_.push_back(fg);
  read.insert(read.end(), fields.begin(), fields.end());
  return dcgm::kOk;
}

}  // namespace ofu::sources
