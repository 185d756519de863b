// What `ofu top` shows, as plain lines: no curses, no terminal, no I/O.
//
// TopModel keeps the latest Snapshot and, per GPU, a ring buffer of its
// recent OFU values (the sparkline). RenderTop turns it into lines of at
// most `width` columns; the interactive view draws them with curses and
// `--once` prints them.
//
//   OFU = tensor_active x sm_clock / f_spec x k_arch  (spec database)
//
// A figure that cannot be computed shows "—", never 0; OFU above 100 % is
// shown as it is (the bar is full, the number is not clamped).
//
// Thread-safety: plain values; one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/gpu_spec.h"
#include "ofu/core/ofu_math.h"
#include "ofu/core/windows.h"
#include "ofu/sources/source.h"

namespace ofu::render {

enum class SortOrder { kOfu, kTensor, kPower, kGpuIndex };

std::string_view SortOrderName(SortOrder order);  // "OFU", "tensor", "power", "GPU"
SortOrder NextSortOrder(SortOrder order);         // OFU -> tensor -> power -> GPU -> OFU
// For a key: 'o', 't', 'p', 'g'; nullopt for any other.
std::optional<SortOrder> SortOrderForKey(int key);
// For a word of `ofu top --sort`: "ofu", "tensor", "power", "gpu"; nullopt
// for any other.
std::optional<SortOrder> SortOrderForName(std::string_view name);

// The sparkline glyph for an OFU value: 0 -> ▁ ... 1 and above -> █,
// rounding v*7 to the nearest of 8 levels. Absent: "·".
std::string_view SparkGlyph(std::optional<double> ofu);

class TopModel {
 public:
  // `specs` must outlive the model; `history` is the sparkline's length.
  TopModel(const GpuSpecDatabase& specs, std::size_t history);

  // Takes the next window: remembers it and appends each GPU's OFU.
  void Add(const sources::Snapshot& snapshot);

  // One GPU of the latest window, with what was derived for it.
  struct Gpu {
    const sources::GpuReading* reading = nullptr;
    std::optional<double> ofu;                                   // absent: no tensor, no clock, or unknown model
    std::optional<double> ofu_clock_mhz;                         // the clock the OFU used (core/windows.h)
    std::optional<ClockSource> clock_source;                     // where it came from; absent without an OFU
    std::optional<double> spec_clock_mhz;                        // absent: unknown model
    std::string model_problem;                                   // why the model is unknown, if it is
    const std::deque<std::optional<double>>* history = nullptr;  // oldest first
  };
  // The GPUs of the latest window in `order` (ties by position).
  std::vector<Gpu> Sorted(SortOrder order) const;

  const std::optional<sources::Snapshot>& latest() const { return latest_; }
  std::size_t windows() const { return windows_; }

 private:
  struct SpecEntry {
    std::optional<OfuScale> scale;
    std::string problem;
  };
  const SpecEntry& SpecFor(const std::string& model) const;
  // The GPU's reading as one window: OFU, the clock it used and its source.
  OfuWindow WindowOf(const sources::GpuReading& gpu) const;

  const GpuSpecDatabase& specs_;
  std::size_t history_;
  std::optional<sources::Snapshot> latest_;
  std::size_t windows_ = 0;
  std::map<std::string, std::deque<std::optional<double>>> histories_;  // by identity key
  mutable std::map<std::string, SpecEntry> spec_cache_;                 // by model name
};

enum class LineStyle { kNormal, kHeader, kWarning, kProblem };

struct TopLine {
  std::string text;  // UTF-8, at most `width` columns
  LineStyle style = LineStyle::kNormal;
};

struct TopFrame {
  std::string source;  // Source::Describe()
  SortOrder sort = SortOrder::kOfu;
  std::size_t width = 100;   // columns
  bool interactive = false;  // adds the key help and the end-of-replay note
  bool ended = false;        // a replay reached its end
  // The name of a process; given an injected reader so the view stays pure.
  std::function<std::string(std::uint32_t pid)> process_name;
};

std::vector<TopLine> RenderTop(const TopModel& model, const TopFrame& frame);

// Cuts a UTF-8 line to at most `columns` code points (every glyph ofu
// draws is one column wide).
std::string TruncateColumns(std::string_view text, std::size_t columns);

}  // namespace ofu::render
