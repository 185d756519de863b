#include "ofu/sinks/history_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ofu/formats/sqlite_handles.h"
#include "ofu/history/history_columns.h"
#include "ofu/history/history_rollup.h"
#include "ofu/history/row_of_window.h"

namespace ofu::sinks {

using history::AddGpuColumnsSql;
using history::AddMissingGpuColumnsSql;
using history::AddRowInto;
using history::BindGpu;
using history::BindRollup;
using history::ColumnGpu;
using history::ColumnsOf;
using history::GpuColumnNames;
using history::GpuTableDefinitions;
using history::kHistoryDownsampled;
using history::kHistorySchemaVersion;
using history::kOldestReadableSchemaVersion;
using history::kRollupColumnCount;
using history::kRollupColumns;
using history::kRollupSpanS;
using history::Placeholders;
using history::RollUp;
using history::RollupHourEnd;
using history::SameGpuColumns;
using history::StoredGpu;
using history::StoredRollup;
using history::StoredWindow;
using history::UpsertGpuSql;
using history::WindowColumns;

namespace {

constexpr double kSecondsPerDay = 86400;

using formats::BindText;
using formats::ColumnOptional;
using formats::ColumnText;
using Stmt = formats::SqliteStmt;

constexpr const char* kSchema = R"sql(
CREATE TABLE gpus({gpu_columns});
CREATE TABLE windows(
  gpu_id INTEGER NOT NULL REFERENCES gpus(id),
  {window_columns},
  PRIMARY KEY(gpu_id, end_s)) WITHOUT ROWID;
CREATE INDEX windows_by_end ON windows(end_s);
CREATE TABLE jobs(
  gpu_id INTEGER NOT NULL REFERENCES gpus(id),
  job_id TEXT NOT NULL,
  user TEXT NOT NULL,
  job_name TEXT NOT NULL,
  scheduler TEXT NOT NULL,
  start_s REAL NOT NULL,
  end_s REAL);
CREATE INDEX jobs_by_job ON jobs(job_id);
CREATE INDEX jobs_by_gpu ON jobs(gpu_id, end_s);
{rollups}
)sql";

// Schema version 5: the hourly rollups (history_rollup.h).
constexpr const char* kRollupsTable = R"sql(CREATE TABLE rollups(
  gpu_id INTEGER NOT NULL REFERENCES gpus(id),
  after_s REAL NOT NULL,
  until_s REAL NOT NULL,
  windows INTEGER NOT NULL,
  first_start_s REAL NOT NULL,
  first_span_s REAL NOT NULL,
  clock_only_windows INTEGER NOT NULL,
  clock_only_s REAL NOT NULL,
  ofu_histogram BLOB NOT NULL,
  {window_columns},
  PRIMARY KEY(gpu_id, until_s)) WITHOUT ROWID;)sql";

// The window columns after gpu_id are the table's (history_columns.h).
std::string RollupsTable(const OutputCounterTable& counters) {
  return fmt::format(fmt::runtime(kRollupsTable), fmt::arg("window_columns", WindowColumns::Definitions(counters)));
}

std::string Schema(const OutputCounterTable& counters, history::GpuColumns gpu_columns) {
  return fmt::format(fmt::runtime(kSchema), fmt::arg("gpu_columns", GpuTableDefinitions(gpu_columns)),
                     fmt::arg("window_columns", WindowColumns::Definitions(counters)),
                     fmt::arg("rollups", RollupsTable(counters)));
}

// Stores a window, or adds to the row a late window's span already has
// (downsampling): every column but the key is replaced.
std::string InsertWindow(const WindowColumns& columns) {
  std::string updates;
  for (const std::string& name : columns.columns()) {
    if (name != "gpu_id" && name != "end_s") {
      updates += fmt::format("{}{} = excluded.{}", updates.empty() ? "" : ", ", name, name);
    }
  }
  return fmt::format("INSERT INTO windows({}) VALUES({}) ON CONFLICT(gpu_id, end_s) DO UPDATE SET {}", columns.names(),
                     Placeholders(columns.count()), updates);
}

// Schema version 1 -> 2: the per-pipe columns (added by AddCounterColumns).
constexpr const char* kUpgradeFrom1 = "UPDATE meta SET value = '2' WHERE key = 'schema_version';";

