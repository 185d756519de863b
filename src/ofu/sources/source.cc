#include "ofu/sources/source.h"

#include "ofu/core/windows.h"

namespace ofu::sources {

Status CheckSamplingSettings(double window_s, int clock_readings, std::string_view window_name,
                             std::string_view readings_name) {
  if (!(window_s >= kMinWindowS && window_s <= kMaxSampledWindowS)) {
    return Error::InvalidArgument("{} {} s is not in {}..{} s", window_name, window_s, kMinWindowS, kMaxSampledWindowS);
  }
  if (clock_readings < 0 || clock_readings > kMaxClockReadings) {
    return Error::InvalidArgument("{} {} is not in 1..{} (or 0: ten readings a second)", readings_name, clock_readings,
                                  kMaxClockReadings);
  }
  return OkStatus();
}

std::string_view HealthName(GpuHealth health) {
  switch (health) {
    case GpuHealth::kOk: return "ok";
    case GpuHealth::kLost: return "lost";
    case GpuHealth::kNoPermission: return "no-permission";
    case GpuHealth::kNotSupported: return "not-supported";
    case GpuHealth::kUnavailable: return "unavailable";
  }
  return "unknown";
}

std::string_view ClockBasisName(ClockBasis basis) {
  switch (basis) {
    case ClockBasis::kNone: return "none";
    case ClockBasis::kPointReading: return "point";
    case ClockBasis::kOversampled: return "oversampled";
    case ClockBasis::kExactCycles: return "exact-cycles";
  }
  return "unknown";
}

}  // namespace ofu::sources
