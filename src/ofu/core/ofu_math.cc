#include "ofu/core/ofu_math.h"

#include <algorithm>
#include <cmath>

namespace ofu {

double ComputeOfu(double tensor_active, double sm_clock_mhz, const OfuScale& scale) {
  return tensor_active * (sm_clock_mhz / scale.spec_clock_mhz) * scale.k_arch;
}

double Percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double rank = q * static_cast<double>(values.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(rank));
  const auto upper = static_cast<std::size_t>(std::ceil(rank));
  const double fraction = rank - static_cast<double>(lower);
  return values[lower] + (values[upper] - values[lower]) * fraction;
}

}  // namespace ofu
