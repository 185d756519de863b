#include "ofu/core/clock_model.h"

#include <algorithm>
#include <iterator>

#include "ofu/core/clock_events.h"

namespace ofu {
namespace {

// The mean clock over a sample whose tensor cycles (share A of all cycles)
// ran at f / r and whose other cycles ran at f.
double BurstClock(double reported_mhz, double tensor_active, double ratio) {
  return reported_mhz / ((1 - tensor_active) + tensor_active * ratio);
}

}  // namespace

namespace {

// Every source, best first, with its names: the one table the functions below read.
struct ClockSourceNames {
  ClockSource source;
  std::string_view name;
  std::string_view short_name;
};
constexpr ClockSourceNames kClockSources[] = {
    {ClockSource::kExactCycles, "exact-cycles", "exact"},
    {ClockSource::kMeasuredModel, "measured-model", "model"},
    {ClockSource::kReported, "reported", "reported"},
};

const ClockSourceNames& NamesOf(ClockSource source) {
  for (const ClockSourceNames& row : kClockSources) {
    if (row.source == source) return row;
  }
  return kClockSources[std::size(kClockSources) - 1];  // not a valid enum value: the reading as it is
}

}  // namespace

std::string_view ClockSourceName(ClockSource source) { return NamesOf(source).name; }

std::string_view ClockSourceShortName(ClockSource source) { return NamesOf(source).short_name; }

std::optional<ClockSource> ClockSourceOfName(std::string_view name) {
  for (const ClockSourceNames& row : kClockSources) {
    if (row.name == name) return row.source;
  }
  return std::nullopt;
}

std::string ClockSourcesName(std::uint8_t sources, std::string_view (*name)(ClockSource)) {
  std::string out;
  for (const ClockSourceNames& row : kClockSources) {
    if ((sources & static_cast<std::uint8_t>(row.source)) == 0) continue;
    if (!out.empty()) out += '+';
    out += name(row.source);
  }
  return out;
}

RunClock EstimateRunClock(const ClockModel& model, double tensor_active, double reported_mhz,
                          std::optional<std::uint64_t> reasons) {
  const double a = std::clamp(tensor_active, 0.0, 1.0);
  if (a < model.idle_tensor_below) return RunClock{reported_mhz, reported_mhz, reported_mhz};

  // The burst estimate: one ratio where the reasons tell the power state,
  // the mean of both (and both as the range) where they do not.
  double burst = 0, burst_low = 0, burst_high = 0;
  if (reasons) {
    const bool capped = (*reasons & kSwPowerCapReason) != 0;
    burst = BurstClock(reported_mhz, a, capped ? model.burst_ratio_at_power_cap : model.burst_ratio_below_power_cap);
    burst_low = burst_high = burst;
  } else {
    const double at_cap = BurstClock(reported_mhz, a, model.burst_ratio_at_power_cap);
    const double below_cap = BurstClock(reported_mhz, a, model.burst_ratio_below_power_cap);
    burst = (at_cap + below_cap) / 2;
    burst_low = std::min(at_cap, below_cap);
    burst_high = std::max(at_cap, below_cap);
  }
  const double steady = reported_mhz / model.steady_ratio;

  if (a <= model.burst_tensor_at_most) return RunClock{burst, burst_low, burst_high};
  if (a >= model.steady_tensor_at_least) return RunClock{steady, steady, steady};
  // Between the measured states: neither can be ruled out.
  const double x = (a - model.burst_tensor_at_most) / (model.steady_tensor_at_least - model.burst_tensor_at_most);
  return RunClock{burst + (steady - burst) * x, std::min(burst_low, steady), std::max(burst_high, steady)};
}

}  // namespace ofu
