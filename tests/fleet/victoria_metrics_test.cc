// Issue 40, "Done when" 3: every fleet command against VictoriaMetrics (the
// Debian package, 1.79) gives Prometheus's answers. The same SYNTHETIC fleet
// from ofu-fleet-sim is backfilled into Prometheus (promtool) and imported
// into VictoriaMetrics (its Prometheus-text import API); the hourly rollups'
// rules are backfilled by promtool into one and replayed by vmalert into the
// other. `report` (the server's sums, every window, hourly rollups),
// `reconcile` and `regress` must agree field by field, numbers to 1e-8
// relative: VictoriaMetrics keeps about 12 significant digits of a value
// (docs/prometheus.md, "VictoriaMetrics").
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
#include "support/json_compare.h"
#include "support/simulated_fleet.h"
#include "support/victoria_metrics.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ofu::testing::BackgroundProcess;
using ofu::testing::RunShell;

class VictoriaMetrics : public ofu::testing::CliTest {
 protected:
  json RunJson(const std::string& args) { return ofu::testing::OfuJson(dir_, args); }
  // The command on both servers; their answers must agree.
  void ExpectSameAnswers(const std::string& command, const std::string& flags) {
    const json on_prometheus = RunJson(fmt::format("{} --prometheus {} {}", command, prometheus_url_, flags));
    const json on_vm = RunJson(fmt::format("{} --prometheus {} {}", command, vm_url_, flags));
    ASSERT_FALSE(on_prometheus.is_discarded()) << command << " " << flags;
    ASSERT_FALSE(on_vm.is_discarded()) << command << " " << flags;
    std::vector<std::string> differences;
    ofu::testing::CompareJson(on_prometheus, on_vm, command, differences);
    EXPECT_TRUE(differences.empty()) << command << " " << flags << ":\n"
                                     << fmt::format("{}", fmt::join(differences, "\n"));
  }
  std::string prometheus_url_, vm_url_;
};

