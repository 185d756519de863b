#include "ofu/core/clock_events.h"

#include <array>
#include <string_view>

#include <fmt/format.h>

namespace ofu {

std::vector<std::string> ClockEventReasonNames(std::uint64_t mask) {
  static constexpr std::array<std::string_view, 8> kNames = {"gpu_idle",     "applications_clocks_setting",
                                                             "sw_power_cap", "hw_slowdown",
                                                             "sync_boost",   "sw_thermal",
                                                             "hw_thermal",   "hw_power_brake"};
  std::vector<std::string> names;
  for (unsigned bit = 0; bit < 64; ++bit) {
    const std::uint64_t flag = std::uint64_t{1} << bit;
    if ((mask & flag) == 0) continue;
    names.push_back(bit < kNames.size() ? std::string(kNames[bit]) : fmt::format("{:#x}", flag));
  }
  return names;
}

}  // namespace ofu
