// The agent's pieces on synthetic windows: the metrics state (counters and
// gauges against values worked out by hand, health), the window evaluator,
// the config file, and the sampling loop with a scripted source.
#include <algorithm>
#include <deque>
#include <map>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ofu/agent/agent.h"
#include "ofu/agent/config.h"
#include "ofu/agent/run.h"
#include "ofu/agent/window_evaluator.h"
#include "ofu/sinks/metrics_state.h"
#include "support/exposition.h"

namespace ofu {
namespace {

using sinks::GpuWindow;
using sinks::MetricsState;
using sinks::WindowBatch;
using testing::ParseExposition;

GpuWindow Gpu(const std::string& uuid, const std::string& index, std::optional<double> ofu,
              std::optional<double> tensor, bool busy, sources::GpuHealth health = sources::GpuHealth::kOk) {
  GpuWindow gpu;
  gpu.identity.uuid = uuid;
  gpu.identity.gpu_index = index;
  gpu.identity.model = "NVIDIA H100 80GB HBM3";
  gpu.sku = "h100-sxm5";
  gpu.architecture = "hopper";
  gpu.spec_clock_mhz = 1830;
  gpu.health = health;
  gpu.window.ofu = ofu;
  gpu.window.tensor_active = tensor;
  gpu.window.busy = busy;
  return gpu;
}

WindowBatch Batch(double end_s, double window_s, std::vector<GpuWindow> gpus) {
  WindowBatch batch;
  batch.end_s = end_s;
  batch.window_s = window_s;
  batch.gpus = std::move(gpus);
  return batch;
}

constexpr const char* kGpuA = "{uuid=GPU-a,gpu=0}";
constexpr const char* kGpuB = "{uuid=GPU-b,gpu=1}";

TEST(MetricsState, CountersAdvanceOnlyOverValidWindows) {
  sources::FakeClock clock(1000);
  MetricsState state({"0.1.0", "nvml", 2.0, 3}, clock);
  // GPU a: OFU 0.5 busy (2 s), then 0.25 idle (2 s), then no OFU (no clock).
  // GPU b: OFU 0.8 busy, then lost twice.
  ASSERT_TRUE(
      state.Consume(Batch(1002, 2, {Gpu("GPU-a", "0", 0.5, 0.4, true), Gpu("GPU-b", "1", 0.8, 0.7, true)})).ok());
  ASSERT_TRUE(state
                  .Consume(Batch(1004, 2,
                                 {Gpu("GPU-a", "0", 0.25, 0.2, false),
                                  Gpu("GPU-b", "1", std::nullopt, std::nullopt, false, sources::GpuHealth::kLost)}))
                  .ok());
  ASSERT_TRUE(state
                  .Consume(Batch(1006, 2,
                                 {Gpu("GPU-a", "0", std::nullopt, 0.3, true),
                                  Gpu("GPU-b", "1", std::nullopt, std::nullopt, false, sources::GpuHealth::kLost)}))
                  .ok());
  auto m = ParseExposition(state.Render(formats::ExpositionFormat::kPrometheusText));
  const auto at = [&](const std::string& name, const char* labels) { return m.at(name + labels); };
  // a: utilized 0.5·2 + 0.25·2 = 1.5 over 4 observed seconds; busy 2 s at 0.5.
  EXPECT_DOUBLE_EQ(at("ofu_utilized_seconds_total", kGpuA), 1.5);
  EXPECT_DOUBLE_EQ(at("ofu_observed_seconds_total", kGpuA), 4);
  EXPECT_DOUBLE_EQ(at("ofu_busy_seconds_total", kGpuA), 2);
  EXPECT_DOUBLE_EQ(at("ofu_busy_utilized_seconds_total", kGpuA), 1.0);
  EXPECT_DOUBLE_EQ(at("ofu_tensor_active_seconds_total", kGpuA), 0.4 * 2 + 0.2 * 2);
  EXPECT_DOUBLE_EQ(at("ofu_last_window_timestamp_seconds", kGpuA), 1004);
  // The last window had no OFU: the gauge is absent, not 0; tensor is there.
  EXPECT_EQ(m.count(std::string("ofu_ofu_ratio") + kGpuA), 0u);
  EXPECT_DOUBLE_EQ(at("ofu_tensor_active_ratio", kGpuA), 0.3);
  EXPECT_DOUBLE_EQ(at("ofu_gpu_up", kGpuA), 1);
  // b: one valid window, then lost: up 0, two gpu_lost errors.
  EXPECT_DOUBLE_EQ(at("ofu_utilized_seconds_total", kGpuB), 1.6);
  EXPECT_DOUBLE_EQ(at("ofu_observed_seconds_total", kGpuB), 2);
  EXPECT_DOUBLE_EQ(at("ofu_gpu_up", kGpuB), 0);
  EXPECT_DOUBLE_EQ(m.at("ofu_source_errors_total{source=nvml,kind=gpu_lost}"), 2);
  EXPECT_DOUBLE_EQ(at("ofu_window_seconds", kGpuA), 2);
  EXPECT_DOUBLE_EQ(m.at("ofu_gpu_info{uuid=GPU-a,gpu=0,model=NVIDIA H100 80GB HBM3,sku=h100-sxm5,architecture=hopper}"),
                   1);
  EXPECT_DOUBLE_EQ(m.at("ofu_build_info{version=0.1.0,source=nvml}"), 1);
}

TEST(MetricsState, JobInfoFollowsTheGpuAndDisappears) {
  sources::FakeClock clock(0);
  MetricsState state({"0.1.0", "nvml", 1.0, 3}, clock);
  WindowBatch batch = Batch(1, 1, {Gpu("GPU-a", "0", 0.5, 0.5, true)});
  batch.jobs["GPU-a"] = attribution::JobInfo{"1234", "alice", "train", "slurm", "", "", ""};
  ASSERT_TRUE(state.Consume(batch).ok());
  auto m = ParseExposition(state.Render(formats::ExpositionFormat::kPrometheusText));
  EXPECT_DOUBLE_EQ(m.at("ofu_gpu_job_info{uuid=GPU-a,job_id=1234,user=alice,job_name=train,scheduler=slurm}"), 1);
  // The job label never lands on the per-GPU series.
  for (const auto& [key, value] : m) {
    if (key.rfind("ofu_gpu_job_info", 0) != 0) {
      EXPECT_EQ(key.find("job_id"), std::string::npos) << key;
    }
  }
  ASSERT_TRUE(state.Consume(Batch(2, 1, {Gpu("GPU-a", "0", 0.5, 0.5, true)})).ok());
  m = ParseExposition(state.Render(formats::ExpositionFormat::kPrometheusText));
  for (const auto& [key, value] : m) EXPECT_EQ(key.rfind("ofu_gpu_job_info", 0), std::string::npos) << key;
}

TEST(MetricsState, OpenMetricsNamesFamiliesAndEnds) {
  sources::FakeClock clock(0);
  MetricsState state({"0.1.0", "dcgm", 1.0, 3}, clock);
  ASSERT_TRUE(state.Consume(Batch(1, 1, {Gpu("GPU-a", "0", 0.5, 0.5, true)})).ok());
  const std::string text = state.Render(formats::ExpositionFormat::kOpenMetrics);
  EXPECT_NE(text.find("# TYPE ofu_utilized_seconds counter\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ofu_utilized_seconds_total{uuid=\"GPU-a\",gpu=\"0\"} 0.5\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE ofu_gpu info\n"), std::string::npos);
  EXPECT_NE(text.find("ofu_gpu_info{"), std::string::npos);
  EXPECT_TRUE(text.size() >= 6 && text.compare(text.size() - 6, 6, "# EOF\n") == 0);
  // And the reader takes it back (it knows OpenMetrics).
  EXPECT_DOUBLE_EQ(ParseExposition(text).at(std::string("ofu_observed_seconds_total") + kGpuA), 1);
}

TEST(MetricsState, UnhealthyAfterThreeWindowsWithoutData) {
  sources::FakeClock clock(100);
  MetricsState state({"0.1.0", "nvml", 1.0, 3}, clock);
  EXPECT_TRUE(state.CheckHealth().healthy);
  clock.SleepS(3.5);
  const sinks::Health stale = state.CheckHealth();
  EXPECT_FALSE(stale.healthy);
  EXPECT_NE(stale.reason.find("no window from the nvml source for 3.5 s"), std::string::npos) << stale.reason;
  ASSERT_TRUE(state.Consume(Batch(104, 1, {Gpu("GPU-a", "0", 0.5, 0.5, true)})).ok());
  EXPECT_TRUE(state.CheckHealth().healthy);
  // Windows keep coming but every GPU is lost: unhealthy too, after 3 windows.
  for (int i = 0; i < 4; ++i) {
    clock.SleepS(1);
    ASSERT_TRUE(
        state
            .Consume(Batch(105 + i, 1,
                           {Gpu("GPU-a", "0", std::nullopt, std::nullopt, false, sources::GpuHealth::kUnavailable)}))
            .ok());
  }
  const sinks::Health down = state.CheckHealth();
  EXPECT_FALSE(down.healthy);
  EXPECT_NE(down.reason.find("no GPU has answered for 4.0 s"), std::string::npos) << down.reason;
}

TEST(MetricsState, PipeCountersAdvanceWhereTheSourceHasThemAndAreAbsentElsewhere) {
  sources::FakeClock clock(1000);
  MetricsState state({"0.1.0", "dcgm", 2.0, 3}, clock);
  // GPU a has HMMA and IMMA (0.3 and 0.1 of the window); GPU b has no pipe counters.
  GpuWindow a = Gpu("GPU-a", "0", 0.5, 0.4, true);
  a.pipes.hmma = 0.3;
  a.pipes.imma = 0.1;
  GpuWindow a_invalid = a;  // no OFU: the counters do not advance
  a_invalid.window.ofu.reset();
  ASSERT_TRUE(state.Consume(Batch(1002, 2, {a, Gpu("GPU-b", "1", 0.8, 0.7, true)})).ok());
  ASSERT_TRUE(state.Consume(Batch(1004, 2, {a, Gpu("GPU-b", "1", 0.8, 0.7, true)})).ok());
  ASSERT_TRUE(state.Consume(Batch(1006, 2, {a_invalid, Gpu("GPU-b", "1", 0.8, 0.7, true)})).ok());
  auto m = ParseExposition(state.Render(formats::ExpositionFormat::kPrometheusText));
  // a: 0.3 × 2 s × 2 valid windows = 1.2; 0.1 × 4 = 0.4.
  EXPECT_DOUBLE_EQ(m.at(std::string("ofu_hmma_active_seconds_total") + kGpuA), 1.2);
  EXPECT_DOUBLE_EQ(m.at(std::string("ofu_imma_active_seconds_total") + kGpuA), 0.4);
  EXPECT_EQ(m.count(std::string("ofu_dfma_active_seconds_total") + kGpuA), 0u);
  for (const char* name : {"ofu_hmma_active_seconds_total", "ofu_imma_active_seconds_total"}) {
    EXPECT_EQ(m.count(name + std::string(kGpuB)), 0u) << name << ": absent, not 0";
  }
}

// A reading of one GPU: its UUID and model, tensor activity and SM clock.
sources::GpuReading Reading(const std::string& uuid, const std::string& model, double tensor, double clock_mhz) {
  sources::GpuReading reading;
  reading.identity.uuid = uuid;
  reading.identity.model = model;
  reading.sample.tensor_active = tensor;
  reading.sample.sm_clock_mhz = clock_mhz;
  return reading;
}

// A 1 s window ending at 2000 s of `gpus`.
sources::Snapshot Window2000(std::vector<sources::GpuReading> gpus) {
  sources::Snapshot snapshot;
  snapshot.time_s = 2000;
  snapshot.window_s = 1;
  snapshot.gpus = std::move(gpus);
  return snapshot;
}

TEST(WindowEvaluator, CarriesThePipeActivitiesTheSourceHas) {
  const GpuSpecDatabase specs = *GpuSpecDatabase::Embedded();
  agent::WindowEvaluator evaluator(specs, nullptr, 0.01);
  sources::GpuReading h100 = Reading("GPU-h", "NVIDIA H100 80GB HBM3", 0.5, 1830);
  h100.sample.hmma_active = 0.45;
  h100.sample.dfma_active = 0.0;
  const WindowBatch batch = evaluator.Evaluate(Window2000({h100}));
  ASSERT_EQ(batch.gpus.size(), 1u);
  EXPECT_EQ(batch.gpus[0].pipes.hmma, 0.45);
  EXPECT_FALSE(batch.gpus[0].pipes.imma);
  EXPECT_EQ(batch.gpus[0].pipes.dfma, 0.0);  // present and zero is not absent
}

TEST(WindowEvaluator, NonTensorHandValueReachesTheExposition) {
  // H100 SXM5, FP32 pipe 0.6 at 1755 MHz for a 2 s window:
  // bound 0.6 x 132 x 128 x 2 x 1.755e9 = 35.582 TFLOP/s, so 71.16e12 FLOP and 1.2 FP32-active seconds.
  const GpuSpecDatabase specs = *GpuSpecDatabase::Embedded();
  agent::WindowEvaluator evaluator(specs, nullptr, 0.01);
  sources::Snapshot snapshot;
  snapshot.time_s = 1002;
  snapshot.window_s = 2;
  sources::GpuReading h100;
  h100.identity.key = "GPU-a";
  h100.identity.uuid = "GPU-a";
  h100.identity.gpu_index = "0";
  h100.identity.model = "NVIDIA H100 80GB HBM3";
  h100.sample.tensor_active = 0.02;
  h100.sample.sm_clock_mhz = 1755;
  h100.sample.fp32_active = 0.6;
  sources::GpuReading bare = h100;  // a GPU whose source has no CUDA-core pipes
  bare.identity.key = bare.identity.uuid = "GPU-b";
  bare.identity.gpu_index = "1";
  bare.sample.fp32_active.reset();
  snapshot.gpus = {h100, bare};
  const WindowBatch batch = evaluator.Evaluate(snapshot);
  ASSERT_EQ(batch.gpus.size(), 2u);
  const NonTensorFigures& nt = batch.gpus[0].window.non_tensor;
  EXPECT_EQ(nt[CudaCorePipe::kFp32], 0.6);
  EXPECT_NEAR(*nt.flops_upper_bound_tflops, 35.582976, 1e-3);
  EXPECT_FALSE(batch.gpus[1].window.non_tensor.flops_upper_bound_tflops);

  sources::FakeClock clock(1000);
  MetricsState state({"0.1.0", "dcgm", 2.0, 3}, clock);
  ASSERT_TRUE(state.Consume(batch).ok());
  auto m = ParseExposition(state.Render(formats::ExpositionFormat::kPrometheusText));
  EXPECT_NEAR(m.at(std::string("ofu_fp32_active_seconds_total") + kGpuA), 1.2, 1e-12);
  EXPECT_NEAR(m.at(std::string("ofu_non_tensor_flop_upper_bound_total") + kGpuA), 2 * 35.582976e12, 1e9);
  EXPECT_NEAR(m.at(std::string("ofu_non_tensor_peak_seconds_total") + kGpuA), 2 * 35.582976 / 66.9, 1e-4);
  EXPECT_EQ(m.count(std::string("ofu_fp64_active_seconds_total") + kGpuA), 0u) << "absent, not 0";
  for (const char* name : {"ofu_fp32_active_seconds_total", "ofu_non_tensor_flop_upper_bound_total"}) {
    EXPECT_EQ(m.count(name + std::string("{uuid=GPU-b,gpu=1}")), 0u) << name << ": absent, not 0";
  }
}

TEST(WindowEvaluator, OfuFromTheSpecAndNoneForAnUnknownModel) {
  const GpuSpecDatabase specs = *GpuSpecDatabase::Embedded();
  agent::WindowEvaluator evaluator(specs, nullptr, 0.01);
  sources::Snapshot snapshot;
  snapshot.time_s = 2000;
  snapshot.window_s = 1;
  sources::GpuReading h100;
  h100.identity.uuid = "GPU-h";
  h100.identity.model = "NVIDIA H100 80GB HBM3";
  h100.sample.tensor_active = 0.5;
  h100.sample.gr_engine_active = 0.9;
  h100.sample.sm_clock_mhz = 1830;
  sources::GpuReading mystery = h100;
  mystery.identity.uuid = "GPU-m";
  mystery.identity.model = "NVIDIA Mystery 1";
  snapshot.gpus = {h100, mystery};
  const WindowBatch batch = evaluator.Evaluate(snapshot);
  ASSERT_EQ(batch.gpus.size(), 2u);
  // The H100 80GB HBM3 was measured: its OFU uses the run clock the clock
  // model estimates (tests/core/clock_model_test.cc; by hand in
  // tests/cli/report_cli_test.cc): 1685.719 MHz for tensor 0.5 at a reported
  // 1830 MHz without clock event reasons; 0.5 x 1685.719 / 1829.945.
  EXPECT_NEAR(*batch.gpus[0].window.ofu, 0.5 * 1685.719 / (989.4e12 / (132 * 4096.0) / 1e6), 1e-6);
  EXPECT_EQ(batch.gpus[0].window.clock_source, ClockSource::kMeasuredModel);
  EXPECT_TRUE(batch.gpus[0].window.busy);
  EXPECT_EQ(batch.gpus[0].sku, "h100-sxm5");
  EXPECT_DOUBLE_EQ(batch.gpus[0].window.end_s, 2000);
  EXPECT_FALSE(batch.gpus[1].window.ofu);
  EXPECT_DOUBLE_EQ(*batch.gpus[1].window.tensor_active, 0.5);
  EXPECT_EQ(batch.gpus[1].sku, "");
  ASSERT_EQ(batch.notes.size(), 1u);
  EXPECT_NE(batch.notes[0].find("NVIDIA Mystery 1"), std::string::npos) << batch.notes[0];
  // Said once, not every window.
  EXPECT_TRUE(evaluator.Evaluate(snapshot).notes.empty());
}

// A model given (the config's gpu_model, resolved by the caller) is every
// GPU's, with no lookup by the name the GPU reports: an H100 PCIe's f_spec,
// 756 TFLOP/s / (114 SMs x 4096) = 1619 MHz, and no clock model (the GPU is
// not a board it was measured on): OFU = 0.5 x 1830 / 1619.
TEST(WindowEvaluator, AGivenSkuIsEveryGpusWithoutALookup) {
  const GpuSpecDatabase specs = *GpuSpecDatabase::Embedded();
  const GpuSpec* pcie = *specs.Lookup("h100-pcie");
  agent::WindowEvaluator evaluator(specs, pcie, 0.01);
  const WindowBatch batch = evaluator.Evaluate(Window2000({Reading("GPU-m", "NVIDIA Mystery 1", 0.5, 1830)}));
  ASSERT_EQ(batch.gpus.size(), 1u);
  EXPECT_EQ(batch.gpus[0].sku, "h100-pcie");
  ASSERT_TRUE(batch.gpus[0].window.ofu);
  EXPECT_NEAR(*batch.gpus[0].window.ofu, 0.5 * 1830 / (756e6 / (114 * 4096.0)), 1e-9);
  EXPECT_TRUE(batch.notes.empty());  // the unknown name was never looked up
}

// Exact cycles already are the clock the SMs ran: no model on top. An H200
// in steady tensor work (activity 0.9, at the power cap) reads NVML 8-11 %
// high: its OFU takes the reported clock over 1.099 (data/gpu_specs.json).
TEST(WindowEvaluator, TheClockModelAppliesToReportedClocksNotToExactCycles) {
  const GpuSpecDatabase specs = *GpuSpecDatabase::Embedded();
  agent::WindowEvaluator evaluator(specs, nullptr, 0.01);
  sources::Snapshot snapshot;
  snapshot.time_s = 2000;
  snapshot.window_s = 1;
  sources::GpuReading h200;
  h200.identity.uuid = "GPU-h200";
  h200.identity.model = "NVIDIA H200";
  h200.sample.tensor_active = 0.9;
  h200.sample.sm_clock_mhz = 1454;
  h200.sample.clock_event_reasons = 4;  // sw_power_cap
  h200.clock_basis = sources::ClockBasis::kOversampled;
  sources::GpuReading exact = h200;
  exact.identity.uuid = "GPU-exact";
  exact.clock_basis = sources::ClockBasis::kExactCycles;
  snapshot.gpus = {h200, exact};
  const WindowBatch batch = evaluator.Evaluate(snapshot);
  ASSERT_EQ(batch.gpus.size(), 2u);
  const double f_spec = 989.4e12 / (132 * 4096.0) / 1e6;
  EXPECT_NEAR(*batch.gpus[0].window.ofu, 0.9 * 1454 / 1.099 / f_spec, 1e-12);
  EXPECT_NEAR(*batch.gpus[0].window.ofu_clock_mhz, 1454 / 1.099, 1e-9);
  EXPECT_EQ(batch.gpus[0].window.clock_source, ClockSource::kMeasuredModel);
  EXPECT_NEAR(*batch.gpus[1].window.ofu, 0.9 * 1454 / f_spec, 1e-12);
  EXPECT_EQ(batch.gpus[1].window.clock_source, ClockSource::kExactCycles);
}

TEST(AgentConfig, ReadsEveryTable) {
  agent::AgentConfig config;
  const Status status = agent::ParseAgentConfig(R"(
[agent]
window = 0.5
source = "dcgm:unix:/run/dcgm.sock"
gpu_model = "h100-sxm5"
clock_readings = 4

[http]
listen = "0.0.0.0:9500"
web_config = "/etc/ofu/web.yml"

[store]
path = ""
retention_days = 7

[attribution]
methods = ["process", "static"]
proc_root = "/host/proc"
interval = 30

[[attribution.static]]
gpu = "0"
job_id = "pool-a"
user = "svc"
)",
                                                "agent.toml", config);
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(config.source_options.window_s, 0.5);
  EXPECT_EQ(config.source, "dcgm:unix:/run/dcgm.sock");
  EXPECT_EQ(config.gpu_model, "h100-sxm5");
  EXPECT_EQ(config.source_options.clock_readings, 4);
  EXPECT_EQ(config.listen_host, "0.0.0.0");
  EXPECT_EQ(config.listen_port, 9500);
  EXPECT_EQ(config.web_config, "/etc/ofu/web.yml");
  EXPECT_EQ(config.store_path, "");
  EXPECT_EQ(config.retention_days, 7);
  EXPECT_EQ(config.attribution_methods, (std::vector<std::string>{"process", "static"}));
  EXPECT_EQ(config.proc_root, "/host/proc");
  EXPECT_EQ(config.attribution_interval_s, 30);
  ASSERT_EQ(config.static_labels.size(), 1u);
  EXPECT_EQ(config.static_labels[0].gpu, "0");
  EXPECT_EQ(config.static_labels[0].job.job_id, "pool-a");
  EXPECT_EQ(config.static_labels[0].job.scheduler, "static");
}

// The file's source keys land in the source options whole, and the agent's
// policy is added on top when the source is opened, not stored.
TEST(AgentConfig, SourceKeysLandInTheSourceOptionsAndTheAgentAddsItsPolicy) {
  agent::AgentConfig config;
  const Status status = agent::ParseAgentConfig(R"(
[agent]
window = 2
clock_readings = 0
nvml_library = "/opt/nvml/libnvidia-ml.so.1"
dcgm_library = "/opt/dcgm/libdcgm.so.4"

[attribution]
interval = 30
)",
                                                "agent.toml", config);
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_FALSE(config.source_options.pace_replay);
  EXPECT_TRUE(config.source_options.fields.empty());
  const sources::SourceOptions opened = agent::SourceOptionsOf(config);
  EXPECT_EQ(opened.window_s, 2);
  EXPECT_EQ(opened.clock_readings, 0);
  EXPECT_EQ(opened.nvml_library, "/opt/nvml/libnvidia-ml.so.1");
  EXPECT_EQ(opened.dcgm_library, "/opt/dcgm/libdcgm.so.4");
  EXPECT_TRUE(opened.pace_replay);
  EXPECT_EQ(opened.process_interval_s, 30);
  const auto fields = agent::AgentCounterFields();
  EXPECT_EQ(opened.fields, std::vector<CounterField>(fields.begin(), fields.end()));
  // `ofu sources --cost` opens its source the same way, at the default interval.
  const sources::SourceOptions cost = agent::AgentSourceOptions(config.source_options);
  EXPECT_EQ(cost.process_interval_s, 10);
  EXPECT_EQ(cost.fields, opened.fields);
  EXPECT_EQ(cost.nvml_library, opened.nvml_library);
}

