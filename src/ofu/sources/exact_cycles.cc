#include "ofu/sources/exact_cycles.h"

#include <fmt/format.h>

namespace ofu::sources {
namespace {

bool Within(double value, double target) {
  return value >= target / kBasisTolerance && value <= target * kBasisTolerance;
}

}  // namespace

std::string_view CycleBasisName(CycleBasis basis) {
  return basis == CycleBasis::kSummedOverSms ? "summed over SMs" : "per-SM average";
}

Result<ExactCycleWindow> DeriveExactCycles(const CycleCounters& before, const CycleCounters& after, double dt_s,
                                           int sm_count, std::optional<double> reference_clock_mhz) {
  const double elapsed = after.sm_cycles_elapsed - before.sm_cycles_elapsed;
  const double tensor = after.tensor_cycles_active - before.tensor_cycles_active;
  if (!(dt_s > 0) || sm_count <= 0) {
    return Error::NoData("cannot use cycle counters: dt {} s, {} SMs", dt_s, sm_count);
  }
  if (!(elapsed > 0) || !(tensor >= 0) || tensor > elapsed) {
    return Error::NoData("cycle counters are not usable this window (elapsed +{}, tensor +{}): reset or wrapped",
                         elapsed, tensor);
  }
  if (!reference_clock_mhz || !(*reference_clock_mhz > 0)) {
    return Error::NoData("no SM clock reading to check the cycle counters against");
  }
  const double cycles_per_s = elapsed / dt_s;
  const double clock_hz = *reference_clock_mhz * 1e6;
  ExactCycleWindow window;
  window.tensor_active = tensor / elapsed;
  if (Within(cycles_per_s, clock_hz * sm_count)) {
    window.basis = CycleBasis::kSummedOverSms;
    window.sm_clock_mhz = cycles_per_s / sm_count / 1e6;
  } else if (Within(cycles_per_s, clock_hz)) {
    window.basis = CycleBasis::kPerSmAverage;
    window.sm_clock_mhz = cycles_per_s / 1e6;
  } else {
    return Error::NoData(
        "elapsed cycles advance at {:.4g}/s, which fits neither {} SMs x {:.0f} MHz nor one SM "
        "at that clock",
        cycles_per_s, sm_count, *reference_clock_mhz);
  }
  return window;
}

}  // namespace ofu::sources
