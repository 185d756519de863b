// `ofu report --html` end to end: the built program on a store written here
// with the agent's HistoryStore (the synthetic two-GPU job of
// tests/sinks/history_fixture.h), and on the bundled synthetic recording.
#include <filesystem>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "html/html_test_support.h"
#include "ofu/sinks/history_store.h"
#include "sinks/history_fixture.h"
#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using ofu::testing::CommandResult;
using ofu::testing::kJobT0;

using ofu::testing::DataOf;

class HtmlReportCli : public ofu::testing::CliTest {
 protected:
  std::string WriteJobStore() { return ofu::testing::WriteTwoGpuJobStore(dir_ / "history.sqlite"); }
};

TEST_F(HtmlReportCli, StoreToPageWithJobAndGpuTimelines) {
  const std::string store = WriteJobStore();
  const fs::path out = dir_ / "report.html";
  const CommandResult run = Ofu(fmt::format("report --store '{}' --html '{}'", store, out.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, out.string() + "\n");  // the path, not the text report
  EXPECT_FALSE(fs::exists(out.string() + ".tmp"));
  const nlohmann::json data = DataOf(ofu::testing::Slurp(out));
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["source"], store);
  EXPECT_EQ(data["title"], "OFU report");
  EXPECT_EQ(data["bucket_s"], 60);  // 6 windows of 60 s: one bucket per window
  ASSERT_EQ(data["gpus"].size(), 2u);
  // GPU 1: 0.2 0.8 lost 0.6 0.4 0.0 -- the lost window is a gap, not a zero.
  const auto gpu1 = data["gpus"][1]["points"];
  ASSERT_EQ(gpu1[1].size(), 6u);
  EXPECT_NEAR(gpu1[1][0].get<double>(), 0.2, 1e-12);
  EXPECT_TRUE(gpu1[1][2].is_null());
  EXPECT_EQ(gpu1[1][5].get<double>(), 0.0);
  EXPECT_EQ(gpu1[0][0].get<double>(), kJobT0 + 60);
  // J1 per window, over its GPUs: 0.4, (0.5 + 0.8) / 2, 0.6 (GPU 1 lost),
  // (0.3 + 0.6) / 2, 0.4; job OFU 216 / 420 as in `ofu report --store`.
  ASSERT_EQ(data["jobs"].size(), 1u);
  const auto job = data["jobs"][0];
  EXPECT_EQ(job["job_id"], "J1");
  EXPECT_NEAR(job["ofu"].get<double>(), 216.0 / 420, 1e-12);
  const std::vector<double> expected = {0.4, 0.65, 0.6, 0.45, 0.4};
  ASSERT_EQ(job["points"][1].size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(job["points"][1][i].get<double>(), expected[i], 1e-12) << i;
  }
  ASSERT_EQ(data["skus"].size(), 1u);
  EXPECT_EQ(data["skus"][0]["gpus"], 2);
  // No MFU log: no scatter (the page says why). The regression scan ran and
  // found nothing in five windows (it needs ten on each side of a change).
  EXPECT_TRUE(data["scatter"].is_null());
  ASSERT_TRUE(data["markers"].is_array());
  EXPECT_TRUE(data["markers"].empty());
}

