// The store's hourly rollups (history/history_rollup.h): made from hand-written
// rows, written by the agent's writer as hours close, and read by the report
// instead of the windows, which must give the report the windows give. All
// data synthetic (tests/sinks/history_fixture.h), with hand-computed answers.
#include "ofu/history/history_rollup.h"

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofu/analysis/store_report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/render/report_output.h"
#include "ofu/sinks/history_store.h"
#include "sinks/history_fixture.h"
#include "support/report_compare.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ofu::Summarizer;
using ofu::history::kRollupSpanS;
using ofu::history::RollUp;
using ofu::history::StoredRollup;
using ofu::history::StoredWindow;
using ofu::testing::Batch;
using ofu::testing::ExpectSameReport;
using ofu::testing::H100Window;
using ofu::testing::LostWindow;
using ofu::testing::QueryNumber;

constexpr double kHour = 1790280000;  // 3600 x 497300: an hour starts here

// A stored full-resolution window of `span_s` ending at `end_s` with `ofu`
// (tensor activity the same), busy or idle, at 1500 MHz, FP32 at 0.25.
StoredWindow Row(double end_s, double span_s, double ofu, bool busy) {
  StoredWindow w;
  w.gpu_id = 1;
  w.end_s = end_s;
  w.span_s = w.up_s = span_s;
  w.counters.Set(ofu::kCounterObserved, span_s);
  w.counters.Set(ofu::kCounterUtilized, ofu * span_s);
  w.counters.Set(ofu::kCounterTensorActive, ofu * span_s);
  w.counters.Set(ofu::kCounterBusy, busy ? span_s : 0);
  w.counters.Set(ofu::kCounterBusyUtilized, busy ? w.counters.utilized_s() : 0);
  w.clock_mhz = w.clock_min_mhz = w.clock_max_mhz = 1500;
  w.clock_windows = 1;
  w.counters.Set(ofu::kCounterHmmaActive, ofu * span_s);
  w.counters.Set(ofu::kCounterFp32Active, 0.25 * span_s);
  return w;
}

TEST(HistoryRollup, AnHourOfContiguousWindowsIsSummedWithItsOfuBins) {
  StoredWindow lost;  // the GPU did not answer: 0 observed, no clock
  lost.gpu_id = 1;
  lost.end_s = kHour + 3600;
  lost.span_s = 1200;
  const std::vector<StoredWindow> rows = {Row(kHour + 1200, 1200, 0.5, true), Row(kHour + 2400, 1200, 0.25, false),
                                          lost};
  const auto rollup = RollUp(rows, kHour, kHour + kRollupSpanS);
  ASSERT_TRUE(rollup);
  EXPECT_EQ(rollup->after_s, kHour);
  EXPECT_EQ(rollup->until_s, kHour + 3600);
  EXPECT_EQ(rollup->first_start_s, kHour);
  EXPECT_EQ(rollup->first_span_s, 1200);
  EXPECT_EQ(rollup->windows, 3);
  EXPECT_EQ(rollup->total.end_s, kHour + 3600);
  EXPECT_DOUBLE_EQ(rollup->total.span_s, 3600);
  EXPECT_DOUBLE_EQ(rollup->total.counters.observed_s(), 2400);
  EXPECT_DOUBLE_EQ(rollup->total.counters.utilized_s(), 600 + 300);
  EXPECT_DOUBLE_EQ(rollup->total.counters.busy_s(), 1200);
  EXPECT_DOUBLE_EQ(rollup->total.up_s, 2400);
  EXPECT_DOUBLE_EQ(*rollup->total.counters[ofu::kCounterFp32Active], 600);
  EXPECT_FALSE(rollup->total.counters[ofu::kCounterImmaActive]);  // absent in every window: absent
  EXPECT_EQ(rollup->clock_only_windows, 0);                       // the lost window has no clock either
  // 0.25 is bin 256, 0.5 bin 512.
  EXPECT_EQ(rollup->ofu_bins, (std::vector<std::pair<int, std::int64_t>>{{256, 1}, {512, 1}}));

  // Summed, they give a Summarizer what the windows give it (percentiles: within half a bin).
  Summarizer each, summed;
  for (const StoredWindow& row : rows) {
    for (const ofu::OfuWindow& w : ofu::history::WindowsOfRow(row)) each.Add(w);
  }
  summed.Add(ofu::history::TotalsOfRollup(*rollup));
  const ofu::Summary a = each.Finish(), b = summed.Finish();
  EXPECT_DOUBLE_EQ(*b.ofu, 900.0 / 2400);
  EXPECT_DOUBLE_EQ(*a.ofu, *b.ofu);
  EXPECT_DOUBLE_EQ(*a.active_ofu, *b.active_ofu);
  EXPECT_DOUBLE_EQ(*a.tensor_active, *b.tensor_active);
  EXPECT_DOUBLE_EQ(*a.idle_fraction, *b.idle_fraction);
  EXPECT_DOUBLE_EQ(*a.sm_clock_mhz, *b.sm_clock_mhz);
  EXPECT_DOUBLE_EQ(*a.non_tensor[ofu::CudaCorePipe::kFp32], *b.non_tensor[ofu::CudaCorePipe::kFp32]);
  EXPECT_EQ(a.windows, b.windows);
  EXPECT_NEAR(*a.p50, *b.p50, 0.5 / 1024);
}

