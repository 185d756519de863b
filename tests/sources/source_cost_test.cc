// `ofu sources --cost`'s measurement and table (source_cost.h) on a
// SYNTHETIC source that makes scripted library calls through an accounting
// with a stepping clock: every figure is computed by hand.
#include "ofu/sources/source_cost.h"

#include <atomic>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofu/render/sources_output.h"

namespace ofu::sources {
namespace {

using render::FormatSourceCostJson;
using render::FormatSourceCostTable;

// Each Read() advances wall time by 1000 ns and CPU by 400 ns (100 user,
// 300 system): one call costs 1 us wall, 0.4 us CPU.
class SteppingClock final : public CallClock {
 public:
  CallClockReading Read() const override {
    const std::int64_t n = steps_.fetch_add(1, std::memory_order_relaxed);
    return {1000 * n, 400 * n, 100 * n, 300 * n};
  }

 private:
  mutable std::atomic<std::int64_t> steps_{0};
};

int Answer() { return 0; }

// Two GPUs; per window three calls of "libSample" and one of "libMetrics",
// and one "libSetup" in the first window only.
class ScriptedSource final : public Source {
 public:
  ScriptedSource(CallAccounting& accounting, FakeClock& clock)
      : sample_(BindAccounted<int()>(reinterpret_cast<void*>(&Answer), "libSample", &accounting)),
        metrics_(BindAccounted<int()>(reinterpret_cast<void*>(&Answer), "libMetrics", &accounting)),
        setup_(BindAccounted<int()>(reinterpret_cast<void*>(&Answer), "libSetup", &accounting)),
        clock_(clock) {}
  std::string_view kind() const override { return "nvml"; }
  std::string Describe() const override { return "scripted (SYNTHETIC)"; }
  bool live() const override { return true; }
  Result<std::optional<Snapshot>> Next() override {
    if (windows_++ == 0) setup_();
    for (int i = 0; i < 3; ++i) sample_();
    metrics_();
    clock_.SleepS(0.5);
    Snapshot snapshot;
    snapshot.window_s = 0.5;
    snapshot.gpus.resize(2);
    return std::optional<Snapshot>(std::move(snapshot));
  }

 private:
  AccountedFunction<int()> sample_, metrics_, setup_;
  FakeClock& clock_;
  int windows_ = 0;
};

TEST(SourceCostTest, MeasuresTheWindowsAfterTheFirst) {
  const SteppingClock call_clock;
  CallAccounting accounting(call_clock);
  FakeClock clock(100);
  ScriptedSource source(accounting, clock);
  double process_cpu = 1.0;
  // The process used 2 ms of CPU over the measured windows.
  const auto cpu = [&] {
    const double now = process_cpu;
    process_cpu += 0.002;
    return std::optional<double>(now);
  };
  auto cost = MeasureSourceCost(source, accounting, 4, cpu, clock);
  ASSERT_TRUE(cost.ok()) << cost.error().message;
  EXPECT_EQ(cost->windows, 4);
  EXPECT_EQ(cost->gpus, 2);
  EXPECT_DOUBLE_EQ(cost->window_s, 0.5);
  EXPECT_DOUBLE_EQ(cost->elapsed_s, 2.0);
  ASSERT_TRUE(cost->process_cpu_s);
  EXPECT_NEAR(*cost->process_cpu_s, 0.002, 1e-12);
  ASSERT_EQ(cost->calls.size(), 2u);            // libSetup ran in the first window only
  EXPECT_EQ(cost->calls[0].call, "libSample");  // most CPU first
  EXPECT_EQ(cost->calls[0].calls, 12u);
  EXPECT_NEAR(cost->calls[0].cpu_s, 12 * 0.4e-6, 1e-15);
  EXPECT_EQ(cost->calls[1].call, "libMetrics");
  EXPECT_EQ(cost->calls[1].calls, 4u);

  const auto json = nlohmann::json::parse(FormatSourceCostJson(*cost));
  EXPECT_DOUBLE_EQ(json["per_window"]["calls"].get<double>(), 4.0);            // 16 calls / 4 windows
  EXPECT_NEAR(json["per_window"]["cpu_us"].get<double>(), 1.6, 1e-9);          // 4 calls x 0.4 us
  EXPECT_NEAR(json["per_window"]["process_cpu_us"].get<double>(), 500, 1e-6);  // 2 ms / 4
  EXPECT_NEAR(json["per_window"]["core_percent"].get<double>(), 0.1, 1e-9);    // 2 ms / 2 s
  EXPECT_NEAR(json["calls"][0]["cpu_us_per_call"].get<double>(), 0.4, 1e-9);
  EXPECT_NEAR(json["calls"][0]["system_us_per_call"].get<double>(), 0.3, 1e-9);
  EXPECT_NEAR(json["calls"][0]["process_cpu_share"].get<double>(), 12 * 0.4e-6 / 0.002, 1e-9);

  const std::string table = FormatSourceCostTable(*cost);
  EXPECT_NE(table.find("scripted (SYNTHETIC): 4 windows of 0.5 s, 2 GPUs, 2.0 s"), std::string::npos) << table;
  EXPECT_NE(table.find("per window: 4.00 library calls, 4.0 us wall and 1.6 us CPU inside them; the process: "
                       "500.0 us CPU (0.100 % of one core)"),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace ofu::sources
