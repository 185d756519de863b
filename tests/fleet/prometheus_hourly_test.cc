// Issue 40: a month from hourly rollups. The rollups' rules
// (`ofu rules hourly`, deploy/prometheus/ofu-hourly-rules.yml) backfilled by
// promtool over a SYNTHETIC fleet from ofu-fleet-sim in the Debian
// Prometheus; `report` and `reconcile` read at --resolution hourly must give
// the raw path's overall, per-GPU and per-job OFU to 1e-9 relative. The
// hand values of the rules themselves are in
// deploy/prometheus/tests/hourly-rules.test.yml (promtool test rules); the
// coverage rule and the merge of two stretches are checked by hand here.
#include <cmath>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofu/history/prometheus_hourly.h"
#include "support/backfilled_prometheus.h"
#include "support/background_process.h"
#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ofu::history::AddTotals;
using ofu::history::CoverageOfEvaluations;
using ofu::history::HistoryTotals;
using ofu::history::HourlyStep;
using ofu::testing::BackgroundProcess;
using ofu::testing::RunShell;

TEST(HourlyRollups, TheStepDividesTheHourAndStaysBelowTheScrapeInterval) {
  EXPECT_EQ(*HourlyStep(15), 12);  // 0.9 x 15 = 13.5; 13 does not divide 3600
  EXPECT_EQ(*HourlyStep(60), 50);  // 54, 53, 52, 51 do not
  EXPECT_EQ(*HourlyStep(30), 25);  // 27, 26 do not
  EXPECT_EQ(*HourlyStep(10), 9);
  EXPECT_EQ(*HourlyStep(7200), 3600);
  EXPECT_FALSE(HourlyStep(1).ok());
}

TEST(HourlyRollups, CoverageTakesWholeHoursInTheRangeAndLeavesTheRestToTheRawCounters) {
  // Rules evaluated at 977.5 s past each hour (a group's offset), S = 50:
  // each covers the hour ending at the step before, (k·3600 + 950 − 3600, k·3600 + 950].
  const double t0 = 1790000000;  // 800 s past an hour
  std::vector<std::pair<double, double>> evals;
  for (int k = 0; k < 6; ++k) evals.emplace_back(t0 + 177.5 + 3600 * k, 50);
  // Range (t0, t0 + 4 h]: the hours ending t0+150 (starts before the range)
  // and t0+18150 (ends after it) are out; t0+3750 … t0+14550 are in.
  auto coverage = CoverageOfEvaluations(evals, t0, t0 + 14400);
  ASSERT_EQ(coverage.runs.size(), 1u);
  EXPECT_EQ(coverage.step_s, 50);
  EXPECT_EQ(coverage.runs[0].hours, 3);
  EXPECT_DOUBLE_EQ(coverage.runs[0].after_s, t0 + 150);
  EXPECT_DOUBLE_EQ(coverage.runs[0].until_s, t0 + 10950);
  EXPECT_DOUBLE_EQ(coverage.runs[0].first_eval_s, t0 + 3777.5);
  EXPECT_DOUBLE_EQ(coverage.runs[0].last_eval_s, t0 + 10977.5);
  ASSERT_EQ(coverage.raw_pieces.size(), 2u);
  EXPECT_DOUBLE_EQ(coverage.raw_pieces[0].first, t0);
  EXPECT_DOUBLE_EQ(coverage.raw_pieces[0].second, t0 + 150);
  EXPECT_DOUBLE_EQ(coverage.raw_pieces[1].first, t0 + 10950);
  EXPECT_DOUBLE_EQ(coverage.raw_pieces[1].second, t0 + 14400);

  // An hour the rules missed (the server was down) splits the run; the raw
  // counters answer it.
  evals.erase(evals.begin() + 2);
  coverage = CoverageOfEvaluations(evals, t0, t0 + 14400);
  ASSERT_EQ(coverage.runs.size(), 2u);
  EXPECT_EQ(coverage.hours(), 2);
  ASSERT_EQ(coverage.raw_pieces.size(), 3u);
  EXPECT_DOUBLE_EQ(coverage.raw_pieces[1].first, t0 + 3750);
  EXPECT_DOUBLE_EQ(coverage.raw_pieces[1].second, t0 + 7350);

  // No whole hour: everything raw.
  coverage = CoverageOfEvaluations(evals, t0, t0 + 1800);
  EXPECT_TRUE(coverage.runs.empty());
  ASSERT_EQ(coverage.raw_pieces.size(), 1u);
}