TEST(HistoryRollup, AnHourItCannotSumExactlyHasNone) {
  const double end = kHour + kRollupSpanS;
  const std::vector<StoredWindow> good = {Row(kHour + 1800, 1800, 0.5, true), Row(end, 1800, 0.5, true)};
  ASSERT_TRUE(RollUp(good, kHour, end));
  auto with = [&](auto change) {
    std::vector<StoredWindow> rows = good;
    change(rows);
    return RollUp(rows, kHour, end).has_value();
  };
  EXPECT_FALSE(with([](auto& r) { r[1].span_s = 1000; }));  // a gap before the second window
  EXPECT_FALSE(with([](auto& r) { r[1].flags |= ofu::history::kHistoryDownsampled; }));
  EXPECT_FALSE(with([](auto& r) {
    r[1].counters.Set(ofu::kCounterFp32Active, std::nullopt);
  }));                                                                             // FP32 in one window, not the other
  EXPECT_FALSE(with([](auto& r) { r[1].counters.Set(ofu::kCounterBusy, 900); }));  // partly busy
  EXPECT_FALSE(with([](auto& r) { r[1].clock_mhz.reset(); }));                     // an OFU without a clock
  EXPECT_FALSE(with([&](auto& r) { r[1].end_s = end + 1; }));                      // not in the span
  EXPECT_FALSE(RollUp({}, kHour, end));
}

TEST(HistoryRollup, OfuBinsRoundTripAndABadBlobIsAnError) {
  const std::vector<std::pair<int, std::int64_t>> bins = {{0, 1}, {513, 240}, {2047, 70000}};
  const std::string blob = ofu::history::EncodeOfuBins(bins);
  ASSERT_EQ(blob.size(), 18u);
  const auto* data = reinterpret_cast<const unsigned char*>(blob.data());
  auto back = ofu::history::DecodeOfuBins(data, blob.size());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, bins);
  EXPECT_NE(ofu::history::DecodeOfuBins(data, 7).error().message.find("7 bytes, not a multiple of 6"),
            std::string::npos);
  const unsigned char out_of_range[6] = {0x00, 0x08, 1, 0, 0, 0};  // bin 2048
  EXPECT_NE(ofu::history::DecodeOfuBins(out_of_range, 6).error().message.find("bin 2048 out of range"),
            std::string::npos);
  const unsigned char zero[6] = {5, 0, 0, 0, 0, 0};
  EXPECT_NE(ofu::history::DecodeOfuBins(zero, 6).error().message.find("count of 0"), std::string::npos);
  const unsigned char descending[12] = {5, 0, 1, 0, 0, 0, 4, 0, 1, 0, 0, 0};
  EXPECT_NE(ofu::history::DecodeOfuBins(descending, 12).error().message.find("bin 4 after bin 5"), std::string::npos);
}

