// Issue 15, "Done when" 2: counter resets and scrape gaps through the
// Prometheus path, with hand values. One GPU, scraped every 60 s, with a
// 240 s scrape gap (the agent kept counting) and an agent restart (its
// counters began again at 0), backfilled into the Debian Prometheus; both
// of ofu's paths (the server's sums and every scrape) must give the hand
// values.
//
// Scrapes at T0 + 60 k, k = 0..3, 7, 8, 9 (none at k = 4..6):
//   observed  0  60 120 180 | 300 |  30  90    (the restart is between k = 7 and 8)
//   utilized  0  30  60  90 | 120 |  15  45
// Rows: 60/30, 60/30, 60/30, then the gap row (k = 3..7) 120/30, the
// restart row 30/15 (the new value is the increase), 60/30:
//   observed 390 s, utilized 165 s, OFU 165 / 390.
// The GPU's info names the clock its OFU used (issue 38): the measured clock
// model before the gap, exact cycles after it; the report names both.
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofu/analysis/store_report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/history/prometheus_totals.h"
#include "ofu/render/report_output.h"
#include "support/backfilled_prometheus.h"
#include "support/background_process.h"
#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ofu::testing::BackgroundProcess;
using ofu::testing::RunShell;

constexpr double kT0 = 1790000000;
constexpr int kScrapes[] = {0, 1, 2, 3, 7, 8, 9};
constexpr double kObserved[] = {0, 60, 120, 180, 300, 30, 90};
constexpr double kUtilized[] = {0, 30, 60, 90, 120, 15, 45};

std::string OpenMetrics() {
  const std::string gpu = "{uuid=\"GPU-hand\",gpu=\"0\",instance=\"node-1\"}";
  std::string om;
  const auto family = [&](const std::string& name, const double* values) {
    om += fmt::format("# TYPE {} counter\n", name);
    for (int i = 0; i < 7; ++i) om += fmt::format("{}_total{} {} {}\n", name, gpu, values[i], kT0 + 60 * kScrapes[i]);
  };
  family("ofu_observed_seconds", kObserved);
  family("ofu_busy_seconds", kObserved);
  family("ofu_utilized_seconds", kUtilized);
  family("ofu_busy_utilized_seconds", kUtilized);
  family("ofu_tensor_active_seconds", kUtilized);
  om += "# TYPE ofu_gpu_info gauge\n";
  om += "# TYPE ofu_gpu_job_info gauge\n";
  std::string info, job;
  for (int k : kScrapes) {
    info += fmt::format(
        "ofu_gpu_info{{uuid=\"GPU-hand\",gpu=\"0\",instance=\"node-1\",model=\"NVIDIA H100 80GB HBM3\","
        "sku=\"h100-sxm5\",architecture=\"hopper\",clock_source=\"{}\"}} 1 {}\n",
        k <= 3 ? "measured-model" : "exact-cycles", kT0 + 60 * k);
    job += fmt::format(
        "ofu_gpu_job_info{{uuid=\"GPU-hand\",job_id=\"j1\",user=\"u\",job_name=\"hand\",scheduler=\"static\"}} 1 {}\n",
        kT0 + 60 * k);
  }
  // Families must not interleave: put each family's samples under its TYPE.
  const size_t info_at = om.find("# TYPE ofu_gpu_job_info gauge\n");
  om.insert(info_at, info);
  return om + job + "# EOF\n";
}

class PrometheusResets : public ofu::testing::CliTest {
 protected:
  // Backfills `om` into a Debian Prometheus started for the test; its port.
  int Serve(const std::string& om) {
    int port = 0;
    EXPECT_TRUE(ofu::testing::ServeBackfilled(prometheus_, dir_, Write("hand.om", om), port));
    return port;
  }

  void TearDown() override {
    prometheus_.Stop();
    CliTest::TearDown();
  }

  BackgroundProcess prometheus_;
};

TEST_F(PrometheusResets, ResetsAndGapsGiveTheHandValuesOnBothPaths) {
  if (!ofu::testing::ProgramFound(OFU_PROMETHEUS) || !ofu::testing::ProgramFound(OFU_PROMTOOL)) {
    GTEST_SKIP() << "no prometheus or promtool binary (scripts/install-deps.sh installs the Debian packages)";
  }
  const int port = Serve(OpenMetrics());
  ASSERT_FALSE(HasFailure());

  const std::string args =
      fmt::format("report --prometheus http://127.0.0.1:{} --since {:.0f} --until {:.0f} --format json", port, kT0 - 1,
                  kT0 + 60 * 9 + 1);
  for (const std::string extra : {"", " --per-window"}) {
    auto result = RunShell(fmt::format("'{}' {}{}", OFU_BINARY, args, extra), dir_);
    ASSERT_EQ(result.exit_code, 0) << extra << result.err;
    const json report = json::parse(result.out);
    EXPECT_EQ(report["source"]["method"], extra.empty() ? "counters" : "windows");
    EXPECT_NEAR(report["overall"]["seconds"].get<double>(), 390, 1e-9) << extra;
    EXPECT_NEAR(report["overall"]["ofu"].get<double>(), 165.0 / 390.0, 1e-12) << extra;
    ASSERT_EQ(report["jobs"].size(), 1u) << extra;
    EXPECT_EQ(report["jobs"][0]["job_id"], "j1");
    EXPECT_NEAR(report["jobs"][0]["ofu"].get<double>(), 165.0 / 390.0, 1e-12) << extra;
    EXPECT_NEAR(report["jobs"][0]["observed_hours"].get<double>(), 390.0 / 3600, 1e-12) << extra;
    EXPECT_EQ(report["gpus"][0]["clock_source"], "exact-cycles+measured-model") << extra;
    EXPECT_EQ(report["overall"]["clock_source"], "exact-cycles+measured-model") << extra;
  }
}

}  // namespace

