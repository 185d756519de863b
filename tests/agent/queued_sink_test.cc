// The agent's queued sinks (agent/queued_sink.h): the queue's length from the
// window, the drops of a stalled sink counted in the exposition from 0, and
// the agent logging a sink's error and its recovery under the sink's name.
#include "ofu/agent/queued_sink.h"

#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "ofu/formats/exposition.h"
#include "sinks/gated_sink.h"

namespace ofu::agent {
namespace {

TEST(QueuedWindows, SixtySecondsOfWindowsAtLeastEight) {
  EXPECT_EQ(QueuedWindows(1), 60u);
  EXPECT_EQ(QueuedWindows(0.125), 480u);
  EXPECT_EQ(QueuedWindows(0.1), 600u);  // 60 / 0.1 is 599.99...: rounded up
  EXPECT_EQ(QueuedWindows(7), 9u);      // 8.57 up
  EXPECT_EQ(QueuedWindows(60), 8u);
  EXPECT_EQ(QueuedWindows(0), 8u);
}

sinks::WindowBatch BatchEnding(double end_s) {
  sinks::WindowBatch batch;
  batch.end_s = end_s;
  batch.window_s = 60;
  return batch;
}

TEST(QueueSink, DroppedWindowsAreCountedInTheExpositionFromZero) {
  sources::FakeClock clock(0);
  sinks::MetricsState metrics({"0.1.0", "nvml", 60.0, 3}, clock);
  auto gated = std::make_unique<testing::GatedSink>();
  testing::GatedSink* gate = gated.get();
  std::unique_ptr<sinks::AsyncSink> queued = QueueSink(std::move(gated), metrics, 60);  // 8 windows
  const auto dropped = [&] {
    const std::string text = metrics.Render(formats::ExpositionFormat::kPrometheusText);
    const std::string series = "ofu_sink_dropped_windows_total{sink=\"gated\"} ";
    const size_t at = text.find(series);
    if (at == std::string::npos) return std::string("absent");
    const size_t value = at + series.size();
    return text.substr(value, text.find('\n', value) - value);
  };
  EXPECT_EQ(dropped(), "0");
  ASSERT_TRUE(queued->Consume(BatchEnding(60)).ok());
  gate->WaitEntered(1);  // held by the worker; the next 8 fill the queue
  for (int i = 2; i <= 9; ++i) ASSERT_TRUE(queued->Consume(BatchEnding(60.0 * i)).ok());
  EXPECT_EQ(dropped(), "0");
  for (int i = 10; i <= 12; ++i) EXPECT_FALSE(queued->Consume(BatchEnding(60.0 * i)).ok());
  EXPECT_EQ(dropped(), "3");
  gate->Open();
  ASSERT_TRUE(queued->Close().ok());
  EXPECT_EQ(gate->written().size(), 9u);  // window 1 and the newest eight
  EXPECT_EQ(gate->written().front(), 60);
  EXPECT_EQ(gate->written()[1], 60 * 5);
  // The counter outlives the queue (a reload makes a new one).
  queued.reset();
  EXPECT_EQ(dropped(), "3");
}

}  // namespace
}  // namespace ofu::agent
