// The one sample type every source produces.
//
// A CounterSample is what one GPU reported for the interval that ends at
// time_s. Every field is optional: a counter the source did not deliver is
// absent, never 0, because "no tensor activity" and "no data about tensor
// activity" must stay apart.
//
// Two kinds of field (see CounterFieldInfo::is_activity):
//   activities  0..1, the fraction of the interval ending at time_s that a
//               unit was busy, averaged over the SMs: tensor_active (DCGM
//               1004, GPM 5), gr_engine_active (1001, GPM 1), ...
//   readings    a value at (or, for an oversampled clock, averaged over the
//               window ending at) time_s: SM clock in MHz (100), power in W
//               (155), energy in mJ since driver load (156), ...
// clock_event_reasons is a bitmask (DCGM 112; see clock_events.h).
//
// Adding a counter for a test or an experiment is one row:
// CounterFieldTable::Builtin().With(row) appends it. A source given the
// table (sources::RecordingOptions::fields) reads it from the dcgm-exporter
// metric the row names and keeps its values in CounterSample::added under
// the row's name; the windows average it (time-weighted for an activity, the
// mean of the readings otherwise), and the report's GPU object carries its
// mean under the row's name, null for a GPU without it.
// tests/sources/counter_field_table_test.cc follows this with test-only rows
// read from real dcgm-exporter scrapes.
//
// Thread-safety: the built-in table is immutable; the rest are plain values
// and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ofu/core/gpu_identity.h"

namespace ofu {

// Every built-in numeric counter a sample can carry, and its row's index in
// the table. The order is the order of output columns and recordings; append
// only. A built-in one is a value here, its member in CounterSample and its
// row in sample.cc's table (which names the member); GetField, SetField, the
// sources, the recordings and the replay read the table. A row added with
// CounterFieldTable::With has the next index past these, and no value here.
enum class CounterField {
  kTensorActive,       // any tensor pipe (DCGM 1004, GPM 5 ANY_TENSOR_UTIL)
  kGrEngineActive,     // graphics/compute engine (DCGM 1001, GPM 1)
  kSmActive,           // SM has a warp resident (DCGM 1002, GPM 2)
  kSmOccupancy,        // resident warps / max warps (DCGM 1003, GPM 3)
  kDramActive,         // DRAM interface busy (DCGM 1005, GPM 10)
  kFp64Active,         // FP64 pipe (DCGM 1006, GPM 11)
  kFp32Active,         // FP32 pipe (DCGM 1007, GPM 12)
  kFp16Active,         // FP16 pipe, non-tensor (DCGM 1008, GPM 13)
  kImmaActive,         // integer tensor (DCGM 1013, GPM 9)
  kHmmaActive,         // half/bf16/tf32/fp8 tensor (DCGM 1014, GPM 7)
  kDfmaActive,         // FP64 tensor DFMA (DCGM 1015, GPM 6)
  kDmmaActive,         // FP64 tensor DMMA (GPM 8; no DCGM field)
  kSmClockMhz,         // SM clock, MHz (DCGM 100)
  kMaxSmClockMhz,      // maximum SM clock, MHz (DCGM 113)
  kPowerW,             // board power, W (DCGM 155)
  kEnergyMj,           // energy since driver load, mJ (DCGM 156)
  kClockEventReasons,  // bitmask (DCGM 112)
};
inline constexpr std::size_t kBuiltinCounterFields = 17;

// The values of rows added to the counter table, by row name. Nothing is
// allocated until one is set, and an empty one is one pointer: a sample or a
// window of the built-in table carries it for 8 bytes, not a std::map's 48
// (every window pass streams the samples: docs/BENCHMARKS.md).
class AddedValues {
 public:
  using Map = std::map<std::string, double, std::less<>>;

  AddedValues() = default;
  AddedValues(const AddedValues& other) : map_(other.map_ ? std::make_unique<Map>(*other.map_) : nullptr) {}
  AddedValues& operator=(const AddedValues& other) {
    if (this != &other) map_ = other.map_ ? std::make_unique<Map>(*other.map_) : nullptr;
    return *this;
  }
  AddedValues(AddedValues&&) noexcept = default;
  AddedValues& operator=(AddedValues&&) noexcept = default;
  ~AddedValues() = default;