TEST(HourlyRollups, TwoStretchesAddByUuidAndJoinAJobsIntervals) {
  using ofu::history::StoredGpu;
  using ofu::history::StoredJob;
  const auto gpu = [](std::int64_t id, const char* uuid) {
    StoredGpu g;
    g.id = id;
    g.identity.key = uuid;
    return g;
  };
  const auto job = [](std::int64_t gpu_id, double start_s, double end_s) {
    StoredJob j;
    j.gpu_id = gpu_id;
    j.job_id = "j1";
    j.start_s = start_s;
    j.end_s = end_s;
    return j;
  };
  HistoryTotals hourly, raw;
  hourly.history.gpus = {gpu(1, "GPU-b")};
  hourly.of_gpu[1].counters.Set(ofu::kCounterObserved, 3600);
  hourly.of_gpu[1].counters.Set(ofu::kCounterUtilized, 900);
  hourly.of_job[{"j1", 1}].counters.Set(ofu::kCounterObserved, 3600);
  hourly.history.jobs = {job(1, 1000, 4600)};
  hourly.window_s = 3600;
  // The raw stretch knows GPU-a too; its ids are its own.
  raw.history.gpus = {gpu(1, "GPU-a"), gpu(2, "GPU-b")};
  raw.of_gpu[1].counters.Set(ofu::kCounterObserved, 60);
  raw.of_gpu[2].counters.Set(ofu::kCounterObserved, 120);
  raw.of_gpu[2].counters.Set(ofu::kCounterUtilized, 60);
  raw.of_job[{"j1", 2}].counters.Set(ofu::kCounterObserved, 120);
  raw.history.jobs = {job(2, 4600, 4720)};
  raw.window_s = 60;

  HistoryTotals total;
  AddTotals(total, std::move(hourly), 5000);
  AddTotals(total, std::move(raw), 5000);
  ASSERT_EQ(total.history.gpus.size(), 2u);
  EXPECT_EQ(total.history.gpus[0].key(), "GPU-a");
  EXPECT_EQ(total.history.gpus[1].key(), "GPU-b");
  EXPECT_EQ(total.history.gpus[1].id, 2);
  EXPECT_DOUBLE_EQ(total.of_gpu.at(2).counters.observed_s(), 3720);
  EXPECT_DOUBLE_EQ(total.of_gpu.at(2).counters.utilized_s(), 960);
  EXPECT_DOUBLE_EQ(total.of_gpu.at(2).span_s, 3720);
  EXPECT_DOUBLE_EQ(total.of_gpu.at(2).end_s, 5000);
  EXPECT_DOUBLE_EQ(total.of_gpu.at(1).counters.observed_s(), 60);
  EXPECT_DOUBLE_EQ((total.of_job.at({"j1", 2}).counters.observed_s()), 3720);
  ASSERT_EQ(total.history.jobs.size(), 1u);  // (1000, 4600] and (4600, 4720] meet
  EXPECT_DOUBLE_EQ(total.history.jobs[0].start_s, 1000);
  EXPECT_DOUBLE_EQ(*total.history.jobs[0].end_s, 4720);
  EXPECT_EQ(total.window_s, 60);
}

class PrometheusHourly : public ofu::testing::CliTest {
 protected:
  json RunJson(const std::string& args) {
    auto result = RunShell(fmt::format("'{}' {} --format json", OFU_BINARY, args), dir_);
    EXPECT_EQ(result.exit_code, 0) << args << "\n" << result.err;
    return json::parse(result.out, nullptr, false);
  }
  static void ExpectSameOfu(const json& raw, const json& hourly, const std::string& what) {
    ASSERT_TRUE(raw.is_number()) << what;
    ASSERT_TRUE(hourly.is_number()) << what;
    EXPECT_LE(std::abs(raw.get<double>() - hourly.get<double>()), 1e-9 * std::abs(raw.get<double>())) << what;
  }
};

