// The agent's history store: windows and job intervals written and read
// back, retention, downsampling, a full disk; and the report built from the
// stored rows. All data synthetic (tests/sinks/history_fixture.h), with
// hand-computed answers.
#include "ofu/sinks/history_store.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ofu/analysis/store_report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/core/non_tensor.h"
#include "ofu/history/history_columns.h"
#include "ofu/history/history_reader.h"
#include "ofu/render/report_output.h"
#include "sinks/history_fixture.h"

namespace {

namespace fs = std::filesystem;
using ofu::history::HistoryQuery;
using ofu::history::ReadHistory;
using ofu::history::StoredHistory;
using ofu::history::StoredWindow;
using ofu::sinks::HistoryOptions;
using ofu::sinks::HistoryStore;
using ofu::testing::Batch;
using ofu::testing::H100Window;
using ofu::testing::LostWindow;
using ofu::testing::QueryNumber;
using ofu::testing::QueryText;

class HistoryStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("ofu-store-{}-{}", ::getpid(), ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    options_.path = (dir_ / "history.sqlite").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<HistoryStore> OpenStore() {
    auto store = HistoryStore::Open(options_, clock_);
    EXPECT_TRUE(store.ok()) << store.error().message;
    return store.ok() ? std::move(*store) : nullptr;
  }

  StoredHistory Read(const HistoryQuery& query = {}) {
    auto history = ReadHistory(options_.path, query);
    EXPECT_TRUE(history.ok()) << history.error().message;
    return history.ok() ? *history : StoredHistory{};
  }

  double Count(const std::string& table) { return QueryNumber(options_.path, "SELECT count(*) FROM " + table); }

  // Writes one window of GPU-0, then runs `sql` on the file to make it what
  // an older agent wrote.
  // A store as an older agent wrote it: the current schema made older by
  // `sql`, without the rollups table (schema version 5).
  void MakeOldStore(const char* sql) {
    {
      auto store = OpenStore();
      ASSERT_TRUE(store);
      ASSERT_TRUE(store->Consume(Batch(1002, 2, {H100Window("GPU-0", "0", 0.5)})).ok());
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(options_.path.c_str(), &db), SQLITE_OK);
    int done = sqlite3_exec(db, "DROP TABLE rollups", nullptr, nullptr, nullptr);
    if (done == SQLITE_OK) done = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    const std::string error = sqlite3_errmsg(db);
    sqlite3_close(db);
    ASSERT_EQ(done, SQLITE_OK) << error;
  }

  fs::path dir_;
  HistoryOptions options_;
  ofu::sources::FakeClock clock_{1790000000};
};

TEST_F(HistoryStoreTest, WindowsAreWrittenAndReadBackExactly) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  // GPU 0: OFU 0.5, tensor 0.75, busy, 2 s windows. GPU 1: tensor but no clock: no OFU.
  for (int k = 1; k <= 3; ++k) {
    ofu::sinks::GpuWindow noclock = H100Window("GPU-1", "1", std::nullopt, false, 0.25);
    ASSERT_TRUE(store->Consume(Batch(1000 + 2.0 * k, 2, {H100Window("GPU-0", "0", 0.5, true, 0.75), noclock})).ok());
  }
  const StoredHistory history = Read();
  ASSERT_EQ(history.gpus.size(), 2u);
  EXPECT_EQ(history.gpus[0].key(), "GPU-0");
  EXPECT_EQ(history.gpus[0].identity.gpu_index, "0");
  EXPECT_EQ(history.gpus[0].identity.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(history.gpus[0].sku, "h100-sxm5");
  EXPECT_EQ(history.gpus[0].architecture, "hopper");
  EXPECT_EQ(history.gpus[0].identity.hostname, "synthetic-node");
  EXPECT_EQ(history.gpus[0].last_end_s, 1006);
  ASSERT_EQ(history.windows.size(), 6u);

  StoredWindow valid;
  valid.gpu_id = history.gpus[0].id;
  valid.end_s = 1002;
  valid.span_s = 2;
  valid.counters.Set(ofu::kCounterObserved, 2);
  valid.counters.Set(ofu::kCounterUtilized, 1.0);  // 0.5 x 2 s
  valid.counters.Set(ofu::kCounterBusy, 2);
  valid.counters.Set(ofu::kCounterBusyUtilized, 1.0);
  valid.counters.Set(ofu::kCounterTensorActive, 1.5);  // 0.75 x 2 s
  valid.clock_mhz = valid.clock_min_mhz = valid.clock_max_mhz = 1500;
  valid.clock_windows = 1;
  valid.up_s = 2;
  valid.flags = 0;
  EXPECT_EQ(history.windows[0], valid);
  valid.end_s = 1006;
  EXPECT_EQ(history.windows[2], valid);

  // No clock: a row all the same, with nothing observed and a flag saying why.
  StoredWindow invalid;
  invalid.gpu_id = history.gpus[1].id;
  invalid.end_s = 1002;
  invalid.span_s = 2;
  invalid.up_s = 2;
  invalid.flags = ofu::history::kHistoryNoClock;
  EXPECT_EQ(history.windows[3], invalid);
}

TEST_F(HistoryStoreTest, LostGpuWindowIsARowWithNothingObserved) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->Consume(Batch(1001, 1, {LostWindow("GPU-0", "0")})).ok());
  const StoredHistory history = Read();
  ASSERT_EQ(history.windows.size(), 1u);
  const StoredWindow& w = history.windows[0];
  EXPECT_EQ(w.counters.observed_s(), 0);
  EXPECT_EQ(w.counters.utilized_s(), 0);
  EXPECT_EQ(w.up_s, 0);
  EXPECT_EQ(w.span_s, 1);
  EXPECT_FALSE(w.clock_mhz);
  EXPECT_EQ(w.flags, ofu::history::kHistoryGpuDown | ofu::history::kHistoryNoTensor | ofu::history::kHistoryNoClock);
}

