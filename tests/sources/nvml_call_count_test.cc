// The deterministic proxy of the NVML source's cost on a real driver
// (issue 29): how many driver calls it makes per window per GPU, counted by
// the double (tests/doubles/fake_nvml.cc counts every NVML function it
// receives). On the H100 each call is time in the driver (SM clock read p50
// 0.39 us, GPM sample 45 us, nvmlGpmMetricsGet of 14 metrics 1,420 us:
// docs/results/2026-11-26-h100-sxm5/stage-A/probe-cost.json), so a change
// that adds a call per window must fail here and be argued for.
// bench/nvml_cost_model.cc turns these counts into predicted CPU.
//
// Counting starts after the first window, which also takes the starting GPM
// sample and probes the exact-cycle metrics once. The double answers like
// driver 580.159.04 (no cycle metrics), the counted windows span exactly one
// process-list interval, and every expected number is worked out by hand.
#include <dlfcn.h>

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "doubles/fake_nvml_scenarios.h"
#include "ofu/agent/config.h"
#include "ofu/agent/run.h"
#include "ofu/sources/nvml/nvml_source.h"

namespace ofu::sources {
namespace {

// The NVML functions the source may call per window; "nvml_calls" is all
// functions together, so a call of any other function is caught too.
const std::vector<std::string> kCounted = [] {
  std::vector<std::string> counted = {"nvml_calls", "gpm_metrics_asked"};
  for (const std::string& f : ofu::testing::PerWindowNvmlFunctions()) counted.push_back(f);
  return counted;
}();

class NvmlCallCountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_ = dlopen(OFU_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    load_ = reinterpret_cast<int (*)(const char*)>(dlsym(handle_, "ofu_fake_nvml_load_scenario"));
    count_ = reinterpret_cast<int (*)(const char*)>(dlsym(handle_, "ofu_fake_nvml_count"));
    ASSERT_NE(load_, nullptr);
    ASSERT_NE(count_, nullptr);
  }
  void TearDown() override {
    if (handle_ != nullptr) dlclose(handle_);
  }

  // Calls per window per GPU over `windows` windows after the first.
  std::map<std::string, double> CallsPerWindowPerGpu(SourceOptions options, int gpus, int windows) {
    std::map<std::string, double> out;
    EXPECT_EQ(load_(ofu::testing::EveryCounterScenario(gpus).c_str()), 0);
    options.nvml_library = OFU_FAKE_NVML_PATH;
    auto source = OpenNvmlSource(options, clock_);
    EXPECT_TRUE(source.ok()) << (source.ok() ? "" : source.error().message);
    if (!source.ok()) return out;
    EXPECT_TRUE((*source)->Next().ok());
    std::map<std::string, int> before;
    for (const std::string& name : kCounted) before[name] = count_(name.c_str());
    for (int k = 0; k < windows; ++k) {
      auto snapshot = (*source)->Next();
      EXPECT_TRUE(snapshot.ok() && snapshot->has_value() && (*snapshot)->gpus.size() == static_cast<size_t>(gpus));
    }
    for (const std::string& name : kCounted) {
      out[name] = static_cast<double>(count_(name.c_str()) - before[name]) / (windows * gpus);
    }
    return out;
  }

