// The SYNTHETIC fleet simulator end to end, in process: for several seeds,
// reconcile and regress find every planted problem and flag nothing else,
// and r and rho are reported. The same seed writes the same files.
#include "ofu/simulation/fleet_sim.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofu/analysis/reconcile.h"
#include "ofu/analysis/regress.h"
#include "ofu/analysis/store_report.h"
#include "ofu/formats/mfu_log.h"
#include "ofu/history/history_reader.h"
#include "ofu/render/fleet_sim_output.h"
#include "ofu/render/report_output.h"
#include "support/report_compare.h"

namespace {

namespace fs = std::filesystem;
using namespace ofu;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class FleetSim : public ::testing::TestWithParam<std::uint64_t> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("ofu-fleet-sim-{}-{}", ::getpid(), GetParam());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_P(FleetSim, EveryPlantIsFoundAndNothingElse) {
  simulation::FleetSimOptions options;
  options.seed = GetParam();
  auto truth = simulation::SimulateFleet(options, dir_.string());
  ASSERT_TRUE(truth.ok()) << truth.error().message;

  auto history = history::ReadHistory(truth->store, {});
  ASSERT_TRUE(history.ok()) << history.error().message;
  auto specs = GpuSpecDatabase::Embedded();
  ASSERT_TRUE(specs.ok());
  const analysis::Report store = analysis::BuildStoreReport(*history, *specs);
  auto log = formats::ReadMfuLog(truth->mfu_log);
  ASSERT_TRUE(log.ok()) << log.error().message;
  auto corrections = formats::ReadCorrections(truth->corrections_dir);
  ASSERT_TRUE(corrections.ok()) << corrections.error().message;

  // Reconcile: each job's flag is what was planted in it ("none": ok).
  const auto reconciled = analysis::Reconcile(*history, store, *log, *corrections, &*specs, {});
  ASSERT_EQ(reconciled.jobs.size(), truth->jobs.size());
  int planted = 0;
  for (size_t i = 0; i < truth->jobs.size(); ++i) {
    const auto& want = truth->jobs[i];
    const auto& got = reconciled.jobs[i];
    ASSERT_EQ(got.job_id, want.job_id);
    EXPECT_EQ(got.flag, want.plant == "none" ? "ok" : want.plant) << want.job_id << ": " << got.explanation;
    EXPECT_NEAR(*got.expected_mfu, want.expected_mfu, 1e-9) << want.job_id;
    planted += want.plant != "none";
  }
  EXPECT_EQ(planted, 5);  // four FLOPs miscalculations and one non_tensor_work job (issue 18)
  ASSERT_TRUE(reconciled.all.pearson_r && reconciled.all.spearman_rho && reconciled.all.mean_absolute_error);
  ASSERT_TRUE(reconciled.unflagged.pearson_r && reconciled.unflagged.spearman_rho);
  EXPECT_EQ(reconciled.unflagged.jobs, static_cast<int>(truth->jobs.size()) - 5);  // the 5 planted
  // Without the planted bugs, MFU follows OFU up to the 3 % MFU noise.
  EXPECT_GT(*reconciled.unflagged.pearson_r, 0.98);
  EXPECT_GT(*reconciled.unflagged.spearman_rho, 0.9);
  EXPECT_LT(*reconciled.unflagged.pearson_r - *reconciled.all.pearson_r, 1.0);

  // Regress: the one regression, the one precision switch, the one run regression.
  const auto regress = analysis::ScanRegressions(*history, store, {});
  ASSERT_EQ(regress.changes.size(), truth->regressions.size());
  for (size_t i = 0; i < regress.changes.size(); ++i) {
    EXPECT_EQ(regress.changes[i].job_id, truth->regressions[i].job_id);
    EXPECT_NEAR(regress.changes[i].ratio, truth->regressions[i].ratio, 0.05);
    EXPECT_NEAR(regress.changes[i].time_s, truth->regressions[i].time_s, options.window_s);
    EXPECT_EQ(regress.changes[i].gpus, truth->regressions[i].gpus);
  }
  ASSERT_EQ(regress.precision_shifts.size(), truth->precision_shifts.size());
  for (size_t i = 0; i < regress.precision_shifts.size(); ++i) {
    const auto& shift = regress.precision_shifts[i];
    EXPECT_EQ(shift.job_id, truth->precision_shifts[i].job_id);
    EXPECT_NEAR(shift.time_s, truth->precision_shifts[i].time_s, options.window_s);
    EXPECT_EQ(shift.gpus, truth->precision_shifts[i].gpus);
    ASSERT_EQ(shift.pipes.size(), 2u);  // hmma and imma; dfma never moved
    EXPECT_EQ(shift.pipes[0].pipe, "hmma");
    EXPECT_NEAR(shift.pipes[0].before, 0.97, 1e-9);
    EXPECT_NEAR(shift.pipes[0].after, 0.30, 1e-9);
  }
  ASSERT_EQ(regress.run_changes.size(), truth->run_regressions.size());
  for (size_t i = 0; i < regress.run_changes.size(); ++i) {
    EXPECT_EQ(regress.run_changes[i].job_name, truth->run_regressions[i].job_name);
    EXPECT_EQ(regress.run_changes[i].first_job_id, truth->run_regressions[i].first_job_id);
    EXPECT_NEAR(regress.run_changes[i].ratio, truth->run_regressions[i].ratio, 0.08);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, FleetSim, ::testing::Values(1, 2, 3, 4, 5));

// `ofu report --store` streams the rows (ReadStoreReport); on the simulated
// fleet its report is the whole history's to the byte when it reads every
// window, and the same to rounding (percentiles within half a histogram
// bin) when it reads the store's hourly rollups where it can: over
// everything, one job, and a range that cuts jobs and hours.
TEST(FleetSimStore, StreamedReportIsTheWholeHistoryReport) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("ofu-fleet-streamed-{}", ::getpid());
  simulation::FleetSimOptions options;
  options.seed = 7;
  auto truth = simulation::SimulateFleet(options, dir.string());
  ASSERT_TRUE(truth.ok()) << truth.error().message;
  auto specs = GpuSpecDatabase::Embedded();
  ASSERT_TRUE(specs.ok());
  history::HistoryQuery job, range;
  job.job_id = truth->jobs[3].job_id;
  range.since_s = options.start_s + 50 * options.window_s;
  range.until_s = truth->end_s - 70 * options.window_s;
  for (const history::HistoryQuery& query : {history::HistoryQuery{}, job, range}) {
    const std::string what = query.job_id.value_or(query.since_s ? "range" : "all");
    auto history = history::ReadHistory(truth->store, query);
    ASSERT_TRUE(history.ok()) << history.error().message;
    auto streamed = analysis::ReadStoreReport(truth->store, query, *specs, {.rollups = false});
    ASSERT_TRUE(streamed.ok()) << streamed.error().message;
    EXPECT_EQ(streamed->rows, static_cast<std::int64_t>(history->windows.size()));
    const analysis::Report whole = analysis::BuildStoreReport(*history, *specs);
    ASSERT_FALSE(whole.jobs.empty());
    EXPECT_EQ(render::RenderJson(streamed->report), render::RenderJson(whole)) << what;
    EXPECT_EQ(render::RenderCsv(streamed->report), render::RenderCsv(whole)) << what;

    auto summed = analysis::ReadStoreReport(truth->store, query, *specs);
    ASSERT_TRUE(summed.ok()) << summed.error().message;
    EXPECT_GT(summed->rollups, 0) << what;
    EXPECT_EQ(summed->rows, streamed->rows) << what;
    ofu::testing::ExpectSameReport(nlohmann::json::parse(render::RenderJson(summed->report)),
                                   nlohmann::json::parse(render::RenderJson(whole)), what);
  }
  fs::remove_all(dir);
}

// --openmetrics-slice: the same samples as metrics.om, split into files of
// one 2 h-aligned slice each (promtool reads each file once), each a whole
// OpenMetrics document. Checked by hand-countable facts of the layout: 24
// jobs of 120 one-minute windows on 4 groups are 6 slots, 720 windows, 12 h
// from 1,790,000,000 s (= 248,611 × 7200 + 4,800), so samples 0..720 span
// 1,790,000,000 to 1,790,043,200 s: 7 slices, the first from 1,789,999,200.
TEST(FleetSimSlices, SlicesHoldMetricsOmSamplesOncePerAlignedSlice) {
  const fs::path whole = fs::temp_directory_path() / fmt::format("ofu-fleet-whole-{}", ::getpid());
  const fs::path sliced = fs::temp_directory_path() / fmt::format("ofu-fleet-sliced-{}", ::getpid());
  simulation::FleetSimOptions options;
  options.seed = 3;
  auto tw = simulation::SimulateFleet(options, whole.string());
  options.openmetrics_slice_s = 7200;
  auto ts = simulation::SimulateFleet(options, sliced.string());
  ASSERT_TRUE(tw.ok() && ts.ok());
  ASSERT_EQ(tw->openmetrics.size(), 1u);
  ASSERT_EQ(ts->openmetrics.size(), 7u);
  EXPECT_EQ(fs::path(ts->openmetrics.front()).filename(), "metrics-1789999200.om");
  EXPECT_EQ(fs::path(ts->openmetrics.back()).filename(), "metrics-1790042400.om");
  EXPECT_FALSE(fs::exists(sliced / "metrics.om"));

  // Sample lines (not # lines), by text; each slice's timestamps in its slice.
  const auto samples = [](const std::string& text, std::vector<std::string>& out) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line[0] != '#') out.push_back(line);
    }
  };
  std::vector<std::string> from_whole, from_slices;
  samples(Slurp(tw->openmetrics.front()), from_whole);
  for (const std::string& file : ts->openmetrics) {
    const std::string text = Slurp(file);
    EXPECT_TRUE(text.ends_with("# EOF\n")) << file;
    EXPECT_NE(text.find("# TYPE ofu_utilized_seconds counter"), std::string::npos) << file;
    const double slice_start = std::stod(fs::path(file).stem().string().substr(std::string("metrics-").size()));
    std::vector<std::string> lines;
    samples(text, lines);
    ASSERT_FALSE(lines.empty()) << file;
    for (const std::string& line : lines) {
      const double t = std::stod(line.substr(line.rfind(' ') + 1));
      ASSERT_GE(t, slice_start) << file << ": " << line;
      ASSERT_LT(t, slice_start + 7200) << file << ": " << line;
    }
    from_slices.insert(from_slices.end(), lines.begin(), lines.end());
  }
  EXPECT_EQ(from_slices.size(), from_whole.size());
  std::sort(from_whole.begin(), from_whole.end());
  std::sort(from_slices.begin(), from_slices.end());
  EXPECT_EQ(from_slices, from_whole);
  // The plan is the same either way.
  EXPECT_EQ(render::GroundTruthJson(*ts), render::GroundTruthJson(*tw));
  fs::remove_all(whole);
  fs::remove_all(sliced);
  auto bad = simulation::SimulateFleet({.window_s = 60, .openmetrics_slice_s = 30}, sliced.string());
  EXPECT_FALSE(bad.ok());
}

