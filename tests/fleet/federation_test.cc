// Issue 55, "Done when" 3 (federation): a global server that holds only the
// shards' hourly rollups gives the fleet's and each job's answers. A
// SYNTHETIC fleet from ofu-fleet-sim (4 GPUs, 12 jobs of two GPUs, 60 s
// scrapes) is split by GPU into a Prometheus shard (GPUs 0, 1; promtool's
// backfill) and a VictoriaMetrics shard (GPUs 2, 3); a vmalert per shard
// evaluates the hourly rules (`ofu rules hourly`) on its shard and writes
// the rollups to a global VictoriaMetrics that holds nothing else
// (deploy/prometheus/federation/). Over whole hours, `ofu report
// --prometheus GLOBAL --resolution hourly` must give the fleet's OFU, its
// GPUs and each job's OFU as the raw counters of a server holding the whole
// fleet give them (to 1e-9 relative), and the shards read together give
// the per-GPU detail the same way.
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

class Federation : public ofu::testing::CliTest {
 protected:
  json RunJson(const std::string& args) { return ofu::testing::OfuJson(dir_, args); }
};

void ExpectSameOfu(const json& got, const json& want, const std::string& what) {
  ASSERT_TRUE(got.is_object()) << what;
  ASSERT_TRUE(want.is_object()) << what;
  const double ofu = want["overall"]["ofu"].get<double>();
  EXPECT_NEAR(got["overall"]["ofu"].get<double>(), ofu, 1e-9 * ofu) << what;
  EXPECT_EQ(got["gpus"].size(), want["gpus"].size()) << what;
  std::map<std::string, double> jobs;
  for (const auto& job : want["jobs"]) jobs[job["job_id"]] = job["ofu"].get<double>();
  ASSERT_EQ(got["jobs"].size(), jobs.size()) << what;
  for (const auto& job : got["jobs"]) {
    ASSERT_TRUE(jobs.contains(job["job_id"])) << what << " " << job["job_id"];
    EXPECT_NEAR(job["ofu"].get<double>(), jobs[job["job_id"]], 1e-9 * jobs[job["job_id"]])
        << what << " " << job["job_id"];
  }
}

TEST_F(Federation, AGlobalServerOfRollupsGivesTheFleetAndItsJobs) {
  if (const std::string missing = ofu::testing::FirstMissing({OFU_PROMETHEUS, OFU_PROMTOOL, OFU_VICTORIA_METRICS,
                                                              OFU_VMALERT});
      !missing.empty()) {
    GTEST_SKIP() << "no " << missing << " (scripts/install-deps.sh installs prometheus and victoria-metrics)";
  }
  ofu::testing::SimulatedFleet fleet;
  ASSERT_TRUE(ofu::testing::SimulateFleet(dir_, "--gpus 4 --gpus-per-job 2 --jobs 12 --windows-per-job 40 --seed 3",
                                          fleet));
  const std::string om = ofu::testing::Slurp(fleet.dir / "metrics.om");
  const fs::path shard_a_om = Write("shard-a.om", ofu::testing::LinesOfGpus(om, {"GPU-sim-0000", "GPU-sim-0001"}));
  for (const char* dir : {"whole", "a", "b", "global"}) fs::create_directories(dir_ / dir);
  BackgroundProcess whole, shard_a, shard_b, global;
  int whole_port = 0, a_port = 0, b_port = 0, global_port = 0;
  ASSERT_TRUE(ofu::testing::ServeBackfilled(whole, dir_ / "whole", fleet.dir / "metrics.om", whole_port));
  ASSERT_TRUE(ofu::testing::ServeBackfilled(shard_a, dir_ / "a", shard_a_om, a_port));
  ASSERT_TRUE(ofu::testing::ServeImported(shard_b, dir_ / "b",
                                          ofu::testing::LinesOfGpus(om, {"GPU-sim-0002", "GPU-sim-0003"}), b_port));
  // Every shard writes the rollups' marker series: the global server
  // keeps one sample per timestamp (deploy/prometheus/federation/README).
  ASSERT_TRUE(ofu::testing::ServeImported(global, dir_ / "global", "", global_port, {"-dedup.minScrapeInterval=1ms"}));

  // Each shard's vmalert evaluates the hourly rules on the hour and writes
  // to the global server.
  auto rules = RunShell(fmt::format("'{}' rules hourly --scrape-interval 60", OFU_BINARY), dir_);
  ASSERT_EQ(rules.exit_code, 0) << rules.err;
  const fs::path rule_file = Write("hourly.yml", rules.out);
  const double first_hour = std::ceil(fleet.start_s / 3600) * 3600, last_hour = std::floor(fleet.end_s / 3600) * 3600;
  ASSERT_GE(last_hour - first_hour, 2 * 3600) << "the fleet must span whole hours";
  for (int port : {a_port, b_port}) {
    ASSERT_TRUE(ofu::testing::ReplayRules(dir_, rule_file, port, first_hour, last_hour + 60, global_port))
        << ofu::testing::Slurp(dir_ / "vmalert.log");
  }

  const std::string range = fmt::format("--since {:.0f} --until {:.0f}", first_hour, last_hour);
  const json want = RunJson(fmt::format("report --prometheus http://127.0.0.1:{} {} --resolution raw", whole_port,
                                        range));
  // The fleet and its jobs from the global server's rollups alone.
  const json global_answer = RunJson(fmt::format("report --prometheus http://127.0.0.1:{} {} --resolution hourly",
                                                 global_port, range));
  ExpectSameOfu(global_answer, want, "global");
  EXPECT_EQ(global_answer["notes"][0].get<std::string>().rfind("resolution: hourly rollups for ", 0), 0u)
      << global_answer["notes"];
  // Per-GPU detail from the shards, read together.
  const json shards = RunJson(fmt::format("report --prometheus http://127.0.0.1:{} --prometheus http://127.0.0.1:{} {}",
                                          a_port, b_port, range));
  ExpectSameOfu(shards, want, "shards");
  ASSERT_EQ(shards["gpus"].size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(shards["gpus"][i]["ofu"].get<double>(), want["gpus"][i]["ofu"].get<double>(),
                1e-9 * want["gpus"][i]["ofu"].get<double>());
  }
  for (BackgroundProcess* server : {&whole, &shard_a, &shard_b, &global}) server->Stop();
}

}  // namespace
