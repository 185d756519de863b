#include "ofu/history/history_rollup.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace ofu::history {
namespace {

// Which counters a row has beyond the five always present, for the rule
// that windows with an OFU have each of them all or none.
std::uint32_t FiguresPresent(const StoredWindow& w) { return w.counters.measured(); }

constexpr std::size_t kBinBytes = 6;

}  // namespace

double RollupHourEnd(double end_s) { return std::ceil(end_s / kRollupSpanS) * kRollupSpanS; }

std::vector<OfuWindow> WindowsOfRow(const StoredWindow& row) {
  std::vector<OfuWindow> out;
  ForEachWindowOfRow(row, [&](const OfuWindow& w) { out.push_back(w); });
  return out;
}

void AddRowInto(StoredWindow& into, const StoredWindow& w) {
  into.span_s += w.span_s;
  into.counters.Add(w.counters);
  into.up_s += w.up_s;
  into.flags |= w.flags | kHistoryDownsampled;
  if (w.clock_mhz && w.clock_windows > 0) {
    const double sum = into.clock_mhz.value_or(0) * static_cast<double>(into.clock_windows) +
                       *w.clock_mhz * static_cast<double>(w.clock_windows);
    into.clock_windows += w.clock_windows;
    into.clock_mhz = sum / static_cast<double>(into.clock_windows);
    const double lo = w.clock_min_mhz.value_or(*w.clock_mhz), hi = w.clock_max_mhz.value_or(*w.clock_mhz);
    into.clock_min_mhz = std::min(into.clock_min_mhz.value_or(lo), lo);
    into.clock_max_mhz = std::max(into.clock_max_mhz.value_or(hi), hi);
  }
}

std::optional<StoredRollup> RollUp(std::span<const StoredWindow> rows, double after_s, double until_s) {
  if (rows.empty()) return std::nullopt;
  StoredRollup rollup;
  rollup.after_s = after_s;
  rollup.until_s = until_s;
  rollup.first_start_s = rows.front().end_s - rows.front().span_s;
  rollup.first_span_s = rows.front().span_s;
  rollup.windows = static_cast<std::int64_t>(rows.size());
  rollup.total.gpu_id = rows.front().gpu_id;
  std::optional<std::uint32_t> figures;  // of the windows with an OFU
  std::vector<std::int64_t> bins(Summarizer::kHistogramBins, 0);
  double previous_end = NAN;
  for (const StoredWindow& row : rows) {
    const bool in_hour = row.end_s > after_s && row.end_s <= until_s;
    const bool whole = row.counters.busy_s() == 0 || row.counters.busy_s() == row.counters.observed_s();
    const bool clock_counted = !row.clock_mhz || row.clock_windows > 0;
    if (!in_hour || !clock_counted || (row.flags & kHistoryDownsampled) != 0 || !whole ||
        row.up_s < row.counters.observed_s() || row.end_s - row.span_s > previous_end + kContiguousWindowsS) {
      return std::nullopt;
    }
    if (row.counters.observed_s() > 0) {
      if (!row.clock_mhz || row.clock_windows <= 0) return std::nullopt;
      if (figures && *figures != FiguresPresent(row)) return std::nullopt;
      figures = FiguresPresent(row);
    } else if (FiguresPresent(row) != 0) {
      return std::nullopt;
    }
    previous_end = row.end_s;
    AddRowInto(rollup.total, row);
    rollup.total.end_s = row.end_s;
    ForEachWindowOfRow(row, [&](const OfuWindow& w) {
      if (w.ofu) {
        ++bins[static_cast<std::size_t>(Summarizer::HistogramBin(*w.ofu))];
      } else {
        ++rollup.clock_only_windows;
        rollup.clock_only_s += w.end_s - w.start_s;
      }
    });
  }
  for (int bin = 0; bin < Summarizer::kHistogramBins; ++bin) {
    if (bins[static_cast<std::size_t>(bin)] > 0) rollup.ofu_bins.emplace_back(bin, bins[static_cast<std::size_t>(bin)]);
  }
  return rollup;
}

