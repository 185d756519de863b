// The summary: error statistics per precision and the reasons given for
// cases above 1 pp, on rows made by hand.
#include "ofu/gemm/summary.h"

#include <gtest/gtest.h>

namespace ofu::gemm {
namespace {

using kernels::Precision;

TEST(SummaryTest, StatsOfAbsoluteErrors) {
  // |e| = 0.5 1.5 2.0 0.2 1.0: max 2.0, mean 5.2 / 5 = 1.04. p95: sorted
  // 0.2 0.5 1.0 1.5 2.0, rank 0.95 * 4 = 3.8, so 1.5 + 0.8 * (2.0 - 1.5) = 1.9.
  const ErrorStats s = StatsOf({0.5, -1.5, 2.0, -0.2, 1.0});
  EXPECT_EQ(s.cases, 5);
  EXPECT_DOUBLE_EQ(s.max_pp, 2.0);
  EXPECT_DOUBLE_EQ(s.mean_pp, 1.04);
  EXPECT_DOUBLE_EQ(s.p95_pp, 1.9);
  EXPECT_EQ(StatsOf({}).cases, 0);
  EXPECT_DOUBLE_EQ(StatsOf({-3.0}).p95_pp, 3.0);
}

CaseResult Measured(Precision precision, double err_raw, std::optional<double> err_corrected) {
  CaseResult r;
  r.sweep = "s";
  r.group = "g";
  r.m = r.n = r.k = 4096;
  r.precision = precision;
  r.layout = "tn";
  r.iterations = 100;
  r.elapsed_s = 2;
  r.time_per_iteration_us = 20000;
  r.mfu = 0.5;
  r.err_raw_pp = err_raw;
  r.err_corrected_pp = err_corrected;
  return r;
}

TEST(SummaryTest, GroupsByPrecisionAndListsExceedances) {
  std::vector<CaseResult> rows = {Measured(Precision::kBf16, 3.0, 0.5), Measured(Precision::kBf16, -5.0, -1.5),
                                  Measured(Precision::kFp8, 2.0, std::nullopt)};
  CaseResult simt = Measured(Precision::kFp32, 0, std::nullopt);
  simt.mfu.reset();
  simt.err_raw_pp.reset();
  simt.achieved_tflops = 40;
  simt.ofu_raw = 0.001;
  rows.push_back(simt);
  CaseResult skipped;
  skipped.note = "skipped: no fp4 peak";
  rows.push_back(skipped);

  const Summary summary = Summarize(rows);
  EXPECT_EQ(summary.measured, 4);
  EXPECT_EQ(summary.skipped, 1);
  EXPECT_EQ(summary.skip_reasons.at("no fp4 peak"), 1);
  ASSERT_EQ(summary.precisions.size(), 2u);
  const PrecisionSummary& bf16 = summary.precisions[0];
  EXPECT_EQ(bf16.precision, Precision::kBf16);
  EXPECT_EQ(bf16.raw.cases, 2);
  EXPECT_DOUBLE_EQ(bf16.raw.max_pp, 5.0);
  EXPECT_DOUBLE_EQ(bf16.raw.mean_pp, 4.0);
  EXPECT_DOUBLE_EQ(bf16.corrected.max_pp, 1.5);
  EXPECT_DOUBLE_EQ(bf16.corrected.mean_pp, 1.0);
  const PrecisionSummary& fp8 = summary.precisions[1];
  EXPECT_EQ(fp8.corrected.cases, 0);
  // Above 1 pp: the bf16 case at -1.5 corrected, and fp8 judged on raw (2.0).
  ASSERT_EQ(summary.exceedances.size(), 2u);
  EXPECT_DOUBLE_EQ(summary.exceedances[0].error_pp, -1.5);
  EXPECT_DOUBLE_EQ(summary.exceedances[1].error_pp, 2.0);
  ASSERT_EQ(summary.simt.size(), 1u);
  EXPECT_DOUBLE_EQ(summary.simt[0].mean_achieved_tflops, 40);
  EXPECT_DOUBLE_EQ(*summary.simt[0].mean_ofu_raw, 0.001);

  const std::string text = FormatSummary(summary, "r.csv");
  EXPECT_NE(text.find("4 cases measured, 1 skipped"), std::string::npos) << text;
  EXPECT_NE(text.find("bf16       corrected         2     1.50     1.00"), std::string::npos) << text;
  EXPECT_NE(text.find("fp8        corrected         0        -"), std::string::npos) << text;
  EXPECT_NE(text.find("Cases above 1 pp (corrected error, else raw): 2"), std::string::npos) << text;
  EXPECT_NE(text.find("fp32: 1 cases, 40.0 TFLOP/s mean achieved, tensor OFU 0.0010"), std::string::npos) << text;
}

// A row whose corrected OFU misses true MFU: raw OFU 1.0, so corrected =
// the padding factor, and err = (factor - mfu) * 100.
CaseResult Padded(int64_t m, int64_t n, int64_t k, Tiling name, double mfu, double factor) {
  CaseResult r = Measured(Precision::kBf16, 0, (factor - mfu) * 100);
  r.m = m;
  r.n = n;
  r.k = k;
  r.name_tiling = name;
  r.mfu = mfu;
  r.ofu_raw = 1.0;
  r.err_raw_pp = (1.0 - mfu) * 100;
  return r;
}

TEST(SummaryTest, ExplainsTileOrientation) {
  // 100x1000x1024 with a 128x256 tile: factor 100*1000*1024/(128*1024*1024)
  // = 0.762939453125. With M and N exchanged (256x128): M 100 -> 256, N 1000
  // -> 1024, factor 0.3814697265625, within 1 pp of MFU 0.38.
  const Exceedance e = Explain(Padded(100, 1000, 1024, Tiling{128, 256, 64, 4, 1, 1}, 0.38, 0.762939453125));
  EXPECT_EQ(e.reason, "tile orientation");
  EXPECT_NE(e.detail.find("256x128 tile"), std::string::npos) << e.detail;
  EXPECT_NE(e.detail.find("+0.15 pp"), std::string::npos) << e.detail;
}

TEST(SummaryTest, ExplainsClusterPadding) {
  // 1100x1000x1024, 128x128 tile in 2x1 clusters: M pads to 1280, factor
  // 1100*1000/(1280*1024) = 0.8392333984375. Without the cluster M pads to
  // 1152: 1100*1000/(1152*1024) = 0.93248..., within 1 pp of MFU 0.9325.
  const Exceedance e = Explain(Padded(1100, 1000, 1024, Tiling{128, 128, 64, 4, 2, 1}, 0.9325, 0.8392333984375));
  EXPECT_EQ(e.reason, "cluster padding");
  EXPECT_NE(e.detail.find("1x1 cluster"), std::string::npos) << e.detail;
}

TEST(SummaryTest, ExplainsSimtClockLaunchGapsAndTheRest) {
  CaseResult simt = Measured(Precision::kBf16, 30, 30);
  simt.tensor_core = false;
  EXPECT_EQ(Explain(simt).reason, "SIMT");

  CaseResult exact = Measured(Precision::kBf16, 3, 3);
  exact.err_exact_pp = 0.4;
  EXPECT_EQ(Explain(exact).reason, "clock");

  CaseResult spread = Measured(Precision::kBf16, 3, 3);
  spread.sm_clock_mhz = 1700;
  spread.sm_clock_point_mhz = 1500;  // 13 % apart
  EXPECT_EQ(Explain(spread).reason, "clock");
  EXPECT_NE(Explain(spread).detail.find("1500 to 1700 MHz"), std::string::npos);

  CaseResult short_kernels = Measured(Precision::kBf16, 3, 3);
  short_kernels.time_per_iteration_us = 6;
  EXPECT_EQ(Explain(short_kernels).reason, "launch gaps");

  EXPECT_EQ(Explain(Measured(Precision::kBf16, 3, 3)).reason, "unexplained");
}

}  // namespace
}  // namespace ofu::gemm
