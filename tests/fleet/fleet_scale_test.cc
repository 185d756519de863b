// Issue 15, "Done when" 1: a Prometheus server with a deliberately small
// --query.max-samples (10,000) holding a SYNTHETIC fleet whose raw counter
// samples exceed it more than 50 times. One raw query of the range, as ofu
// sent before, is refused; `ofu report`, `ofu reconcile` and `ofu regress`
// with --prometheus (server-side sums, and pieces of raw samples split to
// fit) give the store's answers: OFU to 1e-9, the same findings.
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "support/backfilled_prometheus.h"
#include "support/background_process.h"
#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ofu::testing::BackgroundProcess;
using ofu::testing::RunShell;
using ofu::testing::Slurp;

constexpr int kMaxSamples = 10000;

class FleetScale : public ofu::testing::CliTest {
 protected:
  json RunJson(const std::string& args) {
    auto result = RunShell(fmt::format("'{}' {} --format json", OFU_BINARY, args), dir_);
    EXPECT_EQ(result.exit_code, 0) << args << "\n" << result.err;
    return json::parse(result.out, nullptr, false);
  }
};

void ExpectSameNumber(const json& a, const json& b, const std::string& what) {
  if (a.is_null() || b.is_null()) {
    EXPECT_EQ(a.is_null(), b.is_null()) << what;
    return;
  }
  EXPECT_NEAR(a.get<double>(), b.get<double>(), 1e-9) << what;
}