WindowTotals TotalsOfRollup(const StoredRollup& rollup) {
  // Each window with an OFU is one whole row (RollUp's rules): its
  // covered seconds are its observed seconds, and it is busy or idle.
  const StoredWindow& t = rollup.total;
  WindowTotals out;
  out.seconds = t.counters.observed_s();
  out.ofu_seconds = t.counters.utilized_s();
  out.busy_seconds = t.counters.busy_s();
  out.busy_ofu_seconds = t.counters.busy_utilized_s();
  out.tensor_seconds = t.counters.observed_s();
  out.tensor_active_seconds = t.counters.tensor_active_s();
  out.idle_seconds = t.counters.observed_s() - t.counters.busy_s();
  out.seconds_without_ofu = rollup.clock_only_s;
  if (t.clock_mhz && t.clock_windows > 0) {
    out.clock_sum_mhz = *t.clock_mhz * static_cast<double>(t.clock_windows);
    out.clock_readings = t.clock_windows;
    out.clock_min_mhz = t.clock_min_mhz.value_or(*t.clock_mhz);
    out.clock_max_mhz = t.clock_max_mhz.value_or(*t.clock_mhz);
  }
  out.windows_without_tensor = rollup.clock_only_windows;
  out.ofu_bins = rollup.ofu_bins;
  auto weighted = [&](const std::optional<double>& figure_s) {
    return figure_s ? WindowTotals::Weighted{*figure_s, t.counters.observed_s()} : WindowTotals::Weighted{};
  };
  for (const CudaCorePipeInfo& pipe : CudaCorePipes()) {
    out.pipes[IndexOf(pipe.pipe)] = weighted(t.counters[PipeActiveCounter(pipe.pipe)]);
  }
  out.share_of_peak = weighted(t.counters[kCounterNonTensorPeak]);
  if (t.counters[kCounterNonTensorTflop]) {
    out.bound_tflop = *t.counters[kCounterNonTensorTflop];
    out.bound_seconds = t.counters.observed_s();
  }
  return out;
}

std::string EncodeOfuBins(const std::vector<std::pair<int, std::int64_t>>& bins) {
  std::string out;
  out.reserve(bins.size() * kBinBytes);
  for (const auto& [bin, count] : bins) {
    const auto b = static_cast<std::uint16_t>(bin);
    const auto c = static_cast<std::uint32_t>(count);
    out.push_back(static_cast<char>(b & 0xff));
    out.push_back(static_cast<char>(b >> 8));
    for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>((c >> shift) & 0xff));
  }
  return out;
}

Result<std::vector<std::pair<int, std::int64_t>>> DecodeOfuBins(const unsigned char* data, std::size_t size) {
  if (size % kBinBytes != 0) {
    return Error::MalformedInput("ofu_histogram: {} bytes, not a multiple of {}", size, kBinBytes);
  }
  std::vector<std::pair<int, std::int64_t>> bins;
  bins.reserve(size / kBinBytes);
  for (std::size_t at = 0; at < size; at += kBinBytes) {
    const int bin = data[at] | (data[at + 1] << 8);
    std::uint32_t count = 0;
    for (int i = 0; i < 4; ++i)
      count |= static_cast<std::uint32_t>(data[at + 2 + static_cast<std::size_t>(i)]) << (8 * i);
    if (bin >= Summarizer::kHistogramBins) {
      return Error::MalformedInput("ofu_histogram: bin {} out of range (0 to {})", bin, Summarizer::kHistogramBins - 1);
    }
    if (!bins.empty() && bin <= bins.back().first) {
      return Error::MalformedInput("ofu_histogram: bin {} after bin {} (bins ascend)", bin, bins.back().first);
    }
    if (count == 0) return Error::MalformedInput("ofu_histogram: bin {} with a count of 0", bin);
    bins.emplace_back(bin, count);
  }
  return bins;
}

}  // namespace ofu::history
