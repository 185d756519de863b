// store_fill: a SYNTHETIC history store of GPUS x WINDOWS rows, for timing
// `ofu report --store` at sizes no test can hold (bench/store_report.sh;
// issue 15). Every row is what the agent would store for an H100 window
// (sinks::RowOfWindow); jobs run on groups of 8 GPUs with short idle spells
// between them.
//
//   store_fill PATH GPUS WINDOWS [WINDOW_S]
//   store_fill PATH --roll-up      roll up the closed hours of an existing store
//                                  (one upgraded from schema 4 has none)
//
// The GPUs and the job intervals are written by the agent's own writer
// (HistoryStore::Consume of the windows where a job starts or ends). The
// other windows, nearly all of them, are inserted directly, time by time as
// the agent does, in large transactions without a journal: one Consume per
// window would take hours at 10^8 rows. The file is left in WAL mode, as the
// agent leaves it, and with every closed hour rolled up, as the agent rolls
// them up (HistoryStore::RollUpClosedHours).
#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include <fmt/format.h>

#include "ofu/core/gpu_share.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/core/non_tensor.h"
#include "ofu/history/history_columns.h"  // the store's own column list and binder
#include "ofu/sinks/history_store.h"
#include "ofu/sources/clock.h"

namespace {

using ofu::GpuSpec;
using ofu::sinks::GpuWindow;

constexpr int kGpusPerJob = 8;
constexpr int kJobWindows = 2000;  // windows a job runs
constexpr int kIdleWindows = 100;  // then its GPUs idle this long
constexpr int kPeriod = kJobWindows + kIdleWindows;
constexpr double kStartS = 1'790'000'000;
constexpr double kClockMhz = 1755;

// A fixed pseudo-random number in [0, 1) per (gpu, window): splitmix64.
double Noise(std::uint64_t gpu, std::uint64_t window) {
  std::uint64_t z = gpu * 0x9E3779B97F4A7C15ull + window + 0x632BE59BD9B4E5ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<double>((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

bool InJob(std::int64_t window) { return window % kPeriod < kJobWindows; }

std::string JobId(int gpu, std::int64_t window) {
  return fmt::format("job-{}-{}", gpu / kGpusPerJob, window / kPeriod);
}

GpuWindow WindowOf(const GpuSpec& spec, int gpu, std::int64_t window, double window_s) {
  GpuWindow w;
  w.identity.key = w.identity.uuid = fmt::format("GPU-synthetic-{:06d}", gpu);
  w.identity.model = "NVIDIA H100 80GB HBM3";
  w.identity.hostname = fmt::format("node{:05d}", gpu / kGpusPerJob);
  w.identity.gpu_index = std::to_string(gpu % kGpusPerJob);
  w.sku = spec.id;
  w.architecture = spec.architecture;
  w.spec_clock_mhz = spec.SpecClockMhz();
  ofu::OfuWindow& o = w.window;
  o.end_s = kStartS + static_cast<double>(window + 1) * window_s;
  o.start_s = o.end_s - window_s;
  o.covered_s = window_s;
  o.sm_clock_mhz = o.sm_clock_min_mhz = o.sm_clock_max_mhz = kClockMhz;
  o.clock_readings = 1;
  const bool busy = InJob(window);
  const double job_level = 0.2 + 0.4 * Noise(static_cast<std::uint64_t>(gpu / kGpusPerJob), window / kPeriod);
  const double ofu = busy ? job_level * (0.85 + 0.3 * Noise(static_cast<std::uint64_t>(gpu), window)) : 0.002;
  o.ofu = ofu;
  o.tensor_active = ofu * *w.spec_clock_mhz / kClockMhz;
  o.gr_engine_active = busy ? 0.95 : 0.0;
  o.busy = busy;
  w.pipes.hmma = *o.tensor_active;
  w.pipes.imma = 0.0;
  o.non_tensor[ofu::CudaCorePipe::kFp32] = busy ? 0.05 : 0.0;
  ofu::GpuIdentity whole;
  ofu::CompleteNonTensor(o.non_tensor, o.sm_clock_mhz, ofu::OfuScaleOf(spec, whole).non_tensor);
  return w;
}

// A window of every GPU, with the jobs running, through the agent's writer.
ofu::Status Consume(ofu::sinks::HistoryStore& store, const GpuSpec& spec, int gpus, std::int64_t window,
                    double window_s) {
  ofu::sinks::WindowBatch batch;
  batch.window_s = window_s;
  batch.end_s = kStartS + static_cast<double>(window + 1) * window_s;
  for (int gpu = 0; gpu < gpus; ++gpu) {
    batch.gpus.push_back(WindowOf(spec, gpu, window, window_s));
    if (InJob(window)) {
      ofu::attribution::JobInfo info;
      info.job_id = JobId(gpu, window);
      info.user = "synthetic";
      info.job_name = fmt::format("train-{}", gpu / kGpusPerJob);
      info.scheduler = "synthetic";
      batch.jobs[batch.gpus.back().key()] = info;
    }
  }
  return store.Consume(batch);
}

// The windows the agent's writer did not write.
bool Fill(const std::string& path, const GpuSpec& spec, int gpus, std::int64_t windows, double window_s) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) return false;
  ofu::formats::SqliteDb closer(db);
  auto exec = [&](const char* sql) {
    if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK) return true;
    fmt::print(stderr, "store_fill: {}: {}\n", sql, sqlite3_errmsg(db));
    return false;
  };
  // Bulk load: no journal; the pages of every GPU's newest rows stay cached.
  if (!exec("PRAGMA journal_mode=DELETE") || !exec("PRAGMA journal_mode=OFF") || !exec("PRAGMA synchronous=OFF") ||
      !exec("PRAGMA cache_size=-262144")) {
    return false;
  }
  std::map<std::string, std::int64_t> id_of;
  {
    sqlite3_stmt* raw = nullptr;
    sqlite3_prepare_v2(db, "SELECT uuid, id FROM gpus", -1, &raw, nullptr);
    ofu::formats::SqliteStmt stmt(raw);
    while (sqlite3_step(raw) == SQLITE_ROW) id_of[ofu::formats::ColumnText(raw, 0)] = sqlite3_column_int64(raw, 1);
  }
  const ofu::history::WindowColumns columns(ofu::OutputCounterTable::Builtin());
  const std::string sql = fmt::format("INSERT OR REPLACE INTO windows({}) VALUES({})", columns.names(),
                                      ofu::history::Placeholders(columns.count()));
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    fmt::print(stderr, "store_fill: {}\n", sqlite3_errmsg(db));
    return false;
  }
  ofu::formats::SqliteStmt insert(raw);
  if (!exec("BEGIN")) return false;
  for (std::int64_t window = 0; window < windows; ++window) {
    const std::int64_t phase = window % kPeriod;
    if (phase == 0 || phase == kJobWindows || window == windows - 1) continue;  // written by Consume
    for (int gpu = 0; gpu < gpus; ++gpu) {
      const GpuWindow w = WindowOf(spec, gpu, window, window_s);
      ofu::history::StoredWindow row = ofu::sinks::RowOfWindow(w, w.window.end_s, window_s);
      row.gpu_id = id_of[w.key()];
      sqlite3_reset(raw);
      columns.Bind(raw, row);
      if (sqlite3_step(raw) != SQLITE_DONE) {
        fmt::print(stderr, "store_fill: inserting: {}\n", sqlite3_errmsg(db));
        return false;
      }
    }
    if (window % 512 == 511 && (!exec("COMMIT") || !exec("BEGIN"))) return false;
  }
  return exec("COMMIT") && exec("PRAGMA journal_mode=WAL");
}

}  // namespace

