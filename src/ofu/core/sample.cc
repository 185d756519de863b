#include "ofu/core/sample.h"

#include <array>
#include <cmath>

namespace ofu {
namespace {

using F = CounterField;

constexpr std::array<CounterFieldInfo, 17> kFields = {{
    {F::kTensorActive, "tensor_active", "tensor activity", true, 1004, 5},
    {F::kGrEngineActive, "gr_engine_active", "graphics engine activity", true, 1001, 1},
    {F::kSmActive, "sm_active", "SM activity", true, 1002, 2},
    {F::kSmOccupancy, "sm_occupancy", "SM occupancy", true, 1003, 3},
    {F::kDramActive, "dram_active", "DRAM activity", true, 1005, 10},
    {F::kFp64Active, "fp64_active", "FP64 pipe activity", true, 1006, 11},
    {F::kFp32Active, "fp32_active", "FP32 pipe activity", true, 1007, 12},
    {F::kFp16Active, "fp16_active", "FP16 pipe activity", true, 1008, 13},
    {F::kImmaActive, "imma_active", "IMMA tensor activity", true, 1013, 9},
    {F::kHmmaActive, "hmma_active", "HMMA tensor activity", true, 1014, 7},
    {F::kDfmaActive, "dfma_active", "DFMA tensor activity", true, 1015, 6},
    {F::kDmmaActive, "dmma_active", "DMMA tensor activity", true, 0, 8},
    {F::kSmClockMhz, "sm_clock_mhz", "SM clock", false, 100, 0},
    {F::kMaxSmClockMhz, "max_sm_clock_mhz", "maximum SM clock", false, 113, 0},
    {F::kPowerW, "power_w", "power", false, 155, 0},
    {F::kEnergyMj, "energy_mj", "energy", false, 156, 0},
    {F::kClockEventReasons, "clock_event_reasons", "clock event reasons", false, 112, 0},
}};

// 2^53: every integer below it is exact in a double.
constexpr double kExactIntegerLimit = 9007199254740992.0;

}  // namespace

std::optional<double> CounterSample::*FieldMember(CounterField field) {
  switch (field) {
    case F::kTensorActive: return &CounterSample::tensor_active;
    case F::kGrEngineActive: return &CounterSample::gr_engine_active;
    case F::kSmActive: return &CounterSample::sm_active;
    case F::kSmOccupancy: return &CounterSample::sm_occupancy;
    case F::kDramActive: return &CounterSample::dram_active;
    case F::kFp64Active: return &CounterSample::fp64_active;
    case F::kFp32Active: return &CounterSample::fp32_active;
    case F::kFp16Active: return &CounterSample::fp16_active;
    case F::kImmaActive: return &CounterSample::imma_active;
    case F::kHmmaActive: return &CounterSample::hmma_active;
    case F::kDfmaActive: return &CounterSample::dfma_active;
    case F::kDmmaActive: return &CounterSample::dmma_active;
    case F::kSmClockMhz: return &CounterSample::sm_clock_mhz;
    case F::kMaxSmClockMhz: return &CounterSample::max_sm_clock_mhz;
    case F::kPowerW: return &CounterSample::power_w;
    case F::kEnergyMj: return &CounterSample::energy_mj;
    case F::kClockEventReasons: return nullptr;
  }
  return nullptr;
}

std::span<const CounterFieldInfo> AllCounterFields() { return kFields; }

const CounterFieldInfo& InfoFor(CounterField field) { return kFields[static_cast<std::size_t>(field)]; }

std::optional<double> GetField(const CounterSample& sample, CounterField field) {
  if (field == F::kClockEventReasons) {
    if (!sample.clock_event_reasons) return std::nullopt;
    return static_cast<double>(*sample.clock_event_reasons);
  }
  return sample.*FieldMember(field);
}

void SetField(CounterSample& sample, CounterField field, std::optional<double> value) {
  if (field == F::kClockEventReasons) {
    if (!value) {
      sample.clock_event_reasons.reset();
    } else if (*value >= 0 && *value < kExactIntegerLimit && std::floor(*value) == *value) {
      sample.clock_event_reasons = static_cast<std::uint64_t>(*value);
    }
    return;
  }
  sample.*FieldMember(field) = value;
}

}  // namespace ofu
