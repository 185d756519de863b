// Names of the clock event ("throttle") reason bits that NVML and DCGM
// field 112 report, in bit order.
//
// Thread-safety: a pure function, callable from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ofu {

// The bit NVML and DCGM set while the power limit holds the clock down
// (nvmlClocksEventReasonSwPowerCap).
inline constexpr std::uint64_t kSwPowerCapReason = 0x4;

// e.g. 0x5 -> {"gpu_idle", "sw_power_cap"}; unknown bits come out as "0x100".
std::vector<std::string> ClockEventReasonNames(std::uint64_t mask);

}  // namespace ofu
