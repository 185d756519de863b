#include "ofu/analysis/recording_history.h"

#include <cstdint>
#include <utility>

#include "ofu/sinks/history_store.h"

namespace ofu::analysis {

sinks::StoredHistory HistoryOfRecording(const Report& report) {
  sinks::StoredHistory history;
  history.path = report.source_name;
  for (const GpuReport& gpu : report.gpus) {
    sinks::StoredGpu stored;
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
      sinks::GpuWindow window;
      window.identity = gpu.identity;
      window.sku = stored.sku;
      window.window = w;
      sinks::StoredWindow row = sinks::RowOfWindow(window, w.end_s, w.end_s - w.start_s);
      row.gpu_id = stored.id;
      history.windows.push_back(row);
      stored.last_end_s = w.end_s;
    }
    history.gpus.push_back(std::move(stored));
  }
  return history;
}

}  // namespace ofu::analysis
