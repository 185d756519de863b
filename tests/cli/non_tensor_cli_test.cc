// End-to-end: the non-tensor (CUDA-core) figures and the CUDA-core advice of
// `ofu report` on synthetic recordings (labelled so) with hand-computed
// answers (issue 18).
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using ofu::testing::CommandResult;

class NonTensorCli : public ofu::testing::CliTest {};

// Synthetic (not measured): one H100 SXM5 sampled every second for 120 s,
// with tensor activity, FP32 pipe activity (absent when negative), SM clock.
std::string SyntheticH100(double tensor, double fp32, double clock_mhz, double fp64 = -1, double fp16 = -1) {
  std::string text = "# SYNTHETIC recording written by tests/cli/non_tensor_cli_test.cc, not measured on a GPU\n";
  const std::string labels = R"(gpu="0",UUID="GPU-nt-0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-a")";
  for (int t = 1; t <= 120; ++t) {
    const int ts = 1699999980 + t;
    text += fmt::format("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{}}} {} {}\n", labels, tensor, ts);
    if (fp32 >= 0) text += fmt::format("DCGM_FI_PROF_PIPE_FP32_ACTIVE{{{}}} {} {}\n", labels, fp32, ts);
    if (fp64 >= 0) text += fmt::format("DCGM_FI_PROF_PIPE_FP64_ACTIVE{{{}}} {} {}\n", labels, fp64, ts);
    if (fp16 >= 0) text += fmt::format("DCGM_FI_PROF_PIPE_FP16_ACTIVE{{{}}} {} {}\n", labels, fp16, ts);
    text += fmt::format("DCGM_FI_DEV_SM_CLOCK{{{}}} {} {}\n", labels, clock_mhz, ts);
  }
  return text;
}

