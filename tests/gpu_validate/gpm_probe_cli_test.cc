// ofu-gpm-probe (gpu/gpm_probe.cc) as a program, on the NVML double
// (tests/doubles/fake_nvml.cc): every value here is SYNTHETIC. Checks what
// the GPU validation's Stage A reads from it: the device, the metric ids
// the driver answers, the cost of the calls, and the per-interval log.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofu/core/version.h"
#include "support/cli_runner.h"

namespace ofu::testing {
namespace {

// The double's default driver is the one measured on an H100 SXM5
// (580.159.04, docs/results/2026-11-26-h100-sxm5/stage-A/probe-*.json): no
// driver version or name is given here, and GPM 248 and 250 carry values
// that driver refuses (INVALID_ARGUMENT) unless the scenario names a newer one.
constexpr const char* kDevices = R"("devices": [{"uuid": "GPU-synthetic-0", "sm_count": 132,
               "max_sm_clock_mhz": 1980, "clocks": [1755],
               "gpm": [{"5": 50.0, "7": 49.0, "248": 2.3166e10, "250": 1.1583e10}]}]})";
std::string Scenario() { return std::string("{") + kDevices; }
std::string NewerDriverScenario() { return std::string(R"({"driver_profile": "newer-gpm-cycles", )") + kDevices; }

class GpmProbeCliTest : public CliTest {
 protected:
  CommandResult Probe(const std::string& args, const std::string& scenario = Scenario()) {
    const auto path = Write("nvml.json", scenario);
    return RunShell(fmt::format("env OFU_FAKE_NVML_SCENARIO='{}' '{}' --nvml-library '{}' {}", path.string(),
                                OFU_GPM_PROBE_BINARY, OFU_FAKE_NVML_PATH, args),
                    dir_);
  }
};

TEST_F(GpmProbeCliTest, InfoNamesTheDeviceAndSaysItIsADouble) {
  const CommandResult r = Probe("info");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["test_double"].get<bool>());
  EXPECT_EQ(j["driver_version"], "580.159.04");
  EXPECT_EQ(j["devices"][0]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(j["devices"][0]["sm_count"], 132);
  EXPECT_EQ(j["devices"][0]["sm_clock_mhz"], 1755);
  EXPECT_TRUE(j["devices"][0]["gpm_supported"].get<bool>());
  EXPECT_NE(r.err.find("TEST DOUBLE"), std::string::npos) << r.err;
}

// As on the H100: ids from 210 on are refused one by one with
// INVALID_ARGUMENT inside calls that succeed (probe-metrics.json there:
// 210-400 refused, no whole-call failure).
TEST_F(GpmProbeCliTest, MetricsListsTheIdsTheDriverAnswers) {
  const CommandResult r = Probe("metrics --interval 0.1 --last 300");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::vector<unsigned> ids;
  for (const auto& m : j["supported"]) ids.push_back(m["id"].get<unsigned>());
  EXPECT_EQ(ids, (std::vector<unsigned>{5, 7}));
  EXPECT_EQ(j["refused"]["NOT_SUPPORTED (3)"].size(), 207u);  // 1-209 but 5 and 7
  const auto& invalid = j["refused"]["INVALID_ARGUMENT (2)"];
  ASSERT_EQ(invalid.size(), 91u);  // 210-300
  EXPECT_EQ(invalid.front(), 210);
  EXPECT_EQ(invalid[248 - 210], 248);
  EXPECT_EQ(invalid.back(), 300);
  EXPECT_TRUE(j["whole_call_failures"].empty());
  EXPECT_EQ(j["ids_asked"], "1-300");
}

// A driver that answers the cycle counters (none measured yet) gets them listed.
TEST_F(GpmProbeCliTest, MetricsListsTheCycleCountersOfANewerDriver) {
  const CommandResult r = Probe("metrics --interval 0.1 --last 300", NewerDriverScenario());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::vector<unsigned> ids;
  for (const auto& m : j["supported"]) ids.push_back(m["id"].get<unsigned>());
  EXPECT_EQ(ids, (std::vector<unsigned>{5, 7, 248, 250}));
  EXPECT_EQ(j["supported"][2]["value"], 2.3166e10);
  EXPECT_EQ(j["refused"]["NOT_SUPPORTED (3)"].size(), 296u);
  EXPECT_FALSE(j["refused"].contains("INVALID_ARGUMENT (2)"));
}

TEST_F(GpmProbeCliTest, CostTimesEachKindOfCall) {
  const CommandResult r = Probe("cost --clock-reads 50 --gpm-samples 5 --metrics-gets 5 --other-calls 7");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["sm_clock_read"]["n"], 50);
  EXPECT_EQ(j["gpm_sample"]["n"], 5);
  EXPECT_EQ(j["gpm_metrics_get_14"]["n"], 5);
  EXPECT_EQ(j["sm_clock_read"]["unit"], "us");
  EXPECT_TRUE(j["sm_clock_read"]["failed_with"].is_null());
  EXPECT_LE(j["sm_clock_read"]["min"].get<double>(), j["sm_clock_read"]["p50"].get<double>());
}

