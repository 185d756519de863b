#include "ofu/sources/nvml/nvml_library.h"

#include <fmt/format.h>

namespace ofu::sources {
namespace {

constexpr const char* kDefaultLibrary = "libnvidia-ml.so.1";

// Resolves one table entry, with a counter under the symbol's own name when
// there is an accounting; remembers the first required symbol missing so
// Load() can name it.
class Resolver {
 public:
  Resolver(const platform::DynamicLibrary& library, CallAccounting* accounting)
      : library_(library), accounting_(accounting) {}

  template <typename Signature>
  void Required(AccountedFunction<Signature>& slot, std::initializer_list<std::string_view> names) {
    Optional(slot, names);
    if (slot == nullptr && missing_.empty()) missing_ = std::string(*names.begin());
  }
  template <typename Signature>
  void Optional(AccountedFunction<Signature>& slot, std::initializer_list<std::string_view> names) {
    const platform::DynamicLibrary::Found found = library_.Symbol(names);
    slot = BindAccounted<Signature>(found.address, found.name, accounting_);
  }
  const std::string& missing() const { return missing_; }

 private:
  const platform::DynamicLibrary& library_;
  CallAccounting* accounting_;
  std::string missing_;
};

}  // namespace

std::string_view NvmlReturnName(nvmlReturn_t code) {
  switch (code) {
    case NVML_SUCCESS: return "SUCCESS";
    case NVML_ERROR_UNINITIALIZED: return "UNINITIALIZED";
    case NVML_ERROR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case NVML_ERROR_NOT_SUPPORTED: return "NOT_SUPPORTED";
    case NVML_ERROR_NO_PERMISSION: return "NO_PERMISSION";
    case NVML_ERROR_ALREADY_INITIALIZED: return "ALREADY_INITIALIZED";
    case NVML_ERROR_NOT_FOUND: return "NOT_FOUND";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "INSUFFICIENT_SIZE";
    case NVML_ERROR_INSUFFICIENT_POWER: return "INSUFFICIENT_POWER";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "DRIVER_NOT_LOADED";
    case NVML_ERROR_TIMEOUT: return "TIMEOUT";
    case NVML_ERROR_IRQ_ISSUE: return "IRQ_ISSUE";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "LIBRARY_NOT_FOUND";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "FUNCTION_NOT_FOUND";
    case NVML_ERROR_CORRUPTED_INFOROM: return "CORRUPTED_INFOROM";
    case NVML_ERROR_GPU_IS_LOST: return "GPU_IS_LOST";
    case NVML_ERROR_RESET_REQUIRED: return "RESET_REQUIRED";
    case NVML_ERROR_OPERATING_SYSTEM: return "OPERATING_SYSTEM";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "LIB_RM_VERSION_MISMATCH";
    case NVML_ERROR_IN_USE: return "IN_USE";
    case NVML_ERROR_MEMORY: return "MEMORY";
    case NVML_ERROR_NO_DATA: return "NO_DATA";
    default: return "UNKNOWN";
  }
}

Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Load(const std::string& path, CallAccounting* accounting) {
  const std::string target = path.empty() ? kDefaultLibrary : path;
  auto opened = platform::DynamicLibrary::Open({target});
  if (!opened.ok()) {
    return Error::Unavailable(
        "cannot load the NVML library {} ({}); install the NVIDIA driver, or pass "
        "--nvml-library PATH to point at libnvidia-ml.so.1",
        target, opened.error().message);
  }
  std::unique_ptr<NvmlLibrary> nvml(new NvmlLibrary(std::move(opened).value()));
  NvmlFunctions& f = nvml->fn_;
  Resolver r(*nvml->library_, accounting);
  r.Required(f.Init, {"nvmlInit_v2", "nvmlInit"});
  r.Required(f.Shutdown, {"nvmlShutdown"});
  r.Required(f.DeviceGetCount, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  r.Required(f.DeviceGetHandleByIndex, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  r.Required(f.DeviceGetName, {"nvmlDeviceGetName"});
  r.Required(f.DeviceGetUUID, {"nvmlDeviceGetUUID"});
  r.Required(f.DeviceGetClockInfo, {"nvmlDeviceGetClockInfo"});
  r.Required(f.GpmQueryDeviceSupport, {"nvmlGpmQueryDeviceSupport"});
  r.Required(f.GpmSampleAlloc, {"nvmlGpmSampleAlloc"});
  r.Required(f.GpmSampleFree, {"nvmlGpmSampleFree"});
  r.Required(f.GpmSampleGet, {"nvmlGpmSampleGet"});
  r.Required(f.GpmMetricsGet, {"nvmlGpmMetricsGet"});

  r.Optional(f.ErrorString, {"nvmlErrorString"});
  r.Optional(f.SystemGetDriverVersion, {"nvmlSystemGetDriverVersion"});
  r.Optional(f.DeviceGetPciInfo, {"nvmlDeviceGetPciInfo_v3"});
  r.Optional(f.DeviceGetArchitecture, {"nvmlDeviceGetArchitecture"});
  r.Optional(f.DeviceGetAttributes, {"nvmlDeviceGetAttributes_v2"});
  r.Optional(f.DeviceGetMaxClockInfo, {"nvmlDeviceGetMaxClockInfo"});
  r.Optional(f.DeviceGetPowerUsage, {"nvmlDeviceGetPowerUsage"});
  r.Optional(f.DeviceGetTotalEnergyConsumption, {"nvmlDeviceGetTotalEnergyConsumption"});
  // Renamed in R535; same signature and bits.
  r.Optional(f.DeviceGetClockEventReasons,
             {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  // _v1 (unversioned) has a smaller record; ofu only speaks the v2 layout.
  r.Optional(f.DeviceGetComputeRunningProcesses,
             {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
  r.Optional(f.DeviceGetMigMode, {"nvmlDeviceGetMigMode"});
  r.Optional(f.DeviceGetMaxMigDeviceCount, {"nvmlDeviceGetMaxMigDeviceCount"});
  r.Optional(f.DeviceGetMigDeviceHandleByIndex, {"nvmlDeviceGetMigDeviceHandleByIndex"});
  r.Optional(f.DeviceGetGpuInstanceId, {"nvmlDeviceGetGpuInstanceId"});
  r.Optional(f.GpmMigSampleGet, {"nvmlGpmMigSampleGet"});

  if (!r.missing().empty()) {
    return Error::Unavailable(
        "the NVML library {} does not export {}: the driver is too old for GPM (R520 or later "
        "is needed); update the driver or use --source dcgm",
        target, r.missing());
  }
  return nvml;
}

std::string NvmlLibrary::ErrorString(nvmlReturn_t code) const {
  const char* text = fn_.ErrorString != nullptr ? fn_.ErrorString(code) : nullptr;
  if (text == nullptr || *text == '\0') return fmt::format("{} ({})", NvmlReturnName(code), code);
  return fmt::format("{} ({}): {}", NvmlReturnName(code), code, text);
}

}  // namespace ofu::sources
