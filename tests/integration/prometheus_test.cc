// The agent with a real Prometheus server (the Debian `prometheus` package) on
// loopback. The agent reads the in-tree NVML double (synthetic, scripted
// below) and labels both GPUs with one job from static labels; Prometheus
// scrapes it every second. Then the job's OFU from Prometheus
// (`ofu report --prometheus`) and from the agent's own store
// (`ofu report --store`) must agree within 0.5 percentage points and both
// match the value worked out by hand.
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "support/background_process.h"
#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using ofu::testing::BackgroundProcess;

// GPU 0: tensor pipes 50 % busy at 1830 MHz, all of it HMMA (GPM metric 7);
// GPU 1: 25 % at 1500 MHz, and no per-pipe counters.
constexpr const char* kNvmlScenario = R"({
  "devices": [
    {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-prom-0", "architecture": 9, "sm_count": 132,
     "max_sm_clock_mhz": 1980, "clocks": [1830], "power_mw": [650000], "energy_mj": [1000],
     "gpm": [{"1": 90, "5": 50, "7": 50}]},
    {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-prom-1", "architecture": 9, "sm_count": 132,
     "max_sm_clock_mhz": 1980, "clocks": [1500], "power_mw": [400000], "energy_mj": [1000],
     "gpm": [{"1": 60, "5": 25}]}
  ]})";

constexpr const char* kAgentConfig = R"(
[attribution]
methods = ["static"]
[[attribution.static]]
gpu = "0"
job_id = "job-42"
user = "alice"
job_name = "pretrain"
[[attribution.static]]
gpu = "1"
job_id = "job-42"
user = "alice"
job_name = "pretrain"
)";

// f_spec of an H100 SXM5: 989.4 TFLOPS / (132 SMs × 4096 FLOP/clk).
constexpr double kSpecMhz = 989.4e12 / (132 * 4096.0) / 1e6;
// The clock the SMs ran, from the H100 80GB HBM3's measured clock model
// (docs/metrics.md#the-sm-clock; the double gives no clock event reasons, so
// each burst figure is the mean of the two power states'), by hand:
//   GPU 0, tensor 0.5 at 1830 MHz: 1685.7198 MHz (tests/cli/report_cli_test.cc)
//   GPU 1, tensor 0.25 at 1500 MHz: (1500 / 1.0505 + 1500 / 1.0545) / 2 = 1425.1833 MHz
//   steady work (tensor >= 0.75) at 1830 MHz: 1830 / 0.998 = 1833.6673 MHz
constexpr double kRunMhzHalfAt1830 = 1685.7198047731117;
constexpr double kRunMhzQuarterAt1500 = 1425.1832934665672;
constexpr double kRunMhzSteadyAt1830 = 1833.6673346693387;
// Both GPUs observed for the same windows: the job's OFU is their mean.
constexpr double kJobOfu = (0.5 * kRunMhzHalfAt1830 + 0.25 * kRunMhzQuarterAt1500) / 2 / kSpecMhz;

double Now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

class PrometheusIntegration : public ofu::testing::CliTest {
 protected:
  // Starts `ofu agent` on the NVML double with `scenario`, plus `extra`
  // flags, and waits until its /healthz answers 200.
  void StartAgent(BackgroundProcess& agent, const fs::path& scenario, int port, const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {OFU_BINARY,       "agent",
                                     "--source",       "nvml",
                                     "--nvml-library", OFU_FAKE_NVML_PATH,
                                     "--listen",       fmt::format("127.0.0.1:{}", port)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    ASSERT_TRUE(agent.Start(argv, {"OFU_FAKE_NVML_SCENARIO=" + scenario.string()}, (dir_ / "agent.log").string()));
    httplib::Client client("127.0.0.1", port);
    bool healthy = false;
    for (int i = 0; i < 100 && !healthy; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      auto response = client.Get("/healthz");
      healthy = response && response->status == 200;
    }
    ASSERT_TRUE(healthy) << ofu::testing::Slurp(dir_ / "agent.log");
  }

  // Starts the real Prometheus server scraping the agent every second.
  void StartPrometheus(BackgroundProcess& prometheus, int agent_port, int port) {
    Write("prometheus.yml", fmt::format(R"(global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: ofu
    static_configs:
      - targets: ['127.0.0.1:{}']
)",
                                        agent_port));
    ASSERT_TRUE(prometheus.Start({OFU_PROMETHEUS, "--config.file=" + (dir_ / "prometheus.yml").string(),
                                  "--storage.tsdb.path=" + (dir_ / "tsdb").string(),
                                  fmt::format("--web.listen-address=127.0.0.1:{}", port)},
                                 {}, (dir_ / "prometheus.log").string()));
  }

