// The "add a counter" recipe of docs/ARCHITECTURE.md, followed once: a
// TEST-ONLY counter, board energy in joules (power x window seconds), is one
// row added to the output-counter table (core/output_counters.h), and with no
// other change it is in the exposition, in a store written and read back
// (also a store made before the counter existed, which gains its column),
// in a read of the Debian Prometheus the exposition was backfilled into, and
// in the report's JSON (the store report's power_w, which the built-in table
// does not store).
//
// SYNTHETIC windows, hand values: two H100s, four 60 s windows each ending
// at T0 + 60 k, k = 1..4, all valid (OFU 0.4). GPU-a draws 300 W in every
// window; GPU-b has no power reading. So GPU-a's counter rises 18,000 J a
// window (72,000 J after four), and GPU-b has no series of it, no value in
// its rows and no power in its report.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofu/analysis/store_report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/core/output_counters.h"
#include "ofu/history/history_reader.h"
#include "ofu/history/prometheus_history.h"
#include "ofu/render/report_output.h"
#include "ofu/sinks/history_store.h"
#include "ofu/sinks/metrics_state.h"
#include "ofu/sources/clock.h"
#include "sinks/history_fixture.h"
#include "support/backfilled_prometheus.h"
#include "support/background_process.h"
#include "support/cli_runner.h"
#include "support/exposition.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ofu::OutputCounter;
using ofu::OutputCounterTable;

constexpr double kT0 = 1790000000;
constexpr double kWindowS = 60;
constexpr double kPowerW = 300;
constexpr double kJoulesPerWindow = kPowerW * kWindowS;  // 18,000 J

// The one row the recipe adds.
const OutputCounter kEnergyRow = {
    "test_energy_j",
    "ofu_test_energy_joules",
    "Board energy over windows with valid data (TEST-ONLY counter).",
    "J",
    1,
    ofu::Presence::kWhenMeasured,
    [](const ofu::OfuWindow& w, const ofu::TensorPipes&) { return w.power_w; },
    [](ofu::OfuWindow& w, ofu::TensorPipes&, double watts) { w.power_w = watts; },
};

std::vector<ofu::sinks::WindowBatch> Batches() {
  std::vector<ofu::sinks::WindowBatch> batches;
  for (int k = 1; k <= 4; ++k) {
    ofu::sinks::GpuWindow a = ofu::testing::H100Window("GPU-a", "0", 0.4);
    a.window.power_w = kPowerW;
    const ofu::sinks::GpuWindow b = ofu::testing::H100Window("GPU-b", "1", 0.4);
    batches.push_back(ofu::testing::Batch(kT0 + kWindowS * k, kWindowS, {a, b}));
  }
  return batches;
}

// The id of the added row, and the table with it.
class OutputCounterTableTest : public ofu::testing::CliTest {
 protected:
  void TearDown() override {
    prometheus_.Stop();
    CliTest::TearDown();
  }

  const OutputCounterTable table_ = OutputCounterTable::Builtin().With(kEnergyRow);
  const std::size_t energy_ = table_.size() - 1;
  ofu::testing::BackgroundProcess prometheus_;
};

TEST_F(OutputCounterTableTest, TheTableHasTheBuiltinRowsAndTheAddedOne) {
  EXPECT_EQ(OutputCounterTable::Builtin().size(), static_cast<std::size_t>(ofu::kBuiltinOutputCounters));
  EXPECT_EQ(table_.size(), OutputCounterTable::Builtin().size() + 1);
  EXPECT_EQ(table_[energy_].column, "test_energy_j");
  EXPECT_EQ(table_[ofu::kCounterObserved].column, "observed_s");
}

TEST_F(OutputCounterTableTest, AnAddedRowIsInTheExposition) {
  ofu::sources::FakeClock clock(kT0);
  ofu::sinks::MetricsOptions options{"0.1.0", "nvml", kWindowS, 3};
  options.counters = &table_;
  ofu::sinks::MetricsState state(options, clock);
  for (const auto& batch : Batches()) ASSERT_TRUE(state.Consume(batch).ok());
  const std::string text = state.Render(ofu::formats::ExpositionFormat::kPrometheusText);
  const auto m = ofu::testing::ParseExposition(text);
  EXPECT_EQ(m.at("ofu_test_energy_joules_total{uuid=GPU-a,gpu=0}"), 4 * kJoulesPerWindow);
  EXPECT_EQ(m.count("ofu_test_energy_joules_total{uuid=GPU-b,gpu=1}"), 0u);  // no power: no series, not 0
  EXPECT_NE(text.find("# HELP ofu_test_energy_joules_total Board energy over windows with valid data (TEST-ONLY"),
            std::string::npos);
  EXPECT_EQ(m.at("ofu_observed_seconds_total{uuid=GPU-a,gpu=0}"), 4 * kWindowS);  // the built-in rows stay
  // The built-in table has no such family.
  ofu::sinks::MetricsState builtin({"0.1.0", "nvml", kWindowS, 3}, clock);
  for (const auto& batch : Batches()) ASSERT_TRUE(builtin.Consume(batch).ok());
  EXPECT_EQ(builtin.Render(ofu::formats::ExpositionFormat::kPrometheusText).find("ofu_test_energy"), std::string::npos);
}

