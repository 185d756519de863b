#include "ofu/sources/nvml/nvml_devices.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ofu/core/gpu_key.h"

namespace ofu::sources {
namespace {

std::string ArchitectureName(unsigned arch) {
  switch (arch) {
    case NVML_DEVICE_ARCH_KEPLER: return "Kepler";
    case NVML_DEVICE_ARCH_MAXWELL: return "Maxwell";
    case NVML_DEVICE_ARCH_PASCAL: return "Pascal";
    case NVML_DEVICE_ARCH_VOLTA: return "Volta";
    case NVML_DEVICE_ARCH_TURING: return "Turing";
    case NVML_DEVICE_ARCH_AMPERE: return "Ampere";
    case NVML_DEVICE_ARCH_ADA: return "Ada";
    case NVML_DEVICE_ARCH_HOPPER: return "Hopper";
    case NVML_DEVICE_ARCH_BLACKWELL: return "Blackwell";
    default: return fmt::format("architecture {}", arch);
  }
}

// One enumeration: fills `devices` from the driver.
class Enumeration {
 public:
  Enumeration(const NvmlLibrary& nvml, const std::string& hostname, std::vector<NvmlDevice>& devices)
      : nvml_(nvml), hostname_(hostname), devices_(devices) {}

  // Builds devices_ from the driver; lost GPUs keep the identity they had.
  Status Run() {
    std::vector<NvmlDevice> previous = std::move(devices_);
    devices_.clear();
    unsigned count = 0;
    const nvmlReturn_t counted = fn().DeviceGetCount(&count);
    if (counted != NVML_SUCCESS) {
      return Error::Unavailable("NVML cannot count the GPUs: {}", nvml_.ErrorString(counted));
    }
    if (count == 0) {
      return Error::Unavailable("NVML ({}) sees no GPU on this machine; check nvidia-smi", nvml_.path());
    }
    for (unsigned index = 0; index < count; ++index) AddDevice(index, previous);
    const bool any_gpm = std::any_of(devices_.begin(), devices_.end(), [](const NvmlDevice& d) { return d.gpm; });
    if (!any_gpm) {
      return Error::Unavailable(
          "none of the {} GPUs supports NVML GPM (GPM needs Hopper or later); use --source "
          "dcgm",
          count);
    }
    return OkStatus();
  }

 private:
  const NvmlFunctions& fn() const { return nvml_.fn(); }

