#include "ofu/core/aggregate.h"

#include <gtest/gtest.h>

namespace ofu {
namespace {

OfuWindow MakeWindow(double covered, std::optional<double> tensor, std::optional<double> clock,
                     std::optional<double> ofu, bool busy) {
  OfuWindow w;
  w.covered_s = covered;
  w.tensor_active = tensor;
  w.sm_clock_mhz = clock;
  w.sm_clock_min_mhz = clock;
  w.sm_clock_max_mhz = clock;
  w.clock_readings = clock ? 1 : 0;
  w.ofu = ofu;
  w.busy = busy;
  return w;
}

TEST(Summarizer, TimeWeightsOfuAndSeparatesBusyWindows) {
  Summarizer s;
  s.Add(MakeWindow(60, 0.4, 1830, 0.4, true));
  s.Add(MakeWindow(30, 0.0, 1830, 0.0, false));
  const Summary sum = s.Finish();
  EXPECT_DOUBLE_EQ(sum.seconds, 90);
  EXPECT_DOUBLE_EQ(*sum.ofu, 24.0 / 90.0);  // (0.4*60 + 0*30) / 90
  EXPECT_DOUBLE_EQ(*sum.active_ofu, 0.4);
  EXPECT_DOUBLE_EQ(*sum.idle_fraction, 30.0 / 90.0);
  EXPECT_DOUBLE_EQ(*sum.p50, 0.2);  // midway between the two windows
  EXPECT_DOUBLE_EQ(*sum.p10, 0.04);
  EXPECT_DOUBLE_EQ(*sum.p90, 0.36);
  EXPECT_EQ(sum.windows, 2);
}

TEST(Summarizer, WindowsWithoutClockCountButGiveNoOfu) {
  Summarizer s;
  s.Add(MakeWindow(60, 0.5, std::nullopt, std::nullopt, true));
  const Summary sum = s.Finish();
  EXPECT_FALSE(sum.ofu.has_value());
  EXPECT_FALSE(sum.active_ofu.has_value());
  EXPECT_FALSE(sum.p50.has_value());
  EXPECT_EQ(sum.windows_without_clock, 1);
  EXPECT_DOUBLE_EQ(*sum.tensor_active, 0.5);
  EXPECT_EQ(sum.seconds, 0);
}

// Windows summed before they come (a store's rollup) add what the windows
// add: hand values over a busy, an idle and a clock-only window; percentiles
// from the histogram, within half a bin of the exact ones.
TEST(Summarizer, TotalsAddWhatTheirWindowsAdd) {
  WindowTotals t;  // busy 10 s at OFU 0.5, tensor 0.6, 1500 MHz; idle 10 s at 0.1, tensor 0.2, 1400 MHz;
                   // 5 s with only a clock reading, 1300 MHz
  t.seconds = 20;
  t.ofu_seconds = 0.5 * 10 + 0.1 * 10;
  t.busy_seconds = 10;
  t.busy_ofu_seconds = 5;
  t.tensor_seconds = 20;
  t.tensor_active_seconds = 0.6 * 10 + 0.2 * 10;
  t.idle_seconds = 10;
  t.seconds_without_ofu = 5;
  t.clock_sum_mhz = 1500 + 1400 + 1300;
  t.clock_readings = 3;
  t.clock_min_mhz = 1300;
  t.clock_max_mhz = 1500;
  t.windows_without_tensor = 1;
  t.ofu_bins = {{Summarizer::HistogramBin(0.1), 1}, {Summarizer::HistogramBin(0.5), 1}};
  t.pipes[IndexOf(CudaCorePipe::kFp32)] = {0.25 * 20, 20};
  Summarizer from_totals;
  from_totals.Add(t);
  const Summary sum = from_totals.Finish();
  EXPECT_DOUBLE_EQ(sum.seconds, 20);
  EXPECT_DOUBLE_EQ(*sum.ofu, 0.3);
  EXPECT_DOUBLE_EQ(*sum.active_ofu, 0.5);
  EXPECT_DOUBLE_EQ(*sum.tensor_active, 0.4);
  EXPECT_DOUBLE_EQ(*sum.idle_fraction, 0.5);
  EXPECT_DOUBLE_EQ(*sum.sm_clock_mhz, 1400);
  EXPECT_EQ(*sum.sm_clock_min_mhz, 1300);
  EXPECT_EQ(*sum.sm_clock_max_mhz, 1500);
  EXPECT_EQ(sum.windows, 2);
  EXPECT_EQ(sum.windows_without_tensor, 1);
  EXPECT_DOUBLE_EQ(*sum.non_tensor[CudaCorePipe::kFp32], 0.25);
  // 0.1 is in bin 102 (middle 102.5/1024), 0.5 in bin 512 (middle 512.5/1024).
  EXPECT_EQ(Summarizer::HistogramBin(0.1), 102);
  EXPECT_DOUBLE_EQ(*sum.p50, (102.5 + 512.5) / 2 / 1024);
  EXPECT_NEAR(*sum.p50, 0.3, 0.5 / 1024);

  // The same windows one by one give the same sums.
  Summarizer from_windows;
  OfuWindow busy = MakeWindow(10, 0.6, 1500, 0.5, true), idle = MakeWindow(10, 0.2, 1400, 0.1, false);
  busy.non_tensor[CudaCorePipe::kFp32] = idle.non_tensor[CudaCorePipe::kFp32] = 0.25;
  from_windows.Add(busy);
  from_windows.Add(idle);
  OfuWindow clock_only = MakeWindow(0, std::nullopt, 1300, std::nullopt, false);
  clock_only.end_s = 5;
  from_windows.Add(clock_only);
  const Summary each = from_windows.Finish();
  EXPECT_DOUBLE_EQ(*each.ofu, *sum.ofu);
  EXPECT_DOUBLE_EQ(*each.tensor_active, *sum.tensor_active);
  EXPECT_DOUBLE_EQ(*each.sm_clock_mhz, *sum.sm_clock_mhz);
  EXPECT_DOUBLE_EQ(*each.non_tensor[CudaCorePipe::kFp32], *sum.non_tensor[CudaCorePipe::kFp32]);
  EXPECT_EQ(each.windows_without_tensor, sum.windows_without_tensor);
  EXPECT_DOUBLE_EQ(*each.p50, 0.3);  // exact: two windows

  // Weighted (a MIG slice's share): seconds scale, ratios do not.
  Summarizer half;
  half.Add(t, 0.5);
  const Summary weighted = half.Finish();
  EXPECT_DOUBLE_EQ(weighted.seconds, 10);
  EXPECT_DOUBLE_EQ(*weighted.ofu, 0.3);
}

TEST(Summarizer, NothingAddedMeansEverythingAbsent) {
  const Summary sum = Summarizer().Finish();
  EXPECT_FALSE(sum.ofu.has_value());
  EXPECT_FALSE(sum.tensor_active.has_value());
  EXPECT_FALSE(sum.idle_fraction.has_value());
  EXPECT_FALSE(sum.sm_clock_mhz.has_value());
}

TEST(Summarizer, ClockIsTheMeanOfAllReadings) {
  Summarizer s;
  OfuWindow a = MakeWindow(10, 0.5, 1800, 0.49, true);
  a.clock_readings = 3;
  a.sm_clock_min_mhz = 1700;
  s.Add(a);
  s.Add(MakeWindow(10, 0.5, 1400, 0.38, true));  // one reading
  const Summary sum = s.Finish();
  EXPECT_DOUBLE_EQ(*sum.sm_clock_mhz, (1800.0 * 3 + 1400) / 4);
  EXPECT_EQ(*sum.sm_clock_min_mhz, 1400);
  EXPECT_EQ(*sum.sm_clock_max_mhz, 1800);
}

}  // namespace
}  // namespace ofu