// Schema version 2 -> 3: the GPUs' MIG identity; the GPUs stored so far were
// written without one, as whole GPUs.
std::string UpgradeFrom2() { return AddGpuColumnsSql(2) + "UPDATE meta SET value = '3' WHERE key = 'schema_version';"; }

// Schema version 3 -> 4: the CUDA-core pipes and the non-tensor bound
// (added by AddCounterColumns).
constexpr const char* kUpgradeFrom3 = "UPDATE meta SET value = '4' WHERE key = 'schema_version';";

bool SameJob(const attribution::JobInfo& job, const std::string& job_id, const std::string& user,
             const std::string& job_name, const std::string& scheduler) {
  return job.job_id == job_id && job.user == user && job.job_name == job_name && job.scheduler == scheduler;
}

}  // namespace

StoredWindow RowOfWindow(const GpuWindow& gpu, double end_s, double window_s, const OutputCounterTable& counters) {
  return history::RowOfWindow(gpu.window, gpu.pipes, {.up = gpu.up(), .known_model = !gpu.sku.empty()}, end_s, window_s,
                              counters);
}

HistoryStore::HistoryStore(HistoryOptions options, sources::Clock& clock, sqlite3* db)
    : options_(std::move(options)),
      columns_(std::make_unique<WindowColumns>(*options_.counters)),
      gpu_columns_(history::GpuColumnsOf(*options_.identity)),
      clock_(clock),
      db_(db) {}

struct HistoryStore::WindowStatements {
  Stmt begin, commit, upsert_gpu, insert_window, close_job, open_job;
  Stmt newest_end, hour_rows, insert_rollup, delete_rollups, job_cuts;  // rollups
};

HistoryStore::~HistoryStore() {
  statements_.reset();  // sqlite3_close refuses a connection with live statements
  sqlite3_close(db_);
}

Status HistoryStore::PrepareWindowStatements() {
  if (statements_ != nullptr) return OkStatus();
  auto statements = std::make_unique<WindowStatements>();
  const std::string select_rows = fmt::format(
      "SELECT {} FROM windows WHERE gpu_id = ?1 AND end_s > ?2 AND end_s <= ?3 ORDER BY end_s", columns_->names());
  const std::string insert_rollup = fmt::format("INSERT INTO rollups({}, {}) VALUES({})", columns_->names(),
                                                kRollupColumns, Placeholders(columns_->count() + kRollupColumnCount));
  const std::string insert_window = InsertWindow(*columns_);
  using Named = std::pair<std::string, Stmt*>;
  for (auto [sql, stmt] :
       {Named{"BEGIN IMMEDIATE", &statements->begin}, Named{"COMMIT", &statements->commit},
        Named{UpsertGpuSql(gpu_columns_), &statements->upsert_gpu}, Named{insert_window, &statements->insert_window},
        Named{"UPDATE jobs SET end_s = ?2 WHERE rowid = ?1", &statements->close_job},
        Named{"INSERT INTO jobs(gpu_id, job_id, user, job_name, scheduler, start_s) "
              "VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
              &statements->open_job},
        Named{"SELECT max(end_s) FROM windows WHERE gpu_id = ?1", &statements->newest_end},
        Named{select_rows, &statements->hour_rows}, Named{insert_rollup, &statements->insert_rollup},
        Named{"DELETE FROM rollups WHERE gpu_id = ?1 AND until_s > ?2 AND until_s <= ?3", &statements->delete_rollups},
        Named{"SELECT start_s FROM jobs WHERE gpu_id = ?1 AND start_s > ?2 AND start_s < ?3 UNION "
              "SELECT end_s FROM jobs WHERE gpu_id = ?1 AND end_s > ?2 AND end_s < ?3 ORDER BY 1",
              &statements->job_cuts}}) {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
      return WriteError("preparing a statement");
    }
    stmt->reset(raw);
  }
  statements_ = std::move(statements);
  return OkStatus();
}

