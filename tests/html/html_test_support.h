// Stored rows and histories for the HTML report tests, made up here
// (synthetic, not measured on a GPU), with hand-computed answers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ofu/history/history_reader.h"

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
inline history::StoredWindow Row(std::int64_t gpu_id, double end_s, double utilized_s, double observed_s,
                                 double span_s = 1) {
  history::StoredWindow row;
  row.gpu_id = gpu_id;
  row.end_s = end_s;
  row.span_s = span_s;
  row.counters.Set(kCounterObserved, observed_s);
  row.counters.Set(kCounterUtilized, utilized_s);
  row.counters.Set(kCounterBusy, observed_s);
  row.counters.Set(kCounterBusyUtilized, utilized_s);
  row.counters.Set(kCounterTensorActive, utilized_s);
  row.up_s = span_s;
  if (observed_s == 0) row.flags = history::kHistoryNoTensor;
  return row;
}

inline history::StoredGpu Gpu(std::int64_t id, const std::string& sku, const std::string& model,
                              const std::string& hostname = "synthetic-node") {
  history::StoredGpu gpu;
  gpu.id = id;
  gpu.identity.key = "GPU-" + std::to_string(id);
  gpu.identity.gpu_index = std::to_string(id - 1);
  gpu.identity.model = model;
  gpu.sku = sku;
  gpu.architecture = sku.empty() ? "" : "synthetic";
  gpu.identity.hostname = hostname;
  return gpu;
}

inline history::StoredJob Job(std::int64_t gpu_id, const std::string& job_id, double start_s,
                              std::optional<double> end_s, const std::string& user = "alice") {
  history::StoredJob job;
  job.gpu_id = gpu_id;
  job.job_id = job_id;
  job.user = user;
  job.job_name = "train-" + job_id;
  job.scheduler = "slurm";
  job.start_s = start_s;
  job.end_s = end_s;
  return job;
}

// SYNTHETIC rows. An H100 SXM5 (132 SMs, 128 FP32 lanes per SM) with its FP32
// pipe 0.7 active at 1755 MHz does at most
//   0.7 x 132 x 128 x 2 x 1.755e9 = 41.513472 TFLOP/s on the CUDA cores,
// 41.513472 / 66.9 (the FP32 peak) = 0.620530 of that peak. The agent stores
// these as seconds and TFLOP over the row (x its observed seconds).
inline constexpr double kFp32Bound = 0.7 * 132 * 128 * 2 * 1.755e9 * 1e-12;  // 41.513472
inline constexpr double kFp32Share = kFp32Bound / 66.9;

inline history::StoredWindow WithFp32(history::StoredWindow row, double fp32, double bound_tflops, double share) {
  row.counters.Set(kCounterFp32Active, fp32 * row.counters.observed_s());
  row.counters.Set(kCounterNonTensorTflop, bound_tflops * row.counters.observed_s());
  row.counters.Set(kCounterNonTensorPeak, share * row.counters.observed_s());
  return row;
}

// Job SGEMM on GPU 1: OFU 0.02, FP32 pipe 0.7 (its matmuls on the CUDA cores).
// Job BF16 on GPU 2: OFU 0.45, no CUDA-core counters at all. Four 60 s rows each.
inline history::StoredHistory SgemmAndBf16Jobs() {
  history::StoredHistory history;
  history.gpus = {Gpu(1, "h100-sxm5", "NVIDIA H100 80GB HBM3"), Gpu(2, "h100-sxm5", "NVIDIA H100 80GB HBM3")};
  for (int k = 1; k <= 4; ++k) {
    history.windows.push_back(WithFp32(Row(1, 1000 + 60 * k, 0.02 * 60, 60, 60), 0.7, kFp32Bound, kFp32Share));
    history.windows.push_back(Row(2, 1000 + 60 * k, 0.45 * 60, 60, 60));
  }
  history.jobs = {Job(1, "SGEMM", 1000, std::nullopt), Job(2, "BF16", 1000, std::nullopt, "bob")};
  return history;
}

}  // namespace ofu::testing
