#include "ofu/core/clock_model.h"

#include <gtest/gtest.h>

#include "ofu/core/gpu_spec.h"

namespace ofu {
namespace {

// Made-up ratios, chosen so that every band's figure is easy to compute by
// hand; the bands are the defaults (0.01, 0.45, 0.75).
ClockModel Model() {
  ClockModel m;
  m.steady_ratio = 1.1;
  m.burst_ratio_at_power_cap = 1.2;
  m.burst_ratio_below_power_cap = 1.25;
  return m;
}

constexpr std::uint64_t kSwPowerCap = 0x4;

TEST(ClockModel, IdleTensorPipesKeepTheReportedClock) {
  const RunClock f = EstimateRunClock(Model(), 0.005, 1980, kSwPowerCap);
  EXPECT_DOUBLE_EQ(f.mhz, 1980);
  EXPECT_DOUBLE_EQ(f.low_mhz, 1980);
  EXPECT_DOUBLE_EQ(f.high_mhz, 1980);
}

TEST(ClockModel, BurstsSlowOnlyTheTensorCycles) {
  // A = 0.4 at the power cap: 1980 / (0.6 + 0.4 x 1.2) = 1980 / 1.08.
  const RunClock capped = EstimateRunClock(Model(), 0.4, 1980, kSwPowerCap);
  EXPECT_NEAR(capped.mhz, 1833.333333, 1e-6);
  EXPECT_DOUBLE_EQ(capped.low_mhz, capped.mhz);
  EXPECT_DOUBLE_EQ(capped.high_mhz, capped.mhz);
  // Below the cap (reasons 0): 1980 / (0.6 + 0.4 x 1.25) = 1980 / 1.1 = 1800.
  EXPECT_NEAR(EstimateRunClock(Model(), 0.4, 1980, 0).mhz, 1800, 1e-9);
}

TEST(ClockModel, NoReasonsGiveTheMeanOfBothPowerStatesAndBothAsTheRange) {
  const RunClock f = EstimateRunClock(Model(), 0.4, 1980, std::nullopt);
  EXPECT_NEAR(f.low_mhz, 1800, 1e-9);
  EXPECT_NEAR(f.high_mhz, 1833.333333, 1e-6);
  EXPECT_NEAR(f.mhz, 1816.666667, 1e-6);
}

TEST(ClockModel, SteadyWorkDividesTheWholeClock) {
  const RunClock f = EstimateRunClock(Model(), 0.9, 1650, kSwPowerCap);
  EXPECT_NEAR(f.mhz, 1500, 1e-9);  // 1650 / 1.1
  EXPECT_DOUBLE_EQ(f.low_mhz, f.mhz);
  EXPECT_DOUBLE_EQ(f.high_mhz, f.mhz);
}

TEST(ClockModel, BetweenTheMeasuredStatesTheEstimateIsInterpolatedAndBothAreTheRange) {
  // A = 0.6, halfway from 0.45 to 0.75, below the cap: burst 1980 / (0.4 +
  // 0.6 x 1.25) = 1980 / 1.15 = 1721.739; steady 1980 / 1.1 = 1800.
  const RunClock f = EstimateRunClock(Model(), 0.6, 1980, 0);
  EXPECT_NEAR(f.low_mhz, 1721.739130, 1e-6);
  EXPECT_NEAR(f.high_mhz, 1800, 1e-9);
  EXPECT_NEAR(f.mhz, (1721.739130 + 1800) / 2, 1e-6);
}

TEST(ClockModel, SourcesHaveNames) {
  EXPECT_EQ(ClockSourceName(ClockSource::kMeasuredModel), "measured-model");
  EXPECT_EQ(ClockSourcesName(0), "");
  EXPECT_EQ(ClockSourcesName(static_cast<std::uint8_t>(ClockSource::kExactCycles) |
                             static_cast<std::uint8_t>(ClockSource::kReported)),
            "exact-cycles+reported");
}

// The bundled spec file: the two boards that were measured have a model,
// with the figures scripts/fit_clock_model.py derives from
// docs/results/2026-11-27-clock-truth (its --check runs as a CTest); a board
// of the same SKU entry that nobody measured (the H800) and an unmeasured SKU
// have none.
TEST(ClockModel, OnlyMeasuredBoardsHaveOne) {
  const GpuSpecDatabase db = *GpuSpecDatabase::Embedded();
  const GpuSpec* h100 = *db.Lookup("h100-sxm5");
  const std::optional<ClockModel> m = h100->ClockModelFor("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->steady_ratio, 0.998);
  EXPECT_DOUBLE_EQ(m->burst_ratio_at_power_cap, 1.202);
  EXPECT_DOUBLE_EQ(m->burst_ratio_below_power_cap, 1.218);
  EXPECT_FALSE(h100->ClockModelFor("NVIDIA H800").has_value());
  EXPECT_FALSE(h100->ClockModelFor("").has_value());
  const std::optional<ClockModel> h200 = (*db.Lookup("h200-sxm"))->ClockModelFor("NVIDIA H200");
  ASSERT_TRUE(h200.has_value());
  EXPECT_DOUBLE_EQ(h200->steady_ratio, 1.099);
  EXPECT_FALSE((*db.Lookup("a100"))->clock_model.has_value());
}

TEST(ClockModel, ASpecFileWithBandsOutOfOrderIsRefused) {
  constexpr std::string_view kSpecs = R"({
    "architectures": {"hopper": {"k_arch": 1.0, "k_arch_source": "test"}},
    "skus": [{"id": "x", "name": "X", "architecture": "hopper", "sm_count": 132, "basis_precision": "bf16",
              "precisions": {"bf16": {"flops_per_clock_per_sm": 4096, "peak_tflops": 989.4}},
              "aliases": ["X"], "source": "test",
              "clock_model": {"measured_on": ["X"], "steady_ratio": 1.1, "burst_ratio_at_power_cap": 1.2,
                              "burst_ratio_below_power_cap": 1.2, "idle_tensor_below": 0.01,
                              "burst_tensor_at_most": 0.8, "steady_tensor_at_least": 0.75,
                              "source": "test"}}]})";
  auto db = GpuSpecDatabase::Parse(kSpecs, "specs.json");
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.error().message.find("specs.json: skus[0] (x): clock_model needs"), std::string::npos)
      << db.error().message;
}

}  // namespace
}  // namespace ofu