Result<std::unique_ptr<HistoryStore>> HistoryStore::Open(const HistoryOptions& options, sources::Clock& clock) {
  if (options.path.empty()) return Error::InvalidArgument("history store: no path given");
  if (!(options.downsampled_span_s > 0) || !(options.retention_days > 0) || !(options.full_resolution_days >= 0)) {
    return Error::InvalidArgument("history store {}: retention and downsampling spans must be positive", options.path);
  }
  // SQLite would create the file but not its directory; say which is missing.
  const std::filesystem::path dir = std::filesystem::path(options.path).parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec)) {
    return Error::Io(
        "history store {}: directory {} does not exist (create it, or "
        "choose another --store, or --no-store)",
        options.path, dir.string());
  }
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(options.path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    Error error{ErrorCode::kIo, fmt::format("history store {}: cannot open: {}", options.path,
                                            db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc))};
    sqlite3_close(db);
    return error;
  }
  std::unique_ptr<HistoryStore> store(new HistoryStore(options, clock, db));
  OFU_RETURN_IF_ERROR(store->Initialize());
  return store;
}

Status HistoryStore::Step(sqlite3_stmt* statement, const char* doing) {
  Status status = sqlite3_step(statement) == SQLITE_DONE ? OkStatus() : Status(WriteError(doing));
  sqlite3_reset(statement);  // after WriteError: it reads the connection's error
  return status;
}

Status HistoryStore::Exec(const char* sql, const char* doing) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    Error error = WriteError(doing);
    sqlite3_free(message);
    return error;
  }
  return OkStatus();
}

Error HistoryStore::WriteError(const char* doing) const {
  const int code = sqlite3_extended_errcode(db_) & 0xff;
  if (code == SQLITE_FULL) {
    return Error::Io(
        "history store {}: database or disk is full; windows are not being "
        "kept, metrics still are",
        options_.path);
  }
  return Error::Io("history store {}: {}: {}", options_.path, doing, sqlite3_errmsg(db_));
}

Status HistoryStore::SetMaxPageCount(std::int64_t pages) {
  const std::string sql = fmt::format("PRAGMA max_page_count = {}", pages);
  return Exec(sql.c_str(), "setting max_page_count");
}

