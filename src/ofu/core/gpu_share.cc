#include "ofu/core/gpu_share.h"

#include <fmt/format.h>

namespace ofu {

bool IsMigInstance(const GpuIdentity& identity) {
  return !identity.mig_instance.empty() || !identity.mig_profile.empty();
}

std::optional<double> GpuShare(const GpuSpec& spec, const GpuIdentity& identity) {
  if (!IsMigInstance(identity)) return 1.0;
  const std::optional<int> sms = spec.MigSmCount(identity.mig_profile);
  if (!sms) return std::nullopt;
  return static_cast<double>(*sms) / spec.sm_count;
}

std::string WhyNoGpuShare(const GpuSpec& spec, const GpuIdentity& identity) {
  if (GpuShare(spec, identity)) return "";
  if (identity.mig_profile.empty()) {
    return "a MIG instance that names no profile (no GPU_I_PROFILE): its share of the GPU is unknown, so it is "
           "left out of the overall and job figures";
  }
  return fmt::format(
      "MIG profile {} is not listed for {} in the spec database (\"mig_profiles\" in "
      "data/gpu_specs.json): its share of the GPU is unknown, so it is left out of the overall "
      "and job figures",
      identity.mig_profile, spec.id);
}

OfuScale OfuScaleOf(const GpuSpec& spec, const GpuIdentity& identity) {
  OfuScale scale{spec.SpecClockMhz(), spec.k_arch, std::nullopt};
  if (const std::optional<double> share = GpuShare(spec, identity)) {
    scale.non_tensor = NonTensorScaleOf(spec, *share * spec.sm_count);
  }
  scale.clock_model = spec.ClockModelFor(identity.model);
  return scale;
}

}  // namespace ofu
