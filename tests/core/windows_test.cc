#include "ofu/core/windows.h"

#include <gtest/gtest.h>

namespace ofu {
namespace {

constexpr OfuScale kH100{989.4e6 / (132.0 * 4096.0), 1.0};  // f_spec 1829.95 MHz

CounterSample At(double t, std::optional<double> tensor, std::optional<double> clock = std::nullopt) {
  CounterSample s;
  s.time_s = t;
  s.tensor_active = tensor;
  s.sm_clock_mhz = clock;
  return s;
}

WindowOptions Window(double seconds) {
  WindowOptions o;
  o.window_s = seconds;
  return o;
}

TEST(Windows, SteadyLoadGivesTheHandComputedOfu) {
  std::vector<CounterSample> samples;
  for (int t = 1; t <= 60; ++t) samples.push_back(At(t, 0.5, 1830));
  const WindowedGpu w = BuildWindows(samples, kH100, Window(60));
  ASSERT_EQ(w.windows.size(), 1u);
  const OfuWindow& win = w.windows[0];
  EXPECT_EQ(win.start_s, 0);
  EXPECT_EQ(win.end_s, 60);
  EXPECT_DOUBLE_EQ(win.covered_s, 60);
  EXPECT_DOUBLE_EQ(*win.tensor_active, 0.5);
  EXPECT_NEAR(*win.ofu, 0.500, 0.001);
  EXPECT_EQ(w.interval_s, 1);
  EXPECT_TRUE(w.gaps.empty());
}

TEST(Windows, ClockIsTheMeanOfTheReadingsInsideTheWindow) {
  // Tensor 0.6 throughout; the clock is read three times while it drops.
  std::vector<CounterSample> samples;
  for (int t = 1; t <= 10; ++t) samples.push_back(At(t, 0.6));
  samples[1].sm_clock_mhz = 1830;  // t = 2
  samples[4].sm_clock_mhz = 1500;  // t = 5
  samples[7].sm_clock_mhz = 1200;  // t = 8
  const WindowedGpu w = BuildWindows(samples, kH100, Window(10));
  ASSERT_EQ(w.windows.size(), 1u);
  EXPECT_DOUBLE_EQ(*w.windows[0].sm_clock_mhz, 1510.0);  // (1830 + 1500 + 1200) / 3
  EXPECT_EQ(w.windows[0].clock_readings, 3);
  EXPECT_EQ(*w.windows[0].sm_clock_min_mhz, 1200);
  EXPECT_EQ(*w.windows[0].sm_clock_max_mhz, 1830);
  EXPECT_NEAR(*w.windows[0].ofu, 0.6 * 1510 / kH100.spec_clock_mhz, 1e-12);  // 0.49510
}

TEST(Windows, TensorActivityIsTimeWeighted) {
  // Spacings 10, 10, 20 s: median 10, gap threshold 30, so the last sample
  // covers (30, 50]. Time-weighted: (0.2*10 + 0.8*10 + 0.2*10 + 0.5*20) / 50
  // = 0.44, where the plain mean of the samples would be 0.425.
  const std::vector<CounterSample> samples = {At(10, 0.2, 1830), At(20, 0.8), At(30, 0.2), At(50, 0.5)};
  const WindowedGpu w = BuildWindows(samples, kH100, Window(60));
  EXPECT_EQ(w.interval_s, 10);
  ASSERT_EQ(w.windows.size(), 1u);
  EXPECT_DOUBLE_EQ(w.windows[0].covered_s, 50);
  EXPECT_DOUBLE_EQ(*w.windows[0].tensor_active, 0.44);
}

TEST(Windows, NominalIntervalIsTheMedianSpacing) {
  // Spacings 10 and 20: the median of an even count is the mean of the middle two.
  const std::vector<CounterSample> samples = {At(100, 0.5), At(110, 0.5), At(130, 0.5)};
  EXPECT_EQ(BuildWindows(samples, kH100, Window(60)).interval_s, 15);
}

TEST(Windows, AnIntervalAcrossABoundaryIsSplitBetweenWindows) {
  WindowOptions options = Window(10);
  options.interval_s = 10;
  // t=5 covers (-5, 5]; t=15 covers (5, 15]. Window (0, 10] gets 5 s of 1.0
  // and 5 s of 0.0.
  const std::vector<CounterSample> samples = {At(5, 1.0, 1830), At(15, 0.0, 1830)};
  const WindowedGpu w = BuildWindows(samples, kH100, options);
  ASSERT_EQ(w.windows.size(), 3u);
  EXPECT_EQ(w.windows[0].end_s, 0);
  EXPECT_DOUBLE_EQ(w.windows[0].covered_s, 5);
  EXPECT_EQ(w.windows[1].end_s, 10);
  EXPECT_DOUBLE_EQ(w.windows[1].covered_s, 10);
  EXPECT_DOUBLE_EQ(*w.windows[1].tensor_active, 0.5);
  EXPECT_DOUBLE_EQ(*w.windows[2].tensor_active, 0.0);
}

TEST(Windows, GapsAreReportedAndExcludedNotFilled) {
  std::vector<CounterSample> samples;
  for (int t = 1; t <= 10; ++t) samples.push_back(At(t, 0.5, 1830));
  for (int t = 20; t <= 30; ++t) samples.push_back(At(t, 0.5, 1830));
  const WindowedGpu w = BuildWindows(samples, kH100, Window(60));
  ASSERT_EQ(w.gaps.size(), 1u);
  EXPECT_EQ(w.gaps[0].start_s, 10);
  EXPECT_EQ(w.gaps[0].end_s, 19);  // t=20 covers its own nominal second (19, 20]
  EXPECT_EQ(w.gaps[0].seconds(), 9);
  ASSERT_EQ(w.windows.size(), 1u);
  EXPECT_DOUBLE_EQ(w.windows[0].covered_s, 21);  // 10 + 11, not 30
  EXPECT_NEAR(*w.windows[0].ofu, 0.5, 0.001);
}

TEST(Windows, SilenceUpToThreeIntervalsIsNotAGap) {
  const std::vector<CounterSample> samples = {At(1, 0.5, 1830), At(2, 0.5), At(3, 0.5), At(6, 0.5)};
  const WindowedGpu w = BuildWindows(samples, kH100, Window(60));
  EXPECT_TRUE(w.gaps.empty());
  EXPECT_DOUBLE_EQ(w.windows[0].covered_s, 6);
}

TEST(Windows, AbsentTensorIsNotZero) {
  std::vector<CounterSample> samples;
  for (int t = 1; t <= 10; ++t) samples.push_back(At(t, 0.5, 1830));
  samples[4].tensor_active.reset();  // t = 5 has a clock but no tensor value
  const WindowedGpu w = BuildWindows(samples, kH100, Window(60));
  EXPECT_DOUBLE_EQ(*w.windows[0].tensor_active, 0.5);
  EXPECT_DOUBLE_EQ(w.windows[0].covered_s, 10);  // t=6 covers (4, 6]
  EXPECT_EQ(w.windows[0].clock_readings, 10);
}

TEST(Windows, NoClockOrNoScaleMeansNoOfu) {
  std::vector<CounterSample> samples;
  for (int t = 1; t <= 10; ++t) samples.push_back(At(t, 0.5));
  WindowedGpu w = BuildWindows(samples, kH100, Window(60));
  ASSERT_EQ(w.windows.size(), 1u);
  EXPECT_FALSE(w.windows[0].ofu.has_value());
  EXPECT_DOUBLE_EQ(*w.windows[0].tensor_active, 0.5);

  samples[0].sm_clock_mhz = 1830;
  w = BuildWindows(samples, std::nullopt, Window(60));
  EXPECT_FALSE(w.windows[0].ofu.has_value());
}

TEST(Windows, OfuAboveOneIsKept) {
  const std::vector<CounterSample> samples = {At(1, 1.0, 1980), At(2, 1.0, 1980)};
  const WindowedGpu w = BuildWindows(samples, kH100, Window(60));
  EXPECT_NEAR(*w.windows[0].ofu, 1.082, 0.0005);
}

TEST(Windows, BusyFollowsEngineActivityElseTensorActivity) {
  std::vector<CounterSample> samples = {At(1, 0.0, 1830), At(2, 0.0, 1830)};
  samples[0].gr_engine_active = 0.9;  // busy on CUDA cores, no tensor work
  samples[1].gr_engine_active = 0.9;
  WindowedGpu w = BuildWindows(samples, kH100, Window(60));
  EXPECT_TRUE(w.windows[0].busy);

  samples = {At(1, 0.005, 1830), At(2, 0.005, 1830)};  // no engine data, tensor below 1 %
  w = BuildWindows(samples, kH100, Window(60));
  EXPECT_FALSE(w.windows[0].busy);
}

TEST(Windows, SparseSamplesNeverSpreadOverMoreThanTheMaximumInterval) {
  // Found by fuzzing: samples years apart made one sample cover years of windows.
  const std::vector<CounterSample> samples = {At(1e9, 0.5, 1830), At(2e9, 0.5, 1830)};
  const WindowedGpu w = BuildWindows(samples, kH100, Window(60));
  EXPECT_EQ(w.interval_s, kMaxIntervalS);
  ASSERT_EQ(w.gaps.size(), 1u);
  double covered = 0;
  for (const auto& win : w.windows) covered += win.covered_s;
  EXPECT_DOUBLE_EQ(covered, 2 * kMaxIntervalS);
}

TEST(Windows, OneSampleUsesTheFallbackInterval) {
  const std::vector<CounterSample> samples = {At(120, 0.5, 1830)};
  const WindowedGpu w = BuildWindows(samples, kH100, Window(60));
  EXPECT_TRUE(w.interval_assumed);
  EXPECT_EQ(w.interval_s, 30);
  EXPECT_DOUBLE_EQ(w.windows[0].covered_s, 30);
}

}  // namespace
}  // namespace ofu