TEST_F(NonTensorCli, HandValueBoundInJsonCsvAndTable) {
  // FP32 pipe 0.6 at 1755 MHz: 0.6 x 132 SMs x 128 lanes x 2 x 1.755e9 = 35.582 TFLOP/s,
  // 35.582 / 66.9 (the FP32 peak, quoted at 1980 MHz) = 0.532 of it.
  const fs::path input = Write("fp32.prom", SyntheticH100(0.3, 0.6, 1755));
  const CommandResult run = Ofu(fmt::format("report --input '{}' --format json", input.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  const auto& nt = j["gpus"][0]["non_tensor"];
  EXPECT_NEAR(nt["fp32_active"].get<double>(), 0.6, 1e-12);
  EXPECT_TRUE(nt["fp64_active"].is_null()) << "absent, never 0";
  EXPECT_TRUE(nt["fp16_active"].is_null());
  EXPECT_NEAR(nt["flops_upper_bound_tflops"].get<double>(), 35.582976, 1e-3);
  EXPECT_NEAR(nt["share_of_peak"].get<double>(), 35.582976 / 66.9, 1e-4);
  EXPECT_NEAR(j["overall"]["non_tensor"]["flops_upper_bound_tflops"].get<double>(), 35.582976, 1e-3);
  EXPECT_TRUE(j["advice"].empty()) << "OFU 0.29 is not low";

  const CommandResult csv = Ofu(fmt::format("report --input '{}' --format csv", input.string()));
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find("fp64_active,fp32_active,fp16_active,non_tensor_tflops_upper_bound"), std::string::npos);
  EXPECT_NE(csv.out.find(",,35.58"), std::string::npos) << csv.out;  // fp16 empty, then the bound

  const CommandResult table = Ofu(fmt::format("report --input '{}'", input.string()));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("CUDA-core pipes"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("35.58"), std::string::npos) << table.out;
}

TEST_F(NonTensorCli, Fp64AndFp16AnaloguesAndTheirSum) {
  // FP64 0.6: 0.6 x 132 x 64 x 2 x 1.755e9 = 17.791; FP16 0.6: x 256 lanes = 71.165;
  // all three: 124.540 TFLOP/s.
  const fs::path fp64 = Write("fp64.prom", SyntheticH100(0.3, -1, 1755, 0.6));
  auto j = nlohmann::json::parse(Ofu(fmt::format("report --input '{}' --format json", fp64.string())).out);
  EXPECT_NEAR(j["gpus"][0]["non_tensor"]["flops_upper_bound_tflops"].get<double>(), 17.791488, 1e-3);
  const fs::path fp16 = Write("fp16.prom", SyntheticH100(0.3, -1, 1755, -1, 0.6));
  j = nlohmann::json::parse(Ofu(fmt::format("report --input '{}' --format json", fp16.string())).out);
  EXPECT_NEAR(j["gpus"][0]["non_tensor"]["flops_upper_bound_tflops"].get<double>(), 71.165952, 1e-3);
  const fs::path all = Write("all.prom", SyntheticH100(0.3, 0.6, 1755, 0.6, 0.6));
  j = nlohmann::json::parse(Ofu(fmt::format("report --input '{}' --format json", all.string())).out);
  EXPECT_NEAR(j["gpus"][0]["non_tensor"]["flops_upper_bound_tflops"].get<double>(), 124.540416, 1e-4);
}

TEST_F(NonTensorCli, NoPipeCountersMeansAbsentFiguresNotZero) {
  const fs::path input = Write("none.prom", SyntheticH100(0.5, -1, 1830));
  const auto j = nlohmann::json::parse(Ofu(fmt::format("report --input '{}' --format json", input.string())).out);
  for (const char* key : {"fp64_active", "fp32_active", "fp16_active", "flops_upper_bound_tflops", "share_of_peak"}) {
    EXPECT_TRUE(j["gpus"][0]["non_tensor"][key].is_null()) << key;
  }
  const CommandResult table = Ofu(fmt::format("report --input '{}'", input.string()));
  EXPECT_EQ(table.out.find("CUDA-core pipes"), std::string::npos) << table.out;
}

TEST_F(NonTensorCli, LowOfuAndBusyFp32PipeGetsTheCudaCoreAdvice) {
  // OFU 0.02: tensor 0.02 at the spec clock. FP32 pipe 0.7.
  const fs::path input = Write("sgemm.prom", SyntheticH100(0.02, 0.7, 1830));
  const CommandResult run = Ofu(fmt::format("report --input '{}' --format json", input.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["advice"].size(), 1u) << run.out;
  const auto& a = j["advice"][0];
  EXPECT_EQ(a["kind"], "cuda_cores");
  EXPECT_EQ(a["pipe"], "fp32");
  EXPECT_NEAR(a["pipe_active"].get<double>(), 0.7, 1e-12);
  EXPECT_NEAR(a["ofu"].get<double>(), 0.02, 0.001);
  // TF32 tensor peak / FP32 CUDA-core peak: 494.7 / 66.9; with bf16 989.4 / 66.9.
  EXPECT_NEAR(a["gain_upper_bound"].get<double>(), 494.7 / 66.9, 1e-9);
  EXPECT_NEAR(a["bf16_gain_upper_bound"].get<double>(), 989.4 / 66.9, 1e-9);

  const CommandResult table = Ofu(fmt::format("report --input '{}'", input.string()));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  for (const char* said : {"advice:", "CUDA cores", "TF32", "autocast", "70% active", "OFU 0.020", "7.4x", "14.8x"}) {
    EXPECT_NE(table.out.find(said), std::string::npos) << said << "\n" << table.out;
  }
}

// A V100 has no TF32 and no bf16 on its tensor cores: FP32 math reaches
// them only through fp16 autocast, so that is the advice, and the gain is
// the fp16 tensor peak over the FP32 CUDA-core peak, 125 / 15.7 (V100 SXM2
// datasheet figures in data/gpu_specs.json).
TEST_F(NonTensorCli, LowOfuAndBusyFp32PipeOnAV100IsAdvisedFp16AutocastNotTf32) {
  std::string text = "# SYNTHETIC recording written by tests/cli/non_tensor_cli_test.cc, not measured on a GPU\n";
  const std::string labels = R"(gpu="0",UUID="GPU-nt-v100",modelName="Tesla V100-SXM2-32GB",Hostname="node-a")";
  for (int t = 1; t <= 120; ++t) {
    const int ts = 1699999980 + t;
    text += fmt::format("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{}}} 0.01 {}\n", labels, ts);
    text += fmt::format("DCGM_FI_PROF_PIPE_FP32_ACTIVE{{{}}} 0.97 {}\n", labels, ts);
    text += fmt::format("DCGM_FI_DEV_SM_CLOCK{{{}}} 1530 {}\n", labels, ts);
  }
  const fs::path input = Write("v100-sgemm.prom", text);
  const CommandResult run = Ofu(fmt::format("report --input '{}' --format json", input.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["advice"].size(), 1u) << run.out;
  const auto& a = j["advice"][0];
  EXPECT_EQ(a["tensor_precision"], "fp16");
  EXPECT_NEAR(a["gain_upper_bound"].get<double>(), 125 / 15.7, 1e-9);
  EXPECT_TRUE(a["bf16_gain_upper_bound"].is_null());
  const std::string advice = a["text"];
  EXPECT_NE(advice.find("torch.autocast(\"cuda\", dtype=torch.float16)"), std::string::npos) << advice;
  EXPECT_EQ(advice.find("allow_tf32 = True"), std::string::npos) << advice;
}

TEST_F(NonTensorCli, LowOfuWithQuietPipesGetsNoAdvice) {
  const fs::path input = Write("idle.prom", SyntheticH100(0.02, 0.05, 1830));
  const auto j = nlohmann::json::parse(Ofu(fmt::format("report --input '{}' --format json", input.string())).out);
  EXPECT_TRUE(j["advice"].empty()) << j["advice"].dump();
  const CommandResult table = Ofu(fmt::format("report --input '{}'", input.string()));
  EXPECT_EQ(table.out.find("advice:"), std::string::npos) << table.out;
}

}  // namespace