TEST_F(HistoryStoreTest, JobIntervalsOpenCloseAndChange) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store);
    // Windows ending 11..16 (1 s): no job, A, A, B, none, C.
    const std::vector<std::string> job = {"", "A", "A", "B", "", "C"};
    for (int k = 0; k < 6; ++k) {
      std::map<std::string, std::string> jobs;
      if (!job[k].empty()) jobs["GPU-0"] = job[k];
      ASSERT_TRUE(store->Consume(Batch(11.0 + k, 1, {H100Window("GPU-0", "0", 0.5)}, jobs)).ok());
    }
    const StoredHistory history = Read();
    ASSERT_EQ(history.jobs.size(), 3u);
    // A held the windows ending 12 and 13: (11, 13]. B the window ending 14. C is open.
    EXPECT_EQ(history.jobs[0].job_id, "A");
    EXPECT_EQ(history.jobs[0].user, "alice");
    EXPECT_EQ(history.jobs[0].job_name, "train-A");
    EXPECT_EQ(history.jobs[0].scheduler, "slurm");
    EXPECT_EQ(history.jobs[0].start_s, 11);
    EXPECT_EQ(history.jobs[0].end_s, 13);
    EXPECT_EQ(history.jobs[1].job_id, "B");
    EXPECT_EQ(history.jobs[1].start_s, 13);
    EXPECT_EQ(history.jobs[1].end_s, 14);
    EXPECT_EQ(history.jobs[2].job_id, "C");
    EXPECT_EQ(history.jobs[2].start_s, 15);
    EXPECT_FALSE(history.jobs[2].end_s);

    // The job filter keeps the windows inside the job's intervals only.
    HistoryQuery only_a;
    only_a.job_id = "A";
    const StoredHistory a = Read(only_a);
    ASSERT_EQ(a.windows.size(), 2u);
    EXPECT_EQ(a.windows[0].end_s, 12);
    EXPECT_EQ(a.windows[1].end_s, 13);
    ASSERT_EQ(a.jobs.size(), 1u);
  }
  // A restart closes C at the last stored window: the downtime is unknown.
  auto reopened = OpenStore();
  ASSERT_TRUE(reopened);
  const StoredHistory history = Read();
  ASSERT_EQ(history.jobs.size(), 3u);
  EXPECT_EQ(history.jobs[2].end_s, 16);
  // C seen again after the restart: a new interval from that window's start.
  ASSERT_TRUE(reopened->Consume(Batch(30, 1, {H100Window("GPU-0", "0", 0.5)}, {{"GPU-0", "C"}})).ok());
  const StoredHistory after = Read();
  ASSERT_EQ(after.jobs.size(), 4u);
  EXPECT_EQ(after.jobs[3].start_s, 29);
  EXPECT_FALSE(after.jobs[3].end_s);
}

TEST_F(HistoryStoreTest, RetentionDeletesOldWindowsAndClosedJobsWhenMaintenanceIsDue) {
  options_.retention_days = 100.0 / 86400;  // 100 s
  options_.full_resolution_days = 1;
  options_.maintenance_interval_s = 3600;
  auto store = OpenStore();
  ASSERT_TRUE(store);
  // Windows ending 1..300 s, one per second of the clock; job J on 1..50, K after.
  for (int k = 1; k <= 300; ++k) {
    ASSERT_TRUE(store->Consume(Batch(k, 1, {H100Window("GPU-0", "0", 0.5)}, {{"GPU-0", k <= 50 ? "J" : "K"}})).ok());
    clock_.SleepS(1);
  }
  // Maintenance ran at the first batch only (interval 3600 s of the clock): nothing deleted yet.
  EXPECT_EQ(Count("windows"), 300);
  EXPECT_EQ(Count("jobs"), 2);
  clock_.SleepS(3600);
  ASSERT_TRUE(store->Consume(Batch(301, 1, {H100Window("GPU-0", "0", 0.5)}, {{"GPU-0", "K"}})).ok());
  // Kept: windows ending in (301 - 100, 301] = 202..301, i.e. 100; J (closed at 50) is gone, K (open) stays.
  EXPECT_EQ(Count("windows"), 100);
  EXPECT_EQ(QueryNumber(options_.path, "SELECT min(end_s) FROM windows"), 202);
  EXPECT_EQ(Count("jobs"), 1);
  EXPECT_EQ(Read().jobs.at(0).job_id, "K");
}

// Irregular synthetic data: OFU, busy, lost and clockless windows mixed.
ofu::sinks::GpuWindow Irregular(const std::string& uuid, int k, int salt) {
  const int m = (k * 7 + salt) % 23;
  if (m == 5) return LostWindow(uuid, "0");
  if (m == 11) return H100Window(uuid, "0", std::nullopt, false, 0.3);
  const double ofu = 0.013 * m + 0.001 * (k % 5);
  return H100Window(uuid, "0", ofu, m % 3 != 0, ofu * 1.1, 1400.0 + 20.0 * (k % 9));
}