  // The value of `name`; absent when it has none.
  std::optional<double> Get(std::string_view name) const;
  // Sets it, or clears it with nullopt.
  void Set(std::string_view name, std::optional<double> value);
  bool empty() const { return !map_ || map_->empty(); }
  // Every value, in name order.
  const Map& all() const;

 private:
  std::unique_ptr<Map> map_;
};

struct CounterSample {
  double time_s = 0;
  std::optional<double> tensor_active;
  std::optional<double> gr_engine_active;
  std::optional<double> sm_active;
  std::optional<double> sm_occupancy;
  std::optional<double> dram_active;
  std::optional<double> fp64_active;
  std::optional<double> fp32_active;
  std::optional<double> fp16_active;
  std::optional<double> imma_active;
  std::optional<double> hmma_active;
  std::optional<double> dfma_active;
  std::optional<double> dmma_active;
  std::optional<double> sm_clock_mhz;
  std::optional<double> max_sm_clock_mhz;
  std::optional<double> power_w;
  std::optional<double> energy_mj;
  std::optional<std::uint64_t> clock_event_reasons;
  // The values of rows added to the counter table, by row name; a row
  // without a value here is absent. Empty for the built-in table.
  AddedValues added;
};

struct CounterFieldInfo {
  CounterField field;
  std::string_view name;         // snake_case, used in JSON and messages' keys
  std::string_view description;  // for people: "tensor activity"
  bool is_activity;              // 0..1 interval mean (else a reading)
  int dcgm_field_id;             // 0 where DCGM has none
  int gpm_metric_id;             // NVML GPM metric id; 0 where GPM has none
  // Where a sample holds it; nullptr for clock_event_reasons, the one
  // integer field (GetField and SetField convert it), and for an added row
  // (CounterSample::added[name]).
  std::optional<double> CounterSample::*member = nullptr;
  // An added row: the dcgm-exporter metric that carries it
  // ("DCGM_FI_DEV_GPU_TEMP"), read as it is for a reading and as a 0..1
  // ratio for an activity. Empty for the built-in rows, whose metrics
  // (every spelling of them) sources/dcgm_exporter_names.h lists.
  std::string_view exporter_name = {};

  // Its value in `sample`; absent when the sample lacks it.
  std::optional<double> Get(const CounterSample& sample) const;
  // Sets it, or clears it with nullopt (clock_event_reasons as SetField).
  void Set(CounterSample& sample, std::optional<double> value) const;
};

// The rows: the built-in ones, or those and rows a test adds.
class CounterFieldTable {
 public:
  // The counters of this ofu, in CounterField order.
  static const CounterFieldTable& Builtin();

  // A copy with `row` appended as field size() (its `field` is set here).
  // For tests and experiments: the row's member must be nullptr, its name a
  // new one and its exporter_name not empty.
  CounterFieldTable With(CounterFieldInfo row) const;

  std::span<const CounterFieldInfo> rows() const { return rows_; }
  // The rows With added, in order.
  std::span<const CounterFieldInfo> added() const { return std::span(rows_).subspan(kBuiltinCounterFields); }
  const CounterFieldInfo& operator[](CounterField field) const { return rows_[static_cast<std::size_t>(field)]; }
  // The added row read from the dcgm-exporter metric `name`; nullptr when none is.
  const CounterFieldInfo* AddedForMetric(std::string_view name) const;

 private:
  explicit CounterFieldTable(std::vector<CounterFieldInfo> rows) : rows_(std::move(rows)) {}
  std::vector<CounterFieldInfo> rows_;
};

// The built-in fields, in CounterField order.
std::span<const CounterFieldInfo> AllCounterFields();
const CounterFieldInfo& InfoFor(CounterField field);

// Generic access by built-in field, for code that walks all fields
// (readers, writers). clock_event_reasons converts to and from double exactly for
// every mask below 2^53; a negative or fractional value sets nothing.
std::optional<double> GetField(const CounterSample& sample, CounterField field);
void SetField(CounterSample& sample, CounterField field, std::optional<double> value);

}  // namespace ofu
