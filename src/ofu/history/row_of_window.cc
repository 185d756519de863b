#include "ofu/history/row_of_window.h"

namespace ofu::history {

StoredWindow RowOfWindow(const OfuWindow& w, const TensorPipes& pipes, WindowState state, double end_s, double window_s,
                         const OutputCounterTable& counters) {
  StoredWindow row;
  row.end_s = end_s;
  row.span_s = window_s;
  // The counter rule; an absent pipe is stored as NULL.
  row.counters = CountersOfWindow(w, pipes, window_s, counters);
  if (w.sm_clock_mhz) {
    row.clock_mhz = w.sm_clock_mhz;
    row.clock_min_mhz = w.sm_clock_min_mhz.value_or(*w.sm_clock_mhz);
    row.clock_max_mhz = w.sm_clock_max_mhz.value_or(*w.sm_clock_mhz);
    row.clock_windows = 1;
  }
  row.up_s = state.up ? window_s : 0;
  if (!w.tensor_active) row.flags |= kHistoryNoTensor;
  if (!w.sm_clock_mhz) row.flags |= kHistoryNoClock;
  if (!state.known_model) row.flags |= kHistoryUnknownModel;
  if (!state.up) row.flags |= kHistoryGpuDown;
  if (w.ofu && w.clock_source) row.flags |= FlagsOfClockSources(static_cast<std::uint8_t>(*w.clock_source));
  return row;
}

}  // namespace ofu::history
