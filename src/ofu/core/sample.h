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

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
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
// row in kBuiltinCounterRows below (which names the member, its dcgm-exporter
// spellings and whether the agent reads it); the count, GetField, SetField,
// the sources, the recordings, the replay, dcgm-exporter's names
// (sources/dcgm_exporter_names.h) and the agent's counters
// (agent::AgentCounterFields) read the rows. A row added with
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
  // The dcgm-exporter metric that carries it ("DCGM_FI_DEV_SM_CLOCK"), read
  // as it is for a reading and as a 0..1 ratio for an activity, and the name
  // ofu writes it under in recordings. Empty for a built-in row dcgm-exporter
  // has no metric for (DMMA: NVML GPM only); never for an added row.
  std::string_view exporter_name = {};
  // dcgm-exporter's other spellings of it, read as exporter_name is: DCGM
  // 4.6's renames (DCGM_FI_PROF_TENSOR_UTIL_RATIO) and dcgm-exporter 1.x's
  // lower-case names (dcgm_sm_clock). Empty entries are unused.
  std::array<std::string_view, 2> exporter_aliases = {};
  // Whether the agent asks its source for it (agent::AgentCounterFields):
  // only the counters its outputs (/metrics, the store) carry, since every
  // driver call costs CPU on the node.
  bool agent_reads = false;

  // Its value in `sample`; absent when the sample lacks it.
  std::optional<double> Get(const CounterSample& sample) const;
  // Sets it, or clears it with nullopt (clock_event_reasons as SetField).
  void Set(CounterSample& sample, std::optional<double> value) const;
};

// The built-in rows, in CounterField order (sample.cc checks the order).
// Each row: field, name, description, is_activity, DCGM field id, GPM metric
// id, member, dcgm-exporter name, its other spellings, whether the agent
// reads it. A new built-in counter is its CounterField value, its member of
// CounterSample and its row here; the count follows. Every row spells out
// both spellings ("" for none): GCC 12 cannot evaluate the rows in a
// constant expression where an element is left to its default.
inline constexpr CounterFieldInfo kBuiltinCounterRows[] = {
    {CounterField::kTensorActive,
     "tensor_active",
     "tensor activity",
     true,
     1004,
     5,
     &CounterSample::tensor_active,
     "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
     {"DCGM_FI_PROF_TENSOR_UTIL_RATIO", "dcgm_fi_prof_pipe_tensor_active"},
     true},
    {CounterField::kGrEngineActive,
     "gr_engine_active",
     "graphics engine activity",
     true,
     1001,
     1,
     &CounterSample::gr_engine_active,
     "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
     {"DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", "dcgm_fi_prof_gr_engine_active"},
     true},
    {CounterField::kSmActive,
     "sm_active",
     "SM activity",
     true,
     1002,
     2,
     &CounterSample::sm_active,
     "DCGM_FI_PROF_SM_ACTIVE",
     {"dcgm_fi_prof_sm_active", ""},
     false},
    {CounterField::kSmOccupancy,
     "sm_occupancy",
     "SM occupancy",
     true,
     1003,
     3,
     &CounterSample::sm_occupancy,
     "DCGM_FI_PROF_SM_OCCUPANCY",
     {"dcgm_fi_prof_sm_occupancy", ""},
     false},
    {CounterField::kDramActive,
     "dram_active",
     "DRAM activity",
     true,
     1005,
     10,
     &CounterSample::dram_active,
     "DCGM_FI_PROF_DRAM_ACTIVE",
     {"dcgm_fi_prof_dram_active", ""},
     false},
    {CounterField::kFp64Active,
     "fp64_active",
     "FP64 pipe activity",
     true,
     1006,
     11,
     &CounterSample::fp64_active,
     "DCGM_FI_PROF_PIPE_FP64_ACTIVE",
     {"", ""},
     true},
    {CounterField::kFp32Active,
     "fp32_active",
     "FP32 pipe activity",
     true,
     1007,
     12,
     &CounterSample::fp32_active,
     "DCGM_FI_PROF_PIPE_FP32_ACTIVE",
     {"", ""},
     true},
    {CounterField::kFp16Active,
     "fp16_active",
     "FP16 pipe activity",
     true,
     1008,
     13,
     &CounterSample::fp16_active,
     "DCGM_FI_PROF_PIPE_FP16_ACTIVE",
     {"", ""},
     true},
    {CounterField::kImmaActive,
     "imma_active",
     "IMMA tensor activity",
     true,
     1013,
     9,
     &CounterSample::imma_active,
     "DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE",
     {"", ""},
     true},
    {CounterField::kHmmaActive,
     "hmma_active",
     "HMMA tensor activity",
     true,
     1014,
     7,
     &CounterSample::hmma_active,
     "DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE",
     {"", ""},
     true},
    {CounterField::kDfmaActive,
     "dfma_active",
     "DFMA tensor activity",
     true,
     1015,
     6,
     &CounterSample::dfma_active,
     "DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE",
     {"", ""},
     true},
    {CounterField::kDmmaActive,
     "dmma_active",
     "DMMA tensor activity",
     true,
     0,
     8,
     &CounterSample::dmma_active,
     "",
     {"", ""},
     false},
    {CounterField::kSmClockMhz,
     "sm_clock_mhz",
     "SM clock",
     false,
     100,
     0,
     &CounterSample::sm_clock_mhz,
     "DCGM_FI_DEV_SM_CLOCK",
     {"dcgm_sm_clock", ""},
     true},
    {CounterField::kMaxSmClockMhz,
     "max_sm_clock_mhz",
     "maximum SM clock",
     false,
     113,
     0,
     &CounterSample::max_sm_clock_mhz,
     "DCGM_FI_DEV_MAX_SM_CLOCK",
     {"", ""},
     true},
    {CounterField::kPowerW,
     "power_w",
     "power",
     false,
     155,
     0,
     &CounterSample::power_w,
     "DCGM_FI_DEV_POWER_USAGE",
     {"DCGM_FI_DEV_BOARD_POWER_WATTS", "dcgm_power_usage"},
     false},
    {CounterField::kEnergyMj,
     "energy_mj",
     "energy",
     false,
     156,
     0,
     &CounterSample::energy_mj,
     "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
     {"dcgm_total_energy_consumption", ""},
     false},
    // The one integer field: no member (GetField and SetField convert it).
    {CounterField::kClockEventReasons,
     "clock_event_reasons",
     "clock event reasons",
     false,
     112,
     0,
     nullptr,
     "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
     {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", ""},
     true},
};

// How many built-in counters there are: the rows'.
inline constexpr std::size_t kBuiltinCounterFields = std::size(kBuiltinCounterRows);

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
