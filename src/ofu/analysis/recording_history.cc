#include "ofu/analysis/recording_history.h"

#include <cstdint>
#include <utility>

#include "ofu/history/row_of_window.h"

namespace ofu::analysis {

history::StoredHistory HistoryOfRecording(const Report& report) {
  history::StoredHistory history;
  history.path = report.source_name;
  for (const GpuReport& gpu : report.gpus) {
    history::StoredGpu stored;
    stored.id = static_cast<std::int64_t>(history.gpus.size()) + 1;
    stored.uuid = gpu.identity.uuid.empty() ? gpu.identity.key : gpu.identity.uuid;
    stored.gpu_index = gpu.identity.gpu_index;
    stored.model = gpu.model;
    stored.hostname = gpu.identity.hostname;
    if (gpu.spec) {
      stored.sku = gpu.spec->id;
      stored.architecture = gpu.spec->architecture;
    }
    for (const OfuWindow& w : gpu.windowed.windows) {
      // A recording's GPU answered in every window it has; it has no pipes.
      history::StoredWindow row = history::RowOfWindow(w, TensorPipes{},
                                                       {.up = true, .known_model = !stored.sku.empty()}, w.end_s,
                                                       w.end_s - w.start_s);
      row.gpu_id = stored.id;
      history.windows.push_back(row);
      stored.last_end_s = w.end_s;
    }
    history.gpus.push_back(std::move(stored));
  }
  return history;
}

}  // namespace ofu::analysis
