// The HTML report's view model, built from stored rows made up here
// (synthetic), and the page's data block. Expected values are computed by
// hand in the comments.
#include "ofu/analysis/html_report.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "html/html_test_support.h"

namespace {

using ofu::analysis::BuildHtmlReportView;
using ofu::analysis::BuildStoreReport;
using ofu::analysis::ChooseBucketSeconds;
using ofu::analysis::HtmlReportOptions;
using ofu::analysis::HtmlReportView;
using ofu::analysis::RenderHtmlReport;
using ofu::analysis::TimelinePoint;
using ofu::sinks::StoredHistory;
using ofu::testing::Gpu;
using ofu::testing::Job;
using ofu::testing::Row;

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
  downsampled.flags |= ofu::sinks::kHistoryDownsampled;
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

}  // namespace