namespace ofu {
namespace {

// OFU pairs each tensor sample with its own clock (windows.h): with
// activity and clock moving against each other, the mean of the products is
// not the product of the means. SYNTHETIC samples, 1 s apart: A = 0.9 at
// 1400 MHz and A = 0.1 at 1980 MHz in turn, for 60 s.
//   mean of products  (0.9 x 1400 + 0.1 x 1980) / 2 = 729 MHz-equivalents
//   product of means  0.5 x 1690 = 845
TEST(WindowPairing, OfuIsTheMeanOfThePerSampleProductsForAnyWindowLength) {
  std::vector<CounterSample> samples;
  for (int t = 1; t <= 60; ++t) {
    CounterSample s;
    s.time_s = t;
    s.tensor_active = t % 2 == 1 ? 0.9 : 0.1;
    s.sm_clock_mhz = t % 2 == 1 ? 1400 : 1980;
    samples.push_back(s);
  }
  const OfuScale scale{989.4e6 / (132.0 * 4096.0), 1.0};
  for (double window_s : {1.0, 2.0, 5.0, 7.0, 60.0}) {
    WindowOptions options;
    options.window_s = window_s;
    double ofu_seconds = 0, seconds = 0;
    for (const OfuWindow& w : BuildWindows(samples, scale, options).windows) {
      ASSERT_TRUE(w.ofu.has_value());
      ofu_seconds += *w.ofu * w.covered_s;
      seconds += w.covered_s;
      EXPECT_EQ(w.clock_source, ClockSource::kReported);
      EXPECT_DOUBLE_EQ(*w.ofu_low, *w.ofu);
      EXPECT_DOUBLE_EQ(*w.ofu_high, *w.ofu);
    }
    EXPECT_NEAR(ofu_seconds / seconds, 729 / scale.spec_clock_mhz, 1e-12) << window_s << " s windows";
  }
}

TEST(WindowPairing, ASampleWithoutAClockOfItsOwnBorrowsTheWindowsMean) {
  // (0, 4]: samples at 1..4, A 0.4 each; clocks only at 2 (1500) and 4 (1700):
  // the samples at 1 and 3 take the mean, 1600.
  std::vector<CounterSample> samples;
  for (int t = 1; t <= 4; ++t) {
    CounterSample s;
    s.time_s = t;
    s.tensor_active = 0.4;
    if (t == 2) s.sm_clock_mhz = 1500;
    if (t == 4) s.sm_clock_mhz = 1700;
    samples.push_back(s);
  }
  const OfuScale scale{1830, 1.0};
  WindowOptions options;
  options.window_s = 4;
  const WindowedGpu w = BuildWindows(samples, scale, options);
  ASSERT_EQ(w.windows.size(), 1u);
  EXPECT_NEAR(*w.windows[0].ofu, 0.4 * (1600 + 1500 + 1600 + 1700) / 4 / 1830, 1e-12);
  EXPECT_NEAR(*w.windows[0].ofu_clock_mhz, 1600, 1e-9);
}

TEST(WindowPairing, AMeasuredModelCorrectsEachSampleAndGivesItsRange) {
  // One sample, A = 0.3 at a reported 1800 MHz, no clock event reasons, with
  // made-up ratios 1.2 at the power cap and 1.25 below it (clock_model.h):
  //   at the cap    1800 / (0.7 + 0.3 x 1.2)  = 1800 / 1.06  = 1698.113 MHz
  //   below it      1800 / (0.7 + 0.3 x 1.25) = 1800 / 1.075 = 1674.419 MHz
  // the estimate is their mean, the range both.
  OfuScale scale{1830, 1.0};
  ClockModel model;
  model.steady_ratio = 1.1;
  model.burst_ratio_at_power_cap = 1.2;
  model.burst_ratio_below_power_cap = 1.25;
  scale.clock_model = model;
  CounterSample s;
  s.time_s = 10;
  s.tensor_active = 0.3;
  s.sm_clock_mhz = 1800;
  const OfuWindow w = WindowOfSample(s, 1, scale, 0.01);
  EXPECT_EQ(w.clock_source, ClockSource::kMeasuredModel);
  EXPECT_NEAR(*w.ofu, 0.3 * (1698.113208 + 1674.418605) / 2 / 1830, 1e-9);
  EXPECT_NEAR(*w.ofu_low, 0.3 * 1674.418605 / 1830, 1e-9);
  EXPECT_NEAR(*w.ofu_high, 0.3 * 1698.113208 / 1830, 1e-9);
  EXPECT_NEAR(*w.ofu_clock_mhz, (1698.113208 + 1674.418605) / 2, 1e-6);
  EXPECT_DOUBLE_EQ(*w.sm_clock_mhz, 1800);  // the reported clock stays as it was read
}

}  // namespace
}  // namespace ofu