TEST(AgentConfig, TheShippedExampleIsValidAndHoldsTheDefaults) {
  agent::AgentConfig config;
  const Status status = agent::LoadAgentConfig(std::string(OFU_SOURCE_DIR) + "/deploy/agent.toml", config);
  ASSERT_TRUE(status.ok()) << status.error().message;
  const agent::AgentConfig defaults;
  EXPECT_EQ(config.source_options.window_s, defaults.source_options.window_s);
  EXPECT_EQ(config.listen_host, defaults.listen_host);
  EXPECT_EQ(config.listen_port, defaults.listen_port);
  EXPECT_EQ(config.store_path, defaults.store_path);
  EXPECT_EQ(config.attribution_methods, defaults.attribution_methods);
  EXPECT_EQ(config.slurm_mapping_dir, defaults.slurm_mapping_dir);
}

TEST(AgentConfig, ErrorsNameTheFileLineAndKey) {
  const auto error = [](const std::string& text) {
    agent::AgentConfig config;
    const Status status = agent::ParseAgentConfig(text, "agent.toml", config);
    EXPECT_FALSE(status.ok()) << text;
    return status.ok() ? std::string() : status.error().message;
  };
  EXPECT_EQ(error("[agent]\nwindow = 1\nwindwo = 2\n"), "agent.toml:3: unknown key agent.windwo");
  EXPECT_EQ(error("[agent]\nwindow = \"fast\"\n"), "agent.toml:2: agent.window: wrong type (expected a number)");
  EXPECT_EQ(error("[metrics]\nx = 1\n"),
            "agent.toml:1: unknown table [metrics] (known: agent, http, store, attribution)");
  EXPECT_NE(error("[http]\nlisten = \"localhost\"\n").find("agent.toml:2: http.listen:"), std::string::npos);
  EXPECT_NE(error("[agent]\nwindow = 0.01\n").find("window 0.01 s is not in 0.1..3600 s"), std::string::npos);
  // The same range as the --window flag's: a config file's window is capped too.
  EXPECT_NE(error("[agent]\nwindow = 7200\n").find("window 7200 s is not in 0.1..3600 s"), std::string::npos);
  EXPECT_NE(error("[agent]\nclock_readings = 2000\n").find("clock_readings 2000 is not in 1..1000"), std::string::npos);
  EXPECT_NE(error("[attribution]\nmethods = [\"lsf\"]\n").find("\"lsf\" is not one of"), std::string::npos);
  EXPECT_NE(error("[agent\nwindow = 1\n").find("agent.toml:1:"), std::string::npos);
  EXPECT_NE(error("[[attribution.static]]\ngpu = \"0\"\n").find("needs gpu and job_id"), std::string::npos);
}

