// Exact-cycle arithmetic, with figures worked by hand (synthetic counters).
#include "ofu/sources/exact_cycles.h"

#include <gtest/gtest.h>

namespace ofu::sources {
namespace {

// H100 SXM: 132 SMs. One second at 1500 MHz, tensor pipes busy 40 %.
TEST(ExactCycles, SummedOverSmsGivesMeanClockAndTensorShare) {
  const CycleCounters before{1e12, 5e11};
  const CycleCounters after{1e12 + 132 * 1.5e9, 5e11 + 0.4 * 132 * 1.5e9};
  auto w = DeriveExactCycles(before, after, 1.0, 132, 1700.0);  // the point reading differs; still summed
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->basis, CycleBasis::kSummedOverSms);
  EXPECT_NEAR(w->sm_clock_mhz, 1500.0, 1e-9);
  EXPECT_NEAR(w->tensor_active, 0.4, 1e-12);
}

TEST(ExactCycles, PerSmAverageIsRecognised) {
  const CycleCounters before{0, 0};
  const CycleCounters after{0.5 * 1.83e9, 0.25 * 1.83e9};  // half a second at 1830 MHz
  auto w = DeriveExactCycles(before, after, 0.5, 132, 1830.0);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->basis, CycleBasis::kPerSmAverage);
  EXPECT_NEAR(w->sm_clock_mhz, 1830.0, 1e-9);
  EXPECT_NEAR(w->tensor_active, 0.5, 1e-12);
}

TEST(ExactCycles, RateThatFitsNeitherBasisIsRefused) {
  // 10 SMs' worth of cycles on a 132-SM GPU: neither 1 nor 132.
  auto w = DeriveExactCycles({0, 0}, {10 * 1.5e9, 0}, 1.0, 132, 1500.0);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("fits neither"), std::string::npos);
}

TEST(ExactCycles, CounterThatWentBackwardsIsRefused) {
  EXPECT_FALSE(DeriveExactCycles({5e9, 1e9}, {1e9, 1e9}, 1.0, 132, 1500.0).ok());
  EXPECT_FALSE(DeriveExactCycles({1e9, 1e9}, {2e9, 0.5e9}, 1.0, 132, 1500.0).ok());  // tensor went back
  EXPECT_FALSE(DeriveExactCycles({0, 0}, {1e9, 2e9}, 1.0, 1, 1000.0).ok());          // tensor > elapsed
}

TEST(ExactCycles, NeedsAReferenceClockAndPositiveTime) {
  EXPECT_FALSE(DeriveExactCycles({0, 0}, {1.5e9, 0}, 1.0, 1, std::nullopt).ok());
  EXPECT_FALSE(DeriveExactCycles({0, 0}, {1.5e9, 0}, 0.0, 1, 1500.0).ok());
  EXPECT_FALSE(DeriveExactCycles({0, 0}, {1.5e9, 0}, 1.0, 0, 1500.0).ok());
}

}  // namespace
}  // namespace ofu::sources
