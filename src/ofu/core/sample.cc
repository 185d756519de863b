#include "ofu/core/sample.h"

#include <array>
#include <cassert>
#include <cmath>

namespace ofu {
namespace {

using F = CounterField;

// Row i is CounterField i: the enum indexes the rows.
constexpr bool RowsInFieldOrder() {
  for (std::size_t i = 0; i < kBuiltinCounterFields; ++i) {
    if (static_cast<std::size_t>(kBuiltinCounterRows[i].field) != i) return false;
  }
  return true;
}
static_assert(RowsInFieldOrder(), "kBuiltinCounterRows must list the CounterField values in order");

// 2^53: every integer below it is exact in a double.
constexpr double kExactIntegerLimit = 9007199254740992.0;

}  // namespace

std::span<const CounterFieldInfo> AllCounterFields() { return kBuiltinCounterRows; }

const CounterFieldTable& CounterFieldTable::Builtin() {
  static const CounterFieldTable table({std::begin(kBuiltinCounterRows), std::end(kBuiltinCounterRows)});
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

const CounterFieldInfo& InfoFor(CounterField field) { return kBuiltinCounterRows[static_cast<std::size_t>(field)]; }

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
