#include "ofu/analysis/phase_table.h"

#include <algorithm>

#include "ofu/core/aggregate.h"
#include "ofu/core/windows.h"

namespace ofu::analysis {
namespace {

PhaseRow RowOf(const sources::RecordedPhase& phase, const PhaseGpu& gpu, double busy_threshold) {
  PhaseRow row;
  row.phase = phase.name;
  row.kind = phase.kind;
  row.precision = phase.precision;
  row.start_s = phase.start_s;
  row.end_s = phase.end_s;
  row.mfu = phase.mfu;
  row.peak_tflops = phase.peak_tflops;
  row.gpu = gpu.identity;

  Summarizer ofu;  // the windows' OFU, its range and clock, weighed as the report weighs them
  double clock_sum = 0;
  double clock_seconds = 0;
  // A window ends at its sample's time, so only samples from the phase's
  // start to its end can hold one inside it.
  auto first = std::lower_bound(gpu.samples.begin(), gpu.samples.end(), phase.start_s,
                                [](const CounterSample& s, double t) { return s.time_s < t; });
  for (auto it = first; it != gpu.samples.end() && it->time_s <= phase.end_s; ++it) {
    const OfuWindow w = WindowOfSample(*it, gpu.interval_s, gpu.scale, busy_threshold);
    if (w.start_s < phase.start_s) continue;  // straddles the start
    const double seconds = w.end_s - w.start_s;
    if (w.sm_clock_mhz) {
      clock_sum += *w.sm_clock_mhz * seconds;
      clock_seconds += seconds;
    }
    ofu.Add(w);
  }
  const Summary summary = ofu.Finish();
  row.windows = summary.windows;
  row.seconds = summary.seconds;
  row.ofu = summary.ofu;
  row.ofu_low = summary.ofu_low;
  row.ofu_high = summary.ofu_high;
  row.ofu_clock_mhz = summary.ofu_clock_mhz;
  row.clock_sources = summary.clock_sources;
  if (clock_seconds > 0) row.sm_clock_mhz = clock_sum / clock_seconds;
  if (row.ofu && row.mfu) row.ofu_minus_mfu_pp = 100 * (*row.ofu - *row.mfu);
  return row;
}

}  // namespace

std::vector<PhaseRow> BuildPhaseTable(std::span<const sources::RecordedPhase> phases, std::span<const PhaseGpu> gpus,
                                      double busy_threshold) {
  std::vector<PhaseRow> rows;
  for (const auto& phase : phases) {
    for (const auto& gpu : gpus) rows.push_back(RowOf(phase, gpu, busy_threshold));
  }
  return rows;
}

}  // namespace ofu::analysis