namespace {

// Past kExactPercentileWindows windows the percentiles come from the
// histogram: within half a bin (1/2048) of the exact value. Windows 0.000,
// 0.001, …, 0.999 repeated: p10 = 0.0999, p50 = 0.4995, p90 = 0.8991 exactly
// (ranks of 10,000 values).
TEST(Summarizer, PercentilesOfManyWindowsAreWithinHalfABin) {
  ofu::Summarizer summarizer;
  for (int i = 0; i < 10000; ++i) {
    ofu::OfuWindow w;
    w.covered_s = 1;
    w.ofu = (i % 1000) / 1000.0;
    summarizer.Add(w);
  }
  const ofu::Summary sum = summarizer.Finish();
  EXPECT_EQ(sum.windows, 10000);
  ASSERT_TRUE(sum.p10 && sum.p50 && sum.p90);
  const double half_bin = ofu::Summarizer::kHistogramBinWidth / 2;
  EXPECT_NEAR(*sum.p10, 0.0999, half_bin + 1e-12);
  EXPECT_NEAR(*sum.p50, 0.4995, half_bin + 1e-12);
  EXPECT_NEAR(*sum.p90, 0.8991, half_bin + 1e-12);
  EXPECT_NEAR(*sum.ofu, 0.4995, 1e-12);  // the mean stays exact
}

}  // namespace