TEST_F(VictoriaMetrics, EveryFleetCommandGivesPrometheussAnswers) {
  if (const std::string missing = ofu::testing::FirstMissing({OFU_PROMETHEUS, OFU_PROMTOOL, OFU_VICTORIA_METRICS,
                                                              OFU_VMALERT});
      !missing.empty()) {
    GTEST_SKIP() << "no " << missing << " (scripts/install-deps.sh installs prometheus and victoria-metrics)";
  }
  // 4 GPUs, 12 jobs of 40 one-minute scrapes: 4 hours, planted regressions.
  ofu::testing::SimulatedFleet fleet;
  ASSERT_TRUE(ofu::testing::SimulateFleet(dir_, "--gpus 4 --gpus-per-job 2 --jobs 12 --windows-per-job 40 --seed 3",
                                          fleet));
  const json& truth = fleet.truth;
  const double start = truth["options"]["start_s"].get<double>(), end = truth["end_s"].get<double>();

  fs::create_directories(dir_ / "prometheus");
  fs::create_directories(dir_ / "vm");
  BackgroundProcess prometheus, vm;
  int prometheus_port = 0, vm_port = 0;
  ASSERT_TRUE(ofu::testing::ServeBackfilled(prometheus, dir_ / "prometheus", dir_ / "fleet" / "metrics.om",
                                            prometheus_port));
  ASSERT_TRUE(ofu::testing::ServeImported(vm, dir_ / "vm", ofu::testing::Slurp(dir_ / "fleet" / "metrics.om"),
                                          vm_port));
  prometheus_url_ = fmt::format("http://127.0.0.1:{}", prometheus_port);
  vm_url_ = fmt::format("http://127.0.0.1:{}", vm_port);

  const std::string range = fmt::format("--since {:.0f} --until {:.0f}", start - 1, end + 1);
  const std::string inputs = fmt::format("--mfu '{}' --corrections '{}'", (dir_ / "fleet" / "mfu.csv").string(),
                                         (dir_ / "fleet" / "corrections").string());
  const std::string job = truth["regressions"][0]["job_id"];
  ExpectSameAnswers("report", range);
  ExpectSameAnswers("report", range + " --per-window");
  ExpectSameAnswers("report", range + " --job " + job);
  ExpectSameAnswers("reconcile", range + " " + inputs);
  ExpectSameAnswers("regress", range);
  ExpectSameAnswers("regress", range + " --job " + job);

  // The hourly rollups in both: promtool's backfill, vmalert's replay.
  auto rules = RunShell(fmt::format("'{}' rules hourly --scrape-interval 60", OFU_BINARY), dir_);
  ASSERT_EQ(rules.exit_code, 0) << rules.err;
  const fs::path rule_file = Write("hourly.yml", rules.out);
  std::string backfill;
  ASSERT_TRUE(ofu::testing::BackfillRules(dir_ / "prometheus", prometheus_port, rule_file, start, end + 3600,
                                          &backfill));
  prometheus.Stop();
  ASSERT_TRUE(ofu::testing::StartPrometheus(prometheus, dir_ / "prometheus", prometheus_port));
  prometheus_url_ = fmt::format("http://127.0.0.1:{}", prometheus_port);
  ASSERT_TRUE(ofu::testing::ReplayRules(dir_, rule_file, vm_port, start, end + 3600));

  // Each server must have the rollups before they are read: the restarted
  // Prometheus the blocks promtool wrote, VictoriaMetrics what vmalert wrote.
  // A failure names the server, what it answered and its log.
  SCOPED_TRACE(fmt::format("promtool's rule backfill: {}\nvmalert's replay: {}", backfill,
                           ofu::testing::Slurp(dir_ / "vmalert.log")));
  const double at = end + 2 * 3600;  // after the last evaluation, as the reader asks
  ASSERT_TRUE(ofu::testing::SeriesVisible(prometheus_port, ofu::history::kHourlyMarkerName, at, at - start + 1,
                                          "Prometheus (restarted on promtool's rule blocks)",
                                          dir_ / "prometheus" / "prometheus.log"));
  ASSERT_TRUE(ofu::testing::SeriesVisible(vm_port, ofu::history::kHourlyMarkerName, at, at - start + 1,
                                          "VictoriaMetrics (after vmalert's replay)",
                                          dir_ / "vm" / "victoria-metrics.log"));

  // The two evaluate at different times in the hour (promtool from --start
  // plus the group's offset, vmalert on the hour), so each is checked
  // against its own raw path, and the two for the same answers.
  for (const std::string& url : {prometheus_url_, vm_url_}) {
    const json raw = RunJson(fmt::format("report --prometheus {} {} --resolution raw", url, range));
    const json hourly = RunJson(fmt::format("report --prometheus {} {} --resolution hourly", url, range));
    ASSERT_FALSE(hourly.is_discarded()) << url;
    EXPECT_EQ(hourly["notes"][0].get<std::string>().rfind("resolution: hourly rollups for ", 0), 0u)
        << url << " " << hourly["notes"];
    EXPECT_NEAR(hourly["overall"]["ofu"].get<double>(), raw["overall"]["ofu"].get<double>(),
                1e-9 * raw["overall"]["ofu"].get<double>())
        << url;
    ASSERT_EQ(hourly["jobs"].size(), raw["jobs"].size()) << url;
    for (size_t i = 0; i < raw["jobs"].size(); ++i) {
      EXPECT_NEAR(hourly["jobs"][i]["ofu"].get<double>(), raw["jobs"][i]["ofu"].get<double>(),
                  1e-9 * raw["jobs"][i]["ofu"].get<double>())
          << url << " " << raw["jobs"][i]["job_id"];
    }
  }
  const json hourly_prometheus = RunJson(fmt::format("report --prometheus {} {} --resolution hourly", prometheus_url_,
                                                     range));
  const json hourly_vm = RunJson(fmt::format("report --prometheus {} {} --resolution hourly", vm_url_, range));
  EXPECT_NEAR(hourly_vm["overall"]["ofu"].get<double>(), hourly_prometheus["overall"]["ofu"].get<double>(),
              1e-9 * hourly_prometheus["overall"]["ofu"].get<double>());
  const json reconcile_vm = RunJson(fmt::format("reconcile --prometheus {} {} {} --resolution hourly", vm_url_, range,
                                                inputs));
  const json reconcile_prometheus = RunJson(fmt::format("reconcile --prometheus {} {} {} --resolution raw",
                                                        prometheus_url_, range, inputs));
  ASSERT_EQ(reconcile_vm["jobs"].size(), reconcile_prometheus["jobs"].size());
  for (size_t i = 0; i < reconcile_vm["jobs"].size(); ++i) {
    EXPECT_EQ(reconcile_vm["jobs"][i]["flag"], reconcile_prometheus["jobs"][i]["flag"]);
  }
  prometheus.Stop();
  vm.Stop();
}