// Two GPUs scraped every 60 s at T0 + 60 k, k = 0..9, with no reset; each
// scrape adds 60 s observed. GPU-a runs job j2 at every scrape, utilized +30
// a scrape; GPU-b runs job j3, utilized +15 a scrape, but j3's info is
// missing from scrape k = 5. The first scrape has none before it: its
// increase does not count. By hand:
//   GPU-a: observed 9 × 60 = 540, utilized 270; j2 the same (OFU 0.5).
//   GPU-b: observed 540, utilized 135; j3 only the scrapes k = 1..4, 6..9:
//          observed 480, utilized 120 (OFU 0.25).
// GPU-a's span telescopes (its values at the edges); GPU-b's job does not,
// so GPU-b goes to the step sums; both must give the hand values.
TEST_F(PrometheusResets, AJobMissingFromAScrapeLeavesItsGpuToTheStepSums) {
  if (!ofu::testing::ProgramFound(OFU_PROMETHEUS) || !ofu::testing::ProgramFound(OFU_PROMTOOL)) {
    GTEST_SKIP() << "no prometheus or promtool binary (scripts/install-deps.sh installs the Debian packages)";
  }
  struct Gpu {
    const char* uuid;
    const char* job;
    double utilized_per_scrape;
    int job_missing_at;
  };
  constexpr Gpu kGpus[] = {{"GPU-a", "j2", 30, -1}, {"GPU-b", "j3", 15, 5}};
  std::string om;
  const auto family = [&](const std::string& name, const std::string& type, const auto& line) {
    om += fmt::format("# TYPE {} {}\n", name, type);
    for (const Gpu& gpu : kGpus) {
      for (int k = 0; k < 10; ++k) om += line(gpu, k);
    }
  };
  const auto labels = [](const Gpu& gpu) {
    return fmt::format("uuid=\"{}\",gpu=\"0\",instance=\"n-{}\"", gpu.uuid, gpu.uuid);
  };
  for (const char* name : {"ofu_observed_seconds", "ofu_busy_seconds"}) {
    family(name, "counter", [&](const Gpu& gpu, int k) {
      return fmt::format("{}_total{{{}}} {} {}\n", name, labels(gpu), 60 * k, kT0 + 60 * k);
    });
  }
  for (const char* name : {"ofu_utilized_seconds", "ofu_busy_utilized_seconds", "ofu_tensor_active_seconds"}) {
    family(name, "counter", [&](const Gpu& gpu, int k) {
      return fmt::format("{}_total{{{}}} {} {}\n", name, labels(gpu), gpu.utilized_per_scrape * k, kT0 + 60 * k);
    });
  }
  family("ofu_gpu_info", "gauge", [&](const Gpu& gpu, int k) {
    return fmt::format(
        "ofu_gpu_info{{{},model=\"NVIDIA H100 80GB HBM3\",sku=\"h100-sxm5\",architecture=\"hopper\"}} 1 {}\n",
        labels(gpu), kT0 + 60 * k);
  });
  family("ofu_gpu_job_info", "gauge", [&](const Gpu& gpu, int k) -> std::string {
    if (k == gpu.job_missing_at) return "";
    return fmt::format(
        "ofu_gpu_job_info{{uuid=\"{}\",job_id=\"{}\",user=\"u\",job_name=\"hand\",scheduler=\"static\"}} 1 {}\n",
        gpu.uuid, gpu.job, kT0 + 60 * k);
  });
  const int port = Serve(om + "# EOF\n");
  ASSERT_FALSE(HasFailure());

  auto result = RunShell(fmt::format("'{}' report --prometheus http://127.0.0.1:{} --since {:.0f} --until {:.0f} "
                                     "--format json",
                                     OFU_BINARY, port, kT0 - 1, kT0 + 60 * 9 + 1),
                         dir_);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto expect_hand_values = [](const json& report, const std::string& how) {
    EXPECT_EQ(report["source"]["method"], "counters") << how;
    ASSERT_EQ(report["gpus"].size(), 2u) << how;
    EXPECT_EQ(report["gpus"][0]["uuid"], "GPU-a") << how;
    EXPECT_NEAR(report["gpus"][0]["seconds"].get<double>(), 540, 1e-9) << how;
    EXPECT_NEAR(report["gpus"][0]["ofu"].get<double>(), 0.5, 1e-12) << how;
    EXPECT_EQ(report["gpus"][1]["uuid"], "GPU-b") << how;
    EXPECT_NEAR(report["gpus"][1]["seconds"].get<double>(), 540, 1e-9) << how;
    EXPECT_NEAR(report["gpus"][1]["ofu"].get<double>(), 0.25, 1e-12) << how;
    ASSERT_EQ(report["jobs"].size(), 2u) << how;
    EXPECT_EQ(report["jobs"][0]["job_id"], "j2") << how;
    EXPECT_NEAR(report["jobs"][0]["observed_hours"].get<double>(), 540.0 / 3600, 1e-12) << how;
    EXPECT_NEAR(report["jobs"][0]["ofu"].get<double>(), 0.5, 1e-12) << how;
    EXPECT_EQ(report["jobs"][1]["job_id"], "j3") << how;
    EXPECT_NEAR(report["jobs"][1]["observed_hours"].get<double>(), 480.0 / 3600, 1e-12) << how;
    EXPECT_NEAR(report["jobs"][1]["ofu"].get<double>(), 0.25, 1e-12) << how;
    // Which path answered for which GPU.
    EXPECT_NE(report.dump().find("1 of 2 GPUs from their values at the edges of their spans, 1 summed"),
              std::string::npos)
        << how << report["notes"].dump();
  };
  expect_hand_values(json::parse(result.out), "ofu report");

  // The spans found at coarse steps of 300 s instead of 60 s (at most 2
  // over the 542 s range: 60 × ceil(271 / 60)), as a week's range has them:
  // the same hand values.
  ofu::history::PrometheusTotalsOptions coarse;
  coarse.max_coarse_steps = 2;
  ofu::history::HistoryQuery query;
  query.since_s = kT0 - 1;
  query.until_s = kT0 + 60 * 9 + 1;
  auto totals = ofu::history::ReadPrometheusTotals(fmt::format("http://127.0.0.1:{}", port), query, coarse);
  ASSERT_TRUE(totals.ok()) << totals.error().message;
  auto specs = ofu::GpuSpecDatabase::Embedded();
  ASSERT_TRUE(specs.ok());
  expect_hand_values(json::parse(ofu::render::RenderJson(ofu::analysis::BuildTotalsReport(*totals, *specs))),
                     "coarse steps of 300 s");

  // Windows of 200 s (--step; T0 is a multiple of 200): the server reads
  // each counter at T0, T0 + 200 and T0 + 400 (the scrapes k = 0, 3 and 6,
  // the last at or before each step); k = 7..9 are after the last step.
  //   GPU-a: 2 windows of observed 180, utilized 90: 360 s, OFU 0.5; j2 both.
  //   GPU-b: 360 s, utilized 45 + 45: OFU 0.25. j3 holds a window only if
  //   it was seen at every scrape of it: the first, not the one holding k = 5:
  //   observed 180, utilized 45 (OFU 0.25).
  result = RunShell(fmt::format("'{}' report --prometheus http://127.0.0.1:{} --since {:.0f} --until {:.0f} "
                                "--per-window --step 200 --format json",
                                OFU_BINARY, port, kT0 - 1, kT0 + 60 * 9 + 1),
                    dir_);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json stepped = json::parse(result.out);
  EXPECT_EQ(stepped["source"]["method"], "windows");
  EXPECT_EQ(stepped["source"]["step_s"], 200);
  ASSERT_EQ(stepped["gpus"].size(), 2u);
  EXPECT_NEAR(stepped["gpus"][0]["seconds"].get<double>(), 360, 1e-9);
  EXPECT_NEAR(stepped["gpus"][0]["ofu"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(stepped["gpus"][1]["seconds"].get<double>(), 360, 1e-9);
  EXPECT_NEAR(stepped["gpus"][1]["ofu"].get<double>(), 0.25, 1e-12);
  ASSERT_EQ(stepped["jobs"].size(), 2u);
  EXPECT_EQ(stepped["jobs"][0]["job_id"], "j2");
  EXPECT_NEAR(stepped["jobs"][0]["observed_hours"].get<double>(), 360.0 / 3600, 1e-12);
  EXPECT_NEAR(stepped["jobs"][0]["ofu"].get<double>(), 0.5, 1e-12);
  EXPECT_EQ(stepped["jobs"][1]["job_id"], "j3");
  EXPECT_NEAR(stepped["jobs"][1]["observed_hours"].get<double>(), 180.0 / 3600, 1e-12);
  EXPECT_NEAR(stepped["jobs"][1]["ofu"].get<double>(), 0.25, 1e-12);
}
