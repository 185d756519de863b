// Sweep files: expansion into cases, and errors that name file, line and field.
#include "ofu/gemm/sweep.h"

#include <gtest/gtest.h>

namespace ofu::gemm {
namespace {

using kernels::Precision;

TEST(SweepTest, ExpandsShapesPrecisionsLayoutsInOrder) {
  auto sweep = ParseSweep(R"(
name = "demo"
min_seconds = 3

[[group]]
name = "g"
square = [512, 1000]
shapes = [[1, 4096, 16384]]
precisions = ["bf16", "fp32"]
layouts = ["tn", "nn"]
iterations = 50
)",
                          "demo.toml");
  ASSERT_TRUE(sweep.ok()) << sweep.error().message;
  EXPECT_EQ(sweep->name, "demo");
  // 3 shapes x 2 precisions x 2 layouts.
  ASSERT_EQ(sweep->cases.size(), 12u);
  const GemmCase& first = sweep->cases[0];
  EXPECT_EQ(first.m, 512);
  EXPECT_EQ(first.n, 512);
  EXPECT_EQ(first.k, 512);
  EXPECT_EQ(first.precision, Precision::kBf16);
  EXPECT_EQ(first.layout, "tn");
  EXPECT_EQ(first.min_iterations, 50);
  EXPECT_DOUBLE_EQ(first.min_seconds, 3.0);  // the file's default
  EXPECT_EQ(first.group, "g");
  EXPECT_EQ(first.sweep, "demo");
  EXPECT_EQ(sweep->cases[1].layout, "nn");
  EXPECT_EQ(sweep->cases[2].precision, Precision::kFp32);
  const GemmCase& last = sweep->cases.back();
  EXPECT_EQ(last.m, 1);
  EXPECT_EQ(last.n, 4096);
  EXPECT_EQ(last.k, 16384);
  EXPECT_EQ(DescribeCase(last), "1x4096x16384 fp32 nn");
}

TEST(SweepTest, PowerLimitFractionsAddCasesInTheClockStudy) {
  auto sweep = ParseSweep(R"(
name = "clock"
[[group]]
square = [8192]
precisions = ["bf16"]
clock_study = true
power_limit_fractions = [0.6, 0.8]
)",
                          "clock.toml");
  ASSERT_TRUE(sweep.ok()) << sweep.error().message;
  ASSERT_EQ(sweep->cases.size(), 3u);
  EXPECT_FALSE(sweep->cases[0].power_limit_fraction.has_value());
  EXPECT_DOUBLE_EQ(sweep->cases[0].min_seconds, 10.0);  // neither file nor group says: the default
  EXPECT_DOUBLE_EQ(*sweep->cases[1].power_limit_fraction, 0.6);
  EXPECT_TRUE(sweep->cases[2].clock_study);
  EXPECT_EQ(sweep->cases[0].group, "group-1");  // unnamed group
  EXPECT_EQ(DescribeCase(sweep->cases[1]), "8192x8192x8192 bf16 tn @60% power");
}

struct BadSweep {
  const char* text;
  const char* expected;  // a part of the error message
};

class SweepErrorTest : public ::testing::TestWithParam<BadSweep> {};

TEST_P(SweepErrorTest, NamesFileLineAndField) {
  auto sweep = ParseSweep(GetParam().text, "bad.toml");
  ASSERT_FALSE(sweep.ok());
  EXPECT_EQ(sweep.error().code, ErrorCode::kMalformedInput);
  EXPECT_NE(sweep.error().message.find(GetParam().expected), std::string::npos) << sweep.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SweepErrorTest,
    ::testing::Values(
        BadSweep{"name = \"x\"\n[[group]]\nsquare = [512]\nprecisions = [\"fp9\"]\n",
                 "bad.toml:4: group 1: field 'precisions': 'fp9' is not a sweep precision"},
        BadSweep{"name = \"x\"\n[[group]]\nsquare = [512]\nprecisions = [\"int8\"]\n",
                 "'int8' is not a sweep precision"},
        BadSweep{"name = \"x\"\n[[group]]\nsquare = [512]\nprecisions = [\"fp8\"]\nlayouts = [\"nn\"]\n",
                 "precision fp8 takes only layout \"tn\""},
        BadSweep{"name = \"x\"\nmin_seconds = 1\n[[group]]\nsquare = [512]\nprecisions = [\"bf16\"]\n",
                 "bad.toml:2: field 'min_seconds': 1 is out of range"},
        BadSweep{"name = \"x\"\n[[group]]\nsquare = [512]\nprecisions = [\"bf16\"]\nprecison = 1\n",
                 "bad.toml:5: group 1: unknown key 'precison'"},
        BadSweep{"name = \"x\"\n[[group]]\nsquare = [512]\n", "field 'precisions' is missing or empty"},
        BadSweep{"name = \"x\"\n[[group]]\nprecisions = [\"bf16\"]\n", "no shapes"},
        BadSweep{"name = \"x\"\n[[group]]\nshapes = [[1, 2]]\nprecisions = [\"bf16\"]\n",
                 "bad.toml:3: group 1: field 'shapes': expected [M, N, K]"},
        BadSweep{"name = \"x\"\n[[group]]\nsquare = [0]\nprecisions = [\"bf16\"]\n",
                 "expected a size from 1 to 1048576"},
        BadSweep{"name = \"x\"\n[[group]]\nsquare = [512]\nprecisions = [\"bf16\"]\npower_limit_fractions = [0.5]\n",
                 "needs clock_study = true"},
        BadSweep{"[[group]]\nsquare = [512]\nprecisions = [\"bf16\"]\n", "field 'name' is missing"},
        BadSweep{"name = \"x\"\n", "no [[group]] tables"}, BadSweep{"name = \"x\"\n[[group]\n", "bad.toml:2:"}));

TEST(SweepTest, MissingFileIsAnIoError) {
  auto sweep = ReadSweepFile("/nonexistent/sweep.toml");
  ASSERT_FALSE(sweep.ok());
  EXPECT_EQ(sweep.error().code, ErrorCode::kIo);
  EXPECT_NE(sweep.error().message.find("/nonexistent/sweep.toml"), std::string::npos);
}

TEST(SweepTest, ShippedSweepsParse) {
  // gpu/sweeps/ is what users run; every file must stay valid.
  for (const char* name : {"square.toml", "llm.toml", "clock-study.toml"}) {
    auto sweep = ReadSweepFile(std::string(OFU_SOURCE_DIR) + "/gpu/sweeps/" + name);
    ASSERT_TRUE(sweep.ok()) << name << ": " << sweep.error().message;
    EXPECT_FALSE(sweep->cases.empty()) << name;
  }
  // square.toml: 11 sizes x 3 precisions x 2 layouts + 11 x 2 (fp8, fp4) + 6 fp32.
  auto square = ReadSweepFile(std::string(OFU_SOURCE_DIR) + "/gpu/sweeps/square.toml");
  ASSERT_TRUE(square.ok());
  EXPECT_EQ(square->cases.size(), 66u + 22u + 6u);
}

}  // namespace
}  // namespace ofu::gemm
