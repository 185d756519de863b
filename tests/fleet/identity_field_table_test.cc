// The "add a GPU identity field" recipe of docs/ARCHITECTURE.md, followed
// once: a TEST-ONLY field, the rack a GPU's node stands in, is one row added
// to the identity table (core/gpu_identity.h). With no other change it is a
// label of ofu_gpu_info in the exposition, a column of the store (also of a
// store made before the field existed, which gains it) read back into the
// GPU's identity, and a key of the report's JSON, both from the library and
// from `ofu report --store`, which knows nothing of the row.
//
// SYNTHETIC windows, hand values: two H100s, four 60 s windows each ending at
// T0 + 60 k, k = 1..4. The source knows GPU-a's rack ("r7"), not GPU-b's.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofu/analysis/store_report.h"
#include "ofu/core/gpu_identity.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/history/history_reader.h"
#include "ofu/render/report_output.h"
#include "ofu/sinks/history_store.h"
#include "ofu/sinks/metrics_state.h"
#include "ofu/sources/clock.h"
#include "sinks/history_fixture.h"
#include "support/cli_runner.h"

namespace {

using nlohmann::json;
using ofu::IdentityField;
using ofu::IdentityFieldTable;

constexpr double kT0 = 1790000000;
constexpr double kWindowS = 60;

// The one row the recipe adds.
const IdentityField kRackRow = {"rack", "The rack the GPU's node stands in (TEST-ONLY field)."};

std::vector<ofu::sinks::WindowBatch> Batches() {
  std::vector<ofu::sinks::WindowBatch> batches;
  for (int k = 1; k <= 4; ++k) {
    ofu::sinks::GpuWindow a = ofu::testing::H100Window("GPU-a", "0", 0.4);
    kRackRow.Set(a.identity, "r7");  // as a source that knows it would
    const ofu::sinks::GpuWindow b = ofu::testing::H100Window("GPU-b", "1", 0.4);
    batches.push_back(ofu::testing::Batch(kT0 + kWindowS * k, kWindowS, {a, b}));
  }
  return batches;
}

// The ofu_gpu_info sample of `uuid` in `text`, its labels as written.
std::string InfoLine(const std::string& text, const std::string& uuid) {
  const std::string start = fmt::format("ofu_gpu_info{{uuid=\"{}\"", uuid);
  const std::size_t at = text.find(start);
  if (at == std::string::npos) return "";
  return text.substr(at, text.find('\n', at) - at);
}

class IdentityFieldTableTest : public ofu::testing::CliTest {
 protected:
  const IdentityFieldTable table_ = IdentityFieldTable::Builtin().With(kRackRow);
};

TEST_F(IdentityFieldTableTest, TheTableHasTheBuiltinRowsAndTheAddedOne) {
  ASSERT_EQ(table_.rows().size(), IdentityFieldTable::Builtin().rows().size() + 1);
  ASSERT_EQ(table_.added().size(), 1u);
  EXPECT_EQ(table_.added()[0].name, "rack");
  EXPECT_TRUE(IdentityFieldTable::Builtin().added().empty());
  // A built-in row reaches its member, an added one GpuIdentity::added.
  ofu::GpuIdentity identity;
  for (const IdentityField& row : table_.rows()) row.Set(identity, std::string(row.name) + "!");
  EXPECT_EQ(identity.gpu_index, "gpu!");
  EXPECT_EQ(identity.key, "key!");
  EXPECT_EQ(identity.mig_instance, "mig_instance!");
  EXPECT_EQ(identity.added.size(), 1u);
  EXPECT_EQ(identity.added.at("rack"), "rack!");
  EXPECT_EQ(kRackRow.Of(identity), "rack!");
  EXPECT_EQ(kRackRow.Of(ofu::GpuIdentity{}), "");  // not known: empty
}

TEST_F(IdentityFieldTableTest, AnAddedFieldIsALabelOfTheGpuInfo) {
  ofu::sources::FakeClock clock(kT0);
  ofu::sinks::MetricsState state({"0.1.0", "nvml", kWindowS, 3}, clock);
  for (const auto& batch : Batches()) ASSERT_TRUE(state.Consume(batch).ok());
  const std::string text = state.Render(ofu::formats::ExpositionFormat::kPrometheusText);
  EXPECT_EQ(InfoLine(text, "GPU-a"),
            "ofu_gpu_info{uuid=\"GPU-a\",gpu=\"0\",model=\"NVIDIA H100 80GB HBM3\",sku=\"h100-sxm5\","
            "architecture=\"hopper\",rack=\"r7\"} 1");
  // Not known: no label, not an empty one.
  EXPECT_EQ(InfoLine(text, "GPU-b"),
            "ofu_gpu_info{uuid=\"GPU-b\",gpu=\"1\",model=\"NVIDIA H100 80GB HBM3\",sku=\"h100-sxm5\","
            "architecture=\"hopper\"} 1");
}

TEST_F(IdentityFieldTableTest, AnAddedFieldIsAStoreColumnReadBackAndInTheReportJson) {
  ofu::sources::FakeClock clock(kT0);
  ofu::sinks::HistoryOptions options;
  options.path = (dir_ / "history.sqlite").string();
  const std::vector<ofu::sinks::WindowBatch> batches = Batches();
  // Made by an ofu without the field: two windows, no rack column.
  ASSERT_TRUE(ofu::testing::WriteRun(options, clock, {batches.begin(), batches.begin() + 2}));
  auto before = ofu::history::ReadHistory(options.path, {});
  ASSERT_TRUE(before.ok()) << before.error().message;
  ASSERT_EQ(before->gpus.size(), 2u);
  EXPECT_TRUE(before->gpus[0].identity.added.empty());
  // Opened with it: the column is added, and two more windows written.
  options.identity = &table_;
  ASSERT_TRUE(ofu::testing::WriteRun(options, clock, {batches.begin() + 2, batches.end()}));
  EXPECT_EQ(ofu::testing::QueryText(options.path, "SELECT group_concat(uuid || '=' || rack, ' ') FROM gpus"),
            "GPU-a=r7 GPU-b=");

  // The reader needs no table: a column the built-in list does not name is
  // an added field.
  auto history = ofu::history::ReadHistory(options.path, {});
  ASSERT_TRUE(history.ok()) << history.error().message;
  ASSERT_EQ(history->gpus.size(), 2u);
  EXPECT_EQ(history->gpus[0].key(), "GPU-a");
  EXPECT_EQ(kRackRow.Of(history->gpus[0].identity), "r7");
  EXPECT_EQ(kRackRow.Of(history->gpus[1].identity), "");

  auto specs = ofu::GpuSpecDatabase::Embedded();
  ASSERT_TRUE(specs.ok());
  const json report = json::parse(ofu::render::RenderJson(ofu::analysis::BuildStoreReport(*history, *specs)));
  ASSERT_EQ(report["gpus"].size(), 2u);
  EXPECT_EQ(report["gpus"][0]["uuid"], "GPU-a");
  EXPECT_EQ(report["gpus"][0]["rack"], "r7");
  ASSERT_TRUE(report["gpus"][1].contains("rack"));
  EXPECT_TRUE(report["gpus"][1]["rack"].is_null());  // not known: null
  EXPECT_EQ(report["gpus"][0]["gpu"], "0");          // the built-in rows stay

  // The command line's report, from the same store.
  const ofu::testing::CommandResult run = Ofu(fmt::format("report --store '{}' --format json", options.path));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json cli = json::parse(run.out);
  ASSERT_EQ(cli["gpus"].size(), 2u);
  EXPECT_EQ(cli["gpus"][0]["rack"], "r7");
  EXPECT_TRUE(cli["gpus"][1]["rack"].is_null());
}

}  // namespace