class HistoryRollupStore : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("ofu-rollup-{}-{}", ::getpid(), ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    options_.path = (dir_ / "history.sqlite").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<ofu::sinks::HistoryStore> OpenStore() {
    auto store = ofu::sinks::HistoryStore::Open(options_, clock_);
    EXPECT_TRUE(store.ok()) << store.error().message;
    return store.ok() ? std::move(*store) : nullptr;
  }

  // 600 s windows of GPU-0 at OFU 0.5, ending at kHour + 600 k for each k.
  void WriteWindows(ofu::sinks::HistoryStore& store, const std::vector<int>& ks) {
    for (int k : ks) ASSERT_TRUE(store.Consume(Batch(kHour + 600.0 * k, 600, {H100Window("GPU-0", "0", 0.5)})).ok());
  }

  double Rollups() const { return QueryNumber(options_.path, "SELECT count(*) FROM rollups"); }

  // Changes the file behind the store's back (an older agent, a damaged file).
  void Exec(const char* sql) const {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(options_.path.c_str(), &db), SQLITE_OK);
    const int done = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    sqlite3_close(db);
    ASSERT_EQ(done, SQLITE_OK) << sql;
  }

  fs::path dir_;
  ofu::sinks::HistoryOptions options_;
  ofu::sources::FakeClock clock_{kHour};
};

TEST_F(HistoryRollupStore, TheAgentRollsUpEachHourAsItCloses) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  WriteWindows(*store, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  EXPECT_EQ(Rollups(), 1);  // the first hour closed when window 7 came; the second is open
  WriteWindows(*store, {13});
  EXPECT_EQ(Rollups(), 2);
  const std::string second = fmt::format(" FROM rollups WHERE until_s = {}", kHour + 7200);
  EXPECT_EQ(QueryNumber(options_.path, "SELECT windows" + second), 6);
  EXPECT_EQ(QueryNumber(options_.path, "SELECT first_start_s" + second), kHour + 3600);
  EXPECT_EQ(QueryNumber(options_.path, "SELECT end_s" + second), kHour + 7200);
  EXPECT_EQ(QueryNumber(options_.path, "SELECT observed_s" + second), 3600);
  EXPECT_EQ(QueryNumber(options_.path, "SELECT utilized_s" + second), 1800);
  // One bin (512, 0.5's) with 6 windows: 6 bytes.
  EXPECT_EQ(QueryNumber(options_.path, "SELECT length(ofu_histogram)" + second), 6);

  // Read with rollups, the stream hands over the two hours summed, then the open hour's window.
  auto stream = ofu::history::HistoryStream::Open(options_.path, {}, /*rollups=*/true);
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  StoredWindow row;
  StoredRollup rollup;
  std::vector<double> ends;
  for (auto item = (*stream)->Next(row, rollup); item.ok() && *item != ofu::history::HistoryStream::Item::kEnd;
       item = (*stream)->Next(row, rollup)) {
    ends.push_back(*item == ofu::history::HistoryStream::Item::kRollup ? rollup.until_s : row.end_s);
  }
  EXPECT_EQ(ends, (std::vector<double>{kHour + 3600, kHour + 7200, kHour + 7800}));
  // Reading it window by window would drop the rollups: refused.
  auto reopened = ofu::history::HistoryStream::Open(options_.path, {}, /*rollups=*/true);
  ASSERT_TRUE(reopened.ok());
  auto windows_only = (*reopened)->Next(row);
  ASSERT_FALSE(windows_only.ok());
  EXPECT_EQ(windows_only.error().code, ofu::ErrorCode::kInvalidArgument);
}

TEST_F(HistoryRollupStore, AGapLeavesAnHourUnsummedUntilTheLateWindowFillsIt) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  WriteWindows(*store, {1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
  EXPECT_EQ(QueryNumber(options_.path, fmt::format("SELECT count(*) FROM rollups WHERE until_s = {}", kHour + 3600)),
            0);
  EXPECT_EQ(Rollups(), 1);    // the second hour
  WriteWindows(*store, {3});  // late, into the closed first hour
  EXPECT_EQ(Rollups(), 2);
  EXPECT_EQ(QueryNumber(options_.path, fmt::format("SELECT windows FROM rollups WHERE until_s = {}", kHour + 3600)), 6);
}

TEST_F(HistoryRollupStore, AVersion4StoreGetsItsRollupsTableAndRollsUpFromThen) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store);
    WriteWindows(*store, {1, 2, 3, 4, 5, 6, 7});
  }
  ASSERT_NO_FATAL_FAILURE(Exec("DROP TABLE rollups; UPDATE meta SET value = '4' WHERE key = 'schema_version'"));
  auto store = OpenStore();
  ASSERT_TRUE(store);
  EXPECT_EQ(QueryNumber(options_.path, "SELECT value FROM meta WHERE key = 'schema_version'"), 5);
  EXPECT_EQ(Rollups(), 0);
  WriteWindows(*store, {8, 9, 10, 11, 12, 13});
  EXPECT_EQ(Rollups(), 1);  // the second hour; the first is read window by window
}

