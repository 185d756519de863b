// Reconciliation: statistics and flags against values worked out by hand.
#include "ofu/analysis/reconcile.h"
#include "ofu/render/reconcile_output.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

using namespace ofu::analysis;
using namespace ofu::formats;
using ofu::render::RenderReconcileCsv;
using ofu::render::RenderReconcileJson;
using ofu::render::RenderReconcileTable;

TEST(FleetStatistics, PearsonAndSpearmanOfFourPoints) {
  // x = 1 2 3 4, y = 1 3 2 4: deviations ±1.5, ±0.5 from 2.5;
  // sxy = 2.25 - 0.25 - 0.25 + 2.25 = 4, sxx = syy = 5, r = 4/5.
  const std::vector<double> x{1, 2, 3, 4}, y{1, 3, 2, 4};
  EXPECT_NEAR(*PearsonR(x, y), 0.8, 1e-12);
  EXPECT_NEAR(*SpearmanRho(x, y), 0.8, 1e-12);  // the values are their ranks
  // Monotone but not linear: rho 1, r below 1.
  const std::vector<double> a{1, 2, 3, 100}, b{1, 2, 3, 4};
  EXPECT_NEAR(*SpearmanRho(a, b), 1.0, 1e-12);
  EXPECT_LT(*PearsonR(a, b), 0.9);
  // Ties share ranks: x = 1 1 2 3 -> 1.5 1.5 3 4 against 1 2 3 4:
  // dx = -1 -1 .5 1.5 (mean 2.5), dy = -1.5 -.5 .5 1.5; sxy = 1.5+.5+.25+2.25 = 4.5,
  // sxx = 1+1+.25+2.25 = 4.5, syy = 5: rho = 4.5 / sqrt(22.5).
  const std::vector<double> t{1, 1, 2, 3};
  EXPECT_NEAR(*SpearmanRho(t, b), 4.5 / std::sqrt(22.5), 1e-12);
  // Too few points, or no variance: absent.
  EXPECT_FALSE(PearsonR(std::vector<double>{1, 2}, std::vector<double>{1, 2}));
  EXPECT_FALSE(PearsonR(std::vector<double>{1, 1, 1}, std::vector<double>{1, 2, 3}));
}

TEST(Classify, CharacteristicRatios) {
  const ReconcileOptions o;
  EXPECT_EQ(ClassifyRatio(1.0, std::nullopt, o).flag, "ok");
  EXPECT_EQ(ClassifyRatio(1.14, std::nullopt, o).flag, "ok");
  EXPECT_EQ(ClassifyRatio(0.86, std::nullopt, o).flag, "ok");
  EXPECT_EQ(ClassifyRatio(1.2, std::nullopt, o).flag, "causal_attention_full");
  EXPECT_EQ(ClassifyRatio(1.6, std::nullopt, o).flag, "causal_attention_full");
  EXPECT_EQ(ClassifyRatio(2.0, std::nullopt, o).flag, "wrong_precision_peak");
  EXPECT_EQ(ClassifyRatio(0.5, std::nullopt, o).flag, "wrong_precision_peak");
  EXPECT_EQ(ClassifyRatio(4.5, std::nullopt, o).flag, "moe_total_params");
  EXPECT_EQ(ClassifyRatio(1000, std::nullopt, o).flag, "units");
  EXPECT_EQ(ClassifyRatio(0.75, true, o).flag, "recomputation");
  EXPECT_EQ(ClassifyRatio(0.75, std::nullopt, o).flag, "recomputation");
  EXPECT_EQ(ClassifyRatio(0.75, false, o).flag, "under_counted");
  EXPECT_EQ(ClassifyRatio(0.3, std::nullopt, o).flag, "under_counted");
}

