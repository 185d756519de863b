#include "ofu/core/sample.h"

#include <array>
#include <cassert>
#include <cmath>

namespace ofu {
namespace {

using F = CounterField;
using S = CounterSample;

constexpr std::array<CounterFieldInfo, kBuiltinCounterFields> kFields = {{
    {F::kTensorActive, "tensor_active", "tensor activity", true, 1004, 5, &S::tensor_active},
    {F::kGrEngineActive, "gr_engine_active", "graphics engine activity", true, 1001, 1, &S::gr_engine_active},
    {F::kSmActive, "sm_active", "SM activity", true, 1002, 2, &S::sm_active},
    {F::kSmOccupancy, "sm_occupancy", "SM occupancy", true, 1003, 3, &S::sm_occupancy},
    {F::kDramActive, "dram_active", "DRAM activity", true, 1005, 10, &S::dram_active},
    {F::kFp64Active, "fp64_active", "FP64 pipe activity", true, 1006, 11, &S::fp64_active},
    {F::kFp32Active, "fp32_active", "FP32 pipe activity", true, 1007, 12, &S::fp32_active},
    {F::kFp16Active, "fp16_active", "FP16 pipe activity", true, 1008, 13, &S::fp16_active},
    {F::kImmaActive, "imma_active", "IMMA tensor activity", true, 1013, 9, &S::imma_active},
    {F::kHmmaActive, "hmma_active", "HMMA tensor activity", true, 1014, 7, &S::hmma_active},
    {F::kDfmaActive, "dfma_active", "DFMA tensor activity", true, 1015, 6, &S::dfma_active},
    {F::kDmmaActive, "dmma_active", "DMMA tensor activity", true, 0, 8, &S::dmma_active},
    {F::kSmClockMhz, "sm_clock_mhz", "SM clock", false, 100, 0, &S::sm_clock_mhz},
    {F::kMaxSmClockMhz, "max_sm_clock_mhz", "maximum SM clock", false, 113, 0, &S::max_sm_clock_mhz},
    {F::kPowerW, "power_w", "power", false, 155, 0, &S::power_w},
    {F::kEnergyMj, "energy_mj", "energy", false, 156, 0, &S::energy_mj},
    {F::kClockEventReasons, "clock_event_reasons", "clock event reasons", false, 112, 0, nullptr},
}};

// 2^53: every integer below it is exact in a double.
constexpr double kExactIntegerLimit = 9007199254740992.0;

}  // namespace

std::span<const CounterFieldInfo> AllCounterFields() { return kFields; }

const CounterFieldTable& CounterFieldTable::Builtin() {
  static const CounterFieldTable table({kFields.begin(), kFields.end()});
  return table;
}

CounterFieldTable CounterFieldTable::With(CounterFieldInfo row) const {
  assert(row.member == nullptr && !row.exporter_name.empty());
  for ([[maybe_unused]] const CounterFieldInfo& old : rows_) assert(old.name != row.name);
  row.field = static_cast<CounterField>(rows_.size());
  std::vector<CounterFieldInfo> rows = rows_;
  rows.push_back(row);
  return CounterFieldTable(std::move(rows));
}

const CounterFieldInfo* CounterFieldTable::AddedForMetric(std::string_view name) const {
  for (const CounterFieldInfo& row : added()) {
    if (row.exporter_name == name) return &row;
  }
  return nullptr;
}

std::optional<double> AddedValues::Get(std::string_view name) const {
  if (!map_) return std::nullopt;
  const auto it = map_->find(name);
  if (it == map_->end()) return std::nullopt;
  return it->second;
}

void AddedValues::Set(std::string_view name, std::optional<double> value) {
  if (value) {
    if (!map_) map_ = std::make_unique<Map>();
    map_->insert_or_assign(std::string(name), *value);
  } else if (map_) {
    if (const auto it = map_->find(name); it != map_->end()) map_->erase(it);
  }
}

const AddedValues::Map& AddedValues::all() const {
  static const Map kNone;
  return map_ ? *map_ : kNone;
}

std::optional<double> CounterFieldInfo::Get(const CounterSample& sample) const {
  if (static_cast<std::size_t>(field) < kBuiltinCounterFields) return GetField(sample, field);
  return sample.added.Get(name);
}

void CounterFieldInfo::Set(CounterSample& sample, std::optional<double> value) const {
  if (static_cast<std::size_t>(field) < kBuiltinCounterFields) {
    SetField(sample, field, value);
  } else {
    sample.added.Set(name, value);
  }
}

const CounterFieldInfo& InfoFor(CounterField field) { return kFields[static_cast<std::size_t>(field)]; }

std::optional<double> GetField(const CounterSample& sample, CounterField field) {
  if (field == F::kClockEventReasons) {
    if (!sample.clock_event_reasons) return std::nullopt;
    return static_cast<double>(*sample.clock_event_reasons);
  }
  return sample.*InfoFor(field).member;
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
  sample.*InfoFor(field).member = value;
}

}  // namespace ofu
