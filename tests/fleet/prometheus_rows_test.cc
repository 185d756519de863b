// The Prometheus reader's row rule (prometheus_history.h) with hand values:
// one row per pair of scrapes, the increase of each counter; a decrease is a
// counter reset (the agent restarted) and the value after it is the
// increase; a scrape gap is one longer row whose increase is what the agent
// counted across it; a pipe counter the GPU lacks stays absent. Then the
// weighting: OFU over rows is utilized over observed seconds, so a long gap
// row weighs its observed seconds, not its span.
#include <set>

#include <gtest/gtest.h>

#include "ofu/analysis/store_report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/history/prometheus_history.h"

namespace {

using ofu::history::CounterSamples;
using ofu::history::RowsOfCounterSamples;

constexpr const char* kObserved = "ofu_observed_seconds_total";
constexpr const char* kUtilized = "ofu_utilized_seconds_total";
constexpr const char* kHmma = "ofu_hmma_active_seconds_total";

TEST(PrometheusRows, ConsecutiveScrapesAreRowsOfIncreases) {
  CounterSamples samples;
  samples[kObserved] = {{1000, 0}, {1060, 60}, {1120, 120}};
  samples[kUtilized] = {{1000, 0}, {1060, 30}, {1120, 75}};
  const auto rows = RowsOfCounterSamples(7, samples, 0);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].gpu_id, 7);
  EXPECT_EQ(rows[0].end_s, 1060);
  EXPECT_EQ(rows[0].span_s, 60);
  EXPECT_EQ(rows[0].counters.observed_s(), 60);
  EXPECT_EQ(rows[0].counters.utilized_s(), 30);
  EXPECT_EQ(rows[1].counters.observed_s(), 60);
  EXPECT_EQ(rows[1].counters.utilized_s(), 45);
  EXPECT_EQ(rows[1].up_s, 60);
  EXPECT_FALSE(rows[0].counters[ofu::kCounterHmmaActive].has_value());  // the GPU has no HMMA counter
}

TEST(PrometheusRows, AResetCountsTheNewValueAsTheIncrease) {
  // The agent restarted between 1060 and 1120: its counters began again at 0
  // and had counted 30 s (15 s utilized) when Prometheus scraped at 1120.
  CounterSamples samples;
  samples[kObserved] = {{1000, 100}, {1060, 160}, {1120, 30}, {1180, 90}};
  samples[kUtilized] = {{1000, 50}, {1060, 80}, {1120, 15}, {1180, 45}};
  const auto rows = RowsOfCounterSamples(1, samples, 0);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].counters.observed_s(), 60);
  EXPECT_EQ(rows[0].counters.utilized_s(), 30);
  EXPECT_EQ(rows[1].counters.observed_s(), 30);  // the new value, not 30 − 160
  EXPECT_EQ(rows[1].counters.utilized_s(), 15);
  EXPECT_EQ(rows[2].counters.observed_s(), 60);
  EXPECT_EQ(rows[2].counters.utilized_s(), 30);
}

TEST(PrometheusRows, AScrapeGapIsOneLongRowOfWhatTheAgentCounted) {
  // No scrape from 1060 to 1600; the agent had valid data for 120 s of it.
  CounterSamples samples;
  samples[kObserved] = {{1000, 0}, {1060, 60}, {1600, 180}, {1660, 240}};
  samples[kUtilized] = {{1000, 0}, {1060, 30}, {1600, 90}, {1660, 120}};
  const auto rows = RowsOfCounterSamples(1, samples, 0);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].end_s, 1600);
  EXPECT_EQ(rows[1].span_s, 540);
  EXPECT_EQ(rows[1].counters.observed_s(), 120);
  EXPECT_EQ(rows[1].counters.utilized_s(), 60);
}

TEST(PrometheusRows, RowsEndAfterSinceAndWithAJobAtItsScrapes) {
  CounterSamples samples;
  samples[kObserved] = {{1000, 0}, {1060, 60}, {1120, 120}, {1180, 180}};
  samples[kUtilized] = {{1000, 0}, {1060, 6}, {1120, 18}, {1180, 36}};
  // The scrape at 1000 opens the first row after since = 1030.
  const auto after = RowsOfCounterSamples(1, samples, 1030);
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[0].end_s, 1060);
  EXPECT_EQ(RowsOfCounterSamples(1, samples, 1060).size(), 2u);
  const std::set<double> job_times = {1120, 1180};
  const auto job = RowsOfCounterSamples(1, samples, 0, &job_times);
  ASSERT_EQ(job.size(), 2u);
  EXPECT_EQ(job[0].counters.utilized_s(), 12);
  EXPECT_EQ(job[1].counters.utilized_s(), 18);
}