  // Waits (30 s at most) until Prometheus holds `wanted` samples of the
  // observed-seconds counter of the device `uuid` (URL-encoded); returns how many it holds.
  int WaitForSamples(int port, const std::string& uuid, int wanted) {
    httplib::Client client("127.0.0.1", port);
    int samples = 0;
    for (int i = 0; i < 60 && samples < wanted; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      auto response = client.Get("/api/v1/query?query=count_over_time(ofu_observed_seconds_total%7Buuid%3D%22" + uuid +
                                 "%22%7D%5B1m%5D)");
      if (!response || response->status != 200) continue;
      const auto json = nlohmann::json::parse(response->body, nullptr, false);
      if (!json.is_discarded() && !json["data"]["result"].empty()) {
        samples = std::stoi(json["data"]["result"][0]["value"][1].get<std::string>());
      }
    }
    return samples;
  }

  // The agent on the NVML double with `scenario`, writing a store and
  // scraped by Prometheus until `uuid` (URL-escaped) has 8 samples there;
  // then `ofu report --format json` from the store and from Prometheus over
  // the same time: each answer with the source it came from, in `reports`.
  void ReportFromStoreAndPrometheus(const char* scenario, const std::string& uuid,
                                    std::vector<std::pair<std::string, nlohmann::json>>& reports) {
    const fs::path scenario_path = Write("nvml.json", scenario);
    const fs::path store = dir_ / "history.sqlite";
    const int agent_port = ofu::testing::FreeLoopbackPort();
    const int prometheus_port = ofu::testing::FreeLoopbackPort();
    BackgroundProcess agent;
    ASSERT_NO_FATAL_FAILURE(StartAgent(agent, scenario_path, agent_port,
                                       {"--store", store.string(), "--window", "0.5"}));
    const double since = Now();
    BackgroundProcess prometheus;
    ASSERT_NO_FATAL_FAILURE(StartPrometheus(prometheus, agent_port, prometheus_port));
    ASSERT_GE(WaitForSamples(prometheus_port, uuid, 8), 8) << ofu::testing::Slurp(dir_ / "prometheus.log");
    const double until = Now();
    EXPECT_EQ(agent.Stop(), 0) << ofu::testing::Slurp(dir_ / "agent.log");
    for (const std::string& from : {fmt::format("--store '{}'", store.string()),
                                    fmt::format("--prometheus http://127.0.0.1:{} --since {:.3f} --until {:.3f}",
                                                prometheus_port, since - 5, until)}) {
      auto run = ofu::testing::RunShell(fmt::format("'{}' report {} --format json", OFU_BINARY, from), dir_);
      ASSERT_EQ(run.exit_code, 0) << from << ": " << run.err;
      reports.emplace_back(from, nlohmann::json::parse(run.out));
    }
    prometheus.Stop();
  }
};

