// The commands end to end on "live" sources: the built `ofu` program run as
// a subprocess with the in-tree NVML and DCGM test doubles (scripted by the
// OFU_FAKE_*_SCENARIO files written here), loaded through the very dlopen
// path a real driver would take. All scenarios are synthetic. Where a count
// of windows depends on time, it is checked on a FakeClock in process, and
// the command's own run is checked on what its windows hold.
#include <dlfcn.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofu/sources/clock.h"
#include "ofu/sources/nvml/nvml_source.h"
#include "ofu/sources/recording_writer.h"
#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using ofu::testing::CommandResult;
using ofu::testing::RunShell;

// Two H100 SXM5 GPUs under a steady synthetic load: GPU 0 tensor pipes 50 %
// busy at 1830 MHz, GPU 1 25 % at 1500 MHz.
constexpr const char* kNvmlTwoGpus = R"({
  "driver_version": "550.54.15",
  "devices": [
    {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-live-0", "pci_bus_id": "00000000:18:00.0",
     "architecture": 9, "sm_count": 132, "max_sm_clock_mhz": 1980,
     "clocks": [1830], "power_mw": [650000], "energy_mj": [1000],
     "gpm": [{"1": 90, "5": 50}], "processes": [{"pid": 1, "used_memory": 1048576}]},
    {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-live-1", "pci_bus_id": "00000000:2A:00.0",
     "architecture": 9, "sm_count": 132, "max_sm_clock_mhz": 1980,
     "clocks": [1500], "power_mw": [400000], "energy_mj": [1000],
     "gpm": [{"1": 60, "5": 25}]}
  ]})";

// An A100 node: NVML has no GPM there, so auto-detection must go on to DCGM.
constexpr const char* kNvmlNoGpm = R"({
  "devices": [{"name": "NVIDIA A100-SXM4-80GB", "uuid": "GPU-a100", "architecture": 8,
               "gpm_supported": false, "clocks": [1410]}]})";

constexpr const char* kDcgmOneGpu = R"({
  "gpus": [{"name": "NVIDIA A100-SXM4-80GB", "uuid": "GPU-a100", "pci_bus_id": "00000000:07:00.0"}],
  "reads": [[{"1001": 0.8, "1004": 0.4, "100": 1410, "155": 300.0, "112": 0}]]})";

// H100 SXM5 f_spec: 989.4 TFLOPS / (132 SMs x 4096 FLOP/clk) = 1829.945 MHz.
constexpr double kH100SpecMhz = 989.4e12 / (132 * 4096.0) / 1e6;

class LiveCli : public ofu::testing::CliTest {
 protected:
  // Runs ofu with the doubles' libraries and scenarios.
  CommandResult OfuLive(const std::string& nvml_scenario, const std::string& dcgm_scenario, const std::string& args) {
    const fs::path nvml = Write("nvml.json", nvml_scenario);
    const fs::path dcgm = Write("dcgm.json", dcgm_scenario);
    return RunShell(fmt::format("OFU_FAKE_NVML_SCENARIO='{}' OFU_FAKE_DCGM_SCENARIO='{}' '{}' {} "
                                "--nvml-library '{}' --dcgm-library '{}'",
                                nvml.string(), dcgm.string(), OFU_BINARY, args, OFU_FAKE_NVML_PATH, OFU_FAKE_DCGM_PATH),
                    dir_);
  }

  // `ofu report` on a recording of kNvmlTwoGpus gives each GPU the OFU the
  // double was scripted with, read with the reported clock the recording
  // keeps (the measured clock model is applied when a report is made).
  void ExpectTheScriptedOfu(const fs::path& recording) {
    const CommandResult report = Ofu(fmt::format("report --input '{}' --format json --window 1 --clock reported",
                                                 recording.string()));
    ASSERT_EQ(report.exit_code, 0) << report.err;
    const auto json = nlohmann::json::parse(report.out);
    ASSERT_EQ(json["gpus"].size(), 2u);
    EXPECT_EQ(json["gpus"][0]["uuid"], "GPU-live-0");
    EXPECT_NEAR(json["gpus"][0]["ofu"].get<double>(), 0.5 * 1830 / kH100SpecMhz, 1e-6);
    EXPECT_NEAR(json["gpus"][1]["ofu"].get<double>(), 0.25 * 1500 / kH100SpecMhz, 1e-6);
    EXPECT_NEAR(json["gpus"][0]["tensor_active"].get<double>(), 0.5, 1e-12);
  }