TEST(PrometheusRows, APipeCounterIsAbsentWhereItHasNoSamples) {
  CounterSamples samples;
  samples[kObserved] = {{1000, 0}, {1060, 60}, {1120, 120}};
  samples[kHmma] = {{1060, 10}, {1120, 25}};  // appears with the first window that had it
  const auto rows = RowsOfCounterSamples(1, samples, 0);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].counters[ofu::kCounterHmmaActive].has_value());
  ASSERT_TRUE(rows[1].counters[ofu::kCounterHmmaActive].has_value());
  EXPECT_EQ(*rows[1].counters[ofu::kCounterHmmaActive], 15);
}

TEST(PrometheusRows, OfuWeighsObservedSecondsNotSpans) {
  // Rows: 60 s at OFU 0.5; a 540 s gap row with 120 observed s at 0.25
  // (30 utilized); after a reset, 30 s at 0.5. OFU = (30 + 30 + 15) / (60 +
  // 120 + 30) = 75 / 210; a span weighting would give something else.
  CounterSamples samples;
  samples[kObserved] = {{1000, 0}, {1060, 60}, {1600, 180}, {1660, 30}};
  samples[kUtilized] = {{1000, 0}, {1060, 30}, {1600, 60}, {1660, 15}};
  samples["ofu_busy_seconds_total"] = samples[kObserved];
  samples["ofu_busy_utilized_seconds_total"] = samples[kUtilized];
  samples["ofu_tensor_active_seconds_total"] = {{1000, 0}, {1060, 30}, {1600, 90}, {1660, 15}};
  ofu::history::StoredHistory history;
  history.path = "hand";
  ofu::history::StoredGpu gpu;
  gpu.id = 1;
  gpu.identity.key = "GPU-hand";
  gpu.identity.model = "NVIDIA H100 80GB HBM3";
  gpu.sku = "h100-sxm5";
  history.gpus.push_back(gpu);
  history.windows = RowsOfCounterSamples(1, samples, 0);
  ASSERT_EQ(history.windows.size(), 3u);
  auto specs = ofu::GpuSpecDatabase::Embedded();
  ASSERT_TRUE(specs.ok());
  const auto report = ofu::analysis::BuildStoreReport(history, *specs);
  ASSERT_TRUE(report.overall.ofu.has_value());
  EXPECT_DOUBLE_EQ(*report.overall.ofu, 75.0 / 210.0);
  EXPECT_DOUBLE_EQ(report.overall.seconds, 210);
  EXPECT_DOUBLE_EQ(*report.overall.tensor_active, (30.0 + 60.0 + 15.0) / 210.0);
}

}  // namespace

// The windows' length (PrometheusQueryOptions::step_s): what is asked for,
// else every scrape up to auto_step_points per GPU, else the multiple of
// the scrape interval that gives at most that many. By hand: a week
// (604,800 s) at 15 s is 40,320 scrapes; 604,800 / 2,000 = 302.4 s, i.e.
// 20.16 scrapes, so 21 × 15 = 315 s. A day at 15 s (5,760) gives 43.2 s,
// 2.88 scrapes, so 45 s. 6 h at 15 s (1,440) stays at every scrape.
TEST(PrometheusStep, ChosenFromTheRangeOrAsked) {
  ofu::history::PrometheusQueryOptions options;
  EXPECT_EQ(ofu::history::StepOf(options, 604800, 40320), 315);
  EXPECT_EQ(ofu::history::StepOf(options, 86400, 5760), 45);
  EXPECT_EQ(ofu::history::StepOf(options, 21600, 1440), 0);
  EXPECT_EQ(ofu::history::StepOf(options, 21600, 2000), 0);
  options.auto_step_points = 100;
  EXPECT_EQ(ofu::history::StepOf(options, 21600, 1440), 225);  // 216 s = 14.4 scrapes -> 15
  options.step_s = 0;
  EXPECT_EQ(ofu::history::StepOf(options, 604800, 40320), 0);
  options.step_s = 60;
  EXPECT_EQ(ofu::history::StepOf(options, 604800, 40320), 60);
}