TEST_F(OutputCounterTableTest, AnAddedRowIsAStoreColumnWrittenAndReadBackAndInTheReportJson) {
  ofu::sources::FakeClock clock(kT0);
  ofu::sinks::HistoryOptions options;
  options.path = (dir_ / "history.sqlite").string();
  const std::vector<ofu::sinks::WindowBatch> batches = Batches();
  // Made by an ofu without the counter: two windows.
  ASSERT_TRUE(ofu::testing::WriteRun(options, clock, {batches.begin(), batches.begin() + 2}));
  // Opened with it: the column is added, and two more windows written.
  options.counters = &table_;
  ASSERT_TRUE(ofu::testing::WriteRun(options, clock, {batches.begin() + 2, batches.end()}));
  auto history = ofu::history::ReadHistory(options.path, {}, 1000, table_);
  ASSERT_TRUE(history.ok()) << history.error().message;
  ASSERT_EQ(history->windows.size(), 8u);  // GPU-a's four, then GPU-b's
  for (std::size_t i = 0; i < 8; ++i) {
    const ofu::history::StoredWindow& row = history->windows[i];
    // GPU-a's first two rows were written before the column: not measured.
    const bool measured = i == 2 || i == 3;
    EXPECT_EQ(row.counters[energy_], measured ? std::optional(kJoulesPerWindow) : std::nullopt) << "row " << i;
    EXPECT_EQ(row.counters.observed_s(), kWindowS) << "row " << i;
  }

  // The report turns the sum back into the window's figure: GPU-a's mean
  // power is the energy over its observed seconds, from its last two rows.
  auto specs = ofu::GpuSpecDatabase::Embedded();
  ASSERT_TRUE(specs.ok());
  const json report = json::parse(ofu::render::RenderJson(ofu::analysis::BuildStoreReport(*history, *specs, table_)));
  ASSERT_EQ(report["gpus"].size(), 2u);
  EXPECT_EQ(report["gpus"][0]["uuid"], "GPU-a");
  EXPECT_EQ(report["gpus"][0]["power_w"], kPowerW);
  EXPECT_TRUE(report["gpus"][1]["power_w"].is_null());
  // The built-in table stores no power: the same store reads without it.
  auto builtin = ofu::history::ReadHistory(options.path, {});
  ASSERT_TRUE(builtin.ok()) << builtin.error().message;
  const json without = json::parse(ofu::render::RenderJson(ofu::analysis::BuildStoreReport(*builtin, *specs)));
  EXPECT_TRUE(without["gpus"][0]["power_w"].is_null());
}

// The exposition after each window, as OpenMetrics for promtool: each family
// once, its samples stamped with their window's end.
std::string OpenMetricsOf(const std::vector<std::pair<double, std::string>>& renders) {
  std::vector<std::string> order;
  std::map<std::string, std::string> type_of, samples_of;
  for (const auto& [time_s, text] : renders) {
    std::string family;
    std::size_t at = 0;
    while (at < text.size()) {
      const std::size_t end = text.find('\n', at);
      const std::string line = text.substr(at, end - at);
      at = end + 1;
      if (line.rfind("# TYPE ", 0) == 0) {
        const std::size_t space = line.find(' ', 7);
        family = line.substr(7, space - 7);
        std::string type = line.substr(space + 1);
        if (!type_of.count(family)) {
          order.push_back(family);
          type_of[family] = type;
        }
      } else if (!line.empty() && line[0] != '#' && family.rfind("ofu_", 0) == 0) {
        samples_of[family] += fmt::format("{} {:.3f}\n", line, time_s);
      }
    }
  }
  std::string om;
  for (const std::string& family : order) {
    if (family.rfind("ofu_", 0) != 0) continue;
    const bool counter = type_of[family] == "counter";
    // OpenMetrics names a counter's family without the _total of its samples.
    const std::string name = counter ? family.substr(0, family.size() - 6) : family;
    om += fmt::format("# TYPE {} {}\n{}", name, counter ? "counter" : "gauge", samples_of[family]);
  }
  return om + "# EOF\n";
}

TEST_F(OutputCounterTableTest, AnAddedRowIsReadFromPrometheus) {
  if (!ofu::testing::ProgramFound(OFU_PROMETHEUS) || !ofu::testing::ProgramFound(OFU_PROMTOOL)) {
    GTEST_SKIP() << "no prometheus or promtool binary (scripts/install-deps.sh installs the Debian packages)";
  }
  ofu::sources::FakeClock clock(kT0);
  ofu::sinks::MetricsOptions options{"0.1.0", "nvml", kWindowS, 3};
  options.counters = &table_;
  ofu::sinks::MetricsState state(options, clock);
  std::vector<std::pair<double, std::string>> renders;
  for (const auto& batch : Batches()) {
    ASSERT_TRUE(state.Consume(batch).ok());
    renders.emplace_back(batch.end_s, state.Render(ofu::formats::ExpositionFormat::kPrometheusText));
  }
  int port = 0;
  ASSERT_TRUE(ofu::testing::ServeBackfilled(prometheus_, dir_, Write("counters.om", OpenMetricsOf(renders)), port));

  ofu::history::HistoryQuery query;
  query.since_s = kT0;
  query.until_s = kT0 + 4 * kWindowS;
  ofu::history::PrometheusQueryOptions read;
  read.counters = &table_;
  auto history = ofu::history::ReadPrometheusHistory(fmt::format("http://127.0.0.1:{}", port), query, read);
  ASSERT_TRUE(history.ok()) << history.error().message;
  ASSERT_EQ(history->gpus.size(), 2u);
  EXPECT_EQ(history->gpus[0].key(), "GPU-a");
  // Rows between scrapes: k = 1..2, 2..3, 3..4 per GPU.
  ASSERT_EQ(history->windows.size(), 6u);
  for (const ofu::history::StoredWindow& row : history->windows) {
    const bool a = row.gpu_id == history->gpus[0].id;
    EXPECT_EQ(row.counters[energy_], a ? std::optional(kJoulesPerWindow) : std::nullopt) << row.end_s;
    EXPECT_EQ(row.counters.observed_s(), kWindowS) << row.end_s;
  }
}

}  // namespace