// One GPU, one 10 s window at OFU 0.4, job A on it.
ofu::history::StoredHistory OneJob() {
  ofu::history::StoredHistory h;
  h.path = "synthetic";
  ofu::history::StoredGpu gpu;
  gpu.id = 1;
  gpu.identity.key = "GPU-a";
  gpu.sku = "h100-sxm5";
  h.gpus.push_back(gpu);
  ofu::history::StoredWindow w;
  w.gpu_id = 1;
  w.end_s = 10;
  w.span_s = w.up_s = 10;
  w.counters.Set(ofu::kCounterObserved, 10);
  w.counters.Set(ofu::kCounterBusy, 10);
  w.counters.Set(ofu::kCounterUtilized, 4);
  w.counters.Set(ofu::kCounterBusyUtilized, 4);
  h.windows.push_back(w);
  ofu::history::StoredJob job;
  job.gpu_id = 1;
  job.job_id = "A";
  job.start_s = 0;
  job.end_s = 10;
  h.jobs.push_back(job);
  return h;
}

// OneJob(), the embedded spec database and the store report of the two.
class ReconcileOneJob : public ::testing::Test {
 protected:
  const ofu::history::StoredHistory history = OneJob();
  const ofu::GpuSpecDatabase specs = *ofu::GpuSpecDatabase::Embedded();
  const Report store = BuildStoreReport(history, specs);
};

// A bf16-referenced MFU log row.
ReportedMfu Reported(const std::string& job_id, double mfu, int line) {
  ReportedMfu row;
  row.job_id = job_id;
  row.mfu = mfu;
  row.line = line;
  return row;
}

TEST_F(ReconcileOneJob, ExpectedMfuUsesFactorAndPrecisionMixRescaledToTheLogsReference) {
  JobCorrection c;
  c.factor = 0.9;
  c.precision_mix = {{ofu::kernels::Precision::kFp8, 0.5, 2.0}, {ofu::kernels::Precision::kBf16, 0.5, 1.0}};
  MfuLog log;
  log.path = "mfu.csv";
  // bf16 reference: scale (0.5·2 + 0.5·1)/1 = 1.5; expected 0.4 × 0.9 × 1.5 = 0.54.
  log.jobs.push_back(Reported("A", 0.54, 2));
  log.jobs.push_back(Reported("missing", 0.3, 3));
  auto report = Reconcile(history, store, log, {{"A", c}}, &specs, {});
  ASSERT_EQ(report.jobs.size(), 2u);
  EXPECT_NEAR(*report.jobs[0].corrected_ofu, 0.36, 1e-12);
  EXPECT_NEAR(report.jobs[0].mfu_scale, 1.5, 1e-12);
  EXPECT_NEAR(*report.jobs[0].expected_mfu, 0.54, 1e-12);
  EXPECT_NEAR(*report.jobs[0].residual, 0, 1e-12);
  EXPECT_EQ(report.jobs[0].flag, "ok");
  EXPECT_EQ(report.jobs[1].flag, "no_ofu");
  EXPECT_FALSE(report.jobs[1].expected_mfu);

  // fp8 reference: scale 1.5 / 2 = 0.75; expected 0.27; reported 0.54 is 2x.
  log.jobs[0].reference_precision = ofu::kernels::Precision::kFp8;
  report = Reconcile(history, store, log, {{"A", c}}, &specs, {});
  EXPECT_NEAR(*report.jobs[0].expected_mfu, 0.27, 1e-12);
  EXPECT_EQ(report.jobs[0].flag, "wrong_precision_peak");

  // JSON: absent stays null, the scatter has the job with both figures only.
  const auto json = nlohmann::json::parse(RenderReconcileJson(report));
  EXPECT_TRUE(json["jobs"][1]["expected_mfu"].is_null());
  ASSERT_EQ(json["scatter"].size(), 1u);
  EXPECT_EQ(json["scatter"][0]["job_id"], "A");
  EXPECT_TRUE(json["statistics"]["all"]["pearson_r"].is_null());  // one point
}

TEST_F(ReconcileOneJob, ThroughputMfuFromTheLogsOwnFigures) {
  MfuLog log;
  // 6e9 FLOP/token × 3.2984e4 tokens/s / (1 GPU × 989.4e12 FLOP/s) = 0.2000... : the log says 0.4.
  ReportedMfu row = Reported("A", 0.4, 2);
  row.model_flops_per_token = 6e9;
  row.tokens_per_s = 989.4e12 * 0.2 / 6e9;
  log.jobs.push_back(row);
  const auto report = Reconcile(history, store, log, {}, &specs, {});
  ASSERT_TRUE(report.jobs[0].throughput_mfu);
  EXPECT_NEAR(*report.jobs[0].throughput_mfu, 0.2, 1e-9);
  ASSERT_FALSE(report.jobs[0].notes.empty());
}