// sum(num) / sum(den) over the windows; a field is a counter's id
// (core/output_counters.h), or kSpan / kUp for span_s and up_s.
constexpr std::size_t kSpan = 100, kUp = 101;
double Ratio(const StoredHistory& h, std::size_t num, std::size_t den) {
  const auto value = [](const StoredWindow& w, std::size_t field) {
    return field == kSpan ? w.span_s : field == kUp ? w.up_s : w.counters.value_or_0(field);
  };
  double n = 0, d = 0;
  for (const StoredWindow& w : h.windows) {
    n += value(w, num);
    d += value(w, den);
  }
  return n / d;
}

TEST_F(HistoryStoreTest, DownsamplingKeepsOfuExactlyAndReducesRows) {
  options_.full_resolution_days = 100.0 / 86400;  // the last 100 s stay at full resolution
  options_.downsampled_span_s = 10;
  options_.maintenance_interval_s = 3600;
  auto store = OpenStore();
  ASSERT_TRUE(store);
  for (int k = 1; k <= 1000; ++k) {
    ASSERT_TRUE(store->Consume(Batch(k, 1, {Irregular("GPU-0", k, 0), Irregular("GPU-1", k, 4)})).ok());
  }
  ASSERT_EQ(Count("windows"), 2000);
  const StoredHistory before = Read();
  HistoryQuery middle;
  middle.since_s = 500;
  middle.until_s = 600;  // whole 10 s spans
  const StoredHistory middle_before = Read(middle);
  auto specs = ofu::GpuSpecDatabase::Embedded();
  ASSERT_TRUE(specs.ok());
  const auto report_before = ofu::analysis::BuildStoreReport(before, *specs);

  clock_.SleepS(3600);
  ASSERT_TRUE(store->Consume(Batch(1001, 1, {Irregular("GPU-0", 1001, 0), Irregular("GPU-1", 1001, 4)})).ok());
  // Limit floor((1001 - 100) / 10) x 10 = 900: windows ending 1..900 become 90 rows per GPU,
  // 901..1001 (101) stay: 191 per GPU.
  EXPECT_EQ(Count("windows"), 2 * 191);
  EXPECT_EQ(QueryNumber(options_.path, "SELECT count(*) FROM windows WHERE flags & 256"), 2 * 90);
  EXPECT_EQ(QueryNumber(options_.path, "SELECT max(end_s) FROM windows WHERE flags & 256"), 900);
  EXPECT_EQ(QueryNumber(options_.path, "SELECT min(span_s) FROM windows WHERE flags & 256"), 10);

  HistoryQuery old;
  old.until_s = 1000;  // the same windows as `before`
  const StoredHistory after = Read(old);
  EXPECT_NEAR(Ratio(after, ofu::kCounterUtilized, ofu::kCounterObserved),
              Ratio(before, ofu::kCounterUtilized, ofu::kCounterObserved), 1e-12);
  EXPECT_NEAR(Ratio(after, ofu::kCounterBusyUtilized, ofu::kCounterBusy),
              Ratio(before, ofu::kCounterBusyUtilized, ofu::kCounterBusy), 1e-12);
  EXPECT_NEAR(Ratio(after, ofu::kCounterTensorActive, ofu::kCounterObserved),
              Ratio(before, ofu::kCounterTensorActive, ofu::kCounterObserved), 1e-12);
  EXPECT_NEAR(Ratio(after, kUp, kSpan), Ratio(before, kUp, kSpan), 1e-12);
  const StoredHistory middle_after = Read(middle);
  EXPECT_EQ(middle_after.windows.size(), 2u * 10);
  EXPECT_NEAR(Ratio(middle_after, ofu::kCounterUtilized, ofu::kCounterObserved),
              Ratio(middle_before, ofu::kCounterUtilized, ofu::kCounterObserved), 1e-12);

  // The report from the downsampled rows: the same OFU, active OFU, tensor activity and idle share.
  const auto report_after = ofu::analysis::BuildStoreReport(after, *specs);
  const auto& o1 = report_before.overall;
  const auto& o2 = report_after.overall;
  ASSERT_TRUE(o1.ofu && o2.ofu && o1.active_ofu && o2.active_ofu);
  EXPECT_NEAR(*o2.ofu, *o1.ofu, 1e-12);
  EXPECT_NEAR(*o2.active_ofu, *o1.active_ofu, 1e-12);
  EXPECT_NEAR(*o2.tensor_active, *o1.tensor_active, 1e-12);
  EXPECT_NEAR(*o2.idle_fraction, *o1.idle_fraction, 1e-12);
  EXPECT_NEAR(o2.seconds, o1.seconds, 1e-9);
  EXPECT_NEAR(*o2.sm_clock_mhz, *o1.sm_clock_mhz, 1e-9);
}