TEST_F(HistoryRollupStore, ABadHistogramIsAnErrorNamingTheHour) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store);
    WriteWindows(*store, {1, 2, 3, 4, 5, 6, 7});
  }
  ASSERT_NO_FATAL_FAILURE(Exec("UPDATE rollups SET ofu_histogram = x'0102'"));
  auto specs = ofu::GpuSpecDatabase::Embedded();
  ASSERT_TRUE(specs.ok());
  auto report = ofu::analysis::ReadStoreReport(options_.path, {}, *specs);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code, ofu::ErrorCode::kMalformedInput);
  EXPECT_NE(report.error().message.find(fmt::format("rollup of GPU 1 for the windows ending in ({}, {}]", kHour,
                                                    kHour + 3600)),
            std::string::npos)
      << report.error().message;
  EXPECT_NE(report.error().message.find("2 bytes, not a multiple of 6"), std::string::npos);
  // Without rollups the windows are still read.
  EXPECT_TRUE(ofu::analysis::ReadStoreReport(options_.path, {}, *specs, {.rollups = false}).ok());
}

// Two GPUs over five hours of 60 s windows and one more: job J1 on GPU-0
// from 1.5 h to 3.5 h (it starts in hour 2 and ends in hour 4), GPU-1 lost
// for a window in hour 3. The report from rollups is the report from the
// windows, over everything, a range that cuts hours, and the job.
TEST_F(HistoryRollupStore, TheReportFromRollupsIsTheReportFromTheWindows) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store);
    for (int k = 1; k <= 5 * 60 + 1; ++k) {
      const double end = kHour + 60.0 * k;
      const bool in_job = end > kHour + 5400 && end <= kHour + 12600;
      std::map<std::string, std::string> jobs;
      if (in_job) jobs["GPU-0"] = "J1";
      ofu::sinks::GpuWindow gpu0 = H100Window("GPU-0", "0", 0.1 + 0.05 * (k % 9), in_job);
      gpu0.pipes.hmma = *gpu0.window.tensor_active;
      ofu::sinks::GpuWindow gpu1 = k == 150 ? LostWindow("GPU-1", "1") : H100Window("GPU-1", "1", 0.2 + 0.03 * (k % 7));
      ASSERT_TRUE(store->Consume(Batch(end, 60, {gpu0, gpu1}, jobs)).ok());
    }
  }
  // Hours 1-5 are closed on both GPUs; on GPU-0 hours 2 and 4 are cut in two
  // where the job starts and ends: 7 rollups there, 5 on GPU-1.
  EXPECT_EQ(Rollups(), 12);
  auto specs = ofu::GpuSpecDatabase::Embedded();
  ASSERT_TRUE(specs.ok());
  ofu::history::HistoryQuery all, cut, job;
  cut.since_s = kHour + 1800;  // from the middle of hour 1 to the middle of hour 5
  cut.until_s = kHour + 16200;
  job.job_id = "J1";
  // Rollups read, and the windows in them: all 12 (600 windows); from 0.5 h
  // to 4.5 h, hours 2-4 of each GPU (5 + 3 rollups, 360 windows); the job,
  // the second half of hour 2, hour 3 and the first half of hour 4 on GPU-0
  // (3 rollups, 120 windows).
  struct Expected {
    ofu::history::HistoryQuery query;
    int rollups, windows;
  };
  for (const auto& [query, rollups, windows] : {Expected{all, 12, 600}, Expected{cut, 8, 360}, Expected{job, 3, 120}}) {
    auto summed = ofu::analysis::ReadStoreReport(options_.path, query, *specs);
    auto each = ofu::analysis::ReadStoreReport(options_.path, query, *specs, {.rollups = false});
    ASSERT_TRUE(summed.ok()) << summed.error().message;
    ASSERT_TRUE(each.ok()) << each.error().message;
    EXPECT_EQ(summed->rollups, rollups) << query.job_id.value_or("range");
    EXPECT_EQ(summed->report.history_read->windows_in_rollups, windows);
    EXPECT_EQ(summed->rows, each->rows);
    EXPECT_EQ(each->rollups, 0);
    ExpectSameReport(json::parse(ofu::render::RenderJson(summed->report)),
                     json::parse(ofu::render::RenderJson(each->report)), query.job_id.value_or("range"));
  }
}

}  // namespace
