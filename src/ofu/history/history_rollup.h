// What a stored row stands for, and the store's hourly rollups: how an hour
// of one GPU's windows becomes one row that a report can read instead of
// them (the `rollups` table, history_reader.h).
//
// A report over weeks reads 10^8 windows at 1,024 GPUs; SQLite alone needs
// half a minute to hand them over. A closed hour of 15 s windows is 240 of
// them, so reading its sum instead is about 240 times less. The sum must give
// the report what the windows give it:
//   - every sum the report takes (OFU, active OFU, tensor activity, idle
//     fraction, clock, the non-tensor figures, job totals, time down or
//     without OFU) is a sum over windows, so the hour's sums give the same,
//     up to the order of floating-point additions;
//   - percentiles need each window's OFU: the rollup keeps them as counts per
//     Summarizer histogram bin, so percentiles are within half a bin (0.05
//     percentage points) of exact, and exactly what a Summarizer past
//     kExactPercentileWindows windows gives;
//   - gaps need the windows' ends: an hour with a gap inside has no rollup,
//     and one that has keeps the start of its first window and the end of
//     its last, for gaps between hours.
// RollUp makes a rollup only when these hold (see there); otherwise the
// windows are read one by one, which is never wrong.
//
// Which job a window belongs to is not in the rollup. The writer cuts an
// hour at the job interval boundaries inside it, into parts that each get a
// rollup, and the reader uses a rollup only when no job interval on that GPU
// starts or ends inside its part (an interval closed after it was written
// may), so all its windows belong to the same jobs.
//
// Thread-safety: pure functions on plain values.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ofu/core/aggregate.h"
#include "ofu/core/result.h"
#include "ofu/core/windows.h"
#include "ofu/history/history_reader.h"

namespace ofu::history {

// Rollups sum the windows ending in (k * 3600, (k + 1) * 3600], epoch s.
inline constexpr double kRollupSpanS = 3600;

// The end of the rollup hour a window ending at `end_s` belongs to.
double RollupHourEnd(double end_s);

// Consecutive windows closer than this are contiguous: replayed spans are
// differences of epoch times, off by an ulp or so.
inline constexpr double kContiguousWindowsS = 1e-3;

// Calls f(window) for each window a stored row stands for: one for a row of
// one window; for a partly busy row (a downsampled one), its busy and its idle
// part, so that OFU, active OFU, tensor activity and idle fraction are
// exactly the sums' ratios; a row without an OFU is a window with only its
// clock (or nothing, without one).
template <typename F>
void ForEachWindowOfRow(const StoredWindow& row, F&& f,
                        const OutputCounterTable& table = OutputCounterTable::Builtin()) {
  OfuWindow base;
  base.start_s = row.end_s - row.span_s;
  base.end_s = row.end_s;
  bool clock_given = false;
  auto add_clock = [&](OfuWindow& w) {
    if (clock_given || !row.clock_mhz || row.clock_windows <= 0) return;
    w.sm_clock_mhz = row.clock_mhz;
    w.sm_clock_min_mhz = row.clock_min_mhz.value_or(*row.clock_mhz);
    w.sm_clock_max_mhz = row.clock_max_mhz.value_or(*row.clock_mhz);
    w.clock_readings = static_cast<int>(row.clock_windows);
    clock_given = true;
  };
  if (row.counters.observed_s() > 0) {
    // The other figures (CUDA-core pipes, the non-tensor bound, each counter
    // of the table that has a place in a window) are means over the observed
    // seconds, the same in the busy and the idle part.
    // Only the measured counters can have a place (the kAlways ones are read
    // below), so the loop visits the bits of measured() that are placed().
    TensorPipes pipes;
    for (std::uint32_t bits = row.counters.measured() & table.placed(); bits != 0; bits &= bits - 1) {
      const auto id = static_cast<std::size_t>(std::countr_zero(bits));
      table[id].put(base, pipes, row.counters.value_or_0(id) / row.counters.observed_s());
    }
    const double tensor = row.counters.tensor_active_s() / row.counters.observed_s();
    if (row.counters.busy_s() > 0) {
      OfuWindow w = base;
      w.covered_s = row.counters.busy_s();
      w.ofu = row.counters.busy_utilized_s() / row.counters.busy_s();
      w.tensor_active = tensor;
      w.busy = true;
      add_clock(w);
      f(w);
    }
    const double idle_s = row.counters.observed_s() - row.counters.busy_s();
    if (idle_s > row.counters.observed_s() * 1e-12) {
      OfuWindow w = base;
      w.covered_s = idle_s;
      w.ofu = (row.counters.utilized_s() - row.counters.busy_utilized_s()) / idle_s;
      w.tensor_active = tensor;
      w.busy = false;
      add_clock(w);
      f(w);
    }
  } else if (row.clock_mhz) {
    OfuWindow w = base;
    add_clock(w);
    f(w);
  }
}

// The windows a stored row stands for (ForEachWindowOfRow, collected).
std::vector<OfuWindow> WindowsOfRow(const StoredWindow& row);

// Folds `w` into the sum `into`, a downsampled row: seconds add, a pipe is
// absent while every part is, the clock is the mean over clock windows.
void AddRowInto(StoredWindow& into, const StoredWindow& w);

// The rollup of one GPU's windows ending in (after_s, until_s] (at most an
// hour), given in time order; absent unless every window
//   - is one full-resolution window ending inside that span,
//   - starts where the one before ended (within kContiguousWindowsS),
//   - is busy or idle as a whole, with up_s >= observed_s,
//   - has a clock reading when it has an OFU, and no pipe figure without one,
//   - has clock_windows > 0 when it has a clock,
// and the windows with an OFU all have, or all lack, each pipe figure. These
// make every sum of the rollup equal the sum over its windows (see the top).
std::optional<StoredRollup> RollUp(std::span<const StoredWindow> rows, double after_s, double until_s);

// What the rollup's windows add to a Summarizer: Summarizer::Add of the
// result equals Summarizer::Add of each of WindowsOfRow(row), but percentiles
// (half a bin).
WindowTotals TotalsOfRollup(const StoredRollup& rollup);

// The ofu_histogram column: per bin, its number as 2 bytes then its count as
// 4, little-endian. DecodeOfuBins: kMalformedInput when the size is not a
// multiple of 6, a bin is out of range or not ascending, or a count is 0.
std::string EncodeOfuBins(const std::vector<std::pair<int, std::int64_t>>& bins);
Result<std::vector<std::pair<int, std::int64_t>>> DecodeOfuBins(const unsigned char* data, std::size_t size);

}  // namespace ofu::history
