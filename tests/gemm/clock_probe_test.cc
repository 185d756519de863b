#include "ofu/gemm/clock_probe.h"

#include <gtest/gtest.h>

namespace ofu::gemm {
namespace {

// SYNTHETIC records, computed by hand. Between the launches 1 ms passes on
// the global timer; SM 0 counts 1,321,000 cycles (1321 MHz), SM 1
// 1,325,000 (1325 MHz), SM 4 1,330,000 (1330 MHz). SM 1 ran two blocks of
// the first launch: its earliest record counts. SM 2 and SM 3 ran a block of
// one launch only.
TEST(ClockProbe, EachSmsClockIsItsCyclesOverTheGlobalTimer) {
  const ProbeLaunch before = {
      {0, 1000, 10'000}, {1, 2000, 10'000}, {1, 2400, 10'300}, {2, 9, 10'000}, {4, 7000, 10'100}};
  const ProbeLaunch after = {{0, 1000 + 1'321'000, 1'010'000},
                             {1, 2000 + 1'325'000, 1'010'000},
                             {3, 5, 1'010'000},
                             {4, 7000 + 1'330'000, 1'010'100}};
  auto span = ClockBetween(before, after);
  ASSERT_TRUE(span.ok()) << span.error().message;
  EXPECT_EQ(span->sms, 3);
  EXPECT_DOUBLE_EQ(span->median_mhz, 1325);
  EXPECT_DOUBLE_EQ(span->min_mhz, 1321);
  EXPECT_DOUBLE_EQ(span->max_mhz, 1330);
  EXPECT_DOUBLE_EQ(span->start_ns, 10'000);
  EXPECT_DOUBLE_EQ(span->end_ns, 1'010'000);
}

TEST(ClockProbe, NothingToCompareIsAnErrorNotAZeroClock) {
  EXPECT_FALSE(ClockBetween({}, {{0, 1, 1}}).ok());
  // No SM in both launches.
  auto disjoint = ClockBetween({{0, 1, 1}}, {{1, 5, 5}});
  ASSERT_FALSE(disjoint.ok());
  EXPECT_NE(disjoint.error().message.find("no SM ran a block of both"), std::string::npos);
  // The same SM, but its counter did not advance (or the timer went back).
  EXPECT_FALSE(ClockBetween({{0, 100, 100}}, {{0, 100, 200}}).ok());
  EXPECT_FALSE(ClockBetween({{0, 100, 300}}, {{0, 200, 200}}).ok());
}

}  // namespace
}  // namespace ofu::gemm