Status HistoryStore::Initialize() {
  // A writer waits for a checkpointing reader rather than failing at once.
  sqlite3_busy_timeout(db_, 5000);
  {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_, "PRAGMA journal_mode=WAL", -1, &raw, nullptr) != SQLITE_OK) {
      return WriteError("setting WAL mode");
    }
    Stmt stmt(raw);
    if (sqlite3_step(raw) != SQLITE_ROW) return WriteError("setting WAL mode");
    if (ColumnText(raw, 0) != "wal") {
      return Error::Io(
          "history store {}: the file system does not allow WAL mode "
          "(journal mode is {})",
          options_.path, ColumnText(raw, 0));
    }
  }
  // NORMAL: a kill -9 keeps every committed batch in WAL mode (see the header).
  OFU_RETURN_IF_ERROR(Exec("PRAGMA synchronous=NORMAL", "setting synchronous"));
  if (options_.max_page_count) {
    OFU_RETURN_IF_ERROR(SetMaxPageCount(*options_.max_page_count));
  }

  OFU_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "starting the schema transaction"));
  auto fail = [this](Error error) -> Status {
    if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return error;
  };
  int tables = 0;
  std::optional<std::string> version;
  {
    sqlite3_stmt* raw = nullptr;
    sqlite3_prepare_v2(db_, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'", -1, &raw, nullptr);
    Stmt stmt(raw);
    if (raw == nullptr || sqlite3_step(raw) != SQLITE_ROW) return fail(WriteError("reading the schema"));
    tables = sqlite3_column_int(raw, 0);
  }
  if (tables > 0) {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &raw, nullptr) !=
        SQLITE_OK) {
      return fail(
          Error::MalformedInput("history store {}: the file is an SQLite database but not an ofu history "
                                "store (no meta table)",
                                options_.path));
    }
    Stmt stmt(raw);
    if (sqlite3_step(raw) == SQLITE_ROW) version = ColumnText(raw, 0);
    // Upgrades run in turn: a version 1 store becomes 2, then 3, 4 and 5.
    const bool from_1 = version == "1";
    const bool from_2 = from_1 || version == "2";
    const bool from_3 = from_2 || version == "3";
    const bool from_4 = from_3 || version == "4";
    if (from_1) {
      if (Status s = Exec(kUpgradeFrom1, "upgrading the schema from version 1"); !s.ok()) return fail(s.error());
    }
    if (from_2) {
      if (Status s = Exec(UpgradeFrom2().c_str(), "upgrading the schema from version 2"); !s.ok())
        return fail(s.error());
    }
    if (from_3) {
      if (Status s = Exec(kUpgradeFrom3, "upgrading the schema from version 3"); !s.ok()) return fail(s.error());
    }
    if (from_4) {
      // The hours stored so far get no rollup: they are read window by window.
      const std::string upgrade = RollupsTable(*options_.counters) +
                                  "UPDATE meta SET value = '5' WHERE key = 'schema_version';";
      if (Status s = Exec(upgrade.c_str(), "upgrading the schema from version 4"); !s.ok()) return fail(s.error());
    } else if (version != std::to_string(kHistorySchemaVersion)) {
      return fail(Error::MalformedInput("history store {}: schema version {}, this ofu reads versions {} to {}",
                                        options_.path, version.value_or("(none)"), kOldestReadableSchemaVersion,
                                        kHistorySchemaVersion));
    }
  } else {
    const std::string create = fmt::format(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES('schema_version', '{}');{}",
        kHistorySchemaVersion, Schema(*options_.counters, gpu_columns_));
    if (Status s = Exec(create.c_str(), "creating the schema"); !s.ok()) return fail(s.error());
  }
  // A counter of the table that the store has no column for yet (one added
  // since the store was made) gets one, NULL in the old rows: not measured.
  if (Status s = AddCounterColumns(); !s.ok()) return fail(s.error());
  // Likewise an identity field added to the table gets its column, '' for
  // the GPUs already stored: not known.
  {
    auto have = ColumnsOf(db_, "gpus");
    if (!have.ok()) return fail(have.error());
    const std::string add = AddMissingGpuColumnsSql(gpu_columns_, *have);
    if (Status s = Exec(add.c_str(), "adding identity columns"); !s.ok()) return fail(s.error());
  }
  // Intervals a previous run left open end at that GPU's last stored window.
  if (Status s = Exec("UPDATE jobs SET end_s = max(start_s, coalesce((SELECT max(w.end_s) FROM windows w "
                      "WHERE w.gpu_id = jobs.gpu_id), start_s)) WHERE end_s IS NULL",
                      "closing the job intervals of the last run");
      !s.ok()) {
    return fail(s.error());
  }
  if (Status s = Exec("COMMIT", "committing the schema"); !s.ok()) return fail(s.error());

  // The upgrades and the added columns above leave the store with every column.
  sqlite3_stmt* raw = nullptr;
  const std::string select_gpus = fmt::format("SELECT {} FROM gpus", GpuColumnNames(gpu_columns_));
  if (sqlite3_prepare_v2(db_, select_gpus.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    return WriteError("reading the GPUs");
  }
  Stmt stmt(raw);
  while (sqlite3_step(raw) == SQLITE_ROW) {
    StoredGpu gpu = ColumnGpu(raw, gpu_columns_);
    gpus_[gpu.key()] = std::move(gpu);
  }
  return OkStatus();
}

Status HistoryStore::AddCounterColumns() {
  for (const char* table_name : {"windows", "rollups"}) {
    auto have = ColumnsOf(db_, table_name);
    if (!have.ok()) return Error::Io("history store {}: {}", options_.path, have.error().message);
    for (const OutputCounter& row : options_.counters->rows()) {
      if (have->count(std::string(row.column)) != 0) continue;
      const std::string sql = fmt::format("ALTER TABLE {} ADD COLUMN {} REAL", table_name, row.column);
      OFU_RETURN_IF_ERROR(Exec(sql.c_str(), "adding a counter's column"));
    }
  }
  return OkStatus();
}

Result<std::optional<double>> HistoryStore::NewestEnd(std::int64_t gpu_id,
                                                      const std::map<std::int64_t, double>& newest_ends) {
  if (const auto known = newest_ends.find(gpu_id); known != newest_ends.end()) return std::optional(known->second);
  sqlite3_stmt* s = statements_->newest_end.get();
  sqlite3_reset(s);
  sqlite3_bind_int64(s, 1, gpu_id);
  if (sqlite3_step(s) != SQLITE_ROW) return WriteError("reading a GPU's newest window");
  std::optional<double> newest = ColumnOptional(s, 0);
  sqlite3_reset(s);
  return newest;
}

Status HistoryStore::RollUpAfter(std::int64_t gpu_id, std::optional<double> newest_s, double end_s) {
  if (!newest_s) return OkStatus();  // the GPU's first window: no hour closed
  const double hour = RollupHourEnd(end_s), newest_hour = RollupHourEnd(*newest_s);
  if (hour > newest_hour) {
    // The hours up to this window's are closed; the window before it was in the last of them.
    return RollUpHours(gpu_id, newest_hour - kRollupSpanS, hour - kRollupSpanS);
  }
  if (hour < newest_hour) return RollUpHours(gpu_id, hour - kRollupSpanS, hour);  // late, into a closed hour
  return OkStatus();
}

