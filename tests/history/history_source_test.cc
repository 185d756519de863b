// The read strategy (history/history_source.h): which way a report is read,
// the query a source gets, and the store's scan GPU by GPU. The store is
// tests/sinks/history_fixture.h's SYNTHETIC two-GPU job (12 windows, 60 s,
// one interval of job J1 on each GPU); Prometheus's reads are tested with a
// server in tests/fleet and tests/integration.
#include "ofu/history/history_source.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sinks/history_fixture.h"

namespace ofu::history {
namespace {

HistorySource Store(const std::string& path) {
  HistorySource source;
  source.store = path;
  return source;
}

HistorySource Prometheus() {
  HistorySource source;
  source.prometheus = {"http://prometheus:9090"};
  return source;
}

TEST(HistorySource, ReadWayIsSumsOrTheStreamUnlessWindowsAreNeeded) {
  HistorySource per_window = Prometheus();
  per_window.per_window = true;
  HistorySource store_per_window = Store("h.sqlite");
  store_per_window.per_window = true;  // the store streams its windows instead of its rollups
  EXPECT_EQ(ChooseReadWay(Prometheus(), false), ReadWay::kPrometheusTotals);
  EXPECT_EQ(ChooseReadWay(Prometheus(), true), ReadWay::kWindows);
  EXPECT_EQ(ChooseReadWay(per_window, false), ReadWay::kWindows);
  EXPECT_EQ(ChooseReadWay(Store("h.sqlite"), false), ReadWay::kStoreStream);
  EXPECT_EQ(ChooseReadWay(store_per_window, false), ReadWay::kStoreStream);
  EXPECT_EQ(ChooseReadWay(Store("h.sqlite"), true), ReadWay::kWindows);
}

TEST(HistorySource, ExactlyOneSource) {
  HistorySource both = Store("h.sqlite");
  both.prometheus = {"http://prometheus:9090"};
  for (const HistorySource& source : {HistorySource{}, both}) {
    auto query = BoundQuery(source, {}, 1790000000);
    ASSERT_FALSE(query.ok());
    EXPECT_EQ(query.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(query.error().message, "give one of --store PATH (the agent's history) or --prometheus URL");
  }
}

TEST(HistorySource, PrometheusRangeIsTheLastDayUnlessTold) {
  auto day = BoundQuery(Prometheus(), {}, 1790000000);
  ASSERT_TRUE(day.ok()) << day.error().message;
  EXPECT_EQ(day->until_s, 1790000000);
  EXPECT_EQ(day->since_s, 1790000000 - 86400);
  HistoryQuery told;
  told.until_s = 1789000000;
  auto before = BoundQuery(Prometheus(), told, 1790000000);
  ASSERT_TRUE(before.ok()) << before.error().message;
  EXPECT_EQ(before->until_s, 1789000000);
  EXPECT_EQ(before->since_s, 1789000000 - 86400);
  // The store is read whole unless told.
  auto store = BoundQuery(Store("h.sqlite"), {}, 1790000000);
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_FALSE(store->since_s);
  EXPECT_FALSE(store->until_s);
}

TEST(HistorySource, StepIsToldOrEveryScrapeForPerWindowOrChosen) {
  HistorySource source = Prometheus();
  source.timeout_s = 7;
  EXPECT_EQ(QueryOptionsOf(source).step_s, PrometheusQueryOptions::kAutoStep);
  EXPECT_EQ(QueryOptionsOf(source).timeout_s, 7);
  source.per_window = true;
  EXPECT_EQ(QueryOptionsOf(source).step_s, 0);
  source.step_s = 315;
  EXPECT_EQ(QueryOptionsOf(source).step_s, 315);
}

TEST(HistorySource, TotalsComeFromPrometheusOnly) {
  auto totals = ReadTotalsFrom(Store("h.sqlite"), {});
  ASSERT_FALSE(totals.ok());
  EXPECT_EQ(totals.error().code, ErrorCode::kInvalidArgument);
}

class HistorySourceStore : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ofu_history_source_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = ofu::testing::WriteTwoGpuJobStore(dir_ / "history.sqlite");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(HistorySourceStore, TooManyWindowsSaysHowToNarrowThem) {
  HistorySource source = Store(path_);
  source.max_windows = 11;  // the store has 12
  auto history = ReadHistoryFrom(source, {});
  ASSERT_FALSE(history.ok());
  EXPECT_EQ(history.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(history.error().message.find(path_), std::string::npos) << history.error().message;
  EXPECT_TRUE(history.error().message.ends_with("; narrow it with --since/--until or --job, or raise --max-windows"))
      << history.error().message;
  source.max_windows = 12;
  auto all = ReadHistoryFrom(source, {});
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(all->windows.size(), 12u);
}

TEST_F(HistorySourceStore, ScanGivesTheHeadFirstThenOneBatchPerGpu) {
  std::vector<std::string> seen;  // "head G J" or "batch gpu W J"
  auto head = ScanHistoryByGpu(
      Store(path_), {},
      [&](const StoredHistory& batch) {
        std::int64_t gpu = batch.windows.empty() ? -1 : batch.windows.front().gpu_id;
        for (const StoredWindow& row : batch.windows) EXPECT_EQ(row.gpu_id, gpu);
        for (const StoredJob& job : batch.jobs) EXPECT_EQ(job.gpu_id, gpu);
        seen.push_back("batch " + std::to_string(gpu) + " " + std::to_string(batch.windows.size()) + " " +
                       std::to_string(batch.jobs.size()));
        return OkStatus();
      },
      [&](const StoredHistory& stored) {
        seen.push_back("head " + std::to_string(stored.gpus.size()) + " " + std::to_string(stored.jobs.size()));
      });
  ASSERT_TRUE(head.ok()) << head.error().message;
  EXPECT_EQ(seen, (std::vector<std::string>{"head 2 2", "batch 1 6 1", "batch 2 6 1"}));
  EXPECT_EQ(head->gpus.size(), 2u);
  EXPECT_EQ(head->jobs.size(), 2u);
  EXPECT_TRUE(head->windows.empty());
}

TEST_F(HistorySourceStore, AnErrorFromABatchStopsTheScan) {
  int batches = 0;
  auto head = ScanHistoryByGpu(Store(path_), {}, [&](const StoredHistory&) -> Status {
    ++batches;
    return Error::Io("disk full");
  });
  ASSERT_FALSE(head.ok());
  EXPECT_EQ(head.error().message, "disk full");
  EXPECT_EQ(batches, 1);
}

}  // namespace
}  // namespace ofu::history