// Issue 40, "Done when" 1 for regressions: `regress` from hourly rollups
// finds the regressions the raw counters show. Jobs of a day (1,440
// one-minute scrapes) so that each has 24 hourly windows, more than twice
// the scan's minimum segment of 10. The rules are evaluated by vmalert:
// VictoriaMetrics evaluates them in under a second here, Prometheus (with
// promtool) in about a minute (docs/BENCHMARKS.md, "Hourly rollups").
TEST_F(VictoriaMetrics, RegressFromHourlyRollupsFindsTheRawCountersRegressions) {
  for (const char* program : {OFU_VICTORIA_METRICS, OFU_VMALERT}) {
    if (!ofu::testing::ProgramFound(program)) {
      GTEST_SKIP() << "no " << program << " (scripts/install-deps.sh installs victoria-metrics)";
    }
  }
  ofu::testing::SimulatedFleet fleet;
  ASSERT_TRUE(ofu::testing::SimulateFleet(dir_, "--gpus 4 --gpus-per-job 2 --jobs 8 --windows-per-job 1440 --seed 3",
                                          fleet));
  const json& truth = fleet.truth;
  ASSERT_EQ(truth["regressions"].size(), 1u);
  ASSERT_EQ(truth["precision_shifts"].size(), 1u);
  const double start = truth["options"]["start_s"].get<double>(), end = truth["end_s"].get<double>();
  BackgroundProcess vm;
  int port = 0;
  ASSERT_TRUE(ofu::testing::ServeImported(vm, dir_, ofu::testing::Slurp(dir_ / "fleet" / "metrics.om"), port));
  auto rules = RunShell(fmt::format("'{}' rules hourly --scrape-interval 60", OFU_BINARY), dir_);
  ASSERT_EQ(rules.exit_code, 0) << rules.err;
  ASSERT_TRUE(ofu::testing::ReplayRules(dir_, Write("hourly.yml", rules.out), port, start, end + 3600));
  ASSERT_TRUE(ofu::testing::SeriesVisible(port, ofu::history::kHourlyMarkerName, end + 2 * 3600,
                                          end + 2 * 3600 - start + 1, "VictoriaMetrics (after vmalert's replay)",
                                          dir_ / "victoria-metrics.log"))
      << "vmalert's replay: " << ofu::testing::Slurp(dir_ / "vmalert.log");

  const std::string flags = fmt::format("--prometheus http://127.0.0.1:{} --since {:.0f} --until {:.0f}", port,
                                        start - 1, end + 1);
  const json raw = RunJson("regress " + flags + " --resolution raw");
  const json hourly = RunJson("regress " + flags + " --resolution hourly");
  ASSERT_FALSE(raw.is_discarded());
  ASSERT_FALSE(hourly.is_discarded());
  EXPECT_LT(hourly["windows"].get<int>(), raw["windows"].get<int>() / 10);  // hours, not scrapes
  for (const char* kind : {"changes", "precision_shifts"}) {
    ASSERT_EQ(raw[kind].size(), 1u) << kind << raw.dump(1);
    ASSERT_EQ(hourly[kind].size(), raw[kind].size()) << kind << hourly.dump(1);
    EXPECT_EQ(hourly[kind][0]["job_id"], raw[kind][0]["job_id"]) << kind;
    EXPECT_EQ(hourly[kind][0]["gpus"], raw[kind][0]["gpus"]) << kind;
    // The change is found in the hour it happened.
    EXPECT_NEAR(hourly[kind][0]["time_s"].get<double>(), raw[kind][0]["time_s"].get<double>(), 3600) << kind;
  }
  EXPECT_EQ(raw["changes"][0]["job_id"], truth["regressions"][0]["job_id"]);
  EXPECT_NEAR(hourly["changes"][0]["ratio"].get<double>(), raw["changes"][0]["ratio"].get<double>(), 0.01);
  vm.Stop();
}

}  // namespace