TEST_F(PrometheusIntegration, ReportFromPrometheusAgreesWithTheStoreAndTheHandValue) {
  if (!ofu::testing::ProgramFound(OFU_PROMETHEUS)) {
    GTEST_SKIP() << "no prometheus binary (scripts/install-deps.sh installs the Debian package)";
  }
  const fs::path scenario = Write("nvml.json", kNvmlScenario);
  const fs::path config = Write("agent.toml", kAgentConfig);
  const fs::path store = dir_ / "history.sqlite";
  const int agent_port = ofu::testing::FreeLoopbackPort();
  const int prometheus_port = ofu::testing::FreeLoopbackPort();

  BackgroundProcess agent;
  ASSERT_NO_FATAL_FAILURE(StartAgent(agent, scenario, agent_port,
                                     {"--config", config.string(), "--store", store.string(), "--window", "0.5"}));
  const double since = Now();
  BackgroundProcess prometheus;
  ASSERT_NO_FATAL_FAILURE(StartPrometheus(prometheus, agent_port, prometheus_port));
  // Let it scrape until it holds at least 10 samples of the job's counters.
  httplib::Client prometheus_client("127.0.0.1", prometheus_port);
  ASSERT_GE(WaitForSamples(prometheus_port, "GPU-prom-0", 10), 10) << ofu::testing::Slurp(dir_ / "prometheus.log");
  // The HMMA counter reached Prometheus for GPU 0 only: absent, not 0, for GPU 1.
  {
    auto response = prometheus_client.Get("/api/v1/query?query=ofu_hmma_active_seconds_total");
    ASSERT_TRUE(response && response->status == 200);
    const auto json = nlohmann::json::parse(response->body);
    ASSERT_EQ(json["data"]["result"].size(), 1u) << response->body;
    EXPECT_EQ(json["data"]["result"][0]["metric"]["uuid"], "GPU-prom-0");
    EXPECT_GT(std::stod(json["data"]["result"][0]["value"][1].get<std::string>()), 0);
  }
  const double until = Now();
  EXPECT_EQ(agent.Stop(), 0) << ofu::testing::Slurp(dir_ / "agent.log");

  auto from_store = ofu::testing::RunShell(
      fmt::format("'{}' report --store '{}' --job job-42 --format json", OFU_BINARY, store.string()), dir_);
  ASSERT_EQ(from_store.exit_code, 0) << from_store.err;
  auto from_prometheus = ofu::testing::RunShell(
      fmt::format("'{}' report --prometheus http://127.0.0.1:{} --job job-42 --since {:.3f} --until {:.3f} "
                  "--format json",
                  OFU_BINARY, prometheus_port, since - 5, until),
      dir_);
  ASSERT_EQ(from_prometheus.exit_code, 0) << from_prometheus.err;
  const auto store_json = nlohmann::json::parse(from_store.out);
  const auto prometheus_json = nlohmann::json::parse(from_prometheus.out);
  ASSERT_EQ(store_json["jobs"].size(), 1u) << from_store.out;
  ASSERT_EQ(prometheus_json["jobs"].size(), 1u) << from_prometheus.out;
  const double store_ofu = store_json["jobs"][0]["ofu"].get<double>();
  const double prometheus_ofu = prometheus_json["jobs"][0]["ofu"].get<double>();
  EXPECT_EQ(store_json["jobs"][0]["gpus"], 2);
  EXPECT_EQ(prometheus_json["jobs"][0]["gpus"], 2);
  EXPECT_NEAR(store_ofu, prometheus_ofu, 0.005);
  EXPECT_NEAR(store_ofu, kJobOfu, 1e-9);
  EXPECT_NEAR(prometheus_ofu, kJobOfu, 1e-9);
  prometheus.Stop();
}

// One H100 in MIG mode with a 3g.40gb instance (60 SMs) at 50 % tensor
// activity and a 1g.10gb instance (16 SMs) at 100 %, at 1830 MHz. SM counts
// per profile: NVIDIA's MIG user guide (H100 80GB), as data/gpu_specs.json
// holds them. The overall OFU weighs the instances by SMs x seconds:
//   (60 * 0.5 * f_0.5 + 16 * 1.0 * f_1.0) / (60 + 16) / f_spec
// with each instance's run clock (kRunMhz...: the clock model applies to each
// instance's own tensor activity; counting each instance as a GPU would give
// the plain mean).
constexpr const char* kMigScenario = R"({
  "devices": [
    {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-mig-0", "architecture": 9, "sm_count": 132,
     "max_sm_clock_mhz": 1980, "clocks": [1830], "power_mw": [650000], "energy_mj": [1000],
     "mig": [{"gi": 1, "profile": "3g.40gb", "sm_count": 60, "gpm": [{"1": 90, "5": 50}]},
             {"gi": 9, "profile": "1g.10gb", "sm_count": 16, "gpm": [{"1": 90, "5": 100}]}]}
  ]})";
constexpr double kMigOfu = (60 * 0.5 * kRunMhzHalfAt1830 + 16 * 1.0 * kRunMhzSteadyAt1830) / 76 / kSpecMhz;

