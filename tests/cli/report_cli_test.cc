// End-to-end tests of `ofu report`: the built program, run on small
// recordings written by the tests (synthetic, with hand-computed answers)
// and on the bundled recording.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using ofu::testing::CommandResult;

class ReportCli : public ofu::testing::CliTest {};

// Synthetic: one H100 SXM5 sampled every second for `seconds` s, from an
// instant that is a multiple of 60 s so that windows line up with the data.
std::string SteadyH100(double tensor, double clock_mhz, int seconds) {
  std::string text;
  for (int t = 1; t <= seconds; ++t) {
    const std::string labels = R"(gpu="0",UUID="GPU-test-0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-a")";
    text += fmt::format("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{}}} {} {}\n", labels, tensor, 1699999980 + t);
    text += fmt::format("DCGM_FI_DEV_SM_CLOCK{{{}}} {} {}\n", labels, clock_mhz, 1699999980 + t);
  }
  return text;
}

// An H100 80GB HBM3 was measured (data/gpu_specs.json's clock_model): its OFU
// uses the clock the SMs ran, estimated from the reported one
// (docs/metrics.md#the-sm-clock). Tensor activity 0.5 lies between the
// measured bursty (<= 0.45) and steady (>= 0.75) states, and a scrape has no
// clock event reasons, so by hand, at a reported 1830 MHz:
//   burst at the power cap    1830 / (0.5 + 0.5 x 1.202) = 1662.125 MHz
//   burst below it            1830 / (0.5 + 0.5 x 1.218) = 1650.135 MHz
//   burst estimate            their mean, 1656.130 MHz
//   steady                    1830 / 0.998 = 1833.667 MHz
//   estimate at 1/6 of the way from 0.45 to 0.75: 1685.719 MHz
//   OFU 0.5 x 1685.719 / 1829.95 = 0.46059; range 0.45087 .. 0.50102
TEST_F(ReportCli, HalfTensorAtSpecClockReportsHalfWithTheJsonContract) {
  const fs::path input = Write("h100.prom", SteadyH100(0.5, 1830, 120));
  const CommandResult run = Ofu(fmt::format("report --input '{}' --format json", input.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);

  ASSERT_EQ(j["gpus"].size(), 1u);
  const auto& gpu = j["gpus"][0];
  for (const char* key : {"uuid", "model", "sku", "seconds", "ofu", "ofu_low", "ofu_high", "clock_source",
                          "ofu_clock_mhz", "clock_model_source", "active_ofu", "tensor_active", "sm_clock_mhz",
                          "spec_clock_mhz", "idle_fraction", "gaps"}) {
    EXPECT_TRUE(gpu.contains(key)) << key;
  }
  EXPECT_EQ(gpu["uuid"], "GPU-test-0");
  EXPECT_EQ(gpu["model"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu["sku"], "h100-sxm5");
  EXPECT_NEAR(gpu["ofu"].get<double>(), 0.46059, 0.00001);
  EXPECT_NEAR(gpu["ofu_low"].get<double>(), 0.45087, 0.00001);
  EXPECT_NEAR(gpu["ofu_high"].get<double>(), 0.50102, 0.00001);
  EXPECT_EQ(gpu["clock_source"], "measured-model");
  EXPECT_NEAR(gpu["ofu_clock_mhz"].get<double>(), 1685.719, 0.001);
  EXPECT_NE(gpu["clock_model_source"].get<std::string>().find("2026-11-27-clock-truth"), std::string::npos);
  EXPECT_NEAR(gpu["active_ofu"].get<double>(), 0.46059, 0.00001);
  EXPECT_DOUBLE_EQ(gpu["tensor_active"].get<double>(), 0.5);  // a ratio, not 50 (percent)
  EXPECT_DOUBLE_EQ(gpu["sm_clock_mhz"].get<double>(), 1830);  // as reported
  EXPECT_NEAR(gpu["spec_clock_mhz"].get<double>(), 1829.95, 0.01);
  EXPECT_DOUBLE_EQ(gpu["seconds"].get<double>(), 120);
  EXPECT_DOUBLE_EQ(gpu["idle_fraction"].get<double>(), 0.0);
  EXPECT_TRUE(gpu["gaps"].is_array());
  EXPECT_TRUE(gpu["gaps"].empty());

  const auto& overall = j["overall"];
  for (const char* key : {"ofu", "active_ofu", "seconds", "gpus"}) EXPECT_TRUE(overall.contains(key)) << key;
  EXPECT_NEAR(overall["ofu"].get<double>(), 0.46059, 0.00001);
  EXPECT_EQ(overall["clock_source"], "measured-model");
  EXPECT_EQ(overall["gpus"], 1);

  // --clock reported: the driver's reading as it is, 0.5 x 1830 / 1829.95.
  const CommandResult reported = Ofu(fmt::format("report --input '{}' --format json --clock reported", input.string()));
  ASSERT_EQ(reported.exit_code, 0) << reported.err;
  const auto r = nlohmann::json::parse(reported.out)["gpus"][0];
  EXPECT_NEAR(r["ofu"].get<double>(), 0.5 * 1830 / 1829.95, 1e-4);
  EXPECT_EQ(r["clock_source"], "reported");
  EXPECT_DOUBLE_EQ(r["ofu_low"].get<double>(), r["ofu"].get<double>());
  // The table says the reading was asked for, not that the board is unmeasured.
  const CommandResult table = Ofu(fmt::format("report --input '{}' --clock reported", input.string()));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("as asked (--clock reported)"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("no measurement of this board"), std::string::npos) << table.out;
  EXPECT_DOUBLE_EQ(overall["seconds"].get<double>(), 120);
}

TEST_F(ReportCli, FullTensorAtMaxBoostReportsAboveOne) {
  // Steady tensor work (activity >= 0.75): 1.0 x 1980 / 0.998 / 1829.95 = 1.0842.
  const fs::path input = Write("boost.prom", SteadyH100(1.0, 1980, 60));
  const CommandResult run = Ofu(fmt::format("report --input '{}' --format json", input.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NEAR(nlohmann::json::parse(run.out)["gpus"][0]["ofu"].get<double>(), 1.0842, 0.0001);
}

// A recording keeps the reported clock; the model is applied when the report
// is made. So a spec database with a newer measurement of the board (here a
// made-up steady ratio of 1.1 instead of 0.998, SYNTHETIC) gives the newer
// answer from the same file: 0.9 x 1800 / 1.1 / 1829.95 = 0.80479, where the
// shipped model gives 0.9 x 1800 / 0.998 / 1829.95 = 0.88704.
TEST_F(ReportCli, ARecordingReplayedWithANewerClockModelGivesTheNewerAnswer) {
  const fs::path input = Write("steady.prom", SteadyH100(0.9, 1800, 60));
  nlohmann::json db = nlohmann::json::parse(ofu::testing::Slurp(OFU_SOURCE_DIR "/data/gpu_specs.json"));
  bool changed = false;
  for (auto& sku : db["skus"]) {
    if (sku["id"] == "h100-sxm5") {
      sku["clock_model"]["steady_ratio"] = 1.1;
      changed = true;
    }
  }
  ASSERT_TRUE(changed);
  const fs::path newer = Write("newer_specs.json", db.dump());
  const CommandResult shipped = Ofu(fmt::format("report --input '{}' --format json", input.string()));
  const CommandResult remodelled = Ofu(fmt::format("report --input '{}' --spec-db '{}' --format json", input.string(),
                                                   newer.string()));
  ASSERT_EQ(shipped.exit_code, 0) << shipped.err;
  ASSERT_EQ(remodelled.exit_code, 0) << remodelled.err;
  const auto a = nlohmann::json::parse(shipped.out)["gpus"][0], b = nlohmann::json::parse(remodelled.out)["gpus"][0];
  EXPECT_NEAR(a["ofu"].get<double>(), 0.9 * 1800 / 0.998 / 1829.95, 1e-4);
  EXPECT_NEAR(b["ofu"].get<double>(), 0.9 * 1800 / 1.1 / 1829.95, 1e-4);
  EXPECT_EQ(b["clock_source"], "measured-model");
  EXPECT_NEAR(b["sm_clock_mhz"].get<double>(), 1800, 1e-9);  // the reading itself is kept as it was
}

TEST_F(ReportCli, AbsentFiguresAreNullNotZero) {
  // Tensor activity but no clock: OFU is unknown, and the exit says nothing was computed.
  std::string text;
  for (int t = 1; t <= 10; ++t) {
    text +=
        fmt::format("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{UUID=\"GPU-x\",modelName=\"NVIDIA H100 80GB HBM3\"}} 0.4 {}\n",
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

// Synthetic: `seconds` s of one GPU at a constant tensor activity and clock.
std::string SteadyGpu(int index, const std::string& uuid, const std::string& model, double tensor, double clock_mhz,
                      int seconds) {
  std::string text;
  const std::string labels = fmt::format(R"(gpu="{}",UUID="{}",modelName="{}",Hostname="node-a")", index, uuid, model);
  for (int t = 1; t <= seconds; ++t) {
    text += fmt::format("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{}}} {} {}\n", labels, tensor, 1699999980 + t);
    text += fmt::format("DCGM_FI_DEV_SM_CLOCK{{{}}} {} {}\n", labels, clock_mhz, 1699999980 + t);
  }
  return text;
}

// "Tesla K80" is a real model name with no tensor cores: it will never be in
// the spec database, so it stands for any model the database lacks.
TEST_F(ReportCli, AnUnknownModelAloneHasNoOfuWithANoteNamingTheSpecFile) {
  const std::string text = SteadyGpu(0, "GPU-k80", "Tesla K80", 0.5, 800, 5);
  const CommandResult run = Ofu(fmt::format("report --input '{}'", Write("k80.prom", text).string()));
  EXPECT_EQ(run.exit_code, 4) << run.err;  // nothing at all to compute OFU from
  EXPECT_NE(run.out.find("Tesla K80"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("data/gpu_specs.json"), std::string::npos) << run.out;

  const CommandResult strict = Ofu(fmt::format("report --strict --input '{}'", Write("k80.prom", text).string()));
  EXPECT_EQ(strict.exit_code, 3);
  EXPECT_NE(strict.err.find("Tesla K80"), std::string::npos) << strict.err;
  EXPECT_NE(strict.err.find("data/gpu_specs.json"), std::string::npos) << strict.err;
}

// Two H100s and one GPU the database lacks: the H100s get their OFU, the
// third a note, the overall line says what it covers, and the exit is 0.
// By hand: f_spec = 989.4e12 / (132 * 4096) Hz = 1829.945 MHz; at 1830 MHz
// OFU = a * 1830 / 1829.945, overall (0.5 + 0.25) / 2 of that, with the
// reported clock (--clock reported; the measured model has its own test).
TEST_F(ReportCli, MixedKnownAndUnknownModelsAnswerForTheKnownOnes) {
  const std::string text = SteadyGpu(0, "GPU-h1", "NVIDIA H100 80GB HBM3", 0.5, 1830, 60) +
                           SteadyGpu(1, "GPU-h2", "NVIDIA H100 80GB HBM3", 0.25, 1830, 60) +
                           SteadyGpu(2, "GPU-k80", "Tesla K80", 0.5, 800, 60);
  const fs::path input = Write("mixed.prom", text);
  const double scale = 1830 / (989.4e6 / (132 * 4096.0));
  const CommandResult run = Ofu(fmt::format("report --input '{}' --format json --clock reported", input.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["gpus"].size(), 3u);
  EXPECT_NEAR(j["gpus"][0]["ofu"].get<double>(), 0.5 * scale, 1e-9);
  EXPECT_NEAR(j["gpus"][1]["ofu"].get<double>(), 0.25 * scale, 1e-9);
  EXPECT_TRUE(j["gpus"][2]["ofu"].is_null());
  EXPECT_TRUE(j["gpus"][2]["sku"].is_null());
  EXPECT_DOUBLE_EQ(j["gpus"][2]["tensor_active"].get<double>(), 0.5);  // what is known is still shown
  ASSERT_EQ(j["gpus"][2]["problems"].size(), 1u);
  EXPECT_NE(j["gpus"][2]["problems"][0].get<std::string>().find("data/gpu_specs.json"), std::string::npos);
  const auto& overall = j["overall"];
  EXPECT_NEAR(overall["ofu"].get<double>(), 0.375 * scale, 1e-9);
  EXPECT_EQ(overall["gpus"], 2);
  EXPECT_EQ(overall["coverage"]["gpus"], 3);
  EXPECT_EQ(overall["coverage"]["gpus_with_ofu"], 2);
  EXPECT_EQ(overall["coverage"]["gpus_left_out"], 1);
  EXPECT_DOUBLE_EQ(overall["coverage"]["gpu_seconds"].get<double>(), 120);
  EXPECT_DOUBLE_EQ(overall["coverage"]["seconds_left_out"].get<double>(), 60);
  EXPECT_EQ(overall["coverage"]["left_out"], nlohmann::json::array({"GPU-k80"}));

  const CommandResult table = Ofu(fmt::format("report --input '{}'", input.string()));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("overall covers 2 of 3 GPUs, 120 GPU-seconds; left out: node-a:2"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("note: node-a:2: no OFU: "), std::string::npos) << table.out;

  const CommandResult strict = Ofu(fmt::format("report --strict --input '{}'", input.string()));
  EXPECT_EQ(strict.exit_code, 3);
  EXPECT_TRUE(strict.out.empty());
  EXPECT_NE(strict.err.find("GPU GPU-k80"), std::string::npos) << strict.err;
}

// Synthetic, in dcgm-exporter's MIG layout: one A100 80GB (108 SMs) whose
// clock is written for the GPU itself, and two 3g.40gb instances (42 SMs
// each, NVIDIA's MIG user guide) and one 1g.10gb instance (14 SMs) with
// their own tensor activity, 0.6, 0.3 and 0.9, for 60 s at 1410 MHz.
// By hand, with f_spec = 312e12 / (108 * 2048) Hz = 1410.59 MHz:
//   instance OFU = a * 1410 / 1410.59 (relative to its own slice)
//   overall OFU = (42*0.6 + 42*0.3 + 14*0.9) / 98 * 1410 / 1410.59 = 50.4 / 98 * ...
//   overall seconds = 60 * 98 / 108 GPU-equivalent seconds
TEST_F(ReportCli, MigInstancesWeighTheirSmsAndTheGpuRowIsNotADevice) {
  std::string text;
  const std::string gpu = R"(gpu="0",UUID="GPU-a100",modelName="NVIDIA A100-SXM4-80GB",Hostname="node-m")";
  const std::vector<std::tuple<std::string, std::string, double>> instances = {
      {"1", "3g.40gb", 0.6}, {"2", "3g.40gb", 0.3}, {"9", "1g.10gb", 0.9}};
  for (int t = 1; t <= 60; ++t) {
    text += fmt::format("DCGM_FI_DEV_SM_CLOCK{{{}}} 1410 {}\n", gpu, 1699999980 + t);
    for (const auto& [id, profile, tensor] : instances) {
      text += fmt::format("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{},GPU_I_PROFILE=\"{}\",GPU_I_ID=\"{}\"}} {} {}\n", gpu,
                          profile, id, tensor, 1699999980 + t);
    }
  }
  const CommandResult run = Ofu(fmt::format("report --input '{}' --format json", Write("mig.prom", text).string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["gpus"].size(), 4u);  // the GPU row and its three instances
  const double scale = 1410 / (312e6 / (108 * 2048.0));
  EXPECT_EQ(j["gpus"][0]["key"], "GPU-a100");
  EXPECT_TRUE(j["gpus"][0]["ofu"].is_null());
  EXPECT_EQ(j["gpus"][1]["key"], "GPU-a100/gi1");
  EXPECT_NEAR(j["gpus"][1]["share"].get<double>(), 42.0 / 108, 1e-12);
  EXPECT_NEAR(j["gpus"][1]["ofu"].get<double>(), 0.6 * scale, 1e-9);
  EXPECT_NEAR(j["gpus"][3]["share"].get<double>(), 14.0 / 108, 1e-12);
  EXPECT_NEAR(j["gpus"][3]["ofu"].get<double>(), 0.9 * scale, 1e-9);
  EXPECT_NEAR(j["overall"]["ofu"].get<double>(), 50.4 / 98 * scale, 1e-9);
  EXPECT_NEAR(j["overall"]["seconds"].get<double>(), 60.0 * 98 / 108, 1e-9);
  EXPECT_EQ(j["overall"]["coverage"]["gpus"], 3);  // the instances; the GPU row is theirs
  EXPECT_EQ(j["overall"]["coverage"]["gpus_with_ofu"], 3);
  EXPECT_TRUE(j["overall"]["coverage"]["left_out"].empty());

  // An instance of a profile the database does not list keeps its OFU and is left out.
  std::string odd = text;
  for (std::size_t at = odd.find("1g.10gb"); at != std::string::npos; at = odd.find("1g.10gb", at)) {
    odd.replace(at, 7, "1g.99gb");
  }
  const CommandResult partial = Ofu(fmt::format("report --input '{}' --format json", Write("odd.prom", odd).string()));
  ASSERT_EQ(partial.exit_code, 0) << partial.err;
  const auto p = nlohmann::json::parse(partial.out);
  EXPECT_TRUE(p["gpus"][3]["share"].is_null());
  EXPECT_NEAR(p["gpus"][3]["ofu"].get<double>(), 0.9 * scale, 1e-9);
  EXPECT_NEAR(p["overall"]["ofu"].get<double>(), 0.45 * scale, 1e-9);  // the two 3g instances alone
  EXPECT_EQ(p["overall"]["coverage"]["left_out"], nlohmann::json::array({"GPU-a100/gi9"}));
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
  // 60 s at 0.2 then 60 s at 0.6, clock at f_spec-ish 1830, taken as reported.
  std::string text = SteadyH100(0.2, 1830, 60);
  const std::string second = SteadyH100(0.6, 1830, 120);
  text += second.substr(second.size() / 2);  // seconds 61..120 at 0.6
  const fs::path input = Write("steps.prom", text);
  const CommandResult by60 = Ofu(fmt::format("report --input '{}' --format json --window 60 --clock reported",
                                             input.string()));
  const CommandResult by30 = Ofu(fmt::format("report --input '{}' --format json --window 30 --clock reported",
                                             input.string()));
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
  const CommandResult run = Ofu(fmt::format("report --input - --format json --clock reported < '{}'", input.string()));
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

// The bundled synthetic recording: 2 GPUs, 600 s, GPU 1 silent for seconds
// 301..390 and idle for 120 s at each end.
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

// The bundled real recording (one H100, stage A of the GPU validation) carries
// its phases: the table shows them first, OFU beside true MFU, and the JSON
// has them. Figures: docs/results/2026-11-26-h100-sxm5/stage-A/stage-a-phases.csv
// (bf16 8192^3: ofu_rec 0.7006, mfu_loop 0.6940).
TEST_F(ReportCli, RealBundledRecordingShowsItsPhasesFirst) {
  const std::string path = OFU_SOURCE_DIR "/data/recordings/h100-sxm5-stage-a-1s.om";
  const CommandResult table = Ofu("report --input '" + path + "'");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out.find("SYNTHETIC"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("recorded on real hardware"), std::string::npos) << table.out;
  const std::size_t phases = table.out.find("Phases");
  ASSERT_NE(phases, std::string::npos) << table.out;
  EXPECT_LT(phases, table.out.find("overall")) << "the phase table comes before the GPU table";
  const std::size_t row = table.out.find("bf16-8192");
  ASSERT_NE(row, std::string::npos);
  const std::string line = table.out.substr(row, table.out.find('\n', row) - row);
  // OFU with the H100's measured clock model (steady work: 1366 / 0.998 MHz);
  // 70.1 % and +0.7 pp with the reported clock before it.
  EXPECT_NE(line.find(" 70.2 "), std::string::npos) << line;
  EXPECT_NE(line.find(" 69.4 "), std::string::npos) << line;
  EXPECT_NE(line.find("+0.8 pp"), std::string::npos) << line;
  EXPECT_NE(line.find("model"), std::string::npos) << line;

  const CommandResult json = Ofu("report --format json --input '" + path + "'");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["source"]["synthetic"], false);
  ASSERT_EQ(j["phases"].size(), 8u);
  EXPECT_EQ(j["phases"][0]["phase"], "bf16-8192");
  EXPECT_EQ(j["phases"][0]["windows"], 6);
  EXPECT_NEAR(j["phases"][0]["ofu"].get<double>(), 0.7020, 0.0005);  // 0.7006 with the reported clock
  EXPECT_NEAR(j["phases"][0]["mfu"].get<double>(), 0.6940, 0.0001);
  EXPECT_TRUE(j["phases"][0]["ofu_minus_mfu_pp"].is_number());

  const CommandResult synthetic = Ofu("report --format json --input '" OFU_SOURCE_DIR
                                      "/data/recordings/synthetic-2xh100-bf16-matmul.om'");
  ASSERT_EQ(synthetic.exit_code, 0) << synthetic.err;
  EXPECT_TRUE(nlohmann::json::parse(synthetic.out)["phases"].empty());  // it carries none
}

// dcgm-exporter writes "ERROR - FAILED TO CONVERT TO STRING" for fields it
// cannot format: in a family ofu does not use the samples are skipped, and
// one second whose tensor activity is such a text only loses that second.
TEST_F(ReportCli, ValuesThatAreNotNumbersDoNotStopTheReport) {
  std::string text = SteadyH100(0.5, 1830, 60);
  text +=
      "DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION{gpu=\"0\",UUID=\"GPU-test-0\"} ERROR - FAILED TO CONVERT TO STRING\n";
  const std::string tensor_at_30 = "} 0.5 1700000010\n";  // second 30 of the minute
  const std::size_t at = text.find(tensor_at_30);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, tensor_at_30.size(), "} ERROR\n");
  const fs::path input = Write("errors.prom", text);
  const CommandResult run = Ofu(fmt::format("report --input '{}' --format json --clock reported", input.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto gpu = nlohmann::json::parse(run.out)["gpus"][0];
  EXPECT_NEAR(gpu["ofu"].get<double>(), 0.5, 0.01);
}

// --- One scrape per GPU family (tests/data/scrapes, sources in its README) ---
//
// f_spec of each SKU by hand from data/gpu_specs.json, peak / (SMs x FLOP/clk/SM):
//   Tesla T4                 65 TFLOPS fp16   / (40 x 1024)  = 1586.914 MHz
//   RTX 4000 Ada             213.81 TFLOPS fp8 / (48 x 2048)  = 2174.988 MHz
//   A800-SXM4-80GB           312 TFLOPS bf16  / (108 x 2048) = 1410.590 MHz
//   Tesla V100-SXM2-32GB     125 TFLOPS fp16  / (80 x 1024)  = 1525.879 MHz
//   H100 80GB HBM3           989.4 TFLOPS bf16 / (132 x 4096) = 1829.945 MHz
// and OFU = tensor activity x SM clock / f_spec.

class ReportScrapes : public ReportCli {
 protected:
  nlohmann::json ReportJson(const std::string& file, int expected_exit) {
    const CommandResult run = Ofu(fmt::format("report --format json --input '" OFU_TEST_DATA_DIR "/scrapes/{}'", file));
    EXPECT_EQ(run.exit_code, expected_exit) << file << ": " << run.err;
    return nlohmann::json::parse(run.out, nullptr, false);
  }
};

TEST_F(ReportScrapes, TuringRealTeslaT4) {
  const auto j = ReportJson("turing-tesla-t4.prom", 0);
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["model"], "Tesla T4");
  EXPECT_EQ(j["gpus"][0]["sku"], "t4");
  EXPECT_NEAR(j["gpus"][0]["ofu"].get<double>(), 0.005822 * 660 / (65e6 / (40 * 1024.0)), 1e-12);
  // Nobody measured a T4's run clock: the reported one, and the table says why.
  EXPECT_EQ(j["gpus"][0]["clock_source"], "reported");
  const CommandResult table = Ofu("report --input '" OFU_TEST_DATA_DIR "/scrapes/turing-tesla-t4.prom'");
  EXPECT_NE(table.out.find("no measurement of this board's run clock"), std::string::npos) << table.out;
}

TEST_F(ReportScrapes, AdaRealRtx4000Ada) {
  const auto j = ReportJson("ada-rtx-4000-ada.prom", 0);
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["model"], "NVIDIA RTX 4000 Ada Generation");
  EXPECT_NEAR(j["gpus"][0]["spec_clock_mhz"].get<double>(), 213.81e6 / (48 * 2048.0), 1e-9);
  EXPECT_EQ(j["gpus"][0]["ofu"].get<double>(), 0.0);  // a measured 0, not an absent figure
}

// The real 8x A800 node: GPU 0 as three 2g.20gb instances (28 of 108 SMs
// each, the A100 80GB's profile, see mig_source in data/gpu_specs.json), all
// idle, and ten ERROR values in a family ofu does not use (lines 210-219).
TEST_F(ReportScrapes, AmpereRealA800WithMigAndErrorValues) {
  const auto j = ReportJson("ampere-a800-mig.prom", 0);
  ASSERT_EQ(j["gpus"].size(), 10u);
  for (const auto& gpu : j["gpus"]) {
    EXPECT_EQ(gpu["model"], "NVIDIA A800-SXM4-80GB");
    EXPECT_EQ(gpu["ofu"].get<double>(), 0.0) << gpu["key"];
  }
  EXPECT_EQ(j["gpus"][0]["mig_profile"], "2g.20gb");
  EXPECT_NEAR(j["gpus"][0]["share"].get<double>(), 28.0 / 108, 1e-12);
  EXPECT_EQ(j["overall"]["coverage"]["gpus"], 10);
  EXPECT_EQ(j["overall"]["coverage"]["gpus_with_ofu"], 10);
  // 7 whole GPUs and 3 instances of 28/108, one 30 s scrape each.
  EXPECT_NEAR(j["overall"]["seconds"].get<double>(), 30 * (7 + 3 * 28.0 / 108), 1e-9);
  ASSERT_EQ(j["notes"].size(), 1u);
  const std::string note = j["notes"][0];
  EXPECT_NE(note.find("ampere-a800-mig.prom:210: DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION"), std::string::npos) << note;
  EXPECT_NE(note.find("10 such samples skipped"), std::string::npos) << note;

  // --strict: all or nothing, as before (exit 2 at the line).
  const CommandResult strict = Ofu("report --strict --input '" OFU_TEST_DATA_DIR "/scrapes/ampere-a800-mig.prom'");
  EXPECT_EQ(strict.exit_code, 2);
  EXPECT_NE(strict.err.find("ampere-a800-mig.prom:210:"), std::string::npos) << strict.err;
}

TEST_F(ReportScrapes, VoltaSyntheticV100) {
  const auto j = ReportJson("synthetic-volta-tesla-v100-sxm2-32gb.prom", 0);
  EXPECT_EQ(j["source"]["synthetic"], true);
  ASSERT_EQ(j["gpus"].size(), 2u);
  const double f_spec = 125e6 / (80 * 1024.0);
  EXPECT_EQ(j["gpus"][0]["sku"], "v100-sxm2");
  EXPECT_NEAR(j["gpus"][0]["ofu"].get<double>(), 0.40 * 1530 / f_spec, 1e-12);
  EXPECT_NEAR(j["gpus"][1]["ofu"].get<double>(), 0.10 * 1380 / f_spec, 1e-12);
  EXPECT_NEAR(j["overall"]["ofu"].get<double>(), (0.40 * 1530 + 0.10 * 1380) / 2 / f_spec, 1e-12);
}

TEST_F(ReportScrapes, HopperSyntheticH100) {
  const auto j = ReportJson("synthetic-hopper-h100-80gb-hbm3.prom", 0);
  EXPECT_EQ(j["source"]["synthetic"], true);
  ASSERT_EQ(j["gpus"].size(), 2u);
  // The H100 80GB HBM3's measured clock model (docs/metrics.md#the-sm-clock),
  // no clock event reasons in the scrape, by hand:
  //   GPU 0, A 0.50 at 1755 MHz: bursts 1755 / 1.101 = 1594.005 and
  //     1755 / 1.109 = 1582.507, mean 1588.256; steady 1755 / 0.998 =
  //     1758.517; 1/6 of the way from 0.45 to 0.75: 1616.633 MHz
  //   GPU 1, A 0.25 at 1980 MHz (a burst): 1980 / 1.0505 = 1884.817 and
  //     1980 / 1.0545 = 1877.667, mean 1881.242 MHz
  const double f_spec = 989.4e6 / (132 * 4096.0);
  EXPECT_NEAR(j["gpus"][0]["ofu"].get<double>(), 0.50 * 1616.633 / f_spec, 1e-6);
  EXPECT_NEAR(j["gpus"][1]["ofu"].get<double>(), 0.25 * 1881.242 / f_spec, 1e-6);
  EXPECT_EQ(j["gpus"][1]["clock_source"], "measured-model");
  EXPECT_NEAR(j["gpus"][1]["ofu_low"].get<double>(), 0.25 * 1877.667 / f_spec, 1e-6);
  EXPECT_NEAR(j["gpus"][1]["ofu_high"].get<double>(), 0.25 * 1884.817 / f_spec, 1e-6);
}

// The real Volta and Hopper scrapes have the SM clock but no tensor activity
// (dcgm-exporter's profiling fields are off by default): OFU is absent, never
// 0, and the exit says nothing could be computed.
TEST_F(ReportScrapes, RealVoltaAndHopperWithoutTensorActivityHaveNoOfu) {
  for (const char* file : {"volta-tesla-v100-sxm2-32gb.prom", "hopper-h100-80gb-hbm3.prom"}) {
    const auto j = ReportJson(file, 4);
    ASSERT_FALSE(j["gpus"].empty()) << file;
    for (const auto& gpu : j["gpus"]) {
      EXPECT_FALSE(gpu["sku"].is_null()) << file;  // the model is known
      EXPECT_TRUE(gpu["ofu"].is_null()) << file;
      EXPECT_FALSE(gpu["sm_clock_mhz"].is_null()) << file;
      EXPECT_NE(gpu["problems"].dump().find("no tensor activity"), std::string::npos) << file;
    }
  }
}

// --- Scrapes as people paste them (tests/data/scrapes/pasted-*, sources in its README) ---

constexpr const char* kTensorCountersLine =
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, gauge, Ratio of cycles the tensor (HMMA) pipe is active.";
constexpr const char* kClockCountersLine = "DCGM_FI_DEV_SM_CLOCK,  gauge, SM clock frequency (in MHz).";

// NVIDIA/gpu-monitoring-tools' README: fences, "$" prompts and "..." around
// the exposition. Each such line is named in a note, the samples are read
// (the SM clock, 139 MHz); the missing tensor field is named with the
// counters-file line that enables it. --strict refuses the first stray line.
TEST_F(ReportScrapes, PastedReadmeIsReadAroundItsPromptsAndNamesTheMissingField) {
  const std::string file = "pasted-gpu-monitoring-tools-readme-quickstart.prom";
  const CommandResult run =
      Ofu(fmt::format("report --format json --gpu-model h100-sxm5 --input '" OFU_TEST_DATA_DIR "/scrapes/{}'", file));
  EXPECT_EQ(run.exit_code, 4) << run.err;  // no tensor activity: no OFU
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_DOUBLE_EQ(j["gpus"][0]["sm_clock_mhz"].get<double>(), 139);
  ASSERT_EQ(j["notes"].size(), 7u);  // six stray lines, then the missing field
  EXPECT_NE(j["notes"][1].get<std::string>().find(file + ":2: skipped a line that cannot be a sample: '$ docker run"),
            std::string::npos)
      << j["notes"];
  const std::string advice = j["notes"][6];
  EXPECT_NE(advice.find("missing: DCGM_FI_PROF_PIPE_TENSOR_ACTIVE."), std::string::npos) << advice;
  EXPECT_NE(advice.find(kTensorCountersLine), std::string::npos) << advice;
  EXPECT_EQ(advice.find(kClockCountersLine), std::string::npos) << advice;

  const CommandResult strict =
      Ofu(fmt::format("report --strict --gpu-model h100-sxm5 --input '" OFU_TEST_DATA_DIR "/scrapes/{}'", file));
  EXPECT_EQ(strict.exit_code, 2);
  EXPECT_NE(strict.err.find(file + ":1: metric name missing"), std::string::npos) << strict.err;
}

// dcgm-exporter issue 68: numbered steps and a "> " quote around an A30 MIG
// instance's tensor activity, with no SM clock: the clock is what is
// missing, and only its counters line is given.
TEST_F(ReportScrapes, PastedIssueWithoutSmClockNamesTheClockField) {
  const auto j = ReportJson("pasted-dcgm-exporter-issue-68-a30-mig.prom", 4);
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["model"], "NVIDIA A30");
  EXPECT_EQ(j["source"]["scrapes"], 2);
  const std::string advice = j["notes"].back();
  EXPECT_NE(advice.find("missing: DCGM_FI_DEV_SM_CLOCK."), std::string::npos) << advice;
  EXPECT_NE(advice.find(kClockCountersLine), std::string::npos) << advice;
  EXPECT_EQ(advice.find(kTensorCountersLine), std::string::npos) << advice;
}

// kubernetes/website's GH200 scrape holds only PCIe bytes: no GPU counter
// ofu knows, and the error names both fields with their counters lines.
TEST_F(ReportScrapes, PastedScrapeWithNoCounterOfuKnowsNamesBothFields) {
  const CommandResult run = Ofu("report --input '" OFU_TEST_DATA_DIR
                                "/scrapes/pasted-kubernetes-website-gh200-dra.prom'");
  EXPECT_EQ(run.exit_code, 4) << run.err;
  EXPECT_NE(run.err.find("no GPU counters found (read 2 samples"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(kTensorCountersLine), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(kClockCountersLine), std::string::npos) << run.err;
  EXPECT_NE(run.out.find("pasted-kubernetes-website-gh200-dra.prom:6: skipped a line that cannot be a sample: "
                         "'with Pod DRA info:'"),
            std::string::npos)
      << run.out;
}

// The same file in JSON: the GPU its samples name is listed in the notes
// with the families it has and the counters it lacks (before, notes: []).
TEST_F(ReportScrapes, ScrapeWithoutOfuCountersListsItsGpusInJsonNotes) {
  const auto j = ReportJson("pasted-kubernetes-website-gh200-dra.prom", 4);
  ASSERT_TRUE(j["notes"].is_array());
  bool listed = false;
  for (const auto& note : j["notes"]) {
    const std::string text = note;
    if (text.find("GPU GPU-a4f34abc-7715-3560-dcea-7238b9611a45, NVIDIA GH200 96GB HBM3: no counter ofu uses, so "
                  "no OFU: it has only DCGM_FI_PROF_PCIE_RX_BYTES") != std::string::npos) {
      listed = true;
    }
  }
  EXPECT_TRUE(listed) << j["notes"].dump(1);
  // And in the table output.
  const CommandResult table = Ofu("report --input '" OFU_TEST_DATA_DIR
                                  "/scrapes/pasted-kubernetes-website-gh200-dra.prom'");
  EXPECT_NE(table.out.find("note: " OFU_TEST_DATA_DIR
                           "/scrapes/pasted-kubernetes-website-gh200-dra.prom: GPU GPU-a4f34abc-7715-3560-dcea-"
                           "7238b9611a45, NVIDIA GH200 96GB HBM3: no counter ofu uses"),
            std::string::npos)
      << table.out;
}

// A real `dcgmi dmon` table (tests/data/dmon): read, not refused; the first
// note says what the file is, the second what to run for an OFU (it has no
// SMCLK column). Tensor activity by hand: (0.540 + 0.525 + 0.546) / 3.
TEST_F(ReportScrapes, RealDcgmiDmonTableIsReadAndNamed) {
  const CommandResult run = Ofu("report --format json --gpu-model t4 --input '" OFU_TEST_DATA_DIR
                                "/dmon/nvidia-gcp-samples-triton-gke-t4-bert.txt'");
  EXPECT_EQ(run.exit_code, 4) << run.err;
  const auto j = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_EQ(j["gpus"].size(), 1u) << run.out;
  EXPECT_EQ(j["gpus"][0]["key"], "gpu2");
  EXPECT_NEAR(j["gpus"][0]["tensor_active"].get<double>(), (0.540 + 0.525 + 0.546) / 3, 1e-9);
  EXPECT_TRUE(j["gpus"][0]["ofu"].is_null());
  const std::string first = j["notes"][0];
  EXPECT_NE(first.find("a `dcgmi dmon` table, not a dcgm-exporter scrape"), std::string::npos) << first;
  const std::string second = j["notes"][1];
  EXPECT_NE(second.find("run `dcgmi dmon -e 1004,100 -d 1000 > dmon.txt`"), std::string::npos) << second;
  EXPECT_EQ(run.err.find("sample value missing"), std::string::npos) << run.err;
  const CommandResult table = Ofu("report --gpu-model t4 --input '" OFU_TEST_DATA_DIR
                                  "/dmon/nvidia-gcp-samples-triton-gke-t4-bert.txt'");
  EXPECT_NE(table.out.find("a dcgmi dmon table, without timestamps: 3 intervals, assumed 1 s apart"), std::string::npos)
      << table.out;
}

// SYNTHETIC dmon table with TENSO and SMCLK (hand-set values, DCGM's current
// layout, -d 1000 on its command line): two rows of GPU 0 at 0.5 and
// 1755 MHz. With --clock reported, OFU = 0.5 x 1755 / 1829.945 (H100 SXM5
// f_spec above) = 0.479523, over 2 s.
TEST_F(ReportScrapes, SyntheticDcgmiDmonTableGivesOfu) {
  const std::string path = ::testing::TempDir() + "/synthetic-dmon.txt";
  {
    std::ofstream out(path);
    out << "$ dcgmi dmon -e 1004,100 -d 1000\n"
           "#Entity           TENSO         SMCLK\n"
           "ID\n"
           "GPU 0             0.500         1755\n"
           "GPU 0             0.500         1755\n";
  }
  const CommandResult run = Ofu("report --format json --gpu-model h100-sxm5 --clock reported --input '" + path + "'");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_EQ(j["gpus"].size(), 1u) << run.out;
  EXPECT_NEAR(j["gpus"][0]["ofu"].get<double>(), 0.5 * 1755 / (989.4e6 / (132 * 4096.0)), 1e-9);
  EXPECT_DOUBLE_EQ(j["gpus"][0]["seconds"].get<double>(), 2);
  std::filesystem::remove(path);
}

// Coverage counts scrape time. The real H100 page is one scrape (clock
// only): 30 s of data, as the source line says, not a 60 s window.
TEST_F(ReportScrapes, OneScrapeIsThirtySecondsOfDataNotAWindow) {
  const auto j = ReportJson("hopper-h100-80gb-hbm3.prom", 4);
  EXPECT_EQ(j["source"]["scrapes"], 1);
  EXPECT_DOUBLE_EQ(j["overall"]["coverage"]["seconds_left_out"].get<double>(), 30);
  const CommandResult table = Ofu("report --input '" OFU_TEST_DATA_DIR "/scrapes/hopper-h100-80gb-hbm3.prom'");
  EXPECT_NE(table.out.find("1 scrape, taken to stand for the 30 s before it"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("(30 s of data without an OFU"), std::string::npos) << table.out;
}

// Synthetic: three scrapes without timestamps, SM clock only, of an H100.
// By hand: scrapes at 0, 30 and 60 s, one nominal 30 s each = 90 s (window
// lengths would give 60 + 60 = 120: (-60, 0] holds one, (0, 60] two).
TEST_F(ReportCli, ASequenceOfScrapesCountsThirtySecondsEach) {
  std::string text;
  for (int scrape = 0; scrape < 3; ++scrape) {
    text += "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",UUID=\"GPU-test-0\",modelName=\"NVIDIA H100 80GB HBM3\"} 1755\n";
  }
  const fs::path input = Write("three-scrapes.prom", text);
  const CommandResult run = Ofu(fmt::format("report --input '{}' --format json", input.string()));
  EXPECT_EQ(run.exit_code, 4) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["source"]["scrapes"], 3);
  EXPECT_DOUBLE_EQ(j["overall"]["coverage"]["seconds_left_out"].get<double>(), 90);
  const CommandResult table = Ofu(fmt::format("report --input '{}'", input.string()));
  EXPECT_NE(table.out.find("3 scrapes, assumed 30 s apart"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("(90 s of data without an OFU"), std::string::npos) << table.out;
}

}  // namespace