// nanoGPT divides by the A100's 312 TFLOPS on any GPU: 1.268 of it on an H100
// SXM5 (989.4 TFLOPS bf16) is 1.268 × 312 / 989.4 = 0.39985... of the H100's
// peak, which matches the 0.4 OFU (ok). Taken as logged it would be 3.17x.
TEST_F(ReconcileOneJob, AnMfuOverAnotherGpusPeakIsRescaledToTheJobsOwn) {
  MfuLog log;
  ReportedMfu row = Reported("A", 1.268, 2);
  row.peak_flops = 312e12;
  log.jobs.push_back(row);
  const auto report = Reconcile(history, store, log, {}, &specs, {});
  const ReconciledJob& job = report.jobs[0];
  ASSERT_TRUE(job.logged_mfu);
  EXPECT_DOUBLE_EQ(*job.logged_mfu, 1.268);
  EXPECT_DOUBLE_EQ(*job.peak_flops, 312e12);
  EXPECT_NEAR(job.reported_mfu, 1.268 * 312 / 989.4, 1e-12);
  EXPECT_EQ(job.flag, "ok");
  EXPECT_NE(RenderReconcileTable(report).find("A: logged 1.2680 over 312.0 TFLOPS -> 0.3999"), std::string::npos)
      << RenderReconcileTable(report);

  // Without a spec database the GPU's own peak is unknown: compared as
  // logged, with a note, never silently rescaled.
  const auto unknown = Reconcile(history, store, log, {}, nullptr, {});
  EXPECT_DOUBLE_EQ(unknown.jobs[0].reported_mfu, 1.268);
  bool noted = false;
  for (const std::string& note : unknown.jobs[0].notes)
    noted = noted || note.find("compared as logged") != std::string::npos;
  EXPECT_TRUE(noted);
}

// A training log of FLOP/s per GPU (SYNTHETIC row: 395.76 TFLOP/s, as
// Megatron-LM, MaxText and nanotron print): over the job's H100 SXM5 bf16
// peak, 395.76 / 989.4 = 0.4, the OFU (ok). Without a spec database there is
// no peak: flag no_mfu, no reported figure (null, "-"), not a 0, and the job
// is out of the statistics.
TEST_F(ReconcileOneJob, FlopsPerGpuAreDividedByTheJobsGpuPeak) {
  MfuLog log;
  ReportedMfu row = Reported("A", 0, 2);
  row.flops_per_gpu = 395.76e12;
  log.jobs.push_back(row);
  const auto report = Reconcile(history, store, log, {}, &specs, {});
  const ReconciledJob& job = report.jobs[0];
  EXPECT_TRUE(job.reported_known);
  EXPECT_NEAR(job.reported_mfu, 0.4, 1e-12);
  EXPECT_EQ(job.flag, "ok");

  const auto unknown = Reconcile(history, store, log, {}, nullptr, {});
  const ReconciledJob& none = unknown.jobs[0];
  EXPECT_EQ(none.flag, "no_mfu");
  EXPECT_FALSE(none.reported_known);
  EXPECT_FALSE(none.flagged());
  EXPECT_FALSE(none.expected_mfu);
  EXPECT_EQ(unknown.all.jobs, 0);
  EXPECT_NE(none.explanation.find("the log prints 395.8 TFLOP/s per GPU, not MFU"), std::string::npos)
      << none.explanation;
  const auto json = nlohmann::json::parse(RenderReconcileJson(unknown));
  EXPECT_TRUE(json["jobs"][0]["reported_mfu"].is_null());
  EXPECT_DOUBLE_EQ(json["jobs"][0]["flops_per_gpu"].get<double>(), 395.76e12);
  EXPECT_NE(RenderReconcileCsv(unknown).find(",,no_mfu\n"), std::string::npos) << RenderReconcileCsv(unknown);
}

}  // namespace