// A source that plays back scripted snapshots, then ends.
class ScriptedSource : public sources::Source {
 public:
  explicit ScriptedSource(std::deque<sources::Snapshot> snapshots) : snapshots_(std::move(snapshots)) {}
  std::string_view kind() const override { return "scripted"; }
  std::string Describe() const override { return "scripted"; }
  bool live() const override { return false; }
  Result<std::optional<sources::Snapshot>> Next() override {
    if (snapshots_.empty()) return std::optional<sources::Snapshot>();
    sources::Snapshot next = std::move(snapshots_.front());
    snapshots_.pop_front();
    return std::optional<sources::Snapshot>(std::move(next));
  }

 private:
  std::deque<sources::Snapshot> snapshots_;
};

class CountingAttributor : public attribution::Attributor {
 public:
  std::string Describe() const override { return "counting"; }
  Result<attribution::Attribution> Attribute(const std::vector<attribution::GpuRef>& gpus) override {
    ++calls;
    attribution::Attribution answer;
    for (const auto& gpu : gpus)
      answer.jobs[gpu.uuid] = attribution::JobInfo{fmt::format("job{}", calls), "", "", "static", "", "", ""};
    answer.notes.push_back("same note every pass");
    return answer;
  }
  int calls = 0;
};

// Fails its first `failures` windows, then works.
class RecordingSink : public sinks::Sink {
 public:
  explicit RecordingSink(int failures) : failures_(failures) {}
  std::string_view name() const override { return "store"; }
  Status Consume(const WindowBatch& batch) override {
    batches.push_back(batch);
    if (static_cast<int>(batches.size()) <= failures_) {
      return Error{ErrorCode::kIo, "history store: database or disk is full"};
    }
    return OkStatus();
  }
  std::vector<WindowBatch> batches;

