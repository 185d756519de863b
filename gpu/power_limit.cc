#include "power_limit.h"

#include <algorithm>

#include <fmt/format.h>

#include "ofu/sources/nvml/nvml_library.h"

namespace ofu::gpu {

Result<std::unique_ptr<PowerLimit>> PowerLimit::Reduce(const std::string& nvml_library, nvmlDevice_t device,
                                                       double fraction) {
  OFU_ASSIGN_OR_RETURN(auto library,
                       platform::DynamicLibrary::Open({nvml_library.empty() ? "libnvidia-ml.so.1" : nvml_library}));
  std::unique_ptr<PowerLimit> limit(new PowerLimit());
  limit->library_ = std::move(library);
  limit->device_ = device;
  const auto& lib = *limit->library_;
  auto get = lib.Function<nvmlReturn_t (*)(nvmlDevice_t, unsigned*)>({"nvmlDeviceGetPowerManagementLimit"});
  auto get_default =
      lib.Function<nvmlReturn_t (*)(nvmlDevice_t, unsigned*)>({"nvmlDeviceGetPowerManagementDefaultLimit"});
  auto constraints = lib.Function<nvmlReturn_t (*)(nvmlDevice_t, unsigned*, unsigned*)>(
      {"nvmlDeviceGetPowerManagementLimitConstraints"});
  limit->set_ = lib.Function<nvmlReturn_t (*)(nvmlDevice_t, unsigned)>({"nvmlDeviceSetPowerManagementLimit"});
  if (get == nullptr || get_default == nullptr || constraints == nullptr || limit->set_ == nullptr) {
    return Error::Unavailable("{} lacks the power-management functions", lib.path());
  }
  const auto fail = [](std::string_view call, nvmlReturn_t got) {
    return Error::Unavailable("{}: NVML {} ({})", call, sources::NvmlReturnName(got), got);
  };
  unsigned default_mw = 0, min_mw = 0, max_mw = 0;
  if (nvmlReturn_t got = get(device, &limit->previous_mw_); got != NVML_SUCCESS)
    return fail("nvmlDeviceGetPowerManagementLimit", got);
  if (nvmlReturn_t got = get_default(device, &default_mw); got != NVML_SUCCESS) {
    return fail("nvmlDeviceGetPowerManagementDefaultLimit", got);
  }
  if (nvmlReturn_t got = constraints(device, &min_mw, &max_mw); got != NVML_SUCCESS) {
    return fail("nvmlDeviceGetPowerManagementLimitConstraints", got);
  }
  const auto wanted = static_cast<unsigned>(fraction * default_mw);
  limit->set_mw_ = std::clamp(wanted, min_mw, std::max(min_mw, max_mw));
  if (nvmlReturn_t got = limit->set_(device, limit->set_mw_); got != NVML_SUCCESS) {
    limit->set_ = nullptr;  // nothing to restore
    return fail("nvmlDeviceSetPowerManagementLimit", got);
  }
  return limit;
}

PowerLimit::~PowerLimit() {
  if (set_ != nullptr) set_(device_, previous_mw_);
}

}  // namespace ofu::gpu