// The simulator's fleet (SYNTHETIC, tests/fleet): the page's scatter flags
// exactly the jobs whose MFU log was planted with a FLOPs-accounting error,
// and its markers are exactly the planted regression, precision switch and
// regression across runs.
TEST_F(HtmlReportCli, SimulatedFleetPageShowsWhatWasPlantedAndNothingElse) {
  const fs::path fleet = dir_ / "fleet";
  const CommandResult simulated =
      ofu::testing::RunShell(fmt::format("'{}' --out '{}' --seed 7", OFU_FLEET_SIM, fleet.string()), dir_);
  ASSERT_EQ(simulated.exit_code, 0) << simulated.err;
  const fs::path out = dir_ / "fleet.html";
  const CommandResult run = Ofu(fmt::format("report --store '{}' --html '{}' --mfu '{}' --corrections '{}'",
                                            (fleet / "history.sqlite").string(), out.string(),
                                            (fleet / "mfu.csv").string(), (fleet / "corrections").string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json data = DataOf(ofu::testing::Slurp(out));
  ASSERT_TRUE(data.is_object());
  const nlohmann::json truth = nlohmann::json::parse(ofu::testing::Slurp(fleet / "ground_truth.json"));

  std::set<std::string> planted_flags, flagged;
  for (const auto& job : truth["jobs"]) {
    if (job["plant"] != "none") planted_flags.insert(job["job_id"].get<std::string>());
  }
  ASSERT_EQ(planted_flags.size(), 5u);  // four FLOPs miscalculations and one non_tensor_work job (issue 18)
  ASSERT_TRUE(data["scatter"].is_object());
  EXPECT_EQ(data["scatter"]["points"].size(), truth["jobs"].size());
  for (const auto& point : data["scatter"]["points"]) {
    if (point["flagged"].get<bool>()) flagged.insert(point["job_id"].get<std::string>());
  }
  EXPECT_EQ(flagged, planted_flags);
  EXPECT_TRUE(data["scatter"]["pearson_r"].is_number());

  std::set<std::pair<std::string, std::string>> planted_markers, markers;
  for (const auto& r : truth["regressions"]) planted_markers.insert({"regression", r["job_id"].get<std::string>()});
  for (const auto& r : truth["precision_shifts"]) {
    planted_markers.insert({"precision shift", r["job_id"].get<std::string>()});
  }
  for (const auto& r : truth["run_regressions"]) {
    planted_markers.insert({"regression across runs", r["first_job_id"].get<std::string>()});
  }
  ASSERT_EQ(planted_markers.size(), 3u);
  ASSERT_TRUE(data["markers"].is_array());
  for (const auto& marker : data["markers"]) {
    markers.insert({marker["kind"].get<std::string>(), marker["job_id"].get<std::string>()});
  }
  EXPECT_EQ(markers, planted_markers);
}

TEST_F(HtmlReportCli, MfuNeedsHtml) {
  const CommandResult run = Ofu("report --store x.sqlite --mfu mfu.csv");
  EXPECT_EQ(run.exit_code, 1);
}

TEST_F(HtmlReportCli, EmptyRangeStillWritesThePageAndExitsNoData) {
  const std::string store = WriteJobStore();
  const fs::path out = dir_ / "empty.html";
  const CommandResult run = Ofu(fmt::format("report --store '{}' --since {} --html '{}' --title 'Last week'", store,
                                            kJobT0 + 3600, out.string()));
  EXPECT_EQ(run.exit_code, 4) << run.err;
  EXPECT_NE(run.err.find("no windows"), std::string::npos) << run.err;
  const nlohmann::json data = DataOf(ofu::testing::Slurp(out));
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["title"], "Last week");
  EXPECT_TRUE(data["gpus"].empty());
  EXPECT_TRUE(data["start_s"].is_null());
}

TEST_F(HtmlReportCli, UnwritablePathIsAnIoError) {
  const std::string store = WriteJobStore();
  const CommandResult run = Ofu(fmt::format("report --store '{}' --html '{}'", store,
                                            (dir_ / "missing" / "r.html").string()));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("cannot write"), std::string::npos) << run.err;
}

TEST_F(HtmlReportCli, RecordingToPage) {
  const fs::path out = dir_ / "recording.html";
  const CommandResult run =
      Ofu(fmt::format("report --input '{}/recordings/synthetic-2xh100-bf16-matmul.om' --html '{}'",
                      OFU_SOURCE_DIR "/data", out.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json data = DataOf(ofu::testing::Slurp(out));
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["gpus"].size(), 2u);
  EXPECT_TRUE(data["jobs"].empty());  // a recording does not say which job ran
  EXPECT_TRUE(data["overall_ofu"].is_number());
  EXPECT_EQ(data["synthetic"], true);  // the recording says it is synthetic
}

TEST_F(HtmlReportCli, TitleNeedsHtml) {
  const std::string store = WriteJobStore();
  const CommandResult run = Ofu(fmt::format("report --store '{}' --title x", store));
  EXPECT_EQ(run.exit_code, 1);
}

}  // namespace
