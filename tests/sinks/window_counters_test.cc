// The counter rule (window_counters.h) on hand values, and the two sinks that
// follow it, the exposition (MetricsState) and the history store, fed the
// same windows: among them windows without tensor data, which must add no
// observed time and no tensor seconds (absent, never 0 as if measured).
#include "ofu/sinks/window_counters.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ofu/history/history_reader.h"
#include "ofu/sinks/history_store.h"
#include "ofu/sinks/metrics_state.h"
#include "sinks/history_fixture.h"
#include "support/exposition.h"

namespace ofu::sinks {
namespace {

namespace fs = std::filesystem;
using ::ofu::testing::ParseExposition;

// An H100 window of 2 s with a clock reading; tensor activity and OFU as given.
GpuWindow Window(const std::string& uuid, std::optional<double> ofu, std::optional<double> tensor, bool busy) {
  GpuWindow gpu = testing::H100Window(uuid, uuid == "GPU-a" ? "0" : "1", ofu, busy, tensor, 1500.0);
  gpu.window.tensor_active = tensor;  // the fixture fills an absent tensor from the OFU; not here
  gpu.window.sm_clock_mhz = gpu.window.sm_clock_min_mhz = gpu.window.sm_clock_max_mhz = 1500.0;
  gpu.window.clock_readings = 1;
  return gpu;
}

TEST(CountersOfWindow, AValidWindowAdvancesEveryCounterTogether) {
  GpuWindow gpu = Window("GPU-a", 0.5, 0.75, true);
  gpu.pipes.hmma = 0.6;
  gpu.pipes.dfma = 0.0;  // measured: 0
  const CounterValues c = CountersOfWindow(gpu, 2);
  EXPECT_EQ(c.observed_s(), 2);
  EXPECT_EQ(c.utilized_s(), 1.0);       // 0.5 x 2 s
  EXPECT_EQ(c.tensor_active_s(), 1.5);  // 0.75 x 2 s
  EXPECT_EQ(c.busy_s(), 2);
  EXPECT_EQ(c.busy_utilized_s(), 1.0);
  EXPECT_EQ(c[kCounterHmmaActive], 1.2);  // 0.6 x 2 s
  EXPECT_EQ(c[kCounterImmaActive], std::nullopt);
  EXPECT_EQ(c[kCounterDfmaActive], 0.0);

  gpu.window.busy = false;
  const CounterValues idle = CountersOfWindow(gpu, 2);
  EXPECT_EQ(idle.observed_s(), 2);
  EXPECT_EQ(idle.utilized_s(), 1.0);
  EXPECT_EQ(idle.busy_s(), 0);
  EXPECT_EQ(idle.busy_utilized_s(), 0);
}

TEST(CountersOfWindow, AWindowWithoutTensorDataAddsNothing) {
  // What core/windows gives: no tensor activity, so no OFU.
  GpuWindow no_tensor = Window("GPU-a", std::nullopt, std::nullopt, true);
  no_tensor.pipes.hmma = 0.6;
  EXPECT_FALSE(AdvancesCounters(no_tensor.window));
  const CounterValues c = CountersOfWindow(no_tensor, 2);
  EXPECT_EQ(c.observed_s(), 0);
  EXPECT_EQ(c.utilized_s(), 0);
  EXPECT_EQ(c.tensor_active_s(), 0);
  EXPECT_EQ(c.busy_s(), 0);
  EXPECT_EQ(c[kCounterHmmaActive], std::nullopt);

  // A window built by hand with an OFU but no tensor activity is not valid
  // either: it must not count 2 observed seconds at 0 tensor activity.
  const GpuWindow inconsistent = Window("GPU-a", 0.5, std::nullopt, true);
  EXPECT_FALSE(AdvancesCounters(inconsistent.window));
  const CounterValues d = CountersOfWindow(inconsistent, 2);
  EXPECT_EQ(d.observed_s(), 0);
  EXPECT_EQ(d.utilized_s(), 0);
  EXPECT_EQ(d.tensor_active_s(), 0);
}

TEST(CounterValues, APipeIsAbsentUntilItsFirstPart) {
  CounterValues total;
  CounterValues part;
  part.Set(kCounterObserved, 2);
  part.Set(kCounterTensorActive, 0.5);
  total.Add(part);
  EXPECT_EQ(total.observed_s(), 2);
  EXPECT_EQ(total[kCounterHmmaActive], std::nullopt);
  part.Set(kCounterHmmaActive, 0.25);
  total.Add(part);
  EXPECT_EQ(total.observed_s(), 4);
  EXPECT_EQ(total.tensor_active_s(), 1.0);
  EXPECT_EQ(total[kCounterHmmaActive], 0.25);
  part.Set(kCounterHmmaActive, std::nullopt);
  total.Add(part);
  EXPECT_EQ(total[kCounterHmmaActive], 0.25);  // an absent part adds nothing
}

// Three 2 s windows. GPU a: valid (OFU 0.5, tensor 0.4, busy, HMMA 0.3), then
// no tensor data (a clock, no OFU), then an OFU without tensor activity (built
// by hand). GPU b: never any tensor data.
std::vector<WindowBatch> Batches() {
  GpuWindow valid = Window("GPU-a", 0.5, 0.4, true);
  valid.pipes.hmma = 0.3;
  GpuWindow no_tensor = Window("GPU-a", std::nullopt, std::nullopt, true);
  no_tensor.pipes.hmma = 0.3;  // a pipe without tensor activity: the window is still not valid
  const GpuWindow inconsistent = Window("GPU-a", 0.5, std::nullopt, true);
  const GpuWindow b = Window("GPU-b", std::nullopt, std::nullopt, false);
  return {testing::Batch(1002, 2, {valid, b}), testing::Batch(1004, 2, {no_tensor, b}),
          testing::Batch(1006, 2, {inconsistent, b})};
}

TEST(CounterRule, TheExpositionCountsNoTensorSecondsForAWindowWithoutTensorData) {
  sources::FakeClock clock(1000);
  MetricsState state({"0.1.0", "nvml", 2.0, 3}, clock);
  for (const WindowBatch& batch : Batches()) ASSERT_TRUE(state.Consume(batch).ok());
  const auto m = ParseExposition(state.Render(formats::ExpositionFormat::kPrometheusText));
  const std::string a = "{uuid=GPU-a,gpu=0}", b = "{uuid=GPU-b,gpu=1}";
  // GPU a: the first window only.
  EXPECT_EQ(m.at("ofu_observed_seconds_total" + a), 2);
  EXPECT_EQ(m.at("ofu_utilized_seconds_total" + a), 1.0);       // 0.5 x 2 s
  EXPECT_EQ(m.at("ofu_tensor_active_seconds_total" + a), 0.8);  // 0.4 x 2 s
  EXPECT_EQ(m.at("ofu_busy_seconds_total" + a), 2);
  EXPECT_EQ(m.at("ofu_busy_utilized_seconds_total" + a), 1.0);
  EXPECT_EQ(m.at("ofu_hmma_active_seconds_total" + a), 0.6);  // 0.3 x 2 s
  EXPECT_EQ(m.at("ofu_last_window_timestamp_seconds" + a), 1002);
  EXPECT_EQ(m.count("ofu_tensor_active_ratio" + a), 0u);  // the last window had none: absent
  // GPU b: counters from the start at 0 (nothing observed is a fact), no pipe series, no timestamp.
  EXPECT_EQ(m.at("ofu_observed_seconds_total" + b), 0);
  EXPECT_EQ(m.at("ofu_tensor_active_seconds_total" + b), 0);
  EXPECT_EQ(m.count("ofu_hmma_active_seconds_total" + b), 0u);
  EXPECT_EQ(m.count("ofu_last_window_timestamp_seconds" + b), 0u);
}

TEST(CounterRule, TheStoreKeepsAWindowWithoutTensorDataAsARowWithNothingObserved) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("ofu-counter-rule-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  sources::FakeClock clock(1000);
  HistoryOptions options;
  options.path = (dir / "history.sqlite").string();
  {
    auto store = HistoryStore::Open(options, clock);
    ASSERT_TRUE(store.ok()) << store.error().message;
    for (const WindowBatch& batch : Batches()) ASSERT_TRUE((*store)->Consume(batch).ok());
  }
  auto history = history::ReadHistory(options.path, {});
  fs::remove_all(dir);
  ASSERT_TRUE(history.ok()) << history.error().message;
  ASSERT_EQ(history->windows.size(), 6u);  // GPU a's three, then GPU b's

  history::StoredWindow valid;
  valid.gpu_id = history->windows[0].gpu_id;
  valid.end_s = 1002;
  valid.span_s = 2;
  valid.counters.Set(kCounterObserved, 2);
  valid.counters.Set(kCounterUtilized, 1.0);
  valid.counters.Set(kCounterBusy, 2);
  valid.counters.Set(kCounterBusyUtilized, 1.0);
  valid.counters.Set(kCounterTensorActive, 0.8);
  valid.clock_mhz = valid.clock_min_mhz = valid.clock_max_mhz = 1500;
  valid.clock_windows = 1;
  valid.up_s = 2;
  valid.counters.Set(kCounterHmmaActive, 0.6);
  EXPECT_EQ(history->windows[0], valid);

  // Without tensor data: a row, nothing observed, the pipe NULL, a flag saying why.
  history::StoredWindow no_tensor;
  no_tensor.gpu_id = valid.gpu_id;
  no_tensor.end_s = 1004;
  no_tensor.span_s = 2;
  no_tensor.clock_mhz = no_tensor.clock_min_mhz = no_tensor.clock_max_mhz = 1500;
  no_tensor.clock_windows = 1;
  no_tensor.up_s = 2;
  no_tensor.flags = history::kHistoryNoTensor;
  EXPECT_EQ(history->windows[1], no_tensor);
  no_tensor.end_s = 1006;  // the OFU without tensor activity: the same, not 2 s observed at 0
  EXPECT_EQ(history->windows[2], no_tensor);

  // The store's sums are the exposition's counters.
  double observed = 0, tensor = 0;
  for (const history::StoredWindow& w : history->windows) {
    observed += w.counters.observed_s();
    tensor += w.counters.tensor_active_s();
  }
  EXPECT_EQ(observed, 2);
  EXPECT_EQ(tensor, 0.8);
  for (int i = 3; i < 6; ++i) {
    EXPECT_EQ(history->windows[static_cast<size_t>(i)].counters.observed_s(), 0);
    EXPECT_EQ(history->windows[static_cast<size_t>(i)].counters[kCounterHmmaActive], std::nullopt);
  }
}

}  // namespace
}  // namespace ofu::sinks
