// The counter rule applied to the windows that reach the sinks: what one GPU
// window adds to the cumulative counters every sink keeps. The rule itself,
// and the table of counters, are core/output_counters.h; the agent's
// exposition (metrics_state.h, the ofu_*_total counters of
// docs/prometheus.md §1) and the history store (history_store.h, the rows of
// docs/agent.md) both take a window's increments from CountersOfWindow, so
// the two cannot drift apart.
//
// Thread-safety: pure functions on plain values.
#pragma once

#include "ofu/core/output_counters.h"
#include "ofu/sinks/window_batch.h"

namespace ofu::sinks {

// The increments of one GPU window of length `window_s`, for each row of `table`.
inline CounterValues CountersOfWindow(const GpuWindow& gpu, double window_s,
                                      const OutputCounterTable& table = OutputCounterTable::Builtin()) {
  return ofu::CountersOfWindow(gpu.window, gpu.pipes, window_s, table);
}

}  // namespace ofu::sinks