TEST(FleetSimDeterminism, SameSeedSameFilesAndEverythingSaysSynthetic) {
  const fs::path a = fs::temp_directory_path() / fmt::format("ofu-fleet-det-a-{}", ::getpid());
  const fs::path b = fs::temp_directory_path() / fmt::format("ofu-fleet-det-b-{}", ::getpid());
  simulation::FleetSimOptions options;
  options.gpus = 8;
  options.jobs = 12;
  auto ta = simulation::SimulateFleet(options, a.string());
  auto tb = simulation::SimulateFleet(options, b.string());
  ASSERT_TRUE(ta.ok() && tb.ok());
  for (const char* file : {"metrics.om", "mfu.csv"}) {
    const std::string text = Slurp((a / file).string());
    EXPECT_EQ(text, Slurp((b / file).string())) << file;
    EXPECT_NE(text.find("SYNTHETIC"), std::string::npos) << file;
  }
  for (const auto& entry : fs::directory_iterator(a / "corrections")) {
    const std::string text = Slurp(entry.path().string());
    EXPECT_EQ(text, Slurp((b / "corrections" / entry.path().filename()).string())) << entry.path();
    EXPECT_NE(text.find("SYNTHETIC"), std::string::npos) << entry.path();
  }
  const std::string ground_truth = render::GroundTruthJson(*ta);
  EXPECT_EQ(ground_truth, render::GroundTruthJson(*tb));
  EXPECT_NE(ground_truth.find("SYNTHETIC"), std::string::npos);
  fs::remove_all(a);
  fs::remove_all(b);
  auto bad = simulation::SimulateFleet({.gpus = 5, .gpus_per_job = 4}, a.string());
  EXPECT_FALSE(bad.ok());
}

}  // namespace
