// ofu-gemm as a program: --summary, --list and the no-GPU path. Needs no
// GPU: the no-GPU case hides every device with CUDA_VISIBLE_DEVICES.
#include <gtest/gtest.h>

#include "ofu/core/version.h"
#include "support/cli_runner.h"

namespace ofu::testing {
namespace {

class GemmCliTest : public CliTest {
 protected:
  // ASan (the sanitized build) must leave CUDA's address range alone.
  CommandResult Gemm(const std::string& args, const std::string& env = "") {
    return RunShell(fmt::format("env ASAN_OPTIONS=protect_shadow_gap=0 {} '{}' {}", env, OFU_GEMM_BINARY, args), dir_);
  }
  std::string Data(const std::string& name) { return fmt::format("'{}/gemm/{}'", OFU_TEST_DATA_DIR, name); }
};

TEST_F(GemmCliTest, SummarizesASyntheticResultFile) {
  const CommandResult r = Gemm("--summary " + Data("synthetic-results.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // bf16 raw |e| = 4, 6, 2: max 6, mean 4, p95 = 4 + 0.9 * (6 - 4) = 5.8.
  EXPECT_NE(r.out.find("bf16       raw               3     6.00     4.00     5.80"), std::string::npos) << r.out;
  // bf16 corrected |e| = 0.2, 0.6, 1.4: mean 0.733, p95 = 0.6 + 0.9 * 0.8 = 1.32.
  EXPECT_NE(r.out.find("bf16       corrected         3     1.40     0.73     1.32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fp8        corrected         1     0.50     0.50     0.50"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Cases above 1 pp (corrected error, else raw): 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("launch gaps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 x the spec database gives H100 SXM5 no fp4 peak"), std::string::npos) << r.out;
}

TEST_F(GemmCliTest, BadResultFileExitsTwoNamingLineAndColumn) {
  const CommandResult r = Gemm("--summary " + Data("bad-results.csv"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad-results.csv:3: column 'mfu': 'abc' is not a number"), std::string::npos) << r.err;
}

TEST_F(GemmCliTest, SummaryWithNothingMeasuredExitsFour) {
  const auto csv = Write("skipped.csv", "sweep,group,m,n,k,precision,layout,note\ns,g,1,1,1,fp4,tn,skipped: no peak\n");
  const CommandResult r = Gemm("--summary '" + csv.string() + "'");
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("no measured case"), std::string::npos) << r.err;
}

TEST_F(GemmCliTest, ListsAShippedSweepWithoutAGpu) {
  const CommandResult r = Gemm(fmt::format("--list --sweep '{}/gpu/sweeps/square.toml'", OFU_SOURCE_DIR));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("94 cases"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("12289x12289x12289 fp8 tn"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("square-fp32-simt"), std::string::npos) << r.out;
}

TEST_F(GemmCliTest, BadSweepExitsTwo) {
  const auto sweep = Write("bad.toml", "name = \"x\"\n[[group]]\nsquare = [512]\nprecisions = [\"fp9\"]\n");
  for (const std::string flags : {"--list --sweep", "--sweep"}) {
    const CommandResult r = Gemm(flags + " '" + sweep.string() + "'");
    EXPECT_EQ(r.exit_code, 2) << flags;
    EXPECT_NE(r.err.find("bad.toml:4: group 1: field 'precisions'"), std::string::npos) << r.err;
  }
}

TEST_F(GemmCliTest, NoCudaDeviceExitsFiveWithAClearMessage) {
  const auto sweep = Write("one.toml", "name = \"x\"\n[[group]]\nsquare = [512]\nprecisions = [\"bf16\"]\n");
  const CommandResult r = Gemm("--sweep '" + sweep.string() + "' --out out.csv", "CUDA_VISIBLE_DEVICES=-1");
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_NE(r.err.find("ofu-gemm: no CUDA device"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--list and --summary work without one"), std::string::npos) << r.err;
}

TEST_F(GemmCliTest, VersionIsTheProjectVersion) {
  const CommandResult r = Gemm("--version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string("ofu-gemm ") + ofu::kVersion + "\n");
}

TEST_F(GemmCliTest, UsageErrorsExitOne) {
  EXPECT_EQ(Gemm("").exit_code, 1);
  EXPECT_EQ(Gemm("--list").exit_code, 1);  // --list needs --sweep
  EXPECT_EQ(Gemm("--no-such-flag").exit_code, 1);
}

}  // namespace
}  // namespace ofu::testing
