// A reduced power limit for the clock study, set and then restored.
//
// NVML's power-management setters are not in ofu's NVML table (the agent
// only reads), so this resolves its own four functions from the same
// library with platform::DynamicLibrary. Setting a limit needs root: NVML
// answers NO_PERMISSION otherwise, and the harness records the case as
// skipped with that reason instead of failing the sweep.
//
// The previous limit is restored when the PowerLimit dies, also when the
// case fails, so a sweep never leaves a GPU capped.
//
// Thread-safety: one thread.
#pragma once

#include <memory>
#include <string>

#include "ofu/core/result.h"
#include "ofu/platform/dynamic_library.h"
#include "ofu/sources/nvml/nvml_api.h"

namespace ofu::gpu {

class PowerLimit {
 public:
  // Sets `fraction` of the default limit (clamped to the GPU's allowed
  // range). Errors: kUnavailable with NVML's reason (NO_PERMISSION,
  // NOT_SUPPORTED, ...) naming the call.
  static Result<std::unique_ptr<PowerLimit>> Reduce(const std::string& nvml_library, nvmlDevice_t device,
                                                    double fraction);
  ~PowerLimit();
  PowerLimit(const PowerLimit&) = delete;
  PowerLimit& operator=(const PowerLimit&) = delete;

  double watts() const { return static_cast<double>(set_mw_) / 1000.0; }

 private:
  PowerLimit() = default;
  std::unique_ptr<platform::DynamicLibrary> library_;
  nvmlReturn_t (*set_)(nvmlDevice_t, unsigned) = nullptr;
  nvmlDevice_t device_ = nullptr;
  unsigned previous_mw_ = 0;
  unsigned set_mw_ = 0;
};

}  // namespace ofu::gpu