TEST_F(HistoryStoreTest, FullDiskRollsBackTheBatchAndRecovers) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  for (int k = 1; k <= 5; ++k) ASSERT_TRUE(store->Consume(Batch(k, 1, {H100Window("GPU-0", "0", 0.5)})).ok());
  ASSERT_EQ(Count("windows"), 5);
  // The disk "fills": no page beyond those in use. 200 new GPUs need new pages.
  const double pages = QueryNumber(options_.path, "PRAGMA page_count");
  ASSERT_TRUE(store->SetMaxPageCount(static_cast<std::int64_t>(pages)).ok());
  std::vector<ofu::sinks::GpuWindow> many;
  for (int g = 0; g < 200; ++g) {
    many.push_back(H100Window(fmt::format("GPU-{:08d}-0000-4000-8000-000000000000", g), std::to_string(g), 0.5));
  }
  const auto full = Batch(6, 1, many, {{"GPU-00000000-0000-4000-8000-000000000000", "J"}});
  const ofu::Status failed = store->Consume(full);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message, "history store " + options_.path +
                                        ": database or disk is full; windows are not being kept, metrics "
                                        "still are");
  // Nothing of the batch was kept.
  EXPECT_EQ(Count("windows"), 5);
  EXPECT_EQ(Count("gpus"), 1);
  EXPECT_EQ(Count("jobs"), 0);
  // Still full: still an error, still nothing partial.
  EXPECT_FALSE(store->Consume(full).ok());
  EXPECT_EQ(Count("windows"), 5);

  // Space frees: the next batch goes in, without reopening.
  ASSERT_TRUE(store->SetMaxPageCount(1 << 20).ok());
  const ofu::Status recovered = store->Consume(full);
  ASSERT_TRUE(recovered.ok()) << recovered.error().message;
  EXPECT_EQ(Count("windows"), 5 + 200);
  EXPECT_EQ(Count("gpus"), 1 + 200);
  EXPECT_EQ(Count("jobs"), 1);
}

TEST_F(HistoryStoreTest, OpenWithAPageLimitBelowTheNeedFailsAtWriteAndAReopenWithMoreSucceeds) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->Consume(Batch(1, 1, {H100Window("GPU-0", "0", 0.5)})).ok());
  }
  options_.max_page_count = static_cast<std::int64_t>(QueryNumber(options_.path, "PRAGMA page_count"));
  std::vector<ofu::sinks::GpuWindow> many;
  for (int g = 0; g < 200; ++g) many.push_back(H100Window(fmt::format("GPU-big-{:04d}", g), "0", 0.5));
  {
    auto store = OpenStore();
    ASSERT_TRUE(store);
    const ofu::Status failed = store->Consume(Batch(2, 1, many));
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.error().message.find("database or disk is full"), std::string::npos);
  }
  EXPECT_EQ(Count("windows"), 1);
  options_.max_page_count = 100000;
  auto store = OpenStore();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->Consume(Batch(2, 1, many)).ok());
  EXPECT_EQ(Count("windows"), 201);
}

TEST_F(HistoryStoreTest, MissingDirectoryIsAnErrorNamingIt) {
  options_.path = (dir_ / "no-such-dir" / "history.sqlite").string();
  auto store = HistoryStore::Open(options_, clock_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ofu::ErrorCode::kIo);
  EXPECT_NE(store.error().message.find((dir_ / "no-such-dir").string() + " does not exist"), std::string::npos)
      << store.error().message;
}

TEST_F(HistoryStoreTest, UnknownSchemaVersionIsAnError) {
  { ASSERT_TRUE(OpenStore()); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(options_.path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto store = HistoryStore::Open(options_, clock_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ofu::ErrorCode::kMalformedInput);
  EXPECT_NE(store.error().message.find("schema version 99, this ofu reads versions 1 to 5"), std::string::npos)
      << store.error().message;
  auto read = ReadHistory(options_.path, {});
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, ofu::ErrorCode::kMalformedInput);
}

TEST_F(HistoryStoreTest, PipeSecondsAreStoredWhereTheSourceHasThemAndNullElsewhere) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  ofu::sinks::GpuWindow with = H100Window("GPU-0", "0", 0.5, true, 0.75);
  with.pipes.hmma = 0.5;
  with.pipes.imma = 0.25;
  with.pipes.dfma = 0.0;
  ofu::sinks::GpuWindow without = H100Window("GPU-1", "1", 0.5, true, 0.75);
  ofu::sinks::GpuWindow invalid = with;  // no OFU: nothing observed, no pipe seconds
  invalid.window.ofu.reset();
  ASSERT_TRUE(store->Consume(Batch(1002, 2, {with, without})).ok());
  ASSERT_TRUE(store->Consume(Batch(1004, 2, {invalid, without})).ok());
  const StoredHistory history = Read();
  ASSERT_EQ(history.windows.size(), 4u);
  const StoredWindow& w = history.windows[0];  // GPU-0 at 1002: 0.5 × 2 s, 0.25 × 2 s, 0 × 2 s
  EXPECT_EQ(w.counters[ofu::kCounterHmmaActive], 1.0);
  EXPECT_EQ(w.counters[ofu::kCounterImmaActive], 0.5);
  EXPECT_EQ(w.counters[ofu::kCounterDfmaActive], 0.0);
  EXPECT_FALSE(history.windows[1].counters[ofu::kCounterHmmaActive]);  // GPU-0 at 1004: no OFU
  EXPECT_FALSE(history.windows[2].counters[ofu::kCounterHmmaActive]);  // GPU-1: no pipe counters: NULL, not 0
  EXPECT_FALSE(history.windows[2].counters[ofu::kCounterDfmaActive]);
  EXPECT_EQ(QueryNumber(options_.path, "SELECT count(*) FROM windows WHERE hmma_active_s IS NULL"), 3);
}