  // The recording backfilled into a TSDB with promtool, then dumped: how
  // many tensor-activity samples it holds. Absent without promtool.
  std::optional<std::size_t> PromtoolTensorSamples(const fs::path& recording) {
    if (!ofu::testing::ProgramFound(OFU_PROMTOOL)) return std::nullopt;
    const fs::path tsdb = dir_ / "tsdb";
    fs::remove_all(tsdb);
    const CommandResult import = RunShell(fmt::format("'{}' tsdb create-blocks-from openmetrics '{}' '{}'",
                                                      OFU_PROMTOOL, recording.string(), tsdb.string()),
                                          dir_);
    EXPECT_EQ(import.exit_code, 0) << import.out << import.err;
    fs::create_directories(tsdb / "wal");  // `promtool tsdb dump` wants one
    const CommandResult dump = RunShell(fmt::format("'{}' tsdb dump '{}'", OFU_PROMTOOL, tsdb.string()), dir_);
    EXPECT_EQ(dump.exit_code, 0) << dump.err;
    std::size_t tensor_samples = 0;
    for (std::size_t at = dump.out.find("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"); at != std::string::npos;
         at = dump.out.find("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", at + 1)) {
      ++tensor_samples;
    }
    return tensor_samples;
  }
};

TEST_F(LiveCli, SourcesReportsBothLibrariesAvailable) {
  const CommandResult result = OfuLive(kNvmlTwoGpus, kDcgmOneGpu, "sources --format json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json[0]["source"], "nvml");
  EXPECT_EQ(json[0]["available"], true);
  EXPECT_NE(json[0]["detail"].get<std::string>().find("driver 550.54.15"), std::string::npos) << json[0];
  EXPECT_EQ(json[1]["source"], "dcgm");
  EXPECT_EQ(json[1]["available"], true) << json[1];
}

TEST_F(LiveCli, TopOnceAutoDetectsNvmlAndShowsEachGpusOfu) {
  const CommandResult result = OfuLive(kNvmlTwoGpus, kDcgmOneGpu,
                                       "top --once --width 160 --window 0.2 --clock-readings 2");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("nvml ("), std::string::npos) << result.out;
  // The H100 80GB HBM3's measured clock model, no clock event reasons from
  // the double (tests/integration/prometheus_test.cc has the same by hand):
  // 0.5 x 1685.720 / 1829.945 = 46.1 %; 0.25 x 1425.183 / 1829.945 = 19.5 %.
  EXPECT_NE(result.out.find("46.1 %"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("19.5 %"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("1830/1830 MHz"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("run      1686 MHz"), std::string::npos) << result.out;
  // The double is not a GPU: what it gives is labelled synthetic.
  EXPECT_NE(result.out.find("TEST DOUBLE"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("SYNTHETIC"), std::string::npos) << result.out;
}

TEST_F(LiveCli, AutoDetectFallsThroughToDcgmWhenNvmlHasNoGpm) {
  const CommandResult result = OfuLive(kNvmlNoGpm, kDcgmOneGpu, "top --once --window 0.2");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("dcgm ("), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("NVIDIA A100-SXM4-80GB"), std::string::npos) << result.out;
}

// `ofu record` on the NVML double, for 2 s of 0.5 s windows on the system
// clock. How many windows that takes depends on the machine: a late caller's
// missed windows are merged, not squeezed (nvml_source.h). So this checks
// what the windows hold; the exact count is checked on a fake clock below.
TEST_F(LiveCli, RecordFromNvmlBackfillsIntoPromtoolAndReplaysToTheSameOfu) {
  const fs::path out = dir_ / "live.om";
  const CommandResult run =
      OfuLive(kNvmlTwoGpus, kDcgmOneGpu,
              fmt::format("record --source nvml --window 0.5 --clock-readings 2 --duration 2s --out '{}' --format json",
                          out.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto summary = nlohmann::json::parse(run.out);
  // The first window is exactly 0.5 s, every one at least that: 2 to 4 windows.
  const auto windows = summary["windows"].get<std::size_t>();
  EXPECT_GE(windows, 2u);
  EXPECT_LE(windows, 4u);
  EXPECT_GE(summary["seconds"].get<double>(), 2.0 - 1e-9);
  EXPECT_EQ(summary["gpus"], 2);
  EXPECT_EQ(summary["synthetic"], true) << "recorded from a test double, not a GPU";

  // The recording replays to the OFU the double was scripted with.
  ExpectTheScriptedOfu(out);

  const std::optional<std::size_t> tensor_samples = PromtoolTensorSamples(out);
  if (!tensor_samples) GTEST_SKIP() << "promtool not found; scripts/install-deps.sh installs it";
  EXPECT_EQ(*tensor_samples, 2 * windows);  // each window has both GPUs
}

// The clock model through the live path (issue 38, item 6). SYNTHETIC double:
// an H200 in steady tensor work whose reported SM clock stays high (NVML read
// 1454 MHz where the SMs ran 1321 on the real one, docs/results/
// 2026-11-27-clock-truth), and an H100 80GB HBM3 in steady work at the power
// cap, where NVML was right. Recorded, then reported: the H200's OFU takes
// the reported clock over 1.099, which fails if the model is not applied
// (0.93 x 1454 / f_spec = 0.7390 against 0.6724); the H100's moves by 0.2 %.
constexpr const char* kNvmlSteadyHopper = R"({
  "devices": [
    {"name": "NVIDIA H200", "uuid": "GPU-h200", "architecture": 9, "sm_count": 132, "max_sm_clock_mhz": 1980,
     "clocks": [1454], "power_mw": [700000], "energy_mj": [1000], "clock_event_reasons": [4],
     "gpm": [{"1": 100, "5": 93}]},
    {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-h100", "architecture": 9, "sm_count": 132,
     "max_sm_clock_mhz": 1980, "clocks": [1342], "power_mw": [700000], "energy_mj": [1000],
     "clock_event_reasons": [4], "gpm": [{"1": 100, "5": 93.8}]}
  ]})";

TEST_F(LiveCli, SteadyHopperWorkThroughTheDoubleTakesEachBoardsMeasuredClock) {
  const fs::path out = dir_ / "steady.om";
  const CommandResult run = OfuLive(
      kNvmlSteadyHopper, kDcgmOneGpu,
      fmt::format("record --source nvml --window 0.5 --clock-readings 2 --duration 1s --out '{}'", out.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const CommandResult report = Ofu(fmt::format("report --input '{}' --format json", out.string()));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const auto j = nlohmann::json::parse(report.out);
  ASSERT_EQ(j["gpus"].size(), 2u);
  const auto& h200 = j["gpus"][0]["uuid"] == "GPU-h200" ? j["gpus"][0] : j["gpus"][1];
  const auto& h100 = j["gpus"][0]["uuid"] == "GPU-h200" ? j["gpus"][1] : j["gpus"][0];
  EXPECT_EQ(h200["sku"], "h200-sxm");
  EXPECT_EQ(h200["clock_source"], "measured-model");
  EXPECT_NEAR(h200["ofu"].get<double>(), 0.93 * 1454 / 1.099 / kH100SpecMhz, 1e-9);  // 0.6724
  EXPECT_NEAR(h200["ofu_clock_mhz"].get<double>(), 1454 / 1.099, 1e-6);
  EXPECT_DOUBLE_EQ(h200["sm_clock_mhz"].get<double>(), 1454);  // the reading itself is kept
  EXPECT_NEAR(h100["ofu"].get<double>(), 0.938 * 1342 / 0.998 / kH100SpecMhz, 1e-9);
  EXPECT_LT(std::abs(h100["ofu"].get<double>() - 0.938 * 1342 / kH100SpecMhz) * 100, 0.3);

  // The recording keeps the reported clock: --clock reported gives the
  // driver's reading as it is.
  const CommandResult reported = Ofu(fmt::format("report --input '{}' --format json --clock reported", out.string()));
  ASSERT_EQ(reported.exit_code, 0) << reported.err;
  const auto r = nlohmann::json::parse(reported.out);
  for (const auto& gpu : r["gpus"]) {
    const double clock = gpu["uuid"] == "GPU-h200" ? 1454 : 1342;
    const double tensor = gpu["uuid"] == "GPU-h200" ? 0.93 : 0.938;
    EXPECT_NEAR(gpu["ofu"].get<double>(), tensor * clock / kH100SpecMhz, 1e-9) << gpu["uuid"];
    EXPECT_EQ(gpu["clock_source"], "reported");
  }
}

// What `ofu record` does (read windows until they cover the duration, then
// write them), on a FakeClock: exactly 2 s / 0.5 s = 4 windows, and the
// same file as the command writes (synthetic, both GPUs, the scripted OFU).
TEST_F(LiveCli, RecordingFromNvmlOnAFakeClockHasExactlyFourWindows) {
  void* nvml = dlopen(OFU_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);  // what the source opens, so the same state
  ASSERT_NE(nvml, nullptr) << dlerror();
  const auto load = reinterpret_cast<int (*)(const char*)>(dlsym(nvml, "ofu_fake_nvml_load_scenario"));
  ASSERT_NE(load, nullptr);
  ASSERT_EQ(load(kNvmlTwoGpus), 0);

  ofu::sources::FakeClock clock(1'700'000'000);
  ofu::sources::SourceOptions options;
  options.nvml_library = OFU_FAKE_NVML_PATH;
  options.window_s = 0.5;
  options.clock_readings = 2;
  auto source = ofu::sources::OpenNvmlSource(options, clock);
  ASSERT_TRUE(source.ok()) << source.error().message;
  ofu::sources::RecordingWriter writer;
  std::size_t windows = 0;
  double seconds = 0;
  bool synthetic = false;
  while (seconds + 1e-9 < 2.0) {
    auto next = (*source)->Next();
    ASSERT_TRUE(next.ok() && next->has_value());
    writer.Add(**next);
    ++windows;
    seconds += (*next)->window_s;
    synthetic = synthetic || (*next)->synthetic.value_or(false);
    EXPECT_EQ((*next)->gpus.size(), 2u);
  }
  EXPECT_EQ(windows, 4u);
  EXPECT_DOUBLE_EQ(seconds, 2.0);
  EXPECT_TRUE(synthetic) << "read from a test double, not a GPU";
  const fs::path out = dir_ / "fake-clock.om";
  ofu::sources::RecordingInfo info;
  info.synthetic = synthetic;
  info.description = "fake clock";
  ASSERT_TRUE(writer.WriteFile(info, out.string()).ok());
  source->reset();
  dlclose(nvml);

  ExpectTheScriptedOfu(out);
  const std::optional<std::size_t> tensor_samples = PromtoolTensorSamples(out);
  if (!tensor_samples) GTEST_SKIP() << "promtool not found; scripts/install-deps.sh installs it";
  EXPECT_EQ(*tensor_samples, 8u);  // 4 windows x 2 GPUs
}

TEST_F(LiveCli, TopOnceOverDcgmWithAHostengineThatNeverAnswersExitsFive) {
  const CommandResult result = OfuLive(kNvmlNoGpm, R"({"hostengine": false, "embedded": false})",
                                       "top --once --window 0.2");
  EXPECT_EQ(result.exit_code, 5) << result.out;
  EXPECT_NE(result.err.find("nvml: "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("Hopper"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("dcgm: "), std::string::npos) << result.err;
}

}  // namespace

// `ofu sources --cost` on the double: the source opened as the agent opens
// it, 0.5 s of 0.1 s windows after the first. The calls per window are
// exact: per GPU one GPM sample and one nvmlGpmMetricsGet a window.
TEST_F(LiveCli, SourcesCostCountsTheCallsPerWindow) {
  const CommandResult result = OfuLive(kNvmlTwoGpus, kDcgmOneGpu,
                                       "sources --cost --source nvml --window 0.1 --seconds 0.5 --format json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["windows"], 5);
  EXPECT_EQ(json["gpus"], 2);
  EXPECT_NE(json["source"].get<std::string>().find("TEST DOUBLE"), std::string::npos) << json["source"];
  std::map<std::string, nlohmann::json> calls;
  for (const auto& call : json["calls"]) calls[call["call"].get<std::string>()] = call;
  ASSERT_TRUE(calls.count("nvmlGpmMetricsGet")) << json.dump(2);
  EXPECT_EQ(calls["nvmlGpmMetricsGet"]["calls"], 10);
  EXPECT_EQ(calls["nvmlGpmMetricsGet"]["per_window"], 2.0);
  EXPECT_EQ(calls["nvmlGpmSampleGet"]["per_window"], 2.0);
  EXPECT_GT(calls["nvmlGpmMetricsGet"]["wall_us_per_call"].get<double>(), 0);
  // Setup calls happen before the measured windows: not in the table.
  EXPECT_FALSE(calls.count("nvmlInit_v2")) << json.dump(2);

  const CommandResult table = OfuLive(kNvmlTwoGpus, kDcgmOneGpu,
                                      "sources --cost --source nvml --window 0.1 --seconds 0.2");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("2 windows of 0.1 s, 2 GPUs"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("nvmlGpmMetricsGet"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("per window:"), std::string::npos) << table.out;
}