TEST_F(PrometheusIntegration, MigInstancesWeighTheirSmsThroughPrometheusAndTheStore) {
  if (!ofu::testing::ProgramFound(OFU_PROMETHEUS)) {
    GTEST_SKIP() << "no prometheus binary (scripts/install-deps.sh installs the Debian package)";
  }
  std::vector<std::pair<std::string, nlohmann::json>> reports;
  ASSERT_NO_FATAL_FAILURE(ReportFromStoreAndPrometheus(kMigScenario, "GPU-mig-0%2Fgi9", reports));
  for (const auto& [from, j] : reports) {
    ASSERT_EQ(j["gpus"].size(), 2u) << from << ": " << j.dump();
    EXPECT_EQ(j["gpus"][0]["key"], "GPU-mig-0/gi1") << from;
    EXPECT_EQ(j["gpus"][0]["mig_profile"], "3g.40gb") << from;
    EXPECT_NEAR(j["gpus"][0]["share"].get<double>(), 60.0 / 132, 1e-12) << from;
    EXPECT_EQ(j["gpus"][1]["key"], "GPU-mig-0/gi9") << from;
    EXPECT_EQ(j["gpus"][1]["mig_instance"], "9") << from;
    EXPECT_NEAR(j["gpus"][1]["share"].get<double>(), 16.0 / 132, 1e-12) << from;
    EXPECT_NEAR(j["gpus"][0]["ofu"].get<double>(), 0.5 * kRunMhzHalfAt1830 / kSpecMhz, 1e-9) << from;
    EXPECT_NEAR(j["gpus"][1]["ofu"].get<double>(), 1.0 * kRunMhzSteadyAt1830 / kSpecMhz, 1e-9) << from;
    // Both instances are observed over the same windows, so the weights are their SMs.
    EXPECT_NEAR(j["overall"]["ofu"].get<double>(), kMigOfu, 1e-9) << from;
    EXPECT_EQ(j["overall"]["coverage"]["gpus_with_ofu"], 2) << from;
  }
}

// Synthetic NVML double: one H100 SXM5 at 1755 MHz with tensor activity 2 %
// (GPM 5) and the FP32 pipe 60 % busy (GPM 12). The non-tensor bound is
// 0.6 x 132 SMs x 128 lanes x 2 x 1.755e9 = 35.582 TFLOP/s (issue 18's hand
// value); it must read the same from the store and from Prometheus.
constexpr const char* kFp32Scenario = R"({
  "devices": [
    {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-fp32-0", "architecture": 9, "sm_count": 132,
     "max_sm_clock_mhz": 1980, "clocks": [1755], "power_mw": [650000], "energy_mj": [1000],
     "gpm": [{"1": 95, "5": 2, "12": 60}]}
  ]})";

TEST_F(PrometheusIntegration, NonTensorBoundIsTheHandValueThroughPrometheusAndTheStore) {
  if (!ofu::testing::ProgramFound(OFU_PROMETHEUS)) {
    GTEST_SKIP() << "no prometheus binary (scripts/install-deps.sh installs the Debian package)";
  }
  std::vector<std::pair<std::string, nlohmann::json>> reports;
  ASSERT_NO_FATAL_FAILURE(ReportFromStoreAndPrometheus(kFp32Scenario, "GPU-fp32-0", reports));
  for (const auto& [from, j] : reports) {
    ASSERT_EQ(j["gpus"].size(), 1u) << from << ": " << j.dump();
    const auto& nt = j["gpus"][0]["non_tensor"];
    EXPECT_NEAR(nt["fp32_active"].get<double>(), 0.6, 1e-9) << from;
    EXPECT_NEAR(nt["flops_upper_bound_tflops"].get<double>(), 35.582976, 1e-3) << from;
    EXPECT_TRUE(nt["fp64_active"].is_null()) << from << ": absent, not 0";
    EXPECT_NEAR(j["overall"]["non_tensor"]["flops_upper_bound_tflops"].get<double>(), 35.582976, 1e-3) << from;
    ASSERT_EQ(j["advice"].size(), 1u) << from << ": " << j.dump();
    EXPECT_EQ(j["advice"][0]["pipe"], "fp32") << from;
  }
}

}  // namespace
