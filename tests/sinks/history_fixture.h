// Synthetic window batches for the history store tests (store_test and
// store_cli_test): made up here, not measured on a GPU.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "ofu/sinks/history_store.h"
#include "ofu/sinks/window_batch.h"
#include "ofu/sources/clock.h"

namespace ofu::history {

// Readable failures: gtest prints a StoredWindow field by field.
inline void PrintTo(const StoredWindow& w, std::ostream* os) {
  auto opt = [](const std::optional<double>& v) { return v ? std::to_string(*v) : std::string("null"); };
  *os << "{gpu_id " << w.gpu_id << ", end_s " << std::to_string(w.end_s) << ", span_s " << w.span_s << ", observed_s "
      << w.counters.observed_s() << ", utilized_s " << w.counters.utilized_s() << ", busy_s " << w.counters.busy_s()
      << ", busy_utilized_s " << w.counters.busy_utilized_s() << ", tensor_active_s " << w.counters.tensor_active_s()
      << ", clock_mhz " << opt(w.clock_mhz) << " [" << opt(w.clock_min_mhz) << ", " << opt(w.clock_max_mhz) << "] x"
      << w.clock_windows << ", up_s " << w.up_s << ", flags " << w.flags << "}";
}

}  // namespace ofu::history

namespace ofu::testing {

// A window of an H100 SXM5 (sku h100-sxm5). No OFU when `ofu` is absent.
inline sinks::GpuWindow H100Window(const std::string& uuid, const std::string& index, std::optional<double> ofu,
                                   bool busy = true, std::optional<double> tensor = std::nullopt,
                                   std::optional<double> clock_mhz = 1500.0) {
  sinks::GpuWindow gpu;
  gpu.identity.key = uuid;
  gpu.identity.uuid = uuid;
  gpu.identity.gpu_index = index;
  gpu.identity.model = "NVIDIA H100 80GB HBM3";
  gpu.identity.hostname = "synthetic-node";
  gpu.sku = "h100-sxm5";
  gpu.architecture = "hopper";
  gpu.window.ofu = ofu;
  gpu.window.busy = busy;
  gpu.window.tensor_active = tensor ? tensor : ofu;
  gpu.window.sm_clock_mhz = ofu ? clock_mhz : std::nullopt;
  if (gpu.window.sm_clock_mhz) {
    gpu.window.sm_clock_min_mhz = gpu.window.sm_clock_max_mhz = gpu.window.sm_clock_mhz;
    gpu.window.clock_readings = 1;
  }
  return gpu;
}

// A GPU that did not answer: no data at all.
inline sinks::GpuWindow LostWindow(const std::string& uuid, const std::string& index) {
  sinks::GpuWindow gpu = H100Window(uuid, index, std::nullopt, false);
  gpu.window.tensor_active.reset();
  gpu.health = sources::GpuHealth::kLost;
  gpu.problem = "GPU is lost";
  return gpu;
}

inline sinks::WindowBatch Batch(double end_s, double window_s, std::vector<sinks::GpuWindow> gpus,
                                const std::map<std::string, std::string>& job_of = {}) {
  sinks::WindowBatch batch;
  batch.end_s = end_s;
  batch.window_s = window_s;
  for (auto& gpu : gpus) {
    gpu.window.end_s = end_s;
    gpu.window.start_s = end_s - window_s;
    gpu.window.covered_s = window_s;
  }
  batch.gpus = std::move(gpus);
  for (const auto& [uuid, job_id] : job_of) {
    attribution::JobInfo job;
    job.job_id = job_id;
    job.user = "alice";
    job.job_name = "train-" + job_id;
    job.scheduler = "slurm";
    batch.jobs[uuid] = job;
  }
  return batch;
}

// The two-GPU job of the report tests, 60 s windows from kJobT0 (a multiple
// of 60 s). Job J1 runs on GPU 0 in windows 1-4 and on GPU 1 in windows 2-5;
// GPU 1 is lost in window 3. OFU per window (all J1 windows busy):
//   GPU 0: 0.4 0.5 0.6 0.3 | 0.1 0.1 (no job, idle)
//   GPU 1: 0.2 (no job) | 0.8 lost 0.6 0.4 | 0.0 (no job, idle)
// Hand-computed:
//   J1 OFU = 60 (0.4+0.5+0.6+0.3 + 0.8+0.6+0.4) / (60 x 7) = 216 / 420 = 0.5142857142857143
//   J1 GPU-hours = (240 s on GPU 0 + 240 s on GPU 1) / 3600 = 0.1333...
//   overall OFU = (2.0 + 2.0) / 11 windows = 0.36363636...
//   in (T0+120, T0+240]: J1 OFU = (0.6 + 0.3 + 0.6) / 3 = 0.5, GPU-hours 240 s = 0.0666...
inline constexpr double kJobT0 = 1789999980;  // 60 x 29833333
inline void WriteTwoGpuJob(sinks::HistoryStore& store) {
  const std::vector<std::optional<double>> gpu0 = {0.4, 0.5, 0.6, 0.3, 0.1, 0.1};
  const std::vector<std::optional<double>> gpu1 = {0.2, 0.8, std::nullopt, 0.6, 0.4, 0.0};
  for (int k = 0; k < 6; ++k) {
    std::map<std::string, std::string> jobs;
    if (k <= 3) jobs["GPU-0"] = "J1";
    if (k >= 1 && k <= 4) jobs["GPU-1"] = "J1";
    const bool busy0 = k <= 3, busy1 = k >= 1 && k <= 4;
    sinks::GpuWindow w1 = gpu1[k] ? H100Window("GPU-1", "1", gpu1[k], busy1) : LostWindow("GPU-1", "1");
    const Status s = store.Consume(Batch(kJobT0 + 60.0 * (k + 1), 60, {H100Window("GPU-0", "0", gpu0[k], busy0), w1},
                                         jobs));
    ASSERT_TRUE(s.ok()) << s.error().message;
  }
}

// A store at `path` holding WriteTwoGpuJob's windows (written at kJobT0 on
// a fake clock); returns the path.
inline std::string WriteTwoGpuJobStore(const std::filesystem::path& path) {
  sources::FakeClock clock(kJobT0);
  sinks::HistoryOptions options;
  options.path = path.string();
  auto store = sinks::HistoryStore::Open(options, clock);
  EXPECT_TRUE(store.ok()) << store.error().message;
  if (store.ok()) WriteTwoGpuJob(**store);
  return options.path;
}

// Opens the store of `options` (creating it when missing), writes `batches`
// and closes it: one run of an agent. A test of a schema change runs twice,
// with other options the second time.
inline ::testing::AssertionResult WriteRun(const sinks::HistoryOptions& options, sources::Clock& clock,
                                           const std::vector<sinks::WindowBatch>& batches) {
  auto store = sinks::HistoryStore::Open(options, clock);
  if (!store.ok()) return ::testing::AssertionFailure() << store.error().message;
  for (const sinks::WindowBatch& batch : batches) {
    if (Status s = (*store)->Consume(batch); !s.ok()) return ::testing::AssertionFailure() << s.error().message;
  }
  return ::testing::AssertionSuccess();
}

// One number, or one text, from a query on the file (tests look at the
// store directly); -1 or "" when the query gives no row.
template <typename Value>
Value QueryOne(const std::string& path, const std::string& sql, Value none) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* stmt = nullptr;
  Value value = none;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
    if constexpr (std::is_same_v<Value, double>) {
      value = sqlite3_column_double(stmt, 0);
    } else {
      const unsigned char* text = sqlite3_column_text(stmt, 0);
      if (text != nullptr) value = reinterpret_cast<const char*>(text);
    }
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}
inline double QueryNumber(const std::string& path, const std::string& sql) { return QueryOne(path, sql, -1.0); }
inline std::string QueryText(const std::string& path, const std::string& sql) {
  return QueryOne(path, sql, std::string());
}

}  // namespace ofu::testing