TEST_F(HistoryStoreTest, ASchemaVersion1StoreIsReadAndUpgradedOnOpen) {
  // What a version 1 agent wrote: no pipe columns, no MIG columns.
  ASSERT_NO_FATAL_FAILURE(
      MakeOldStore("ALTER TABLE windows DROP COLUMN fp64_active_s; ALTER TABLE windows DROP COLUMN fp32_active_s;"
                   "ALTER TABLE windows DROP COLUMN fp16_active_s; ALTER TABLE windows DROP COLUMN non_tensor_tflop;"
                   "ALTER TABLE windows DROP COLUMN non_tensor_peak_s;"
                   "ALTER TABLE windows DROP COLUMN hmma_active_s; ALTER TABLE windows DROP COLUMN imma_active_s;"
                   "ALTER TABLE windows DROP COLUMN dfma_active_s;"
                   "ALTER TABLE gpus DROP COLUMN mig_profile; ALTER TABLE gpus DROP COLUMN mig_instance;"
                   "UPDATE meta SET value = '1' WHERE key = 'schema_version'"));
  StoredHistory old = Read();
  ASSERT_EQ(old.windows.size(), 1u);
  EXPECT_DOUBLE_EQ(old.windows[0].counters.utilized_s(), 1.0);
  EXPECT_FALSE(old.windows[0].counters[ofu::kCounterHmmaActive]);
  // The agent opening it upgrades it; old rows keep NULL pipe seconds.
  auto store = OpenStore();
  ASSERT_TRUE(store);
  ofu::sinks::GpuWindow with = H100Window("GPU-0", "0", 0.5);
  with.pipes.hmma = 0.5;
  ASSERT_TRUE(store->Consume(Batch(1004, 2, {with})).ok());
  EXPECT_EQ(QueryNumber(options_.path, "SELECT value FROM meta WHERE key = 'schema_version'"),
            ofu::history::kHistorySchemaVersion);  // upgraded in turn to the newest (5)
  const StoredHistory upgraded = Read();
  ASSERT_EQ(upgraded.windows.size(), 2u);
  EXPECT_FALSE(upgraded.windows[0].counters[ofu::kCounterHmmaActive]);
  EXPECT_EQ(upgraded.windows[1].counters[ofu::kCounterHmmaActive], 1.0);
}

TEST_F(HistoryStoreTest, NonTensorHandValueIsStoredAndReportedPerGpuAndJob) {
  // H100 SXM5, FP32 pipe 0.6 at 1755 MHz (OFU 0.02): the bound 0.6 x 132 x 128 x 2 x 1.755e9
  // = 35.582976 TFLOP/s, as core/non_tensor computes it for the window.
  auto store = OpenStore();
  ASSERT_TRUE(store);
  ofu::sinks::GpuWindow gpu = H100Window("GPU-0", "0", 0.02, true, 0.02, 1755.0);
  gpu.window.non_tensor[ofu::CudaCorePipe::kFp32] = 0.6;
  ofu::CompleteNonTensor(gpu.window.non_tensor, 1755.0,
                         ofu::NonTensorScaleOf(**ofu::GpuSpecDatabase::Embedded()->Lookup("h100-sxm5"), 132));
  ofu::sinks::GpuWindow bare = H100Window("GPU-1", "1", 0.5);  // no CUDA-core pipes: NULL, not 0
  ASSERT_TRUE(store->Consume(Batch(1002, 2, {gpu, bare}, {{"GPU-0", "J"}})).ok());
  ASSERT_TRUE(store->Consume(Batch(1004, 2, {gpu, bare}, {{"GPU-0", "J"}})).ok());
  const StoredHistory history = Read();
  ASSERT_EQ(history.windows.size(), 4u);
  EXPECT_NEAR(*history.windows[0].counters[ofu::kCounterFp32Active], 1.2, 1e-12);
  EXPECT_NEAR(*history.windows[0].counters[ofu::kCounterNonTensorTflop], 2 * 35.582976, 1e-3);
  EXPECT_FALSE(history.windows[0].counters[ofu::kCounterFp64Active]);
  EXPECT_FALSE(history.windows[2].counters[ofu::kCounterFp32Active]);
  EXPECT_FALSE(history.windows[2].counters[ofu::kCounterNonTensorTflop]);

  auto specs = ofu::GpuSpecDatabase::Embedded();
  const auto report = ofu::analysis::BuildStoreReport(history, *specs);
  ASSERT_EQ(report.gpus.size(), 2u);
  const ofu::NonTensorFigures& nt = report.gpus[0].summary.non_tensor;
  EXPECT_NEAR(*nt[ofu::CudaCorePipe::kFp32], 0.6, 1e-12);
  EXPECT_NEAR(*nt.flops_upper_bound_tflops, 35.582976, 1e-3);
  EXPECT_NEAR(*nt.share_of_peak, 35.582976 / 66.9, 1e-4);
  EXPECT_FALSE(report.gpus[1].summary.non_tensor[ofu::CudaCorePipe::kFp32]);
  ASSERT_EQ(report.jobs.size(), 1u);
  EXPECT_NEAR(*report.jobs[0].non_tensor.flops_upper_bound_tflops, 35.582976, 1e-3);
  EXPECT_NEAR(*report.jobs[0].non_tensor[ofu::CudaCorePipe::kFp32], 0.6, 1e-12);
  const std::string json = ofu::render::RenderJson(report);
  EXPECT_NE(json.find("\"flops_upper_bound_tflops\": 35.58"), std::string::npos) << json;
  EXPECT_NE(json.find("\"advice\""), std::string::npos);
  EXPECT_NE(json.find("the math runs on the CUDA cores"), std::string::npos) << json;
}

