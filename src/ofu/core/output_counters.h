// The output counters: what one GPU window adds to the cumulative counters
// that every output keeps, written once. Each row of the table says a
// counter's name in the store, in the exposition and in the report, its
// help, its unit, how it is summed and where its figure lives in a window.
// The exposition (sinks/metrics_state), the store's schema, binders and
// upgrades (sinks/history_*), the rollup sum, both Prometheus readers and the
// report's figures loop over the table; none of them names a counter again.
// Adding a counter is one row here plus the source's mapping of its input
// (core/sample.h); docs/ARCHITECTURE.md has the recipe, and
// tests/sinks/output_counter_table_test.cc follows it with a test-only row.
//
// Units: seconds for the activity counters (activity x window seconds),
// TFLOP for the non-tensor bound; activities and OFU are ratios in 0..1 (OFU
// may pass 1).
//
// Valid windows. A window is valid when it has an OFU and tensor activity.
// core/windows.h gives a window an OFU only when it has tensor activity, a
// clock reading and a known model, so in practice "has an OFU" is enough;
// a window built by hand with an OFU but no tensor activity is treated as
// invalid, never as 0 tensor activity measured. Only a valid window advances
// the counters, and it advances them together, each by its figure per second
// times the window's seconds:
//   observed_s        1 (the window's seconds)
//   utilized_s        OFU
//   tensor_active_s   tensor activity
//   busy_s            1 when the window was busy, else 0
//   busy_utilized_s   OFU when the window was busy, else 0
// An invalid window adds 0 to each of these five: 0 observed seconds is a
// fact, not a missing value, and it keeps every ratio of sums (utilized /
// observed) from being diluted or inflated by windows without data.
//
// Absent, not 0. Every other counter (the tensor pipe kinds, the CUDA-core
// pipes, the non-tensor bound of core/non_tensor.h) is absent when the source
// did not deliver its figure in the window, or the window is invalid. The
// outputs keep "absent" each in their own way: the exposition has no series
// until the first window that has the figure; the store writes NULL (and
// NULL + x = x when it sums rows); a reader gives the row no value.
//
// Thread-safety: the built-in table is immutable; the rest are plain values.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/windows.h"

namespace ofu {

// Activity (0..1) of each kind of tensor pipe over the window, where the
// source has that counter (DCGM 1013-1015, GPM 6/7/9); absent otherwise.
// HMMA covers fp16, bf16, tf32 and fp8, IMMA integer, DFMA fp64: their shares
// show precision shifts between those families (not bf16 <-> fp8).
struct TensorPipes {
  std::optional<double> hmma;
  std::optional<double> imma;
  std::optional<double> dfma;
};

// What a counter gains per second of a valid window: the window's figure
// (an activity, the OFU, TFLOP/s); absent when the window lacks it.
using FigurePerSecond = std::optional<double> (*)(const OfuWindow& window, const TensorPipes& pipes);
// The other way: puts a figure read back from a sum (sum / observed seconds)
// where it lives in a window, so that a stored row becomes windows again.
using PutFigure = void (*)(OfuWindow& window, TensorPipes& pipes, double per_second);

// How a counter sums. Every counter is a plain sum of windows; what differs
// is what an unmeasured window is.
enum class Presence {
  kAlways,        // 0 when not advanced; NOT NULL in the store; exported from a GPU's first window
  kWhenMeasured,  // absent until a window has the figure; NULL in the store
};

struct OutputCounter {
  std::string_view column;  // the store's column and the row's key: "fp32_active_s"
  std::string_view metric;  // the exposition's family, without "_total": "ofu_fp32_active_seconds"
  std::string_view help;    // the exposition's HELP text
  std::string_view unit;    // of the stored value: "s", "TFLOP"
  double metric_scale = 1;  // exposition value = stored value x metric_scale (TFLOP -> FLOP: 1e12)
  Presence presence = Presence::kWhenMeasured;
  FigurePerSecond per_second = nullptr;
  PutFigure put = nullptr;  // nullptr for the five kAlways: the store's row makes OFU and busy of them itself

