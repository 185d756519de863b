// End-to-end tests of `ofu report`: the built program, run on small
// recordings written by the tests (synthetic, with hand-computed answers)
// and on the bundled recording.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using ofu::testing::CommandResult;
using ofu::testing::Slurp;

class ReportCli : public ofu::testing::CliTest {};

// Synthetic: one H100 SXM5 sampled every second for `seconds` s, from an
// instant that is a multiple of 60 s so that windows line up with the data.
std::string SteadyH100(double tensor, double clock_mhz, int seconds) {
  std::string text;
  for (int t = 1; t <= seconds; ++t) {
    const std::string labels =
        R"(gpu="0",UUID="GPU-test-0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-a")";
    text += fmt::format("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{}}} {} {}\n", labels, tensor, 1699999980 + t);
    text += fmt::format("DCGM_FI_DEV_SM_CLOCK{{{}}} {} {}\n", labels, clock_mhz, 1699999980 + t);
  }
  return text;
}

TEST_F(ReportCli, HalfTensorAtSpecClockReportsHalfWithTheJsonContract) {
  const fs::path input = Write("h100.prom", SteadyH100(0.5, 1830, 120));
  const CommandResult run = Ofu(fmt::format("report --input '{}' --format json", input.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);

  ASSERT_EQ(j["gpus"].size(), 1u);
  const auto& gpu = j["gpus"][0];
  for (const char* key : {"uuid", "model", "sku", "seconds", "ofu", "active_ofu", "tensor_active", "sm_clock_mhz",
                          "spec_clock_mhz", "idle_fraction", "gaps"}) {
    EXPECT_TRUE(gpu.contains(key)) << key;
  }
  EXPECT_EQ(gpu["uuid"], "GPU-test-0");
  EXPECT_EQ(gpu["model"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu["sku"], "h100-sxm5");
  EXPECT_NEAR(gpu["ofu"].get<double>(), 0.500, 0.001);
  EXPECT_NEAR(gpu["active_ofu"].get<double>(), 0.500, 0.001);
  EXPECT_DOUBLE_EQ(gpu["tensor_active"].get<double>(), 0.5);  // a ratio, not 50 (percent)
  EXPECT_DOUBLE_EQ(gpu["sm_clock_mhz"].get<double>(), 1830);
  EXPECT_NEAR(gpu["spec_clock_mhz"].get<double>(), 1829.95, 0.01);
  EXPECT_DOUBLE_EQ(gpu["seconds"].get<double>(), 120);
  EXPECT_DOUBLE_EQ(gpu["idle_fraction"].get<double>(), 0.0);
  EXPECT_TRUE(gpu["gaps"].is_array());
  EXPECT_TRUE(gpu["gaps"].empty());

  const auto& overall = j["overall"];
  for (const char* key : {"ofu", "active_ofu", "seconds", "gpus"}) EXPECT_TRUE(overall.contains(key)) << key;
  EXPECT_NEAR(overall["ofu"].get<double>(), 0.500, 0.001);
  EXPECT_EQ(overall["gpus"], 1);
  EXPECT_DOUBLE_EQ(overall["seconds"].get<double>(), 120);
}

TEST_F(ReportCli, FullTensorAtMaxBoostReportsAboveOne) {
  const fs::path input = Write("boost.prom", SteadyH100(1.0, 1980, 60));
  const CommandResult run = Ofu(fmt::format("report --input '{}' --format json", input.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NEAR(nlohmann::json::parse(run.out)["gpus"][0]["ofu"].get<double>(), 1.082, 0.0005);
}

TEST_F(ReportCli, AbsentFiguresAreNullNotZero) {
  // Tensor activity but no clock: OFU is unknown, and the exit says nothing was computed.
  std::string text;
  for (int t = 1; t <= 10; ++t) {
    text += fmt::format("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{UUID=\"GPU-x\",modelName=\"NVIDIA H100 80GB HBM3\"}} 0.4 {}\n",
                        1699999980 + t);
  }
  const CommandResult run = Ofu(fmt::format("report --input '{}' --format json", Write("noclock.prom", text).string()));
  EXPECT_EQ(run.exit_code, 4) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_TRUE(j["gpus"][0]["ofu"].is_null());
  EXPECT_TRUE(j["gpus"][0]["sm_clock_mhz"].is_null());
  EXPECT_DOUBLE_EQ(j["gpus"][0]["tensor_active"].get<double>(), 0.4);
  EXPECT_TRUE(j["overall"]["ofu"].is_null());
  EXPECT_NE(run.err.find("no OFU could be computed"), std::string::npos) << run.err;
}

TEST_F(ReportCli, MalformedLineNamesFileAndLineAndExitsTwo) {
  std::string text = SteadyH100(0.5, 1830, 1);
  text += "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-test-0\" 1830\n";  // line 3: no closing brace
  const fs::path input = Write("bad.prom", text);
  const CommandResult run = Ofu(fmt::format("report --input '{}'", input.string()));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find(input.string() + ":3: "), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty());
}

TEST_F(ReportCli, UnknownModelExitsThreeNamingTheSpecFile) {
  std::string text = SteadyH100(0.5, 1830, 5);
  text.replace(text.find("NVIDIA H100 80GB HBM3"), 21, "NVIDIA H200 NVL");
  const CommandResult run = Ofu(fmt::format("report --input '{}'", Write("nvl.prom", text).string()));
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("NVIDIA H200 NVL"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("data/gpu_specs.json"), std::string::npos) << run.err;
}

TEST_F(ReportCli, GpuModelOverridesTheData) {
  // Same counters read as an H100 PCIe: f_spec 1619 MHz, so OFU = 0.5 * 1830 / 1619.0.
  const fs::path input = Write("h100.prom", SteadyH100(0.5, 1830, 30));
  const CommandResult run = Ofu(fmt::format("report --input '{}' --format json --gpu-model h100-pcie", input.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto gpu = nlohmann::json::parse(run.out)["gpus"][0];
  EXPECT_EQ(gpu["sku"], "h100-pcie");
  EXPECT_NEAR(gpu["ofu"].get<double>(), 0.5 * 1830 / (756e6 / (114 * 4096.0)), 1e-9);

  const CommandResult unknown = Ofu(fmt::format("report --input '{}' --gpu-model Z9000", input.string()));
  EXPECT_EQ(unknown.exit_code, 3);
}

TEST_F(ReportCli, WindowFlagChangesThePercentilesNotTheMean) {
  // 60 s at 0.2 then 60 s at 0.6, clock at f_spec-ish 1830.
  std::string text = SteadyH100(0.2, 1830, 60);
  const std::string second = SteadyH100(0.6, 1830, 120);
  text += second.substr(second.size() / 2);  // seconds 61..120 at 0.6
  const fs::path input = Write("steps.prom", text);
  const CommandResult by60 = Ofu(fmt::format("report --input '{}' --format json --window 60", input.string()));
  const CommandResult by30 = Ofu(fmt::format("report --input '{}' --format json --window 30", input.string()));
  ASSERT_EQ(by60.exit_code, 0) << by60.err;
  ASSERT_EQ(by30.exit_code, 0) << by30.err;
  const auto a = nlohmann::json::parse(by60.out)["gpus"][0], b = nlohmann::json::parse(by30.out)["gpus"][0];
  const double expected = 0.4 * 1830 / 1829.95;
  EXPECT_NEAR(a["ofu"].get<double>(), expected, 1e-4);
  EXPECT_NEAR(b["ofu"].get<double>(), expected, 1e-4);
  EXPECT_EQ(a["windows"], 2);
  EXPECT_EQ(b["windows"], 4);
  EXPECT_NEAR(a["p10"].get<double>(), (0.2 + 0.4 * 0.1) * 1830 / 1829.95, 1e-4);  // 0.24
}

TEST_F(ReportCli, CsvHasAHeaderARowPerGpuAndOverall) {
  const fs::path input = Write("h100.prom", SteadyH100(0.5, 1830, 10));
  const CommandResult run = Ofu(fmt::format("report --input '{}' --format csv", input.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::istringstream lines(run.out);
  std::string header, gpu, overall, extra;
  std::getline(lines, header);
  std::getline(lines, gpu);
  std::getline(lines, overall);
  EXPECT_FALSE(std::getline(lines, extra));
  EXPECT_EQ(header.rfind("gpu,uuid,model,sku,seconds,ofu,", 0), 0u) << header;
  EXPECT_EQ(gpu.rfind("GPU-test-0,GPU-test-0,NVIDIA H100 80GB HBM3,h100-sxm5,10,", 0), 0u) << gpu;
  EXPECT_EQ(overall.rfind("overall,", 0), 0u);
}

TEST_F(ReportCli, ReadsStdin) {
  const fs::path input = Write("h100.prom", SteadyH100(0.5, 1830, 10));
  const CommandResult run = Ofu(fmt::format("report --input - --format json < '{}'", input.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NEAR(nlohmann::json::parse(run.out)["overall"]["ofu"].get<double>(), 0.5, 0.001);
}

TEST_F(ReportCli, MissingFileExitsTwoNamingIt) {
  const CommandResult run = Ofu("report --input /nonexistent/recording.prom");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("/nonexistent/recording.prom"), std::string::npos) << run.err;
}

TEST_F(ReportCli, UsageErrorsExitOneAndHelpTeaches) {
  EXPECT_EQ(Ofu("report").exit_code, 1);  // --input is required
  EXPECT_EQ(Ofu("report --input x --format yaml").exit_code, 1);
  EXPECT_EQ(Ofu("frobnicate").exit_code, 1);
  EXPECT_EQ(Ofu("report --input x --window 0").exit_code, 1);
  const CommandResult help = Ofu("report --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("f_spec"), std::string::npos);
  EXPECT_NE(help.out.find("Exit status"), std::string::npos);
}

TEST_F(ReportCli, ReferenceSampleParsesButHasNothingToComputeOfuFrom) {
  const CommandResult run = Ofu("report --format json --input '" OFU_TEST_DATA_DIR "/dcgm-exporter-sample.prom'");
  EXPECT_EQ(run.exit_code, 4) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["gpus"].size(), 4u);
  EXPECT_TRUE(j["source"]["timestamps_assumed"].get<bool>());
}

// The bundled recording is synthetic: 2 GPUs, 600 s, GPU 1 silent for
// seconds 301..390 and idle for 120 s at each end.
TEST_F(ReportCli, BundledRecordingSaysItIsSyntheticAndShowsTheGap) {
  const std::string path = OFU_SOURCE_DIR "/data/recordings/synthetic-2xh100-bf16-matmul.om";
  const CommandResult table = Ofu("report --input '" + path + "'");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("SYNTHETIC"), std::string::npos) << table.out;

  const CommandResult json = Ofu("report --format json --input '" + path + "'");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["source"]["synthetic"], true);
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_TRUE(j["gpus"][0]["gaps"].empty());
  EXPECT_DOUBLE_EQ(j["gpus"][0]["seconds"].get<double>(), 600);
  EXPECT_DOUBLE_EQ(j["gpus"][0]["idle_fraction"].get<double>(), 240.0 / 600);
  ASSERT_EQ(j["gpus"][1]["gaps"].size(), 1u);
  EXPECT_DOUBLE_EQ(j["gpus"][1]["gaps"][0]["seconds"].get<double>(), 90);
  EXPECT_DOUBLE_EQ(j["gpus"][1]["seconds"].get<double>(), 510);
  EXPECT_DOUBLE_EQ(j["gpus"][1]["idle_fraction"].get<double>(), 240.0 / 510);
  EXPECT_EQ(j["overall"]["gpus"], 2);
  EXPECT_DOUBLE_EQ(j["overall"]["seconds"].get<double>(), 1110);
}

// dcgm-exporter writes "ERROR - FAILED TO CONVERT TO STRING" for fields it
// cannot format: in a family ofu does not use the samples are skipped, and
// one second whose tensor activity is such a text only loses that second.
TEST_F(ReportCli, ValuesThatAreNotNumbersDoNotStopTheReport) {
  std::string text = SteadyH100(0.5, 1830, 60);
  text += "DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION{gpu=\"0\",UUID=\"GPU-test-0\"} ERROR - FAILED TO CONVERT TO STRING\n";
  const std::string tensor_at_30 = "} 0.5 1700000010\n";  // second 30 of the minute
  const std::size_t at = text.find(tensor_at_30);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, tensor_at_30.size(), "} ERROR\n");
  const fs::path input = Write("errors.prom", text);
  const CommandResult run = Ofu(fmt::format("report --input '{}' --format json", input.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto gpu = nlohmann::json::parse(run.out)["gpus"][0];
  EXPECT_NEAR(gpu["ofu"].get<double>(), 0.5, 0.01);
}

}  // namespace