TEST_F(HistoryStoreTest, ASchemaVersion3StoreIsUpgradedWithNullCudaCoreColumns) {
  ASSERT_NO_FATAL_FAILURE(
      MakeOldStore("ALTER TABLE windows DROP COLUMN fp64_active_s; ALTER TABLE windows DROP COLUMN fp32_active_s;"
                   "ALTER TABLE windows DROP COLUMN fp16_active_s; ALTER TABLE windows DROP COLUMN non_tensor_tflop;"
                   "ALTER TABLE windows DROP COLUMN non_tensor_peak_s;"
                   "UPDATE meta SET value = '3' WHERE key = 'schema_version'"));
  const StoredHistory old = Read();
  ASSERT_EQ(old.windows.size(), 1u);
  EXPECT_FALSE(old.windows[0].counters[ofu::kCounterFp32Active]);
  auto store = OpenStore();
  ASSERT_TRUE(store);
  ofu::sinks::GpuWindow with = H100Window("GPU-0", "0", 0.5);
  with.window.non_tensor[ofu::CudaCorePipe::kFp32] = 0.25;
  ASSERT_TRUE(store->Consume(Batch(1004, 2, {with})).ok());
  EXPECT_EQ(QueryNumber(options_.path, "SELECT value FROM meta WHERE key = 'schema_version'"),
            ofu::history::kHistorySchemaVersion);  // 4, then 5
  const StoredHistory upgraded = Read();
  ASSERT_EQ(upgraded.windows.size(), 2u);
  EXPECT_FALSE(upgraded.windows[0].counters[ofu::kCounterFp32Active]);  // not measured then: NULL
  EXPECT_EQ(upgraded.windows[1].counters[ofu::kCounterFp32Active], 0.5);
}

TEST_F(HistoryStoreTest, AnotherSqliteFileIsNotTakenOver) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(options_.path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t(x)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto store = HistoryStore::Open(options_, clock_);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find("not an ofu history store"), std::string::npos) << store.error().message;
}

TEST_F(HistoryStoreTest, JobReportOverTwoGpusIsTheHandComputedOne) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  ofu::testing::WriteTwoGpuJob(*store);
  auto specs = ofu::GpuSpecDatabase::Embedded();
  ASSERT_TRUE(specs.ok());
  const double t0 = ofu::testing::kJobT0;

  const auto all = ofu::analysis::BuildStoreReport(Read(), *specs);
  ASSERT_EQ(all.gpus.size(), 2u);
  EXPECT_NEAR(*all.gpus[0].summary.ofu, 2.0 / 6, 1e-12);
  EXPECT_NEAR(*all.gpus[1].summary.ofu, 2.0 / 5, 1e-12);
  EXPECT_NEAR(*all.overall.ofu, 4.0 / 11, 1e-12);
  EXPECT_EQ(all.window_s, 60);
  ASSERT_EQ(all.jobs.size(), 1u);
  const auto& job = all.jobs[0];
  EXPECT_EQ(job.job_id, "J1");
  EXPECT_EQ(job.user, "alice");
  EXPECT_EQ(job.gpus, 2);
  EXPECT_NEAR(job.gpu_hours, 480.0 / 3600, 1e-12);
  EXPECT_NEAR(*job.ofu, 216.0 / 420, 1e-12);
  EXPECT_NEAR(*job.active_ofu, 216.0 / 420, 1e-12);
  EXPECT_NEAR(job.observed_hours, 420.0 / 3600, 1e-12);
  // The lost window is said, not hidden.
  bool said = false;
  for (const auto& p : all.gpus[1].problems) said = said || p.find("did not answer for 60 s") != std::string::npos;
  EXPECT_TRUE(said);

  HistoryQuery clipped;
  clipped.job_id = "J1";
  clipped.since_s = t0 + 120;
  clipped.until_s = t0 + 240;
  const auto part = ofu::analysis::BuildStoreReport(Read(clipped), *specs);
  ASSERT_EQ(part.jobs.size(), 1u);
  EXPECT_NEAR(*part.jobs[0].ofu, 0.5, 1e-12);
  EXPECT_NEAR(part.jobs[0].gpu_hours, 240.0 / 3600, 1e-12);
  EXPECT_NEAR(*part.overall.ofu, 0.5, 1e-12);
  EXPECT_NE(ofu::render::RenderTable(part).find("J1"), std::string::npos);
}