  void AddDevice(unsigned index, const std::vector<NvmlDevice>& previous) {
    NvmlDevice gpu;
    gpu.identity.hostname = hostname_;
    gpu.identity.gpu_index = std::to_string(index);
    gpu.identity.key = WholeGpuKey("", "", gpu.identity.gpu_index);  // until the UUID is known
    const nvmlReturn_t got = fn().DeviceGetHandleByIndex(index, &gpu.handle);
    if (got != NVML_SUCCESS) {
      for (const NvmlDevice& old : previous) {
        if (old.identity.gpu_index == gpu.identity.gpu_index && !old.gpu_instance) gpu.identity = old.identity;
      }
      gpu.health = ClassifyNvml(got) == NvmlOutcome::kLost ? GpuHealth::kLost : GpuHealth::kUnavailable;
      gpu.problem = ClassifyNvml(got) == NvmlOutcome::kLost
                        ? std::string(kNvmlLostAdvice)
                        : fmt::format("NVML cannot open this GPU: {}", nvml_.ErrorString(got));
      devices_.push_back(std::move(gpu));
      return;
    }
    char text[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (fn().DeviceGetUUID(gpu.handle, text, sizeof(text)) == NVML_SUCCESS) {
      gpu.identity.uuid = text;
      gpu.identity.key = WholeGpuKey(gpu.identity.uuid, "", gpu.identity.gpu_index);
    }
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    if (fn().DeviceGetName(gpu.handle, name, sizeof(name)) == NVML_SUCCESS) gpu.identity.model = name;
    if (fn().DeviceGetPciInfo != nullptr) {
      nvmlPciInfo_t pci{};
      if (fn().DeviceGetPciInfo(gpu.handle, &pci) == NVML_SUCCESS) gpu.identity.pci_bus_id = pci.busId;
    }
    if (fn().DeviceGetAttributes != nullptr) {
      nvmlDeviceAttributes_t attributes{};
      if (fn().DeviceGetAttributes(gpu.handle, &attributes) == NVML_SUCCESS && attributes.multiprocessorCount > 0) {
        gpu.sm_count = static_cast<int>(attributes.multiprocessorCount);
      }
    }
    if (fn().DeviceGetMaxClockInfo != nullptr) {
      unsigned mhz = 0;
      if (fn().DeviceGetMaxClockInfo(gpu.handle, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS && mhz > 0) {
        gpu.max_sm_clock_mhz = mhz;
      }
    }
    std::string architecture;
    if (fn().DeviceGetArchitecture != nullptr) {
      unsigned arch = 0;
      if (fn().DeviceGetArchitecture(gpu.handle, &arch) == NVML_SUCCESS) architecture = ArchitectureName(arch);
    }

    nvmlGpmSupport_t support{};
    support.version = NVML_GPM_SUPPORT_VERSION;
    const nvmlReturn_t queried = fn().GpmQueryDeviceSupport(gpu.handle, &support);
    switch (ClassifyNvml(queried)) {
      case NvmlOutcome::kOk: gpu.gpm = support.isSupportedDevice != 0; break;
      case NvmlOutcome::kNoPermission:
        gpu.gpm = true;  // supported or not, sampling will say; the fix is the same
        gpu.health = GpuHealth::kNoPermission;
        gpu.problem = kNvmlNoPermissionAdvice;
        break;
      case NvmlOutcome::kLost:
        gpu.health = GpuHealth::kLost;
        gpu.problem = kNvmlLostAdvice;
        break;
      default: gpu.gpm = false; break;
    }
    if (!gpu.gpm && gpu.health == GpuHealth::kOk) {
      gpu.health = GpuHealth::kNotSupported;
      gpu.problem = architecture.empty() ? std::string(kNvmlNotSupportedAdvice)
                                         : fmt::format("{} ({})", kNvmlNotSupportedAdvice, architecture);
    }

    if (gpu.gpm && IsMig(gpu.handle)) {
      AddMigInstances(gpu);
      return;
    }
    if (gpu.gpm) AllocateSamples(gpu);
    devices_.push_back(std::move(gpu));
  }

  bool IsMig(nvmlDevice_t handle) const {
    if (fn().DeviceGetMigMode == nullptr) return false;
    unsigned current = 0;
    unsigned pending = 0;
    return fn().DeviceGetMigMode(handle, &current, &pending) == NVML_SUCCESS && current == NVML_DEVICE_MIG_ENABLE;
  }

  // One NvmlDevice per GPU instance of a MIG-mode GPU.
  void AddMigInstances(const NvmlDevice& gpu) {
    unsigned max_count = 0;
    const bool can_enumerate = fn().DeviceGetMaxMigDeviceCount != nullptr &&
                               fn().DeviceGetMigDeviceHandleByIndex != nullptr &&
                               fn().DeviceGetGpuInstanceId != nullptr && fn().GpmMigSampleGet != nullptr &&
                               fn().DeviceGetMaxMigDeviceCount(gpu.handle, &max_count) == NVML_SUCCESS;
    if (!can_enumerate) {
      NvmlDevice whole = gpu;
      whole.gpm = false;
      whole.health = GpuHealth::kNotSupported;
      whole.problem = "MIG is on, and this driver cannot enumerate its GPU instances for GPM";
      devices_.push_back(std::move(whole));
      return;
    }
    std::vector<unsigned> seen;
    for (unsigned i = 0; i < max_count; ++i) {
      nvmlDevice_t mig = nullptr;
      if (fn().DeviceGetMigDeviceHandleByIndex(gpu.handle, i, &mig) != NVML_SUCCESS) continue;
      unsigned gi = 0;
      if (fn().DeviceGetGpuInstanceId(mig, &gi) != NVML_SUCCESS) continue;
      // Several compute instances may share a GPU instance; GPM samples GIs.
      if (std::find(seen.begin(), seen.end(), gi) != seen.end()) continue;
      seen.push_back(gi);
      NvmlDevice instance = gpu;
      instance.gpu_instance = gi;
      instance.identity.mig_instance = std::to_string(gi);
      instance.identity.key = MigInstanceKey(gpu.identity.key, instance.identity.mig_instance);
      char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
      if (fn().DeviceGetName(mig, name, sizeof(name)) == NVML_SUCCESS) {
        // "NVIDIA H100 80GB HBM3 MIG 3g.40gb": the profile follows "MIG ".
        const std::string full = name;
        const auto at = full.rfind("MIG ");
        if (at != std::string::npos) instance.identity.mig_profile = full.substr(at + 4);
      }
      instance.sm_count.reset();
      if (fn().DeviceGetAttributes != nullptr) {
        nvmlDeviceAttributes_t attributes{};
        if (fn().DeviceGetAttributes(mig, &attributes) == NVML_SUCCESS && attributes.multiprocessorCount > 0) {
          instance.sm_count = static_cast<int>(attributes.multiprocessorCount);
        }
      }
      AllocateSamples(instance);
      devices_.push_back(std::move(instance));
    }
    if (seen.empty()) {
      NvmlDevice whole = gpu;
      whole.gpm = false;
      whole.health = GpuHealth::kNotSupported;
      whole.problem = "MIG is on but no GPU instance exists: create one (nvidia-smi mig -cgi) to measure it";
      devices_.push_back(std::move(whole));
    }
  }

  void AllocateSamples(NvmlDevice& device) {
    for (auto& sample : device.samples) {
      if (fn().GpmSampleAlloc(&sample) != NVML_SUCCESS) sample = nullptr;
    }
    if (device.samples[0] == nullptr || device.samples[1] == nullptr) {
      device.gpm = false;
      device.health = GpuHealth::kNotSupported;
      device.problem = "NVML could not allocate GPM sample buffers for this GPU";
    }
  }

  const NvmlLibrary& nvml_;
  const std::string& hostname_;
  std::vector<NvmlDevice>& devices_;
};

}  // namespace

NvmlOutcome ClassifyNvml(nvmlReturn_t code) {
  switch (code) {
    case NVML_SUCCESS: return NvmlOutcome::kOk;
    case NVML_ERROR_GPU_IS_LOST:
    case NVML_ERROR_RESET_REQUIRED: return NvmlOutcome::kLost;
    case NVML_ERROR_NO_PERMISSION: return NvmlOutcome::kNoPermission;
    case NVML_ERROR_DRIVER_NOT_LOADED:
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
    case NVML_ERROR_UNINITIALIZED: return NvmlOutcome::kLibraryGone;
    default: return NvmlOutcome::kAbsent;
  }
}

NvmlWanted ResolveNvmlWanted(const SourceOptions& options) {
  NvmlWanted wanted;
  for (const CounterFieldInfo& info : AllCounterFields()) {
    if (!options.Wants(info.field)) continue;
    if (info.gpm_metric_id != 0) wanted.gpm_metrics.push_back(static_cast<unsigned>(info.gpm_metric_id));
    if (info.field == CounterField::kTensorActive || info.field == CounterField::kSmClockMhz) wanted.cycles = true;
    if (info.field == CounterField::kPowerW) wanted.power = true;
    if (info.field == CounterField::kEnergyMj) wanted.energy = true;
    if (info.field == CounterField::kClockEventReasons) wanted.clock_event_reasons = true;
  }
  return wanted;
}

bool NvmlSampleable(const NvmlDevice& device) {
  return device.gpm && device.health != GpuHealth::kLost && device.health != GpuHealth::kUnavailable;
}

Status EnumerateNvmlDevices(const NvmlLibrary& nvml, const std::string& hostname, std::vector<NvmlDevice>& devices) {
  return Enumeration(nvml, hostname, devices).Run();
}

void FreeNvmlSamples(const NvmlLibrary& nvml, std::vector<NvmlDevice>& devices) {
  for (NvmlDevice& device : devices) {
    for (auto& sample : device.samples) {
      if (sample != nullptr) nvml.fn().GpmSampleFree(sample);
      sample = nullptr;
    }
    device.latest = -1;
  }
}

}  // namespace ofu::sources
