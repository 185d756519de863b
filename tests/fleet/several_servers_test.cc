// Issue 55, "Done when" 3: a fleet sharded over several servers gives one
// server's answers. A SYNTHETIC fleet from ofu-fleet-sim (4 GPUs, 12 jobs of
// two GPUs) is split by GPU: GPUs 0 and 1 into a Prometheus (promtool's
// backfill), GPUs 1, 2 and 3 into a VictoriaMetrics (its import API), so
// GPU 1 is on both, as under an HA pair; a third server, a Prometheus,
// holds the whole fleet. `report` (the servers' sums, and every window),
// `report --job` and `reconcile` with both shards must give the whole
// server's answers field by field (numbers to 1e-8 relative: VictoriaMetrics
// keeps about 12 significant digits), GPU 1 counted once; with the
// VictoriaMetrics stopped, the answer holds the Prometheus's GPUs and names
// the server that failed.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
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

class SeveralServers : public ofu::testing::CliTest {
 protected:
  json RunJson(const std::string& args, int expected_exit = 0) {
    return ofu::testing::OfuJson(dir_, args, expected_exit);
  }
  // The command with both shards, and with the whole fleet's server: the
  // same answers, but for the notes (how each server was read, and which
  // GPUs were on both), which are checked on their own.
  json ExpectOneServersAnswers(const std::string& command, const std::string& flags) {
    const json sharded = RunJson(fmt::format("{} --prometheus {} --prometheus {} {}", command, shard_a_, shard_b_,
                                             flags));
    const json whole = RunJson(fmt::format("{} --prometheus {} {}", command, whole_, flags));
    EXPECT_FALSE(sharded.is_discarded()) << command << " " << flags;
    EXPECT_FALSE(whole.is_discarded()) << command << " " << flags;
    if (sharded.is_discarded() || whole.is_discarded()) return json();
    std::vector<std::string> differences;
    ofu::testing::CompareJson(whole, sharded, command, differences, 1e-8, {"source", "path", "notes"});
    EXPECT_TRUE(differences.empty()) << command << " " << flags << ":\n"
                                     << fmt::format("{}", fmt::join(differences, "\n"));
    return sharded;
  }
  std::string shard_a_, shard_b_, whole_;
};

TEST_F(SeveralServers, ShardsGiveTheWholeServersAnswersAndAStoppedOneIsNamed) {
  if (const std::string missing = ofu::testing::FirstMissing({OFU_PROMETHEUS, OFU_PROMTOOL, OFU_VICTORIA_METRICS});
      !missing.empty()) {
    GTEST_SKIP() << "no " << missing << " (scripts/install-deps.sh installs prometheus and victoria-metrics)";
  }
  ofu::testing::SimulatedFleet fleet;
  ASSERT_TRUE(ofu::testing::SimulateFleet(dir_, "--gpus 4 --gpus-per-job 2 --jobs 12 --windows-per-job 40 --seed 3",
                                          fleet));
  const json& truth = fleet.truth;
  const double start = fleet.start_s, end = fleet.end_s;
  const std::string om = ofu::testing::Slurp(dir_ / "fleet" / "metrics.om");
  const fs::path shard_a_om = Write("shard-a.om", ofu::testing::LinesOfGpus(om, {"GPU-sim-0000", "GPU-sim-0001"}));
  const std::string shard_b_om = ofu::testing::LinesOfGpus(om, {"GPU-sim-0001", "GPU-sim-0002", "GPU-sim-0003"});

  for (const char* dir : {"whole", "a", "b"}) fs::create_directories(dir_ / dir);
  BackgroundProcess whole, shard_a, shard_b;
  int whole_port = 0, a_port = 0, b_port = 0;
  ASSERT_TRUE(ofu::testing::ServeBackfilled(whole, dir_ / "whole", dir_ / "fleet" / "metrics.om", whole_port));
  ASSERT_TRUE(ofu::testing::ServeBackfilled(shard_a, dir_ / "a", shard_a_om, a_port));
  ASSERT_TRUE(ofu::testing::ServeImported(shard_b, dir_ / "b", shard_b_om, b_port));
  whole_ = fmt::format("http://127.0.0.1:{}", whole_port);
  shard_a_ = fmt::format("http://127.0.0.1:{}", a_port);
  shard_b_ = fmt::format("http://127.0.0.1:{}", b_port);

  const std::string range = fmt::format("--since {:.0f} --until {:.0f}", start - 1, end + 1);
  const json report = ExpectOneServersAnswers("report", range);
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["gpus"].size(), 4u);
  EXPECT_NE(report["notes"].dump().find("1 GPU(s) were on more than one server"), std::string::npos) << report["notes"];
  ExpectOneServersAnswers("report", range + " --per-window");
  ExpectOneServersAnswers("report", range + " --job " + truth["regressions"][0]["job_id"].get<std::string>());
  ExpectOneServersAnswers("reconcile",
                          fmt::format("{} --mfu '{}' --corrections '{}'", range, (dir_ / "fleet" / "mfu.csv").string(),
                                      (dir_ / "fleet" / "corrections").string()));
  // The same servers from a file, comments and blank lines skipped.
  const fs::path list = Write("servers.txt", fmt::format("# shards\n{}\n\n  {}  \n", shard_a_, shard_b_));
  const json from_file = RunJson(fmt::format("report --prometheus-file '{}' {}", list.string(), range));
  ASSERT_TRUE(from_file.is_object());
  EXPECT_EQ(from_file["overall"], report["overall"]);

  // One shard stopped: the other's GPUs (0 and 1) are answered, and the
  // stopped server is named.
  shard_b.Stop();
  const json partial = RunJson(fmt::format("report --prometheus {} --prometheus {} {}", shard_a_, shard_b_, range));
  ASSERT_TRUE(partial.is_object());
  EXPECT_EQ(partial["gpus"].size(), 2u);
  EXPECT_NE(partial["notes"].dump().find("server " + shard_b_), std::string::npos) << partial["notes"];
  EXPECT_NE(partial["notes"].dump().find("its GPUs are missing from this answer"), std::string::npos);
  // Every server stopped: an error naming them, not an empty answer.
  shard_a.Stop();
  auto none = RunShell(
      fmt::format("'{}' report --prometheus {} --prometheus {} {}", OFU_BINARY, shard_a_, shard_b_, range), dir_);
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("no Prometheus server answered"), std::string::npos) << none.err;
  whole.Stop();
}

}  // namespace