// `ofu report --store` streams the rows through the report
// (ReadStoreReport: HistoryStream into StoreReportBuilder) and must say to
// the byte what the whole history's report says, for every query. The
// store: WriteTwoGpuJob, then, after 120 s without the agent, job J2 on
// GPU 0 for two windows of OFU 0.7 and 0.9 (its interval still open).
// By hand: GPU 0 OFU (0.4+0.5+0.6+0.3+0.1+0.1+0.7+0.9) / 8 = 0.45, one gap
// of 120 s; overall (3.6 + 2.0) / 13 windows; J2 OFU 0.8 over 120 s.
TEST_F(HistoryStoreTest, StreamedReportIsTheWholeHistoryReport) {
  const double t0 = ofu::testing::kJobT0;
  {
    auto store = OpenStore();
    ASSERT_TRUE(store);
    ofu::testing::WriteTwoGpuJob(*store);
    ASSERT_TRUE(store->Consume(Batch(t0 + 540, 60, {H100Window("GPU-0", "0", 0.7)}, {{"GPU-0", "J2"}})).ok());
    ASSERT_TRUE(store->Consume(Batch(t0 + 600, 60, {H100Window("GPU-0", "0", 0.9)}, {{"GPU-0", "J2"}})).ok());
  }
  auto specs = ofu::GpuSpecDatabase::Embedded();
  ASSERT_TRUE(specs.ok());

  auto streamed = ofu::analysis::ReadStoreReport(options_.path, {}, *specs);
  ASSERT_TRUE(streamed.ok()) << streamed.error().message;
  const auto& report = streamed->report;
  EXPECT_EQ(streamed->rows, 14);  // GPU 1's lost window is a row too
  ASSERT_EQ(report.gpus.size(), 2u);
  EXPECT_NEAR(*report.gpus[0].summary.ofu, 0.45, 1e-12);
  ASSERT_EQ(report.gpus[0].windowed.gaps.size(), 1u);
  EXPECT_EQ(report.gpus[0].windowed.gaps[0].start_s, t0 + 360);
  EXPECT_EQ(report.gpus[0].windowed.gaps[0].end_s, t0 + 480);
  EXPECT_TRUE(report.gpus[1].windowed.gaps.empty());
  EXPECT_NEAR(*report.overall.ofu, 5.6 / 13, 1e-12);
  EXPECT_EQ(report.window_s, 60);
  ASSERT_EQ(report.jobs.size(), 2u);
  EXPECT_NEAR(*report.jobs[0].ofu, 216.0 / 420, 1e-12);
  EXPECT_EQ(report.jobs[1].job_id, "J2");
  EXPECT_NEAR(*report.jobs[1].ofu, 0.8, 1e-12);
  EXPECT_NEAR(report.jobs[1].gpu_hours, 120.0 / 3600, 1e-12);

  // Everything; J1; J2; (t0 + 120, t0 + 540]; J1 in it.
  std::vector<HistoryQuery> queries(5);
  queries[1].job_id = "J1";
  queries[2].job_id = "J2";
  for (std::size_t i : {3, 4}) {
    queries[i].since_s = t0 + 120;
    queries[i].until_s = t0 + 540;
  }
  queries[4].job_id = "J1";
  for (const HistoryQuery& query : queries) {
    const std::string what = fmt::format("job {} since {} until {}", query.job_id.value_or("-"),
                                         query.since_s.value_or(0), query.until_s.value_or(0));
    const StoredHistory whole = Read(query);
    auto part = ofu::analysis::ReadStoreReport(options_.path, query, *specs);
    ASSERT_TRUE(part.ok()) << part.error().message;
    EXPECT_EQ(part->rows, static_cast<std::int64_t>(whole.windows.size())) << what;
    EXPECT_TRUE(part->head.windows.empty()) << what;
    EXPECT_EQ(part->head.jobs, whole.jobs) << what;
    ASSERT_EQ(part->head.gpus.size(), whole.gpus.size()) << what;
    for (std::size_t i = 0; i < whole.gpus.size(); ++i) {
      EXPECT_EQ(part->head.gpus[i].key(), whole.gpus[i].key()) << what;
      EXPECT_EQ(part->head.gpus[i].last_end_s, whole.gpus[i].last_end_s) << what;
    }
    const auto from_whole = ofu::analysis::BuildStoreReport(whole, *specs);
    EXPECT_EQ(ofu::render::RenderJson(part->report), ofu::render::RenderJson(from_whole)) << what;
    EXPECT_EQ(ofu::render::RenderTable(part->report), ofu::render::RenderTable(from_whole)) << what;
    EXPECT_EQ(ofu::render::RenderCsv(part->report), ofu::render::RenderCsv(from_whole)) << what;
  }
}

// HistoryStream hands over ReadHistory's windows in ReadHistory's order,
// GPU by GPU, and says so at the end (false, then false again).
TEST_F(HistoryStoreTest, StreamHandsOverTheWindowsOneAtATime) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store);
    ofu::testing::WriteTwoGpuJob(*store);
  }
  auto stream = ofu::history::HistoryStream::Open(options_.path, {});
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  EXPECT_EQ((*stream)->history().gpus.size(), 2u);
  EXPECT_TRUE((*stream)->history().windows.empty());
  std::vector<StoredWindow> rows;
  StoredWindow row;
  while (true) {
    auto more = (*stream)->Next(row);
    ASSERT_TRUE(more.ok()) << more.error().message;
    if (!*more) break;
    rows.push_back(row);
  }
  EXPECT_EQ(rows, Read().windows);
  ASSERT_EQ(rows.size(), 12u);
  EXPECT_EQ(rows[5].gpu_id, rows[0].gpu_id);
  EXPECT_NE(rows[6].gpu_id, rows[0].gpu_id);
  auto again = (*stream)->Next(row);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_FALSE(ofu::history::HistoryStream::Open((dir_ / "missing.sqlite").string(), {}).ok());
}

TEST(TimeArgument, UnixRfc3339AndRelative) {
  using ofu::analysis::ParseTimeArgument;
  EXPECT_EQ(*ParseTimeArgument("1790000000", 0), 1790000000);
  EXPECT_EQ(*ParseTimeArgument("1790000000.5", 0), 1790000000.5);
  // 2026-11-21T10:00:00Z = 20778 days after the epoch + 10 h.
  EXPECT_EQ(*ParseTimeArgument("2026-11-21T10:00:00Z", 0), 20778 * 86400.0 + 36000);
  EXPECT_EQ(*ParseTimeArgument("2026-11-21T12:00:00+02:00", 0), 20778 * 86400.0 + 36000);
  EXPECT_EQ(*ParseTimeArgument("2026-11-21T10:00:00.25Z", 0), 20778 * 86400.0 + 36000.25);
  EXPECT_EQ(*ParseTimeArgument("-2h", 10000), 10000 - 7200);
  EXPECT_EQ(*ParseTimeArgument("-30m", 10000), 10000 - 1800);
  EXPECT_EQ(*ParseTimeArgument("-1d", 100000), 100000 - 86400);
  for (const char* bad : {"yesterday", "2026-11-21", "2026-11-21T10:00:00", "-2x", "2026-13-01T00:00:00Z", ""}) {
    EXPECT_FALSE(ParseTimeArgument(bad, 0).ok()) << bad;
  }
}

}  // namespace