Status HistoryStore::RollUpHours(std::int64_t gpu_id, double after_s, double until_s) {
  WindowStatements& st = *statements_;
  sqlite3_stmt* s = st.hour_rows.get();
  sqlite3_reset(s);
  sqlite3_bind_int64(s, 1, gpu_id);
  sqlite3_bind_double(s, 2, after_s);
  sqlite3_bind_double(s, 3, until_s);
  std::vector<StoredWindow> hour_rows;
  double hour = NAN;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    StoredWindow row = columns_->Read(s);
    if (RollupHourEnd(row.end_s) != hour) {
      if (Status written = RollUpHour(gpu_id, hour, hour_rows); !written.ok()) {
        sqlite3_reset(s);
        return written;
      }
      hour_rows.clear();
      hour = RollupHourEnd(row.end_s);
    }
    hour_rows.push_back(row);  // trivially copyable
  }
  sqlite3_reset(s);
  if (rc != SQLITE_DONE) return WriteError("reading windows to roll up");
  return RollUpHour(gpu_id, hour, hour_rows);
}

Status HistoryStore::RollUpHour(std::int64_t gpu_id, double hour_end_s, const std::vector<StoredWindow>& rows) {
  if (rows.empty()) return OkStatus();
  WindowStatements& st = *statements_;
  const double hour_start_s = hour_end_s - kRollupSpanS;
  // What was rolled up before (without a late window, or a job's end) is replaced.
  sqlite3_stmt* d = st.delete_rollups.get();
  sqlite3_reset(d);
  sqlite3_bind_int64(d, 1, gpu_id);
  sqlite3_bind_double(d, 2, hour_start_s);
  sqlite3_bind_double(d, 3, hour_end_s);
  OFU_RETURN_IF_ERROR(Step(d, "deleting rollups"));
  // The hour is cut where a job interval of the GPU starts or ends inside it.
  std::vector<double> cuts = {hour_start_s};
  sqlite3_stmt* c = st.job_cuts.get();
  sqlite3_reset(c);
  sqlite3_bind_int64(c, 1, gpu_id);
  sqlite3_bind_double(c, 2, hour_start_s);
  sqlite3_bind_double(c, 3, hour_end_s);
  int rc;
  while ((rc = sqlite3_step(c)) == SQLITE_ROW) cuts.push_back(sqlite3_column_double(c, 0));
  sqlite3_reset(c);
  if (rc != SQLITE_DONE) return WriteError("reading job intervals to roll up");
  cuts.push_back(hour_end_s);
  std::size_t first = 0;  // of the part's rows
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    std::size_t end = first;
    while (end < rows.size() && rows[end].end_s <= cuts[k + 1]) ++end;
    const std::optional<StoredRollup> rollup = RollUp(std::span(rows).subspan(first, end - first), cuts[k],
                                                      cuts[k + 1]);
    first = end;
    if (!rollup) continue;  // its windows are read one by one
    sqlite3_reset(st.insert_rollup.get());
    BindRollup(st.insert_rollup.get(), *columns_, *rollup);
    OFU_RETURN_IF_ERROR(Step(st.insert_rollup.get(), "storing a rollup"));
  }
  return OkStatus();
}

