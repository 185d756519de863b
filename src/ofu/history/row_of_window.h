// The row one window of one GPU becomes, in the store and wherever a history
// is made from windows (a recording's, analysis/recording_history.h): its
// counters by the counter rule (core/output_counters.h: CountersOfWindow),
// an absent pipe as NULL; its clock, up-ness and flags saying what it
// lacked. The store's writer (sinks/history_store.h) and the readers agree
// on rows because both take them from here.
//
// Thread-safety: a pure function of its input.
#pragma once

#include "ofu/core/output_counters.h"
#include "ofu/core/windows.h"
#include "ofu/history/history_reader.h"

namespace ofu::history {

// What the window says of its GPU beyond its figures.
struct WindowState {
  bool up = true;           // the GPU answered (false: lost or unreachable)
  bool known_model = true;  // the spec database knows its model
};

// `end_s`: the window's end; `window_s`: its length. gpu_id is left 0.
StoredWindow RowOfWindow(const OfuWindow& window, const TensorPipes& pipes, WindowState state, double end_s,
                         double window_s, const OutputCounterTable& counters = OutputCounterTable::Builtin());

}  // namespace ofu::history
