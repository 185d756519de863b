// The HTML report's view model, built from stored rows made up here
// (synthetic), and the page's data block. Expected values are computed by
// hand in the comments.
#include "ofu/analysis/html_report.h"
#include "ofu/render/html_page.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "html/html_test_support.h"
#include "html/real_trace_findings.h"

namespace {

using ofu::analysis::BuildHtmlReportView;
using ofu::analysis::BuildStoreReport;
using ofu::analysis::ChooseBucketSeconds;
using ofu::analysis::HtmlReportOptions;
using ofu::analysis::HtmlReportView;
using ofu::analysis::TimelinePoint;
using ofu::history::StoredHistory;
using ofu::render::RenderHtmlReport;
using ofu::testing::Gpu;
using ofu::testing::Job;
using ofu::testing::Row;
using ofu::testing::SgemmAndBf16Jobs;
using ofu::testing::WithFp32;

const ofu::GpuSpecDatabase& Specs() {
  static const ofu::GpuSpecDatabase specs = *ofu::GpuSpecDatabase::Embedded();
  return specs;
}

HtmlReportOptions Options(std::size_t max_points) {
  HtmlReportOptions options;
  options.source = "synthetic.sqlite";
  options.max_points_per_series = max_points;
  return options;
}

using ofu::testing::DataOf;

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

void ExpectPoint(const TimelinePoint& point, double t_s, std::optional<double> ofu) {
  EXPECT_DOUBLE_EQ(point.t_s, t_s);
  ASSERT_EQ(point.ofu.has_value(), ofu.has_value()) << "at t " << t_s;
  if (ofu) {
    EXPECT_NEAR(*point.ofu, *ofu, 1e-12) << "at t " << t_s;
  }
}

TEST(HtmlReportBuckets, BucketWidthKeepsEverySeriesBounded) {
  // 30 days of 1 s rows in 500 points: 2592000 / 498 = 5204.8 s -> 2 h.
  EXPECT_EQ(ChooseBucketSeconds(30 * 86400.0, 1, 500), 7200);
  // An hour of 60 s rows: 3600 / 498 = 7.2 s, but a row is 60 s long.
  EXPECT_EQ(ChooseBucketSeconds(3600, 60, 500), 60);
  // 1000 days: 86400000 / 498 = 173494 s -> whole days, 3 of them.
  EXPECT_EQ(ChooseBucketSeconds(1000 * 86400.0, 1, 500), 3 * 86400);
  EXPECT_EQ(ChooseBucketSeconds(55, 1, 8), 10);  // 55 / 6 = 9.2 s
  // `ofu run --window 0.1`: a point per window, a row measured a hair long included.
  EXPECT_EQ(ChooseBucketSeconds(30, 0.1000005, 7200), 0.1);
  EXPECT_EQ(ChooseBucketSeconds(30, 0.25, 7200), 0.5);
}

TEST(HtmlReportBuckets, SumsPerBucketAndGapsStayGaps) {
  // One GPU, 1 s rows. max 8 points over (1000, 1055]: 55 / 6 -> 10 s buckets.
  //   bucket (1000, 1010]: 0.5/1 and 0.25/1            -> 0.75 / 2 = 0.375
  //   bucket (1010, 1020]: a row with nothing observed -> no OFU
  //   (1020, 1030] and (1030, 1040]: no rows           -> one point without OFU at 1030
  //   bucket (1040, 1050]: 0.9/1                       -> 0.9
  //   bucket (1050, 1060]: 0.3/1 and 0.1/1             -> 0.2
  StoredHistory history;
  history.gpus = {Gpu(1, "h100-sxm5", "NVIDIA H100 80GB HBM3")};
  history.windows = {Row(1, 1001, 0.5, 1), Row(1, 1002, 0.25, 1), Row(1, 1015, 0, 0),
                     Row(1, 1045, 0.9, 1), Row(1, 1054, 0.3, 1),  Row(1, 1055, 0.1, 1)};
  const HtmlReportView view = BuildHtmlReportView(history, BuildStoreReport(history, Specs()), Options(8));
  EXPECT_EQ(view.bucket_s, 10);
  EXPECT_DOUBLE_EQ(*view.start_s, 1000);
  EXPECT_DOUBLE_EQ(*view.end_s, 1055);
  ASSERT_EQ(view.gpus.size(), 1u);
  const auto& points = view.gpus[0].points;
  ASSERT_EQ(points.size(), 5u);
  ExpectPoint(points[0], 1010, 0.375);
  ExpectPoint(points[1], 1020, std::nullopt);
  ExpectPoint(points[2], 1030, std::nullopt);
  ExpectPoint(points[3], 1050, 0.9);
  ExpectPoint(points[4], 1060, 0.2);
  // GPU OFU over the range: (0.5 + 0.25 + 0.9 + 0.3 + 0.1) / 5 = 0.41.
  EXPECT_NEAR(*view.gpus[0].ofu, 0.41, 1e-12);
  EXPECT_NEAR(*view.overall_ofu, 0.41, 1e-12);
  EXPECT_NEAR(view.observed_hours, 5.0 / 3600, 1e-15);
}

TEST(HtmlReportBuckets, DownsampledRowCountsAsTheWindowsItSums) {
  // A downsampled 60 s row (utilized 30 of 40 observed seconds) and a 1 s row
  // (1 of 1) in the same 60 s bucket (longest row 60 s): 31 / 41.
  StoredHistory history;
  history.gpus = {Gpu(1, "h100-sxm5", "NVIDIA H100 80GB HBM3")};
  auto downsampled = Row(1, 1800, 30, 40, 60);
  downsampled.flags |= ofu::history::kHistoryDownsampled;
  history.windows = {downsampled, Row(1, 1801, 1, 1)};
  const HtmlReportView view = BuildHtmlReportView(history, BuildStoreReport(history, Specs()), Options(500));
  EXPECT_EQ(view.bucket_s, 60);
  ASSERT_EQ(view.gpus[0].points.size(), 2u);  // (1740, 1800] and (1800, 1860]
  ExpectPoint(view.gpus[0].points[0], 1800, 30.0 / 40);
  ExpectPoint(view.gpus[0].points[1], 1860, 1.0);
}

TEST(HtmlReportBuckets, JobSeriesSumsItsGpusInsideItsIntervals) {
  // Job J1 on GPU 1 in (1000, 1020] and on GPU 2 from 1010 on (still running);
  // 10 s buckets (max 8 points over (1000, 1040]: 40 / 6 -> 10).
  //   GPU 1 rows: 1005 0.5, 1015 0.7, 1025 0.9 (after J1 ended there)
  //   GPU 2 rows: 1010 0.1 (at J1's start: not J1's), 1015 0.2, 1040 0.4
  //   J1 buckets: (1000, 1010] 0.5; (1010, 1020] (0.7 + 0.2) / 2 = 0.45;
  //               (1020, 1030] no J1 row -> one point without OFU; (1030, 1040] 0.4
  StoredHistory history;
  history.gpus = {Gpu(1, "h100-sxm5", "NVIDIA H100 80GB HBM3"), Gpu(2, "h100-sxm5", "NVIDIA H100 80GB HBM3")};
  history.windows = {Row(1, 1005, 0.5, 1), Row(1, 1015, 0.7, 1), Row(1, 1025, 0.9, 1),
                     Row(2, 1010, 0.1, 1), Row(2, 1015, 0.2, 1), Row(2, 1040, 0.4, 1)};
  history.jobs = {Job(1, "J1", 1000, 1020.0), Job(2, "J1", 1010, std::nullopt)};
  const HtmlReportView view = BuildHtmlReportView(history, BuildStoreReport(history, Specs()), Options(8));
  ASSERT_EQ(view.bucket_s, 10);
  ASSERT_EQ(view.jobs.size(), 1u);
  const auto& job = view.jobs[0];
  EXPECT_EQ(job.job_id, "J1");
  EXPECT_EQ(job.user, "alice");
  EXPECT_EQ(job.gpus, 2);
  // Job OFU (BuildStoreReport): (0.5 + 0.7 + 0.2 + 0.4) / 4 = 0.45.
  EXPECT_NEAR(*job.ofu, 0.45, 1e-12);
  ASSERT_EQ(job.points.size(), 4u);
  ExpectPoint(job.points[0], 1010, 0.5);
  ExpectPoint(job.points[1], 1020, 0.45);
  ExpectPoint(job.points[2], 1030, std::nullopt);
  ExpectPoint(job.points[3], 1040, 0.4);
}

TEST(HtmlReportDistributions, PerSkuCountsQuartilesAndHistogram) {
  // Three H100s with one 60 s row each, OFU 0.21, 0.43, 0.91 (bins 4, 8 and
  // 18 of 0.05); an A100 with 0.5 then 1.1 (bins 10 and the last, >= 1.0);
  // a GPU of unknown model (no SKU) with a row without OFU.
  StoredHistory history;
  history.gpus = {Gpu(1, "h100-sxm5", "NVIDIA H100 80GB HBM3"), Gpu(2, "h100-sxm5", "NVIDIA H100 80GB HBM3"),
                  Gpu(3, "h100-sxm5", "NVIDIA H100 80GB HBM3"), Gpu(4, "a100", "NVIDIA A100-SXM4-40GB"),
                  Gpu(5, "", "Synthetic Unknown GPU")};
  history.windows = {Row(1, 1060, 0.21 * 60, 60, 60), Row(2, 1060, 0.43 * 60, 60, 60), Row(3, 1060, 0.91 * 60, 60, 60),
                     Row(4, 1060, 0.5 * 60, 60, 60),  Row(4, 1120, 1.1 * 60, 60, 60),  Row(5, 1060, 0, 0, 60)};
  const HtmlReportView view = BuildHtmlReportView(history, BuildStoreReport(history, Specs()), Options(500));
  ASSERT_EQ(view.skus.size(), 3u);
  const auto& a100 = view.skus[0];
  const auto& h100 = view.skus[1];
  const auto& unknown = view.skus[2];
  EXPECT_EQ(a100.sku, "a100");
  EXPECT_EQ(h100.sku, "h100-sxm5");
  EXPECT_EQ(unknown.sku, "");
  EXPECT_EQ(unknown.model, "Synthetic Unknown GPU");
  EXPECT_EQ(a100.gpus, 1);
  EXPECT_EQ(h100.gpus, 3);
  EXPECT_EQ(unknown.gpus, 1);

  // H100 per-GPU OFU sorted 0.21 0.43 0.91: q1 at position 0.5 = 0.32,
  // median 0.43, q3 at 1.5 = 0.67.
  ASSERT_EQ(h100.gpu_ofu.size(), 3u);
  ASSERT_TRUE(h100.box);
  EXPECT_NEAR(h100.box->min, 0.21, 1e-12);
  EXPECT_NEAR(h100.box->q1, 0.32, 1e-12);
  EXPECT_NEAR(h100.box->median, 0.43, 1e-12);
  EXPECT_NEAR(h100.box->q3, 0.67, 1e-12);
  EXPECT_NEAR(h100.box->max, 0.91, 1e-12);
  EXPECT_NEAR(*h100.ofu, (0.21 + 0.43 + 0.91) / 3, 1e-12);
  EXPECT_NEAR(h100.observed_hours, 180.0 / 3600, 1e-15);
  std::vector<double> expected(ofu::analysis::kOfuBins, 0.0);
  expected[4] = expected[8] = expected[18] = 60.0 / 3600;
  EXPECT_EQ(h100.observed_hours_by_bin, expected);

  // The A100: one GPU (OFU (0.5 + 1.1) / 2 = 0.8 over its rows), both rows binned.
  ASSERT_TRUE(a100.box);
  EXPECT_NEAR(a100.box->median, 0.8, 1e-12);
  EXPECT_NEAR(a100.observed_hours_by_bin[10], 60.0 / 3600, 1e-15);
  EXPECT_NEAR(a100.observed_hours_by_bin[ofu::analysis::kOfuBins - 1], 60.0 / 3600, 1e-15);

  // Unknown model: counted, but nothing to distribute.
  EXPECT_FALSE(unknown.box);
  EXPECT_FALSE(unknown.ofu);
  EXPECT_TRUE(unknown.gpu_ofu.empty());
  // Fleet OFU leaves the unknown GPU out: (0.21+0.43+0.91+0.5+1.1) x 60 / 300.
  EXPECT_NEAR(*view.overall_ofu, 3.15 / 5, 1e-12);
  EXPECT_EQ(view.gpus_total, 5);
}

// ---- Work outside the tensor cores (issue 18) --------------------------
//
// The rows: SgemmAndBf16Jobs in html_test_support.h.
TEST(HtmlReportNonTensor, CudaCoreJobShowsItsFiguresSeriesAndAdvice) {
  const StoredHistory history = SgemmAndBf16Jobs();
  const HtmlReportView view = BuildHtmlReportView(history, BuildStoreReport(history, Specs()), Options(500));
  ASSERT_EQ(view.gpus.size(), 2u);
  ASSERT_EQ(view.jobs.size(), 2u);
  const auto& gpu1 = view.gpus[0].non_tensor;
  ASSERT_TRUE(gpu1[ofu::CudaCorePipe::kFp32] && gpu1.flops_upper_bound_tflops && gpu1.share_of_peak);
  EXPECT_NEAR(*gpu1[ofu::CudaCorePipe::kFp32], 0.7, 1e-12);
  EXPECT_NEAR(*gpu1.flops_upper_bound_tflops, 41.513472, 1e-9);
  EXPECT_NEAR(*gpu1.share_of_peak, 41.513472 / 66.9, 1e-9);
  EXPECT_FALSE(gpu1[ofu::CudaCorePipe::kFp64]);  // not measured: absent, not 0
  EXPECT_FALSE(gpu1[ofu::CudaCorePipe::kFp16]);

  // Jobs by id: BF16, SGEMM.
  const auto& bf16 = view.jobs[0];
  const auto& sgemm = view.jobs[1];
  ASSERT_EQ(sgemm.job_id, "SGEMM");
  EXPECT_NEAR(*sgemm.ofu, 0.02, 1e-12);
  ASSERT_TRUE(sgemm.non_tensor[ofu::CudaCorePipe::kFp32] && sgemm.non_tensor.flops_upper_bound_tflops);
  EXPECT_NEAR(*sgemm.non_tensor[ofu::CudaCorePipe::kFp32], 0.7, 1e-12);
  EXPECT_NEAR(*sgemm.non_tensor.flops_upper_bound_tflops, 41.513472, 1e-9);
  // The FP32 series beside OFU, one point per 60 s bucket.
  ASSERT_EQ(sgemm.points.size(), 4u);
  for (const TimelinePoint& p : sgemm.points) {
    ASSERT_TRUE(p.fp32_active);
    EXPECT_NEAR(*p.fp32_active, 0.7, 1e-12);
    EXPECT_NEAR(*p.ofu, 0.02, 1e-12);
  }
  for (const TimelinePoint& p : bf16.points) EXPECT_FALSE(p.fp32_active);
  EXPECT_FALSE(bf16.non_tensor.any_activity());
  EXPECT_FALSE(bf16.non_tensor.flops_upper_bound_tflops);

  // The advice of cuda_core_advice.h: job SGEMM, then GPU 1; nothing for BF16 or GPU 2.
  ASSERT_EQ(view.cuda_core_advice.size(), 2u);
  EXPECT_EQ(view.cuda_core_advice_total, 2);
  const auto& job_advice = view.cuda_core_advice[0];
  EXPECT_EQ(job_advice.job_id, "SGEMM");
  EXPECT_EQ(job_advice.gpu_uuid, "");
  EXPECT_EQ(job_advice.advice.pipe, "fp32");
  EXPECT_NEAR(job_advice.advice.pipe_active, 0.7, 1e-12);
  // TF32 tensor peak over the FP32 CUDA-core peak: 494.7 / 66.9 = 7.4x.
  ASSERT_TRUE(job_advice.advice.gain_upper_bound);
  EXPECT_NEAR(*job_advice.advice.gain_upper_bound, 494.7 / 66.9, 1e-9);
  EXPECT_EQ(job_advice.advice.text.rfind("job SGEMM: OFU 0.020 while the FP32 pipe is 70% active", 0), 0u)
      << job_advice.advice.text;
  EXPECT_NE(job_advice.advice.text.find("TF32"), std::string::npos);
  EXPECT_EQ(view.cuda_core_advice[1].gpu_uuid, "GPU-1");
  EXPECT_EQ(view.cuda_core_advice[1].job_id, "");

  // The page's data: the same figures, nulls where unmeasured, and a third
  // points column only for the series that have an FP32 pipe.
  const nlohmann::json data = DataOf(RenderHtmlReport(view));
  ASSERT_TRUE(data.is_object());
  EXPECT_NEAR(data["jobs"][1]["non_tensor"]["flops_upper_bound_tflops"].get<double>(), 41.513472, 1e-9);
  EXPECT_TRUE(data["jobs"][1]["non_tensor"]["fp64_active"].is_null());
  ASSERT_EQ(data["jobs"][1]["points"].size(), 3u);
  EXPECT_NEAR(data["jobs"][1]["points"][2][0].get<double>(), 0.7, 1e-12);
  EXPECT_EQ(data["jobs"][0]["points"].size(), 2u);
  for (const auto& [key, value] : data["jobs"][0]["non_tensor"].items()) EXPECT_TRUE(value.is_null()) << key;
  EXPECT_EQ(data["gpus"][1]["points"].size(), 2u);
  // The fleet: FP32 over the seconds that have it (GPU 1's only).
  EXPECT_NEAR(data["overall_non_tensor"]["fp32_active"].get<double>(), 0.7, 1e-12);
  ASSERT_EQ(data["cuda_core_advice"].size(), 2u);
  EXPECT_EQ(data["cuda_core_advice"][0]["job_id"], "SGEMM");
  EXPECT_EQ(data["cuda_core_advice"][1]["gpu_uuid"], "GPU-1");
  EXPECT_EQ(data["cuda_core_thresholds"]["low_ofu"], ofu::analysis::kLowOfu);
  EXPECT_EQ(data["cuda_core_thresholds"]["busy_pipe"], ofu::analysis::kBusyPipe);
}

TEST(HtmlReportNonTensor, Fp32SeriesIsBucketedLikeOfu) {
  // 10 s buckets (max 8 points over (1000, 1055]). Bucket (1000, 1010]:
  // FP32 0.7 over 1 s and 0.5 over 3 s, and a row without the counter, which
  // neither dilutes nor counts: (0.7 + 1.5) / 4 = 0.55. Bucket (1050, 1060]:
  // only a row without the counter: absent, not 0.
  StoredHistory history;
  history.gpus = {Gpu(1, "h100-sxm5", "NVIDIA H100 80GB HBM3")};
  history.windows = {WithFp32(Row(1, 1001, 0.1, 1), 0.7, 1, 0.1), WithFp32(Row(1, 1002, 0.3, 3, 3), 0.5, 1, 0.1),
                     Row(1, 1003, 0.5, 1), Row(1, 1055, 0.5, 1)};
  const HtmlReportView view = BuildHtmlReportView(history, BuildStoreReport(history, Specs()), Options(8));
  ASSERT_EQ(view.bucket_s, 10);
  const auto& points = view.gpus[0].points;
  ASSERT_EQ(points.size(), 3u);  // 1010, a gap at 1020, 1060
  ASSERT_TRUE(points[0].fp32_active);
  EXPECT_NEAR(*points[0].fp32_active, 0.55, 1e-12);
  EXPECT_FALSE(points[1].fp32_active);
  EXPECT_FALSE(points[2].fp32_active);
  ASSERT_TRUE(points[2].ofu);  // OFU is there; the FP32 pipe is not
  // Over the range, as `ofu report --store`: the same 2.2 / 4.
  EXPECT_NEAR(*view.gpus[0].non_tensor[ofu::CudaCorePipe::kFp32], 0.55, 1e-12);
}

TEST(HtmlReportNonTensor, WithoutPipeCountersNothingIsShownAndNothingIsZero) {
  StoredHistory history;
  history.gpus = {Gpu(1, "h100-sxm5", "NVIDIA H100 80GB HBM3")};
  history.windows = {Row(1, 1060, 0.02 * 60, 60, 60), Row(1, 1120, 0.01 * 60, 60, 60)};
  history.jobs = {Job(1, "J1", 1000, std::nullopt)};
  const HtmlReportView view = BuildHtmlReportView(history, BuildStoreReport(history, Specs()), Options(500));
  EXPECT_TRUE(view.cuda_core_advice.empty()) << "low OFU alone is no CUDA-core finding";
  EXPECT_EQ(view.cuda_core_advice_total, 0);
  const nlohmann::json data = DataOf(RenderHtmlReport(view));
  ASSERT_TRUE(data.is_object());
  for (const nlohmann::json& nt :
       {data["gpus"][0]["non_tensor"], data["jobs"][0]["non_tensor"], data["overall_non_tensor"]}) {
    ASSERT_EQ(nt.size(), 5u);
    for (const auto& [key, value] : nt.items()) EXPECT_TRUE(value.is_null()) << key;
  }
  EXPECT_EQ(data["gpus"][0]["points"].size(), 2u);
  EXPECT_EQ(data["jobs"][0]["points"].size(), 2u);
  EXPECT_TRUE(data["cuda_core_advice"].empty());
}

TEST(HtmlReportNonTensor, JobOverTwoSkusGetsAdviceWithoutAGainAndAdviceIsCapped) {
  // Job MIX on an H100 and an A100, both at OFU 0.02 with the FP32 pipe 0.7:
  // the job qualifies, but no one spec gives its gain. max_advice 1 keeps
  // the job's (jobs first) and counts the GPUs' two.
  StoredHistory history;
  history.gpus = {Gpu(1, "h100-sxm5", "NVIDIA H100 80GB HBM3"), Gpu(2, "a100", "NVIDIA A100-SXM4-40GB")};
  history.windows = {WithFp32(Row(1, 1060, 0.02 * 60, 60, 60), 0.7, 1, 0.1),
                     WithFp32(Row(2, 1060, 0.02 * 60, 60, 60), 0.7, 1, 0.1)};
  history.jobs = {Job(1, "MIX", 1000, std::nullopt), Job(2, "MIX", 1000, std::nullopt)};
  HtmlReportOptions options = Options(500);
  options.max_advice = 1;
  const HtmlReportView view = BuildHtmlReportView(history, BuildStoreReport(history, Specs()), options);
  EXPECT_EQ(view.cuda_core_advice_total, 3);
  ASSERT_EQ(view.cuda_core_advice.size(), 1u);
  const auto& advice = view.cuda_core_advice[0];
  EXPECT_EQ(advice.job_id, "MIX");
  EXPECT_FALSE(advice.advice.gain_upper_bound);
  EXPECT_EQ(advice.advice.text.find("Gain at most"), std::string::npos) << advice.advice.text;
  EXPECT_NE(advice.advice.text.find("FP32 pipe is 70% active"), std::string::npos) << advice.advice.text;
}

TEST(HtmlReportView, KeepsTheMostObservedSeriesAndCountsTheRest) {
  // GPU 2 has the fewest observed seconds; with room for two, 1 and 3 stay, in store order.
  StoredHistory history;
  history.gpus = {Gpu(1, "h100-sxm5", "m"), Gpu(2, "h100-sxm5", "m"), Gpu(3, "h100-sxm5", "m")};
  history.windows = {Row(1, 1001, 0.5, 1), Row(1, 1002, 0.5, 1), Row(2, 1001, 0.5, 1),
                     Row(3, 1001, 0.5, 1), Row(3, 1002, 0.5, 1), Row(3, 1003, 0.5, 1)};
  HtmlReportOptions options = Options(500);
  options.max_gpu_timelines = 2;
  const HtmlReportView view = BuildHtmlReportView(history, BuildStoreReport(history, Specs()), options);
  EXPECT_EQ(view.gpus_total, 3);
  ASSERT_EQ(view.gpus.size(), 2u);
  EXPECT_EQ(view.gpus[0].uuid, "GPU-1");
  EXPECT_EQ(view.gpus[1].uuid, "GPU-3");
  EXPECT_EQ(view.skus[0].gpus, 3);  // distributions keep every GPU
}

TEST(HtmlReportView, TwoDaysOfOneSecondRowsStayBoundedAndSmall) {
  // 172800 rows of one GPU; the series keeps at most 500 points and the
  // page stays small.
  StoredHistory history;
  history.gpus = {Gpu(1, "h100-sxm5", "NVIDIA H100 80GB HBM3")};
  const double t0 = 1790000000;
  for (int i = 1; i <= 2 * 86400; ++i) history.windows.push_back(Row(1, t0 + i, (i % 100) / 100.0, 1));
  const HtmlReportView view = BuildHtmlReportView(history, BuildStoreReport(history, Specs()), Options(500));
  EXPECT_EQ(view.bucket_s, 600);  // 172800 / 498 = 347 s -> 10 min
  EXPECT_LE(view.gpus[0].points.size(), 500u);
  EXPECT_GE(view.gpus[0].points.size(), 288u);  // 2 days / 10 min
  // Whole 10-minute buckets hold 6 full cycles of 0.00 .. 0.99: mean 0.495.
  EXPECT_NEAR(*view.gpus[0].points[10].ofu, 0.495, 1e-12);
  EXPECT_LT(RenderHtmlReport(view).size(), 200'000u);
}

TEST(HtmlReportView, EmptyHistorySaysSoAndDrawsNothingFake) {
  StoredHistory history;
  const HtmlReportView view = BuildHtmlReportView(history, BuildStoreReport(history, Specs()), Options(500));
  EXPECT_FALSE(view.start_s);
  EXPECT_TRUE(view.gpus.empty());
  EXPECT_FALSE(view.overall_ofu);
  const nlohmann::json data = DataOf(RenderHtmlReport(view));
  ASSERT_TRUE(data.is_object());
  EXPECT_TRUE(data["scatter"].is_null());
  EXPECT_TRUE(data["markers"].is_null());
  EXPECT_NE(data["scatter_absent"].get<std::string>().find("No MFU log given"), std::string::npos);
  EXPECT_TRUE(data["overall_ofu"].is_null());
}

TEST(HtmlReportRender, HostileStringsCannotEndTheDataScript) {
  const std::string hostile = "</script><script>document.body.dataset.pwned='1'</script><!--";
  HtmlReportView view;
  view.title = "<b>title</b> & \"more\"";
  view.source = hostile;
  ofu::analysis::JobTimeline job;
  job.job_id = hostile;
  job.user = "</SCRIPT >";
  job.job_name = std::string("bad utf-8 \xff\xfe here");
  job.points = {{100, 0.5}, {110, std::nullopt}};
  view.jobs.push_back(job);
  const std::string html = RenderHtmlReport(view);

  // Only the page's own three script elements open and close.
  EXPECT_EQ(Count(html, "<script"), 3);
  EXPECT_EQ(Count(html, "</script"), 3);
  EXPECT_EQ(Count(html, "</SCRIPT"), 0);
  EXPECT_EQ(Count(html, "<!--"), 0);
  EXPECT_NE(html.find("<title>&lt;b&gt;title&lt;/b&gt; &amp; &quot;more&quot;</title>"), std::string::npos);

  // And the data reads back exactly (invalid UTF-8 replaced, not thrown on).
  const nlohmann::json data = DataOf(html);
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["source"], hostile);
  EXPECT_EQ(data["jobs"][0]["job_id"], hostile);
  EXPECT_EQ(data["jobs"][0]["user"], "</SCRIPT >");
  EXPECT_EQ(data["jobs"][0]["job_name"], "bad utf-8 \xEF\xBF\xBD\xEF\xBF\xBD here");
  EXPECT_EQ(data["jobs"][0]["points"], nlohmann::json::parse("[[100, 110], [0.5, null]]"));
}

TEST(HtmlReportRender, PageIsSelfContained) {
  StoredHistory history;
  history.gpus = {Gpu(1, "h100-sxm5", "NVIDIA H100 80GB HBM3")};
  history.windows = {Row(1, 1001, 0.5, 1)};
  const std::string html = RenderHtmlReport(BuildHtmlReportView(history, BuildStoreReport(history, Specs()),
                                                                Options(500)));
  for (const char* external : {"src=", "href=", "@import", "url(", "fetch(", "XMLHttpRequest", "<link", "<img"}) {
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  }
  // The one URL is the SVG namespace, a name that is never fetched.
  EXPECT_EQ(Count(html, "://"), 1);
  EXPECT_EQ(Count(html, "\"http://www.w3.org/2000/svg\""), 1);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
}

// The GEMM findings of `ofu report --trace` on the real ragged trace (see
// real_trace_findings.h): the one pre-native finding `ofu correct` makes,
// copied field by field, and the tile-padding ones after it.
TEST(HtmlReportKernelFindings, RealRaggedTraceGivesOnePreNativeFinding) {
  const ofu::analysis::CorrectionReport report = ofu::testing::RaggedTraceCorrection(Specs());
  const ofu::analysis::KernelFindings findings = ofu::testing::RaggedTraceFindings(Specs());
  EXPECT_EQ(findings.traces, std::vector<std::string>{ofu::testing::kRaggedTrace});
  EXPECT_EQ(findings.gpu_sku, "h100-sxm5");
  ASSERT_TRUE(findings.factor && findings.padding_factor && findings.throughput_factor);
  EXPECT_EQ(findings.factor, report.factor);
  EXPECT_EQ(findings.padding_factor, report.padding_factor);
  // All of its tensor time on the one family measured at 0.513 (data/kernel_throughput.json).
  EXPECT_NEAR(*findings.throughput_factor, 0.513, 1e-12);
  EXPECT_EQ(findings.notes, report.notes);

  ASSERT_EQ(report.pre_native.size(), 1u);
  ASSERT_EQ(findings.gemms.size(), 1 + report.wasteful.size());
  const ofu::analysis::GemmFinding& g = findings.gemms.front();
  EXPECT_EQ(g.kind, "pre-native kernel");
  EXPECT_EQ(g.family, "sm75 s1688 bf16");
  EXPECT_EQ(g.unaligned, (std::vector<std::string>{"M = 4097", "K = 8191"}));
  EXPECT_DOUBLE_EQ(g.tensor_time_share, 1.0);
  ASSERT_TRUE(g.lost_share.has_value());
  EXPECT_NEAR(*g.lost_share, 1 - 0.513, 1e-12);
  EXPECT_EQ(g.problem, (ofu::kernels::GemmProblem{4097, 1000, 8191, 1}));
  EXPECT_EQ(g.precision, ofu::kernels::Precision::kBf16);
  EXPECT_NE(g.kernel_name.find("cutlass_75_tensorop_bf16_s1688gemm"), std::string::npos) << g.kernel_name;
  EXPECT_EQ(g.advice, report.pre_native.front().advice);
  // correction.cc words it; here only what it must name: the dimensions and the fix.
  for (const char* part : {"M = 4097", "K = 8191", "Pad M to 4104 and K to 8192"}) {
    EXPECT_NE(g.advice.find(part), std::string::npos) << part << " in " << g.advice;
  }
  for (std::size_t i = 1; i < findings.gemms.size(); ++i) {
    EXPECT_EQ(findings.gemms[i].kind, "tile padding");
    EXPECT_EQ(findings.gemms[i].lost_share, report.wasteful[i - 1].wasted_share);
    EXPECT_EQ(findings.gemms[i].advice, report.wasteful[i - 1].advice);
  }

  // In the page's data, and so in the page: its advice as a JSON string with
  // every '<' escaped (ScriptSafeJson).
  HtmlReportView view = BuildHtmlReportView(SgemmAndBf16Jobs(), BuildStoreReport(SgemmAndBf16Jobs(), Specs()),
                                            Options(500));
  view.kernel_findings = findings;
  const std::string html = RenderHtmlReport(view);
  EXPECT_NE(html.find(nlohmann::json(g.advice).dump()), std::string::npos);
  const nlohmann::json data = DataOf(html);
  ASSERT_TRUE(data["kernel_findings"].is_object());
  const nlohmann::json& first = data["kernel_findings"]["gemms"][0];
  EXPECT_EQ(first["kind"], "pre-native kernel");
  EXPECT_EQ(first["advice"], g.advice);
  EXPECT_EQ(first["m"], 4097);
  EXPECT_EQ(first["k"], 8191);
  EXPECT_EQ(first["precision"], "bf16");
  EXPECT_EQ(first["launches"], g.launches);  // the identity every list of GEMMs writes (GemmIdentityJson)
  EXPECT_GT(g.launches, 0);
  EXPECT_EQ(first["unaligned"], nlohmann::json::parse(R"(["M = 4097", "K = 8191"])"));
  EXPECT_NEAR(data["kernel_findings"]["throughput_factor"].get<double>(), 0.513, 1e-12);
}

// Strings of a finding come from the trace (op and kernel names): none can
// end the data's script element, and they read back exactly. Synthetic.
TEST(HtmlReportKernelFindings, FindingStringsAreEscaped) {
  HtmlReportView view;
  ofu::analysis::KernelFindings findings;
  findings.traces = {"</script><script>alert(1)</script>.json"};
  ofu::analysis::GemmFinding g;
  g.kind = "tile padding";
  g.op_name = "aten::mm<!--";
  g.advice = "Pad N to 128 </script><b>now</b> & \"quote\"";
  g.kernel_name = "</SCRIPT>";
  findings.gemms = {g};
  view.kernel_findings = findings;
  const std::string html = RenderHtmlReport(view);
  EXPECT_EQ(Count(html, "<script"), 3);
  EXPECT_EQ(Count(html, "</script"), 3);
  EXPECT_EQ(Count(html, "</SCRIPT"), 0);
  EXPECT_EQ(Count(html, "<!--"), 0);
  EXPECT_NE(html.find(R"("Pad N to 128 \u003c/script>\u003cb>now\u003c/b> & \"quote\"")"), std::string::npos);
  const nlohmann::json data = DataOf(html);
  EXPECT_EQ(data["kernel_findings"]["traces"][0], findings.traces[0]);
  EXPECT_EQ(data["kernel_findings"]["gemms"][0]["advice"], g.advice);
  EXPECT_EQ(data["kernel_findings"]["gemms"][0]["op"], g.op_name);
  EXPECT_TRUE(data["kernel_findings"]["gemms"][0]["lost_share"].is_null());
}

// Without a trace the view has no findings and the data says null: the page
// draws no section (not one of zeros).
TEST(HtmlReportKernelFindings, AbsentWithoutATrace) {
  const HtmlReportView view = BuildHtmlReportView(SgemmAndBf16Jobs(), BuildStoreReport(SgemmAndBf16Jobs(), Specs()),
                                                  Options(500));
  EXPECT_FALSE(view.kernel_findings.has_value());
  const nlohmann::json data = DataOf(RenderHtmlReport(view));
  ASSERT_TRUE(data.contains("kernel_findings"));
  EXPECT_TRUE(data["kernel_findings"].is_null());
}

}  // namespace