TEST_F(FleetScale, ASmallSampleLimitGivesTheStoresAnswers) {
  if (!ofu::testing::ProgramFound(OFU_PROMETHEUS) || !ofu::testing::ProgramFound(OFU_PROMTOOL)) {
    GTEST_SKIP() << "no prometheus or promtool binary (scripts/install-deps.sh installs the Debian packages)";
  }
  // 16 GPUs in 4 groups, 6 runs of 750 one-minute windows per group: 4,500
  // windows per GPU, 7.5 counters per GPU (DFMA on even GPUs only).
  auto sim = RunShell(fmt::format("'{}' --out '{}' --gpus 16 --gpus-per-job 4 --jobs 24 --windows-per-job 750 --seed 5",
                                  OFU_FLEET_SIM, (dir_ / "fleet").string()),
                      dir_);
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const json truth = json::parse(Slurp(dir_ / "fleet" / "ground_truth.json"));
  const fs::path fleet = dir_ / "fleet";
  BackgroundProcess prometheus;
  int port = 0;
  ASSERT_TRUE(ofu::testing::ServeBackfilled(prometheus, dir_, fleet / "metrics.om", port,
                                            {fmt::format("--query.max-samples={}", kMaxSamples)}));
  fs::remove(fleet / "metrics.om");
  httplib::Client client("127.0.0.1", port);

  const double start = truth["options"]["start_s"].get<double>(), end = truth["end_s"].get<double>();
  const std::string until = fmt::format("{:.0f}", end + 1);
  const std::string seconds = fmt::format("{:.0f}s", end + 1 - (start - 1));
  // The raw samples exceed the limit at least 50 times, and the one query
  // ofu sent before is refused.
  const std::string counters = "{__name__=~\"ofu_.*_seconds_total\"}";
  double raw = 0;
  for (const char* name : {"observed", "utilized", "busy", "busy_utilized", "tensor_active", "hmma_active",
                           "imma_active", "dfma_active"}) {
    auto count = client.Post(
        "/api/v1/query",
        httplib::Params{{"query", fmt::format("sum(count_over_time(ofu_{}_seconds_total[{}]))", name, seconds)},
                        {"time", until}});
    ASSERT_TRUE(count);
    const json counted = json::parse(count->body);
    ASSERT_EQ(counted["status"], "success") << count->body;
    raw += std::stod(counted["data"]["result"][0]["value"][1].get<std::string>());
  }
  EXPECT_GE(raw, 50.0 * kMaxSamples);
  auto old = client.Post("/api/v1/query",
                         httplib::Params{{"query", fmt::format("{}[{}]", counters, seconds)}, {"time", until}});
  ASSERT_TRUE(old);
  EXPECT_NE(old->body.find("too many samples"), std::string::npos) << old->body.substr(0, 200);

  const std::string range = fmt::format("--since {:.0f} --until {}", start - 1, until);
  const std::string store = fmt::format("--store '{}'", (fleet / "history.sqlite").string());
  const std::string prom = fmt::format("--prometheus http://127.0.0.1:{}", port);

  // ofu report: server-side sums, and every scrape read in pieces.
  const json s_report = RunJson(fmt::format("report {} {}", store, range));
  const json p_sums = RunJson(fmt::format("report {} {}", prom, range));
  const json p_windows = RunJson(fmt::format("report {} {} --per-window", prom, range));
  ASSERT_FALSE(s_report.is_discarded());
  ASSERT_FALSE(p_sums.is_discarded());
  ASSERT_FALSE(p_windows.is_discarded());
  EXPECT_EQ(p_sums["source"]["method"], "counters");
  EXPECT_EQ(p_windows["source"]["method"], "windows");
  for (const json* p : {&p_sums, &p_windows}) {
    const std::string which = (*p)["source"]["method"];
    for (const char* field : {"ofu", "active_ofu", "tensor_active", "idle_fraction"}) {
      ExpectSameNumber((*p)["overall"][field], s_report["overall"][field], which + " overall " + field);
    }
    ASSERT_EQ((*p)["gpus"].size(), s_report["gpus"].size()) << which;
    for (size_t i = 0; i < s_report["gpus"].size(); ++i) {
      EXPECT_EQ((*p)["gpus"][i]["uuid"], s_report["gpus"][i]["uuid"]);
      ExpectSameNumber((*p)["gpus"][i]["ofu"], s_report["gpus"][i]["ofu"], which + " gpu ofu");
      ExpectSameNumber((*p)["gpus"][i]["active_ofu"], s_report["gpus"][i]["active_ofu"], which + " gpu active");
    }
    ASSERT_EQ((*p)["jobs"].size(), s_report["jobs"].size()) << which;
    for (size_t i = 0; i < s_report["jobs"].size(); ++i) {
      const json& want = s_report["jobs"][i];
      EXPECT_EQ((*p)["jobs"][i]["job_id"], want["job_id"]);
      EXPECT_EQ((*p)["jobs"][i]["gpus"], want["gpus"]) << want["job_id"];
      ExpectSameNumber((*p)["jobs"][i]["ofu"], want["ofu"], which + " job ofu " + want["job_id"].get<std::string>());
      ExpectSameNumber((*p)["jobs"][i]["active_ofu"], want["active_ofu"], which + " job active ofu");
      // Intervals from the first to the last scrape: to the scrape interval.
      EXPECT_NEAR((*p)["jobs"][i]["gpu_hours"].get<double>(), want["gpu_hours"].get<double>(),
                  want["gpus"].get<double>() * 2 / 60.0)
          << which;
    }
  }
  // Every scrape read: the percentiles are the store's.
  for (const char* field : {"p10", "p50", "p90"}) {
    ExpectSameNumber(p_windows["overall"][field], s_report["overall"][field], field);
  }

  // ofu reconcile: the same flags, OFU and statistics.
  const std::string inputs = fmt::format("--mfu '{}' --corrections '{}'", (fleet / "mfu.csv").string(),
                                         (fleet / "corrections").string());
  const json r_store = RunJson(fmt::format("reconcile {} {} {}", store, inputs, range));
  const json r_prom = RunJson(fmt::format("reconcile {} {} {}", prom, inputs, range));
  ASSERT_FALSE(r_prom.is_discarded());
  EXPECT_EQ(r_prom["method"], "counters");
  ASSERT_EQ(r_prom["jobs"].size(), r_store["jobs"].size());
  for (size_t i = 0; i < r_store["jobs"].size(); ++i) {
    EXPECT_EQ(r_prom["jobs"][i]["flag"], r_store["jobs"][i]["flag"]) << r_store["jobs"][i]["job_id"];
    EXPECT_EQ(r_prom["jobs"][i]["gpus"], r_store["jobs"][i]["gpus"]);
    ExpectSameNumber(r_prom["jobs"][i]["ofu"], r_store["jobs"][i]["ofu"], "reconcile ofu");
  }
  for (const char* set : {"all", "unflagged"}) {
    for (const char* stat : {"pearson_r", "spearman_rho", "mean_absolute_error"}) {
      ExpectSameNumber(r_prom["statistics"][set][stat], r_store["statistics"][set][stat], stat);
    }
  }

  // ofu regress over every scrape (--step 0): the same findings, at the
  // same times, on the same GPUs.
  const json g_store = RunJson(fmt::format("regress {} {}", store, range));
  const json g_prom = RunJson(fmt::format("regress {} {} --step 0", prom, range));
  ASSERT_FALSE(g_prom.is_discarded());
  EXPECT_EQ(g_prom["windows"], g_store["windows"]);
  EXPECT_GE(g_store["changes"].size() + g_store["precision_shifts"].size() + g_store["run_changes"].size(), 3u)
      << g_store.dump(1);
  for (const char* kind : {"changes", "precision_shifts", "run_changes"}) {
    ASSERT_EQ(g_prom[kind].size(), g_store[kind].size()) << kind;
    for (size_t i = 0; i < g_store[kind].size(); ++i) {
      EXPECT_EQ(g_prom[kind][i]["time_s"], g_store[kind][i]["time_s"]) << kind;
      EXPECT_EQ(g_prom[kind][i].value("gpus", json()), g_store[kind][i].value("gpus", json())) << kind;
      EXPECT_EQ(g_prom[kind][i].value("job_id", json()), g_store[kind][i].value("job_id", json())) << kind;
      if (g_store[kind][i].contains("ratio"))
        ExpectSameNumber(g_prom[kind][i]["ratio"], g_store[kind][i]["ratio"], kind);
    }
  }

  // By default the range's scrapes (more than 2,000 a GPU) are read at a
  // step: the same findings on the same GPUs, each change at most one step
  // after the store's, its ratio within 3 %.
  const json g_step = RunJson(fmt::format("regress {} {}", prom, range));
  ASSERT_FALSE(g_step.is_discarded());
  ASSERT_EQ(g_step["notes"].size(), 1u) << g_step.dump(1);
  const std::string note = g_step["notes"][0];
  const double step = std::stod(note.substr(note.find("every ") + 6));
  EXPECT_GT(step, truth["options"]["window_s"].get<double>()) << note;
  EXPECT_LT(g_step["windows"].get<double>(), g_store["windows"].get<double>());
  for (const char* kind : {"changes", "precision_shifts", "run_changes"}) {
    ASSERT_EQ(g_step[kind].size(), g_store[kind].size()) << kind;
    for (size_t i = 0; i < g_store[kind].size(); ++i) {
      EXPECT_EQ(g_step[kind][i].value("job_id", json()), g_store[kind][i].value("job_id", json())) << kind;
      EXPECT_EQ(g_step[kind][i].value("first_job_id", json()), g_store[kind][i].value("first_job_id", json())) << kind;
      EXPECT_EQ(g_step[kind][i].value("gpus", json()), g_store[kind][i].value("gpus", json())) << kind;
      if (std::string(kind) != "run_changes") {
        const double late = g_step[kind][i]["time_s"].get<double>() - g_store[kind][i]["time_s"].get<double>();
        EXPECT_GE(late, 0) << kind;
        EXPECT_LT(late, step) << kind;
      }
      if (g_store[kind][i].contains("ratio")) {
        EXPECT_NEAR(g_step[kind][i]["ratio"].get<double>(), g_store[kind][i]["ratio"].get<double>(),
                    0.03 * g_store[kind][i]["ratio"].get<double>())
            << kind;
      }
    }
  }
  prometheus.Stop();
}

}  // namespace