  FakeClock clock_{1000};
  void* handle_ = nullptr;
  int (*load_)(const char*) = nullptr;
  int (*count_)(const char*) = nullptr;
};

// `ofu agent` as installed: 1 s windows, the clock read ten times a second,
// process lists every 10 s attribution interval, only the agent's counters
// (8 GPM metrics: 1, 5, 6, 7, 9, 11, 12, 13; the clock event reasons once a
// window, for the clock model's power state; no power or energy, which no
// agent output carries).
TEST_F(NvmlCallCountTest, AgentDefaultOneGpu) {
  const agent::AgentConfig config;
  ASSERT_EQ(config.source_options.window_s, 1.0);
  ASSERT_EQ(config.attribution_interval_s, 10.0);
  const auto calls = CallsPerWindowPerGpu(agent::SourceOptionsOf(config), 1, 10);
  EXPECT_DOUBLE_EQ(calls.at("nvmlDeviceGetClockInfo"), 10);
  EXPECT_DOUBLE_EQ(calls.at("nvmlGpmSampleGet"), 1);
  EXPECT_DOUBLE_EQ(calls.at("nvmlGpmMetricsGet"), 1);
  EXPECT_DOUBLE_EQ(calls.at("gpm_metrics_asked"), 8);
  EXPECT_DOUBLE_EQ(calls.at("nvmlDeviceGetPowerUsage"), 0);
  EXPECT_DOUBLE_EQ(calls.at("nvmlDeviceGetTotalEnergyConsumption"), 0);
  EXPECT_DOUBLE_EQ(calls.at("nvmlDeviceGetCurrentClocksEventReasons"), 1);
  EXPECT_DOUBLE_EQ(calls.at("nvmlDeviceGetComputeRunningProcesses_v3"), 0.1);  // once in 10 windows
  EXPECT_DOUBLE_EQ(calls.at("nvml_calls"), 10 + 1 + 1 + 1 + 0.1);
}

// `ofu agent --window 0.1` on an 8-GPU node: one clock reading per window,
// a process list every 100 windows.
TEST_F(NvmlCallCountTest, AgentTenthSecondWindowsEightGpus) {
  agent::AgentConfig config;
  config.source_options.window_s = 0.1;
  const auto calls = CallsPerWindowPerGpu(agent::SourceOptionsOf(config), 8, 100);
  EXPECT_DOUBLE_EQ(calls.at("nvmlDeviceGetClockInfo"), 1);
  EXPECT_DOUBLE_EQ(calls.at("nvmlGpmSampleGet"), 1);
  EXPECT_DOUBLE_EQ(calls.at("nvmlGpmMetricsGet"), 1);
  EXPECT_DOUBLE_EQ(calls.at("gpm_metrics_asked"), 8);
  EXPECT_DOUBLE_EQ(calls.at("nvmlDeviceGetPowerUsage"), 0);
  EXPECT_DOUBLE_EQ(calls.at("nvmlDeviceGetTotalEnergyConsumption"), 0);
  EXPECT_DOUBLE_EQ(calls.at("nvmlDeviceGetCurrentClocksEventReasons"), 1);
  EXPECT_DOUBLE_EQ(calls.at("nvmlDeviceGetComputeRunningProcesses_v3"), 0.01);
  EXPECT_DOUBLE_EQ(calls.at("nvml_calls"), 1 + 1 + 1 + 1 + 0.01);  // 32.08 per window for the node
}

// `ofu top` and `ofu record` (SourceOptions defaults: every counter, the
// process list every window): all 12 GPM metrics and the board values.
TEST_F(NvmlCallCountTest, EveryCounterOneGpu) {
  const auto calls = CallsPerWindowPerGpu(SourceOptions{}, 1, 10);
  EXPECT_DOUBLE_EQ(calls.at("nvmlDeviceGetClockInfo"), 10);
  EXPECT_DOUBLE_EQ(calls.at("nvmlGpmSampleGet"), 1);
  EXPECT_DOUBLE_EQ(calls.at("nvmlGpmMetricsGet"), 1);
  EXPECT_DOUBLE_EQ(calls.at("gpm_metrics_asked"), 12);
  EXPECT_DOUBLE_EQ(calls.at("nvmlDeviceGetPowerUsage"), 1);
  EXPECT_DOUBLE_EQ(calls.at("nvmlDeviceGetTotalEnergyConsumption"), 1);
  EXPECT_DOUBLE_EQ(calls.at("nvmlDeviceGetCurrentClocksEventReasons"), 1);
  EXPECT_DOUBLE_EQ(calls.at("nvmlDeviceGetComputeRunningProcesses_v3"), 1);
  EXPECT_DOUBLE_EQ(calls.at("nvml_calls"), 10 + 1 + 1 + 3 + 1);
}

}  // namespace
}  // namespace ofu::sources