// Every call the NVML source makes per window has its own entry, under the
// NVML function's name; the keys of the first run (sm_clock_read,
// gpm_sample, gpm_metrics_get_14) keep their meaning.
TEST_F(GpmProbeCliTest, CostTimesEveryCallTheSourceMakes) {
  const std::string scenario = R"({"devices": [{"uuid": "GPU-synthetic-0", "sm_count": 132,
      "max_sm_clock_mhz": 1980, "clocks": [1755], "power_mw": [250000], "energy_mj": [1000],
      "clock_event_reasons": [0], "processes": [{"pid": 4242, "used_memory": 1048576}],
      "gpm": [{"5": 50.0, "7": 49.0}]}]})";
  const CommandResult r = Probe("cost --clock-reads 50 --gpm-samples 5 --metrics-gets 5 --other-calls 7", scenario);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"sm_clock_read", "nvmlDeviceGetClockInfo(SM)"},
      {"gpm_sample", "nvmlGpmSampleGet"},
      {"gpm_metrics_get_14", "nvmlGpmMetricsGet"},
      {"gpm_metrics_get_12", "nvmlGpmMetricsGet"},
      {"gpm_metrics_get_1", "nvmlGpmMetricsGet"},
      {"power_usage", "nvmlDeviceGetPowerUsage"},
      {"total_energy", "nvmlDeviceGetTotalEnergyConsumption"},
      {"clock_event_reasons", "nvmlDeviceGetCurrentClocksEventReasons"},
      {"compute_processes", "nvmlDeviceGetComputeRunningProcesses"}};
  for (const auto& [key, call] : expected) {
    ASSERT_TRUE(j.contains(key)) << key << ": " << r.out;
    EXPECT_EQ(j[key]["call"], call) << key;
    EXPECT_EQ(j[key]["unit"], "us") << key;
    EXPECT_TRUE(j[key]["failed_with"].is_null()) << key << ": " << j[key].dump();
    EXPECT_LE(j[key]["p50"].get<double>(), j[key]["p99"].get<double>()) << key;
  }
  EXPECT_EQ(j["gpm_metrics_get_12"]["n"], 5);
  EXPECT_EQ(j["gpm_metrics_get_1"]["n"], 5);
  for (const char* key : {"power_usage", "total_energy", "clock_event_reasons", "compute_processes"}) {
    EXPECT_EQ(j[key]["n"], 7) << key;
  }
}

