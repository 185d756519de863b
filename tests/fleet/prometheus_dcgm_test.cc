// Issue 38, "Done when" 2: the clock-truth runs (measured on an H100 and an
// H200, 2026-11-27; tests/data/gpu-results/2026-11-27-clock-truth/, rebuilt
// from the runs' raw files as dcgm-exporter would have scraped them:
// DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, DCGM_FI_DEV_SM_CLOCK, modelName) backfilled
// into the Debian Prometheus, then read back with `ofu report --prometheus
// URL --series dcgm-exporter`: every phase's OFU, with the clock model, must
// agree with `ofu report --input` on the same file to 0.1 pp, overall and
// per GPU too, and name the same clock.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofu/analysis/prometheus_recording.h"
#include "ofu/sources/replay.h"
#include "support/backfilled_prometheus.h"
#include "support/background_process.h"
#include "support/cli_runner.h"

namespace {

using nlohmann::json;
using ofu::testing::BackgroundProcess;
using ofu::testing::RunShell;

const std::string kDir = std::string(OFU_TEST_DATA_DIR) + "/gpu-results/2026-11-27-clock-truth/";

class PrometheusDcgm : public ofu::testing::CliTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void TearDown() override {
    prometheus_.Stop();
    CliTest::TearDown();
  }
  BackgroundProcess prometheus_;
};

json ReportJson(const std::string& args, const std::filesystem::path& dir) {
  auto result = RunShell(fmt::format("'{}' report {} --format json", OFU_BINARY, args), dir);
  EXPECT_EQ(result.exit_code, 0) << args << ": " << result.err;
  return result.exit_code == 0 ? json::parse(result.out) : json();
}

TEST_P(PrometheusDcgm, EveryPhaseAgreesWithTheRecordingToATenthOfAPoint) {
  if (!ofu::testing::ProgramFound(OFU_PROMETHEUS) || !ofu::testing::ProgramFound(OFU_PROMTOOL)) {
    GTEST_SKIP() << "no prometheus or promtool binary (scripts/install-deps.sh installs the Debian packages)";
  }
  const std::string om = kDir + GetParam() + ".om";
  auto recording = ofu::sources::ReadRecordingFile(om);
  ASSERT_TRUE(recording.ok()) << recording.error().message;
  ASSERT_FALSE(recording->gpus.empty());
  const auto& samples = recording->gpus.front().samples;
  ASSERT_FALSE(samples.empty());
  int port = 0;
  ASSERT_TRUE(ofu::testing::ServeBackfilled(prometheus_, dir_, om, port));

  const json file = ReportJson(fmt::format("--input '{}'", om), dir_);
  // The range holds the recording's first info sample (at its first sample) and its last sample.
  const json served = ReportJson(fmt::format("--prometheus http://127.0.0.1:{} --series dcgm-exporter --since {:.3f} "
                                             "--until {:.3f}",
                                             port, samples.front().time_s - 1, samples.back().time_s + 1),
                                 dir_);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(served["source"]["path"], fmt::format("http://127.0.0.1:{}", port)) << served["source"];
  EXPECT_NEAR(served["overall"]["ofu"].get<double>(), file["overall"]["ofu"].get<double>(), 1e-3);
  EXPECT_EQ(served["overall"]["clock_source"], "measured-model");
  ASSERT_EQ(served["gpus"].size(), 1u);
  EXPECT_EQ(served["gpus"][0]["model"], file["gpus"][0]["model"]);
  ASSERT_EQ(served["phases"].size(), file["phases"].size());
  ASSERT_GE(file["phases"].size(), 4u);
  for (std::size_t i = 0; i < file["phases"].size(); ++i) {
    const json& a = file["phases"][i];
    const json& b = served["phases"][i];
    EXPECT_EQ(b["phase"], a["phase"]);
    if (a["ofu"].is_null()) {
      EXPECT_TRUE(b["ofu"].is_null()) << a["phase"];
      continue;
    }
    EXPECT_NEAR(b["ofu"].get<double>(), a["ofu"].get<double>(), 1e-3) << a["phase"];
    EXPECT_NEAR(b["mfu"].get<double>(), a["mfu"].get<double>(), 1e-12) << a["phase"];
    EXPECT_EQ(b["clock_source"], a["clock_source"]) << a["phase"];
  }
  // Read in pieces of about 500 samples (a few seconds each): a sample at a
  // piece's edge is kept once, so the pieces give the recording the whole
  // range gives.
  const std::string url = fmt::format("http://127.0.0.1:{}", port);
  const double since = samples.front().time_s - 1, until = samples.back().time_s + 1;
  ofu::history::RawSeriesOptions small;
  small.max_samples_per_query = 500;
  auto whole = ofu::analysis::ReadPrometheusRecording(url, since, until, {});
  auto pieces = ofu::analysis::ReadPrometheusRecording(url, since, until, {}, small);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  ASSERT_TRUE(pieces.ok()) << pieces.error().message;
  EXPECT_GT(whole->samples_read, 2000u);
  EXPECT_EQ(pieces->samples_read, whole->samples_read);
  ASSERT_EQ(pieces->gpus.size(), 1u);
  EXPECT_EQ(pieces->gpus[0].samples.size(), whole->gpus[0].samples.size());
  EXPECT_EQ(pieces->phases.size(), whole->phases.size());
}

INSTANTIATE_TEST_SUITE_P(Runs, PrometheusDcgm,
                         ::testing::Values("h100-plan1", "h100-plan2", "h200-plan1", "h200-plan2"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

// The text the series become: labels quoted and escaped, a family's lines
// together, NaN (a DCGM blank kept absent) as Prometheus writes it.
TEST(ScrapeTextOfSeries, WritesEachFamilyTogetherWithQuotedLabels) {
  ofu::history::PromSeries clock{{{"__name__", "DCGM_FI_DEV_SM_CLOCK"}, {"UUID", "GPU-1"}, {"note", "a \"b\"\\c"}},
                                 {{1000.5, 1980}, {1001.5, NAN}}};
  ofu::history::PromSeries tensor{{{"__name__", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"}, {"UUID", "GPU-1"}},
                                  {{1000.5, 0.25}}};
  ofu::history::PromSeries clock2{{{"__name__", "DCGM_FI_DEV_SM_CLOCK"}, {"UUID", "GPU-2"}}, {{1000.5, 1755}}};
  EXPECT_EQ(ofu::analysis::ScrapeTextOfSeries({clock, tensor, clock2}),
            "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-1\",note=\"a \\\"b\\\"\\\\c\"} 1980 1000.500\n"
            "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-1\",note=\"a \\\"b\\\"\\\\c\"} NaN 1001.500\n"
            "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-2\"} 1755 1000.500\n"
            "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-1\"} 0.25 1000.500\n");
}

}  // namespace