TEST_F(PrometheusHourly, AFleetReadFromHourlyRollupsGivesTheRawPathsOfuToOnePartInABillion) {
  if (!ofu::testing::ProgramFound(OFU_PROMETHEUS) || !ofu::testing::ProgramFound(OFU_PROMTOOL)) {
    GTEST_SKIP() << "no prometheus or promtool binary (scripts/install-deps.sh installs the Debian packages)";
  }
  // 4 GPUs, 12 jobs of 40 one-minute scrapes: 4 hours from 800 s past an hour.
  auto sim = RunShell(fmt::format("'{}' --out '{}' --gpus 4 --gpus-per-job 2 --jobs 12 --windows-per-job 40 --seed 3",
                                  OFU_FLEET_SIM, (dir_ / "fleet").string()),
                      dir_);
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const json truth = json::parse(ofu::testing::Slurp(dir_ / "fleet" / "ground_truth.json"));
  BackgroundProcess prometheus;
  int port = 0;
  ASSERT_TRUE(ofu::testing::ServeBackfilled(prometheus, dir_, dir_ / "fleet" / "metrics.om", port));
  const double start = truth["options"]["start_s"].get<double>(), end = truth["end_s"].get<double>();
  const std::string range = fmt::format("--since {:.0f} --until {:.0f}", start - 1, end + 1);
  const std::string prom = fmt::format("--prometheus http://127.0.0.1:{}", port);

  // Before the rules: auto reads raw and says so; hourly refuses.
  const json before = RunJson(fmt::format("report {} {}", prom, range));
  ASSERT_FALSE(before.is_discarded());
  EXPECT_EQ(before["notes"][0], "resolution: raw counters (no hourly rollups in the range)");
  auto refused = RunShell(fmt::format("'{}' report {} {} --resolution hourly", OFU_BINARY, prom, range), dir_);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("ofu-hourly-rules.yml"), std::string::npos) << refused.err;

  // The rules for 60 s scrapes, backfilled over the fleet; the server restarted to read them.
  auto rules = RunShell(fmt::format("'{}' rules hourly --scrape-interval 60", OFU_BINARY), dir_);
  ASSERT_EQ(rules.exit_code, 0) << rules.err;
  const fs::path rule_file = Write("hourly.yml", rules.out);
  std::string backfill;
  ASSERT_TRUE(ofu::testing::BackfillRules(dir_, port, rule_file, start, end + 3600, &backfill));
  ASSERT_NE(backfill.find("uuid_job_id:ofu_observed_seconds:increase1h"), std::string::npos) << backfill;
  prometheus.Stop();
  ASSERT_TRUE(ofu::testing::StartPrometheus(prometheus, dir_, port));
  // Ready is not readable: wait until the server answers with the rule
  // blocks, as the VictoriaMetrics test waits for both servers.
  ASSERT_TRUE(ofu::testing::SeriesVisible(port, ofu::history::kHourlyMarkerName, end + 2 * 3600,
                                          end + 2 * 3600 - start + 1,
                                          "Prometheus (restarted on promtool's rule blocks)", dir_ / "prometheus.log"))
      << backfill;
  const std::string prom2 = fmt::format("--prometheus http://127.0.0.1:{}", port);

  const json raw = RunJson(fmt::format("report {} {} --resolution raw", prom2, range));
  const json hourly = RunJson(fmt::format("report {} {} --resolution hourly", prom2, range));
  ASSERT_FALSE(raw.is_discarded());
  ASSERT_FALSE(hourly.is_discarded());
  // Three whole hours of the 4 h range; the partial hours at the ends are raw.
  EXPECT_EQ(hourly["notes"][0].get<std::string>().rfind("resolution: hourly rollups for 3 hours (1 run, sum step 50 s)",
                                                        0),
            0u)
      << hourly["notes"];
  ExpectSameOfu(raw["overall"]["ofu"], hourly["overall"]["ofu"], "overall");
  EXPECT_EQ(raw["overall"]["seconds"], hourly["overall"]["seconds"]);
  ASSERT_EQ(raw["gpus"].size(), 4u);
  ASSERT_EQ(hourly["gpus"].size(), raw["gpus"].size());
  for (size_t i = 0; i < raw["gpus"].size(); ++i) {
    EXPECT_EQ(hourly["gpus"][i]["uuid"], raw["gpus"][i]["uuid"]);
    ExpectSameOfu(raw["gpus"][i]["ofu"], hourly["gpus"][i]["ofu"], raw["gpus"][i]["uuid"].get<std::string>());
  }
  ASSERT_EQ(raw["jobs"].size(), truth["jobs"].size());
  ASSERT_EQ(hourly["jobs"].size(), raw["jobs"].size());
  for (size_t i = 0; i < raw["jobs"].size(); ++i) {
    EXPECT_EQ(hourly["jobs"][i]["job_id"], raw["jobs"][i]["job_id"]);
    EXPECT_EQ(hourly["jobs"][i]["gpus"], raw["jobs"][i]["gpus"]);
    EXPECT_EQ(hourly["jobs"][i]["user"], raw["jobs"][i]["user"]);
    ExpectSameOfu(raw["jobs"][i]["ofu"], hourly["jobs"][i]["ofu"], raw["jobs"][i]["job_id"].get<std::string>());
  }
  // auto takes the rollups now.
  const json automatic = RunJson(fmt::format("report {} {}", prom2, range));
  EXPECT_EQ(automatic["notes"][0], hourly["notes"][0]);

  // One job, and reconcile, alike.
  const std::string job = raw["jobs"][5]["job_id"];
  const json one_raw = RunJson(fmt::format("report {} {} --job {} --resolution raw", prom2, range, job));
  const json one_hourly = RunJson(fmt::format("report {} {} --job {} --resolution hourly", prom2, range, job));
  ExpectSameOfu(one_raw["overall"]["ofu"], one_hourly["overall"]["ofu"], "job " + job);
  const std::string inputs = fmt::format("--mfu '{}' --corrections '{}'", (dir_ / "fleet" / "mfu.csv").string(),
                                         (dir_ / "fleet" / "corrections").string());
  const json r_raw = RunJson(fmt::format("reconcile {} {} {} --resolution raw", prom2, inputs, range));
  const json r_hourly = RunJson(fmt::format("reconcile {} {} {} --resolution hourly", prom2, inputs, range));
  ASSERT_EQ(r_hourly["jobs"].size(), r_raw["jobs"].size());
  for (size_t i = 0; i < r_raw["jobs"].size(); ++i) {
    EXPECT_EQ(r_hourly["jobs"][i]["flag"], r_raw["jobs"][i]["flag"]) << r_raw["jobs"][i]["job_id"];
    ExpectSameOfu(r_raw["jobs"][i]["ofu"], r_hourly["jobs"][i]["ofu"], r_raw["jobs"][i]["job_id"].get<std::string>());
  }
  prometheus.Stop();
}

}  // namespace
