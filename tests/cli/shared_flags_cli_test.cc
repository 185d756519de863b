// The flags several commands share, declared once (apps/ofu/window_flag.h,
// ofu/cli/spec_db.h): every command that takes them accepts and refuses the
// same values, and refuses them the same way.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/cli_runner.h"

namespace {

using ofu::testing::CommandResult;

class SharedFlagsCli : public ofu::testing::CliTest {
 protected:
  // A usage error: exit 1, and stderr names the flag.
  void ExpectRefused(const std::string& args, const std::string& flag) {
    const CommandResult run = Ofu(args);
    EXPECT_EQ(run.exit_code, 1) << args << "\n" << run.err;
    EXPECT_NE(run.err.find(flag), std::string::npos) << args << "\n" << run.err;
  }

  // Two minutes of one H100 at half tensor activity: `ofu report` gives it an
  // OFU whatever the window.
  std::string H100Recording() {
    std::string text;
    for (int t = 1; t <= 120; ++t) {
      const std::string labels = R"(gpu="0",UUID="GPU-test-0",modelName="NVIDIA H100 80GB HBM3")";
      text += fmt::format("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{}}} 0.5 {}\n", labels, 1699999980 + t);
      text += fmt::format("DCGM_FI_DEV_SM_CLOCK{{{}}} 1830 {}\n", labels, 1699999980 + t);
    }
    return Write("h100.prom", text).string();
  }
};

// A live source's window (top, record, agent, sources --cost): 0.1 to 3600 s.
TEST_F(SharedFlagsCli, SampledWindowIsATenthOfASecondToAnHour) {
  for (const char* command : {"agent --check-config", "top --once", "record --out run.om", "sources --cost"}) {
    for (const char* window : {"0", "0.05", "3600.5", "7200"}) {
      ExpectRefused(fmt::format("{} --window {}", command, window), "--window");
    }
  }
  ExpectRefused("agent --check-config -w 0.05", "--window");
  for (const char* window : {"0.1", "3600"}) {
    const CommandResult run = Ofu(fmt::format("agent --check-config -w {}", window));
    EXPECT_EQ(run.exit_code, 0) << window << "\n" << run.err;
    EXPECT_NE(run.out.find(fmt::format("window {} s", window)), std::string::npos) << run.out;
  }
  // Without --cost nothing is sampled, but the flag is still checked.
  EXPECT_NE(Ofu("sources --window 3600").exit_code, 1);
}

// SM clock readings per window (top, record, agent, run, sources --cost):
// 0 (ten a second) to 1000, one range, refused with one message.
TEST_F(SharedFlagsCli, ClockReadingsAreZeroToAThousandEverywhere) {
  for (const char* command : {"agent --check-config", "top --once", "record --out run.om", "sources --cost"}) {
    for (const char* readings : {"-1", "1001"}) {
      const std::string args = fmt::format("{} --clock-readings {}", command, readings);
      ExpectRefused(args, fmt::format("--clock-readings {} is not in 1..1000 (or 0: ten readings a second)", readings));
    }
  }
  for (const char* readings : {"0", "1000"}) {
    EXPECT_EQ(Ofu(fmt::format("agent --check-config --clock-readings {}", readings)).exit_code, 0) << readings;
  }
}

// --format: each command's own formats, parsed once; any other is a usage
// error naming the flag.
TEST_F(SharedFlagsCli, FormatTakesOnlyTheCommandsFormats) {
  const std::string input = H100Recording();
  ExpectRefused(fmt::format("report --input '{}' --format xml", input), "--format");
  ExpectRefused(fmt::format("report --input '{}' --format text", input), "--format");  // record's, not report's
  ExpectRefused("sources --format csv", "--format");
  ExpectRefused("kernels parse --format csv nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", "--format");
  const CommandResult csv = Ofu(fmt::format("report --input '{}' -f csv", input));
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("gpu,uuid,model,sku,", 0), 0u) << csv.out;
  const CommandResult table = Ofu(fmt::format("report --input '{}'", input));  // the first is the default
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("overall"), std::string::npos) << table.out;
  EXPECT_NE(table.out.front(), '{');
}

// `ofu report` re-windows a recording: 0.1 s to 366 days.
TEST_F(SharedFlagsCli, ReportWindowIsATenthOfASecondTo366Days) {
  const std::string input = H100Recording();
  for (const char* window : {"0", "0.05", "31622401"}) {
    ExpectRefused(fmt::format("report --input '{}' --window {}", input, window), "--window");
  }
  for (const char* window : {"0.1", "3600.5", "31622400"}) {
    const CommandResult run = Ofu(fmt::format("report --input '{}' --format json --window {}", input, window));
    EXPECT_EQ(run.exit_code, 0) << window << "\n" << run.err;
  }
  ExpectRefused(fmt::format("report --input '{}' -w 60", input), "-w");  // report has no short form
}

// --gpu-model takes a SKU id or the driver's name in every command, and an
// unknown model is exit 3 with the same message, before any input is read.
TEST_F(SharedFlagsCli, GpuModelIsResolvedTheSameWayEverywhere) {
  const std::string input = H100Recording();
  const std::string kernel = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT";
  for (const char* model : {"h100-sxm5", "'NVIDIA H100 80GB HBM3'"}) {
    const std::string flag = fmt::format("--gpu-model {}", model);
    EXPECT_EQ(Ofu(fmt::format("report --input '{}' {}", input, flag)).exit_code, 0) << model;
    EXPECT_EQ(Ofu(fmt::format("kernels parse {} {}", flag, kernel)).exit_code, 0) << model;
    EXPECT_EQ(Ofu(fmt::format("agent --check-config {}", flag)).exit_code, 0) << model;
    // The model is known, so what fails is the missing trace (exit 2).
    EXPECT_EQ(Ofu(fmt::format("correct --trace missing.json --ofu 0.5 {}", flag)).exit_code, 2) << model;
  }
  for (const std::string& args :
       {fmt::format("report --input '{}'", input), fmt::format("kernels parse {}", kernel),
        std::string("agent --check-config"), std::string("correct --trace missing.json --ofu 0.5")}) {
    const CommandResult run = Ofu(args + " --gpu-model Z9000");
    EXPECT_EQ(run.exit_code, 3) << args << "\n" << run.err;
    EXPECT_NE(run.err.find("unknown GPU model \"Z9000\""), std::string::npos) << args << "\n" << run.err;
  }
}

}  // namespace
