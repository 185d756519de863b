// A recording's report as the history the agent would have stored from it,
// so that `ofu report --input FILE --html` and `--store` build the same page
// from one kind of input (html_report.h).
//
// One StoredGpu per GPU of the report, with ids 1, 2, ... in report order;
// its identity is the GPU's, whole (MIG profile and instance, PCI bus id,
// added fields), keyed as every store row is (GpuKey, core/gpu_key.h: the
// key, never the UUID before it, so a GPU's MIG instances stay apart), with
// the model the report used where the data name none. One
// StoredWindow per window, made by the store's own rule (history::RowOfWindow);
// its length is the seconds of tensor data in it (OfuWindow::covered_s), or
// the window's span where it has none, so that a partial last window weighs
// what it holds and the rows add up to the report's OFU. No jobs: a
// recording does not say which job ran.
//
// Thread-safety: a pure function of its input.
#pragma once

#include "ofu/analysis/report.h"
#include "ofu/history/history_reader.h"

namespace ofu::analysis {

// `path` of the result is the report's source name.
history::StoredHistory HistoryOfRecording(const Report& report);

}  // namespace ofu::analysis
