#include "ofu/sources/source.h"

namespace ofu::sources {

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