// Every closed hour of the store at `path` rolled up, as the agent does.
int RollUp(const std::string& path) {
  ofu::sources::FakeClock clock(kStartS);
  ofu::sinks::HistoryOptions options;
  options.path = path;
  options.retention_days = options.full_resolution_days = 36500;
  auto store = ofu::sinks::HistoryStore::Open(options, clock);
  ofu::Status rolled = store.ok() ? (*store)->RollUpClosedHours() : ofu::Status(store.error());
  if (!rolled.ok()) {
    fmt::print(stderr, "store_fill: {}\n", rolled.error().message);
    return 2;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[2]) == "--roll-up") return RollUp(argv[1]);
  if (argc < 4) {
    fmt::print(stderr, "usage: store_fill PATH GPUS WINDOWS [WINDOW_S] | store_fill PATH --roll-up\n");
    return 1;
  }
  const std::string path = argv[1];
  const int gpus = std::stoi(argv[2]);
  const std::int64_t windows = std::stoll(argv[3]);
  const double window_s = argc > 4 ? std::stod(argv[4]) : 15;
  if (gpus <= 0 || gpus % kGpusPerJob != 0 || windows < 2 || !(window_s > 0)) {
    fmt::print(stderr, "store_fill: GPUS a positive multiple of {}, WINDOWS >= 2, WINDOW_S > 0\n", kGpusPerJob);
    return 1;
  }
  auto specs = ofu::GpuSpecDatabase::Embedded();
  if (!specs.ok()) return 2;
  auto spec = specs->Lookup("h100-sxm5");
  if (!spec.ok()) return 2;
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix, ec);
  {
    ofu::sources::FakeClock clock(kStartS);
    ofu::sinks::HistoryOptions options;
    options.path = path;
    options.retention_days = 36500;  // keep it all: the data is old on purpose
    options.full_resolution_days = 36500;
    auto store = ofu::sinks::HistoryStore::Open(options, clock);
    if (!store.ok()) {
      fmt::print(stderr, "store_fill: {}\n", store.error().message);
      return 2;
    }
    for (std::int64_t window = 0; window < windows; ++window) {
      const std::int64_t phase = window % kPeriod;
      if (phase != 0 && phase != kJobWindows && window != windows - 1) continue;
      clock.SleepS(window_s);
      if (auto s = Consume(**store, **spec, gpus, window, window_s); !s.ok()) {
        fmt::print(stderr, "store_fill: {}\n", s.error().message);
        return 2;
      }
    }
  }
  if (!Fill(path, **spec, gpus, windows, window_s)) return 2;
  if (const int rolled = RollUp(path); rolled != 0) return rolled;
  fmt::print("SYNTHETIC store {}: {} GPUs x {} windows of {} s = {} rows\n", path, gpus, windows, window_s,
             static_cast<std::int64_t>(gpus) * windows);
  return 0;
}
