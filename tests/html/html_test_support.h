// Stored rows and histories for the HTML report tests, made up here
// (synthetic, not measured on a GPU), with hand-computed answers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ofu/sinks/history_reader.h"

namespace ofu::testing {

// The page's data: the JSON inside <script type="application/json"
// id="ofu-data">; null when the page has none.
inline nlohmann::json DataOf(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"ofu-data\">";
  const auto begin = html.find(open);
  if (begin == std::string::npos) return nullptr;
  const auto end = html.find("</script>", begin);
  return nlohmann::json::parse(html.substr(begin + open.size(), end - begin - open.size()));
}

// A stored row of `span_s` seconds ending at `end_s`, with `utilized_s`
// over `observed_s` (observed 0: no OFU in it), all of it busy.
inline sinks::StoredWindow Row(std::int64_t gpu_id, double end_s, double utilized_s, double observed_s,
                               double span_s = 1) {
  sinks::StoredWindow row;
  row.gpu_id = gpu_id;
  row.end_s = end_s;
  row.span_s = span_s;
  row.observed_s = observed_s;
  row.utilized_s = utilized_s;
  row.busy_s = observed_s;
  row.busy_utilized_s = utilized_s;
  row.tensor_active_s = utilized_s;
  row.up_s = span_s;
  if (observed_s == 0) row.flags = sinks::kHistoryNoTensor;
  return row;
}

inline sinks::StoredGpu Gpu(std::int64_t id, const std::string& sku, const std::string& model,
                            const std::string& hostname = "synthetic-node") {
  sinks::StoredGpu gpu;
  gpu.id = id;
  gpu.uuid = "GPU-" + std::to_string(id);
  gpu.gpu_index = std::to_string(id - 1);
  gpu.model = model;
  gpu.sku = sku;
  gpu.architecture = sku.empty() ? "" : "synthetic";
  gpu.hostname = hostname;
  return gpu;
}

inline sinks::StoredJob Job(std::int64_t gpu_id, const std::string& job_id, double start_s, std::optional<double> end_s,
                            const std::string& user = "alice") {
  sinks::StoredJob job;
  job.gpu_id = gpu_id;
  job.job_id = job_id;
  job.user = user;
  job.job_name = "train-" + job_id;
  job.scheduler = "slurm";
  job.start_s = start_s;
  job.end_s = end_s;
  return job;
}

}  // namespace ofu::testing