 private:
  int failures_;
};

TEST(Agent, AttributesEveryIntervalFeedsEverySinkAndLogsNotesOnce) {
  std::deque<sources::Snapshot> script;
  for (int i = 1; i <= 5; ++i) {
    sources::Snapshot s;
    s.time_s = 1000 + i;
    s.window_s = 1;
    sources::GpuReading gpu;
    gpu.identity.uuid = "GPU-a";
    gpu.identity.gpu_index = "0";
    gpu.identity.model = "NVIDIA H100 80GB HBM3";
    gpu.sample.tensor_active = 0.5;
    gpu.sample.sm_clock_mhz = 1830;
    s.gpus = {gpu};
    script.push_back(s);
  }
  ScriptedSource source(std::move(script));
  const GpuSpecDatabase specs = *GpuSpecDatabase::Embedded();
  agent::WindowEvaluator evaluator(specs, nullptr, 0.01);
  CountingAttributor attributor;
  RecordingSink failing(3), healthy(0);
  sources::FakeClock clock(0);
  std::vector<std::string> log;
  agent::Agent agent(source, evaluator, &attributor, {&failing, &healthy}, clock, 2.0,
                     [&](std::string_view line) { log.emplace_back(line); });
  for (int i = 0; i < 5; ++i) {
    auto step = agent.Step();
    ASSERT_TRUE(step.ok() && *step);
    clock.SleepS(1);
  }
  EXPECT_FALSE(*agent.Step());  // the script has ended
  // Attribution at t = 0, 2, 4: three passes; windows in between keep the last job.
  EXPECT_EQ(attributor.calls, 3);
  ASSERT_EQ(healthy.batches.size(), 5u);
  EXPECT_EQ(healthy.batches[1].jobs.at("GPU-a").job_id, "job1");
  EXPECT_EQ(healthy.batches[2].jobs.at("GPU-a").job_id, "job2");
  // The failing sink did not stop the other one; its error is logged once
  // for three failing windows, and its recovery once, both under its name.
  EXPECT_EQ(failing.batches.size(), 5u);
  EXPECT_EQ(std::count(log.begin(), log.end(), "sink store: history store: database or disk is full"), 1);
  EXPECT_EQ(std::count(log.begin(), log.end(), "recovered: sink store: history store: database or disk is full"), 1);
  EXPECT_EQ(std::count(log.begin(), log.end(), "same note every pass"), 1);
}

}  // namespace
}  // namespace ofu