Status HistoryStore::RollUpClosedHours() {
  OFU_RETURN_IF_ERROR(PrepareWindowStatements());
  OFU_RETURN_IF_ERROR(Step(statements_->begin.get(), "starting a transaction"));
  Status status = OkStatus();
  for (const auto& [uuid, gpu] : gpus_) {
    auto newest = NewestEnd(gpu.id, newest_ends_);
    if (!newest.ok()) {
      status = newest.error();
      break;
    }
    if (!*newest) continue;
    status = RollUpHours(gpu.id, -std::numeric_limits<double>::infinity(), RollupHourEnd(**newest) - kRollupSpanS);
    if (!status.ok()) break;
  }
  if (status.ok()) status = Step(statements_->commit.get(), "committing rollups");
  if (!status.ok() && sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  return status;
}

Status HistoryStore::WriteBatch(const WindowBatch& batch, std::map<std::string, StoredGpu>& gpus,
                                std::map<std::int64_t, OpenJob>& open_jobs,
                                std::map<std::int64_t, double>& newest_ends) {
  OFU_RETURN_IF_ERROR(PrepareWindowStatements());
  WindowStatements& st = *statements_;
  const double window_start_s = batch.end_s - batch.window_s;
  for (const GpuWindow& window : batch.gpus) {
    StoredGpu wanted;
    wanted.identity = window.identity;
    wanted.identity.key = window.key();
    wanted.sku = window.sku;
    wanted.architecture = window.architecture;
    StoredGpu& gpu = gpus[wanted.key()];
    if (gpu.id == 0 || !SameGpuColumns(gpu, wanted, gpu_columns_)) {
      sqlite3_stmt* s = st.upsert_gpu.get();
      sqlite3_reset(s);
      BindGpu(s, wanted, gpu_columns_);
      if (sqlite3_step(s) != SQLITE_ROW) return WriteError("storing a GPU");
      wanted.id = sqlite3_column_int64(s, 0);
      if (sqlite3_step(s) != SQLITE_DONE) return WriteError("storing a GPU");
      gpu = wanted;
    }

    StoredWindow row = RowOfWindow(window, batch.end_s, batch.window_s, *options_.counters);
    row.gpu_id = gpu.id;
    OFU_ASSIGN_OR_RETURN(std::optional<double> newest, NewestEnd(gpu.id, newest_ends));
    sqlite3_reset(st.insert_window.get());
    columns_->Bind(st.insert_window.get(), row);
    if (sqlite3_step(st.insert_window.get()) != SQLITE_DONE) return WriteError("storing a window");

    const auto job = batch.jobs.find(window.key());
    auto open = open_jobs.find(gpu.id);
    if (open != open_jobs.end() &&
        (job == batch.jobs.end() || !SameJob(job->second, open->second.job_id, open->second.user, open->second.job_name,
                                             open->second.scheduler))) {
      sqlite3_stmt* s = st.close_job.get();
      sqlite3_reset(s);
      sqlite3_bind_int64(s, 1, open->second.rowid);
      sqlite3_bind_double(s, 2, window_start_s);
      if (sqlite3_step(s) != SQLITE_DONE) return WriteError("closing a job interval");
      open_jobs.erase(open);
      open = open_jobs.end();
    }
    if (job != batch.jobs.end() && open == open_jobs.end()) {
      const attribution::JobInfo& info = job->second;
      sqlite3_stmt* s = st.open_job.get();
      sqlite3_reset(s);
      sqlite3_bind_int64(s, 1, gpu.id);
      BindText(s, 2, info.job_id);
      BindText(s, 3, info.user);
      BindText(s, 4, info.job_name);
      BindText(s, 5, info.scheduler);
      sqlite3_bind_double(s, 6, window_start_s);
      if (sqlite3_step(s) != SQLITE_DONE) return WriteError("opening a job interval");
      open_jobs[gpu.id] = OpenJob{sqlite3_last_insert_rowid(db_), info.job_id, info.user, info.job_name,
                                  info.scheduler};
    }
    // After the job's interval opened or closed: an hour that closes now is cut where it did.
    OFU_RETURN_IF_ERROR(RollUpAfter(gpu.id, newest, row.end_s));
    newest_ends[gpu.id] = std::max(newest.value_or(row.end_s), row.end_s);
  }
  return OkStatus();
}

Status HistoryStore::Consume(const WindowBatch& batch) {
  // The caches change only with a committed transaction.
  std::map<std::string, StoredGpu> gpus = gpus_;
  std::map<std::int64_t, OpenJob> open_jobs = open_jobs_;
  std::map<std::int64_t, double> newest_ends = newest_ends_;
  Status written = PrepareWindowStatements();
  if (written.ok()) written = Step(statements_->begin.get(), "starting a transaction");
  if (written.ok()) written = WriteBatch(batch, gpus, open_jobs, newest_ends);
  if (written.ok()) written = Step(statements_->commit.get(), "committing a window");
  if (!written.ok()) {
    // SQLite may already have rolled back (SQLITE_FULL can); then there is nothing to undo.
    if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return written;
  }
  gpus_ = std::move(gpus);
  open_jobs_ = std::move(open_jobs);
  newest_ends_ = std::move(newest_ends);

  const double now = clock_.NowS();
  if (!last_maintenance_s_ || now - *last_maintenance_s_ >= options_.maintenance_interval_s) {
    // Once per interval even when it fails: a full disk must not make every window pay for it.
    last_maintenance_s_ = now;
    Status maintained = Exec("BEGIN IMMEDIATE", "starting maintenance");
    if (maintained.ok()) maintained = Maintain(batch.end_s);
    if (maintained.ok()) maintained = Exec("COMMIT", "committing maintenance");
    if (!maintained.ok()) {
      if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      return maintained;
    }
  }
  return OkStatus();
}

Status HistoryStore::Maintain(double newest_end_s) {
  auto run = [this](const char* sql, double bound, const char* doing) -> Status {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &raw, nullptr) != SQLITE_OK) return WriteError(doing);
    Stmt stmt(raw);
    sqlite3_bind_double(raw, 1, bound);
    if (sqlite3_step(raw) != SQLITE_DONE) return WriteError(doing);
    return OkStatus();
  };
  const double retention_start = newest_end_s - options_.retention_days * kSecondsPerDay;
  if (Status s = run("DELETE FROM windows WHERE end_s <= ?1", retention_start, "deleting old windows"); !s.ok()) {
    return s;
  }
  if (Status s = run("DELETE FROM jobs WHERE end_s IS NOT NULL AND end_s <= ?1", retention_start,
                     "deleting old job intervals");
      !s.ok()) {
    return s;
  }
  // An hour that has lost a window to retention has lost its rollup too.
  if (Status s = run("DELETE FROM rollups WHERE after_s < ?1", retention_start, "deleting old rollups"); !s.ok()) {
    return s;
  }

  // Downsample whole spans only: a span (k*D, (k+1)*D] all older than the
  // full-resolution limit. Its row ends at (k+1)*D.
  const double span = options_.downsampled_span_s;
  const double limit = std::floor((newest_end_s - options_.full_resolution_days * kSecondsPerDay) / span) * span;
  std::map<std::pair<std::int64_t, double>, StoredWindow> sums;
  {
    const std::string sql = fmt::format("SELECT {} FROM windows WHERE end_s <= ?1 AND (flags & {}) = 0",
                                        columns_->names(), static_cast<unsigned>(kHistoryDownsampled));
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) return WriteError("downsampling");
    Stmt stmt(raw);
    sqlite3_bind_double(raw, 1, limit);
    int rc;
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
      const StoredWindow w = columns_->Read(raw);
      const double end = std::ceil(w.end_s / span) * span;
      StoredWindow& sum = sums[{w.gpu_id, end}];
      sum.gpu_id = w.gpu_id;
      sum.end_s = end;
      AddRowInto(sum, w);
    }
    if (rc != SQLITE_DONE) return WriteError("downsampling");
  }
  if (sums.empty()) return OkStatus();
  {
    const std::string sql = fmt::format("DELETE FROM windows WHERE end_s <= ?1 AND (flags & {}) = 0",
                                        static_cast<unsigned>(kHistoryDownsampled));
    OFU_RETURN_IF_ERROR(run(sql.c_str(), limit, "downsampling"));
  }
  const std::string select_existing = fmt::format("SELECT {} FROM windows WHERE gpu_id = ?1 AND end_s = ?2",
                                                  columns_->names());
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_, select_existing.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    return WriteError("downsampling");
  }
  Stmt existing(raw);
  if (sqlite3_prepare_v2(db_, InsertWindow(*columns_).c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    return WriteError("downsampling");
  }
  Stmt insert(raw);
  for (auto& [key, sum] : sums) {
    // Windows that arrived late for a span already summed join its row.
    sqlite3_reset(existing.get());
    sqlite3_bind_int64(existing.get(), 1, key.first);
    sqlite3_bind_double(existing.get(), 2, key.second);
    const int rc = sqlite3_step(existing.get());
    if (rc == SQLITE_ROW) {
      AddRowInto(sum, columns_->Read(existing.get()));
    } else if (rc != SQLITE_DONE) {
      return WriteError("downsampling");
    }
    sqlite3_reset(insert.get());
    columns_->Bind(insert.get(), sum);
    if (sqlite3_step(insert.get()) != SQLITE_DONE) return WriteError("storing a downsampled window");
  }
  return OkStatus();
}

}  // namespace ofu::sinks
