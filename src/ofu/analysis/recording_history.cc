#include "ofu/analysis/recording_history.h"

#include <cstdint>
#include <utility>

#include "ofu/core/gpu_key.h"
#include "ofu/history/row_of_window.h"

namespace ofu::analysis {

history::StoredHistory HistoryOfRecording(const Report& report) {
  history::StoredHistory history;
  history.path = report.source_name;
  for (const GpuReport& gpu : report.gpus) {
    history::StoredGpu stored;
    stored.id = static_cast<std::int64_t>(history.gpus.size()) + 1;
    // The identity whole (MIG profile and instance, PCI bus id, added
    // fields), keyed by the one rule: a MIG instance keeps its own key.
    stored.identity = gpu.identity;
    stored.identity.key = GpuKey(gpu.identity);
    if (stored.identity.model.empty()) stored.identity.model = gpu.model;  // --gpu-model's, where the data name none
    if (gpu.spec) {
      stored.sku = gpu.spec->id;
      stored.architecture = gpu.spec->architecture;
    }
    for (const OfuWindow& w : gpu.windowed.windows) {
      // A recording's GPU answered in every window it has; it has no pipes.
      // A window with tensor data spans the seconds that data covers, not
      // its nominal length: a recording's last window is often partial (75 s
      // of samples made a 60 s window and one of 15 s), and the nominal
      // length weighed the part as much as the whole, so the page's OFU was
      // not the report's (0.362 against 0.325 for the bundled H100 one).
      const double span_s = w.tensor_active && w.covered_s > 0 ? w.covered_s : w.end_s - w.start_s;
      history::StoredWindow row =
          history::RowOfWindow(w, TensorPipes{}, {.up = true, .known_model = !stored.sku.empty()}, w.end_s, span_s);
      row.gpu_id = stored.id;
      history.windows.push_back(row);
      stored.last_end_s = w.end_s;
    }
    history.gpus.push_back(std::move(stored));
  }
  return history;
}

}  // namespace ofu::analysis