namespace {

TEST_F(HistoryStoreTest, AMigInstanceKeepsItsProfileAndInstanceAndAVersion2StoreIsUpgraded) {
  // What a version 2 agent wrote: no MIG columns.
  ASSERT_NO_FATAL_FAILURE(
      MakeOldStore("ALTER TABLE windows DROP COLUMN fp64_active_s; ALTER TABLE windows DROP COLUMN fp32_active_s;"
                   "ALTER TABLE windows DROP COLUMN fp16_active_s; ALTER TABLE windows DROP COLUMN non_tensor_tflop;"
                   "ALTER TABLE windows DROP COLUMN non_tensor_peak_s;"
                   "ALTER TABLE gpus DROP COLUMN mig_profile; ALTER TABLE gpus DROP COLUMN mig_instance;"
                   "UPDATE meta SET value = '2' WHERE key = 'schema_version'"));
  const StoredHistory old = Read();
  ASSERT_EQ(old.gpus.size(), 1u);
  EXPECT_EQ(old.gpus[0].identity.mig_profile, "");  // a version 2 GPU is whole

  auto store = OpenStore();
  ASSERT_TRUE(store);
  ofu::sinks::GpuWindow slice = H100Window("GPU-0/gi3", "0", 0.25);
  slice.identity.uuid = "GPU-0";
  slice.identity.mig_profile = "1g.10gb";
  slice.identity.mig_instance = "3";
  ASSERT_TRUE(store->Consume(Batch(1004, 2, {slice})).ok());
  EXPECT_EQ(QueryNumber(options_.path, "SELECT value FROM meta WHERE key = 'schema_version'"),
            ofu::history::kHistorySchemaVersion);  // upgraded in turn to the newest (5)
  const StoredHistory upgraded = Read();
  ASSERT_EQ(upgraded.gpus.size(), 2u);
  EXPECT_EQ(upgraded.gpus[0].key(), "GPU-0");
  EXPECT_EQ(upgraded.gpus[0].identity.mig_profile, "");
  EXPECT_EQ(upgraded.gpus[1].key(), "GPU-0/gi3");
  EXPECT_EQ(upgraded.gpus[1].identity.mig_profile, "1g.10gb");
  EXPECT_EQ(upgraded.gpus[1].identity.mig_instance, "3");
}

TEST_F(HistoryStoreTest, TheGpusTableIsMadeFromItsColumnListAsItWasWrittenByHand) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  ofu::sinks::GpuWindow slice = H100Window("GPU-0/gi3", "0", 0.25);
  slice.identity.mig_profile = "1g.10gb";
  slice.identity.mig_instance = "3";
  ASSERT_TRUE(store->Consume(Batch(1002, 2, {slice})).ok());
  // The statement that schema 3 wrote by hand, character for character.
  EXPECT_EQ(QueryText(options_.path, "SELECT sql FROM sqlite_master WHERE name = 'gpus'"),
            "CREATE TABLE gpus(\n  id INTEGER PRIMARY KEY,\n  uuid TEXT UNIQUE NOT NULL,\n  gpu_index TEXT NOT NULL,\n"
            "  model TEXT NOT NULL,\n  sku TEXT NOT NULL,\n  architecture TEXT NOT NULL,\n  hostname TEXT NOT NULL,\n"
            "  mig_profile TEXT NOT NULL DEFAULT '',\n  mig_instance TEXT NOT NULL DEFAULT '')");
  EXPECT_EQ(QueryText(options_.path,
                      "SELECT uuid || '|' || gpu_index || '|' || sku || '|' || mig_profile || '|' || "
                      "mig_instance FROM gpus"),
            "GPU-0/gi3|0|h100-sxm5|1g.10gb|3");
  // A changed column updates the row in place (the upsert), keeping its id.
  slice.identity.mig_profile = "2g.20gb";
  ASSERT_TRUE(store->Consume(Batch(1004, 2, {slice})).ok());
  EXPECT_EQ(QueryNumber(options_.path, "SELECT count(*) FROM gpus"), 1);
  EXPECT_EQ(QueryText(options_.path, "SELECT mig_profile FROM gpus WHERE id = 1"), "2g.20gb");
  EXPECT_EQ(ofu::history::UpsertGpuSql(),
            "INSERT INTO gpus(uuid, gpu_index, model, sku, architecture, hostname, mig_profile, mig_instance) "
            "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT(uuid) DO UPDATE SET gpu_index = excluded.gpu_index, "
            "model = excluded.model, sku = excluded.sku, architecture = excluded.architecture, "
            "hostname = excluded.hostname, mig_profile = excluded.mig_profile, mig_instance = excluded.mig_instance "
            "RETURNING id");
  // A schema 2 store's gpus table, which has no MIG columns: they read as ''.
  const std::set<std::string> schema_2 = {"id", "uuid", "gpu_index", "model", "sku", "architecture", "hostname"};
  EXPECT_EQ(ofu::history::GpuColumnNames(ofu::history::kGpuColumnList, &schema_2),
            "id, uuid, gpu_index, model, sku, architecture, hostname, '', ''");
}

}  // namespace
