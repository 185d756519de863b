#include "ofu/core/ofu_math.h"

#include <gtest/gtest.h>

namespace ofu {
namespace {

// H100 SXM5: f_spec = 989.4 TFLOPS / (132 SMs * 4096 FLOP/clk) = 1829.95 MHz.
constexpr OfuScale kH100{989.4e6 / (132.0 * 4096.0), 1.0};

TEST(OfuMath, HalfTensorAtSpecClockIsHalf) { EXPECT_NEAR(ComputeOfu(0.5, 1830, kH100), 0.500, 0.001); }

TEST(OfuMath, FullTensorAtMaxBoostExceedsOneAndIsNotClamped) {
  // 1980 / 1829.95 = 1.08200
  EXPECT_NEAR(ComputeOfu(1.0, 1980, kH100), 1.082, 0.0005);
}

TEST(OfuMath, ArchitectureFactorScales) {
  EXPECT_NEAR(ComputeOfu(0.5, 1830, OfuScale{kH100.spec_clock_mhz, 0.5}), 0.250, 0.001);
}

TEST(OfuMath, ZeroActivityIsZero) { EXPECT_EQ(ComputeOfu(0.0, 1980, kH100), 0.0); }

TEST(Percentile, InterpolatesBetweenClosestRanks) {
  const std::vector<double> v = {4, 1, 3, 2};  // unsorted on purpose
  EXPECT_DOUBLE_EQ(Percentile(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Percentile(v, 0.1), 1.3);
  EXPECT_DOUBLE_EQ(Percentile(v, 0.9), 3.7);
  EXPECT_DOUBLE_EQ(Percentile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(Percentile(v, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(Percentile({7}, 0.9), 7.0);
}

}  // namespace
}  // namespace ofu