// A call the driver does not support is timed and its return code kept:
// the default scenario gives no power, energy or reasons.
TEST_F(GpmProbeCliTest, CostKeepsTheCodeOfACallTheDriverRefuses) {
  const CommandResult r = Probe("cost --clock-reads 5 --gpm-samples 2 --metrics-gets 2 --other-calls 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["power_usage"]["n"], 3);
  EXPECT_EQ(j["power_usage"]["failed_with"], "NOT_SUPPORTED (3)");
  EXPECT_TRUE(j["compute_processes"]["failed_with"].is_null()) << j["compute_processes"].dump();
}

TEST_F(GpmProbeCliTest, LogWritesOneRowPerInterval) {
  const auto log = dir_ / "log.csv";
  const CommandResult r = Probe(fmt::format("log --interval 0.1 --duration 0.35 --out '{}'", log.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = Slurp(log);
  EXPECT_EQ(csv.rfind("t_end_s,dt_s,gpm5_any_tensor_pct,gpm5_any_tensor_pct_rc,", 0), 0u) << csv;
  EXPECT_NE(csv.find(",gpm170_ctxsw_cycles_elapsed,gpm170_ctxsw_cycles_elapsed_rc,gpm171_ctxsw_cycles_active,"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",clock_mean_mhz,clock_last_mhz,clock_min_mhz,clock_max_mhz,clock_readings,power_w,"
                     "clock_event_reasons,test_double\n"),
            std::string::npos);
  // GPM 5 = 50 (rc 0), 7 = 49, 9 and 2 not supported (rc 3), 248-250 refused (rc 2, as in the H100's
  // stage-A/pass-1s/probe.csv), 170-174 not in the scenario (rc 3), clock 1755; no power or reasons in
  // this scenario (empty); flagged a double.
  EXPECT_NE(csv.find(",50,0,49,0,,3,,3,,2,,2,,2,,3,,3,,3,,3,,3,1755,1755,1755,1755,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",,,1\n"), std::string::npos) << csv;
  const auto rows = std::count(csv.begin(), csv.end(), '\n') - 1;
  EXPECT_GE(rows, 3) << csv;
  EXPECT_LE(rows, 5) << csv;
}

// Issue 39: GPM 170/171 and the board's power and clock event reasons in each
// row, beside the clock, where the scenario gives them (SYNTHETIC values).
TEST_F(GpmProbeCliTest, LogRecordsTheContextSwitchCyclesPowerAndReasons) {
  const std::string scenario = R"({"devices": [{"uuid": "GPU-synthetic-0", "sm_count": 132,
      "max_sm_clock_mhz": 1980, "clocks": [1755], "power_mw": [612500], "clock_event_reasons": [4],
      "gpm": [{"5": 50.0, "170": 175500000, "171": 87750000}]}]})";
  const auto log = dir_ / "log.csv";
  const CommandResult r = Probe(fmt::format("log --interval 0.1 --duration 0.25 --out '{}'", log.string()), scenario);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = Slurp(log);
  // ... 250 refused (rc 2), 170 and 171 answered, 172-174 not (rc 3); clock 1755; 612.5 W, reasons 4.
  EXPECT_NE(csv.find(",,2,175500000,0,87750000,0,,3,,3,,3,1755,1755,1755,1755,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",612.5,4,1\n"), std::string::npos) << csv;
}

// Issue 39: the price of each metric alone (170/171 too), and of growing sets
// in the order the NVML source asks them, each with every metric's own return
// and value, so a call that succeeds while a metric fails is seen.
TEST_F(GpmProbeCliTest, CostTimesEachMetricAloneAndGrowingSets) {
  const std::string scenario = R"({"devices": [{"uuid": "GPU-synthetic-0", "sm_count": 132,
      "max_sm_clock_mhz": 1980, "clocks": [1755], "gpm": [{"5": 50.0, "170": 175500000}]}]})";
  const CommandResult r = Probe("cost --clock-reads 5 --gpm-samples 2 --metrics-gets 3 --other-calls 2", scenario);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& each = j["gpm_metrics_get_each"];
  ASSERT_GE(each.size(), 3u);
  EXPECT_EQ(each[0]["ids"], nlohmann::json::array({5}));  // GPM 5 first: the tensor activity's field comes first
  EXPECT_EQ(each[0]["n"], 3);
  EXPECT_EQ(each[0]["metrics"][0]["rc"], "SUCCESS (0)");
  EXPECT_EQ(each[0]["metrics"][0]["value"], 50.0);
  const auto& ctxsw = each[each.size() - 2];
  EXPECT_EQ(ctxsw["ids"], nlohmann::json::array({170}));
  EXPECT_EQ(ctxsw["metrics"][0]["value"], 175500000.0);
  const auto& active = each[each.size() - 1];
  EXPECT_EQ(active["ids"], nlohmann::json::array({171}));
  EXPECT_EQ(active["metrics"][0]["rc"], "NOT_SUPPORTED (3)");  // not in the scenario: the call succeeds, the metric not
  EXPECT_TRUE(active["metrics"][0]["value"].is_null());
  const auto& growing = j["gpm_metrics_get_growing"];
  ASSERT_EQ(growing.size(), each.size() - 2);
  for (std::size_t k = 0; k < growing.size(); ++k) {
    EXPECT_EQ(growing[k]["ids"].size(), k + 1);
    EXPECT_EQ(growing[k]["metrics"].size(), k + 1);
    EXPECT_EQ(growing[k]["ids"][k], each[k]["ids"][0]);
  }
}

TEST_F(GpmProbeCliTest, NoGpmOrNoLibraryExitsFive) {
  const CommandResult no_gpm = Probe("metrics", R"({"devices": [{"name": "Tesla T4", "gpm_supported": false}]})");
  EXPECT_EQ(no_gpm.exit_code, 5);
  EXPECT_NE(no_gpm.err.find("no NVML GPM"), std::string::npos) << no_gpm.err;
  const CommandResult no_device = Probe("info", R"({"devices": []})");
  EXPECT_EQ(no_device.exit_code, 5);
  EXPECT_NE(no_device.err.find("no NVML device 0 (0 found)"), std::string::npos) << no_device.err;
  const CommandResult no_library =
      RunShell(fmt::format("'{}' --nvml-library /nonexistent/libnvidia-ml.so.1 info", OFU_GPM_PROBE_BINARY), dir_);
  EXPECT_EQ(no_library.exit_code, 5);
  EXPECT_NE(no_library.err.find("cannot load the NVML library /nonexistent/libnvidia-ml.so.1"), std::string::npos)
      << no_library.err;
}

TEST_F(GpmProbeCliTest, VersionIsTheProjectVersion) {
  const CommandResult r = RunShell(fmt::format("'{}' --version", OFU_GPM_PROBE_BINARY), dir_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string("ofu-gpm-probe ") + ofu::kVersion + "\n");
}

TEST_F(GpmProbeCliTest, UsageErrorsExitOne) {
  EXPECT_EQ(RunShell(fmt::format("'{}'", OFU_GPM_PROBE_BINARY), dir_).exit_code, 1);
  EXPECT_EQ(RunShell(fmt::format("'{}' log --interval 0.01", OFU_GPM_PROBE_BINARY), dir_).exit_code, 1);
  EXPECT_EQ(RunShell(fmt::format("'{}' metrics --first 10 --last 5", OFU_GPM_PROBE_BINARY), dir_).exit_code, 1);
}

}  // namespace
}  // namespace ofu::testing