  // The name of its samples in the exposition and in Prometheus: a counter's
  // family name with "_total" (formats/exposition.h).
  std::string sample_name() const { return std::string(metric) + "_total"; }
};

// Room for the built-in counters and a few more; CounterValues is a fixed
// array so that a stored window costs no allocation.
inline constexpr std::size_t kMaxOutputCounters = 16;

// The built-in counters' places in the table (and in CounterValues), in the
// order the exposition writes them.
enum OutputCounterId : std::uint8_t {
  kCounterUtilized,
  kCounterObserved,
  kCounterBusy,
  kCounterBusyUtilized,
  kCounterTensorActive,
  kCounterHmmaActive,
  kCounterImmaActive,
  kCounterDfmaActive,
  kCounterFp64Active,
  kCounterFp32Active,
  kCounterFp16Active,
  kCounterNonTensorTflop,
  kCounterNonTensorPeak,
  kBuiltinOutputCounters,  // how many
};

// The counter that integrates a CUDA-core pipe's activity (fp64/fp32/fp16
// are consecutive, in CudaCorePipe order).
constexpr OutputCounterId PipeActiveCounter(CudaCorePipe pipe) {
  return static_cast<OutputCounterId>(kCounterFp64Active + IndexOf(pipe));
}

// The table: the built-in rows, or those and rows a test adds.
class OutputCounterTable {
 public:
  // The rows of this ofu.
  static const OutputCounterTable& Builtin();

  // A copy with `row` appended (its id is the old size()). For tests and
  // experiments; at most kMaxOutputCounters rows, and an added row is
  // kWhenMeasured (the five kAlways are the built-in ones).
  OutputCounterTable With(const OutputCounter& row) const;

  std::span<const OutputCounter> rows() const { return rows_; }
  std::size_t size() const { return rows_.size(); }
  const OutputCounter& operator[](std::size_t id) const { return rows_[id]; }
  // Bit masks by id, made once with the table, for the loops that run per
  // stored row: the kAlways rows (NOT NULL columns, read without asking
  // their type) and the rows that have a place in a window (`put`).
  std::uint32_t always() const { return always_; }
  std::uint32_t placed() const { return placed_; }

 private:
  explicit OutputCounterTable(std::vector<OutputCounter> rows) : rows_(std::move(rows)) {
    for (std::size_t id = 0; id < rows_.size(); ++id) {
      if (rows_[id].presence == Presence::kAlways) always_ |= 1u << id;
      if (rows_[id].put != nullptr) placed_ |= 1u << id;
    }
  }
  std::vector<OutputCounter> rows_;
  std::uint32_t always_ = 0;
  std::uint32_t placed_ = 0;
};

// One window's counter increments, or a sum of them, by table id. The five
// kAlways counters read 0 until set; the others are absent until set.
class CounterValues {
 public:
  // const: a copy, so that `counters[id] = x` and `.reset()` do not compile (use Set).
  const std::optional<double> operator[](std::size_t id) const {
    if (id < kBuiltinAlways || (present_ >> id & 1u) != 0) return values_[id];
    return std::nullopt;
  }
  bool has(std::size_t id) const { return operator[](id).has_value(); }
  // A bit per id of the kWhenMeasured counters that are present.
  std::uint32_t measured() const { return present_; }
  double value_or_0(std::size_t id) const { return values_[id]; }

  // Sets or clears (nullopt) one counter; a kAlways counter cleared reads 0.
  // Inline: the store's reader calls it for every counter of every row.
  void Set(std::size_t id, std::optional<double> value) {
    values_[id] = value.value_or(0);
    if (id < kBuiltinAlways) return;
    if (value) {
      present_ |= 1u << id;
    } else {
      present_ &= ~(1u << id);
    }
  }
  // Adds to one counter: an absent part adds nothing, and an absent total
  // plus x is x.
  void Add(std::size_t id, std::optional<double> part);
  // Adds every counter of `part` by that rule.
  void Add(const CounterValues& part);

  // The five that are never absent, by name.
  double utilized_s() const { return values_[kCounterUtilized]; }
  double observed_s() const { return values_[kCounterObserved]; }
  double busy_s() const { return values_[kCounterBusy]; }
  double busy_utilized_s() const { return values_[kCounterBusyUtilized]; }
  double tensor_active_s() const { return values_[kCounterTensorActive]; }

  friend bool operator==(const CounterValues&, const CounterValues&) = default;

 private:
  static constexpr std::size_t kBuiltinAlways = kCounterTensorActive + 1;
  std::array<double, kMaxOutputCounters> values_{};  // 0 where absent
  std::uint32_t present_ = 0;                        // bit per id, beyond the kAlways ones
};

// True when the window advances the counters (see above).
bool AdvancesCounters(const OfuWindow& window);

// The increments of one window of `window_s` seconds, for each row of `table`.
CounterValues CountersOfWindow(const OfuWindow& window, const TensorPipes& pipes, double window_s,
                               const OutputCounterTable& table = OutputCounterTable::Builtin());

}  // namespace ofu
