#include "ofu/sinks/history_reader.h"

#include <sqlite3.h>

#include <limits>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "ofu/formats/sqlite_handles.h"
#include "ofu/sinks/history_columns.h"

namespace ofu::sinks {
namespace {

using formats::ColumnOptional;
using formats::ColumnText;
using Db = formats::SqliteDb;
using Stmt = formats::SqliteStmt;

class Reader {
 public:
  Reader(const std::string& path, sqlite3* db) : path_(path), db_(db) {}

  Error Fail(const char* doing) const {
    return Error::Io("history store {}: {}: {}", path_, doing, sqlite3_errmsg(db_));
  }

  Result<Stmt> Prepare(const std::string& sql, const char* doing) const {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) return Fail(doing);
    return Stmt(raw);
  }

 private:
  const std::string& path_;
  sqlite3* db_;
};

// Parameters shared by the queries: ?1 since, ?2 until, ?3 job id (NULL: any).
void BindQuery(sqlite3_stmt* s, const HistoryQuery& q) {
  sqlite3_bind_double(s, 1, q.since_s.value_or(-std::numeric_limits<double>::infinity()));
  sqlite3_bind_double(s, 2, q.until_s.value_or(std::numeric_limits<double>::infinity()));
  if (q.job_id) {
    sqlite3_bind_text(s, 3, q.job_id->data(), static_cast<int>(q.job_id->size()), SQLITE_TRANSIENT);
  } else {
    sqlite3_bind_null(s, 3);
  }
}

// The store's schema version, when this ofu can read it.
Result<int> ReadSchemaVersion(const Reader& reader, sqlite3* db, const std::string& path) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &raw, nullptr) != SQLITE_OK) {
    const int code = sqlite3_errcode(db);
    if (code == SQLITE_NOTADB || code == SQLITE_ERROR) {
      return Error::MalformedInput("history store {}: not an ofu history store ({})", path, sqlite3_errmsg(db));
    }
    return reader.Fail("reading the schema version");
  }
  Stmt stmt(raw);
  std::string version;
  if (sqlite3_step(raw) == SQLITE_ROW) version = ColumnText(raw, 0);
  int schema_version = 0;
  for (int known = kOldestReadableSchemaVersion; known <= kHistorySchemaVersion; ++known) {
    if (version == std::to_string(known)) schema_version = known;
  }
  if (schema_version == 0) {
    return Error::MalformedInput("history store {}: schema version {}, this ofu reads versions {} to {}", path,
                                 version.empty() ? "(none)" : version, kOldestReadableSchemaVersion,
                                 kHistorySchemaVersion);
  }
  return schema_version;
}

// The windows ending in (since, until], and with a job only those inside
// its intervals, by GPU and time.
Status ReadWindows(const Reader& reader, int schema_version, const HistoryQuery& query,
                   std::vector<StoredWindow>& out) {
  // A window is in the job when its end lies in one of the job's intervals on its GPU.
  constexpr const char* kInJob =
      "(?3 IS NULL OR EXISTS (SELECT 1 FROM jobs j WHERE j.gpu_id = w.gpu_id AND j.job_id = ?3 "
      "AND w.end_s > j.start_s AND (j.end_s IS NULL OR w.end_s <= j.end_s)))";
  OFU_ASSIGN_OR_RETURN(
      auto stmt,
      reader.Prepare(
          fmt::format("SELECT {} FROM windows w WHERE w.end_s > ?1 AND w.end_s <= ?2 AND {} ORDER BY gpu_id, end_s",
                      schema_version == 1  ? kWindowColumnsV1
                      : schema_version < 4 ? kWindowColumnsV3
                                           : kWindowColumns,
                      kInJob),
          "reading windows"));
  sqlite3_stmt* s = stmt.get();
  BindQuery(s, query);
  int step;
  while ((step = sqlite3_step(s)) == SQLITE_ROW) {
    StoredWindow w = ColumnWindow(s);
    out.push_back(w);
  }
  if (step != SQLITE_DONE) return reader.Fail("reading windows");
  return OkStatus();
}

// The job intervals overlapping (since, until], of the one job or of all.
Status ReadJobs(const Reader& reader, const HistoryQuery& query, std::vector<StoredJob>& out) {
  OFU_ASSIGN_OR_RETURN(
      auto stmt, reader.Prepare("SELECT gpu_id, job_id, user, job_name, scheduler, start_s, end_s FROM jobs "
                                "WHERE start_s < ?2 AND (end_s IS NULL OR end_s > ?1) AND (?3 IS NULL OR job_id = ?3) "
                                "ORDER BY job_id, gpu_id, start_s",
                                "reading job intervals"));
  sqlite3_stmt* s = stmt.get();
  BindQuery(s, query);
  int step;
  while ((step = sqlite3_step(s)) == SQLITE_ROW) {
    StoredJob job;
    job.gpu_id = sqlite3_column_int64(s, 0);
    job.job_id = ColumnText(s, 1);
    job.user = ColumnText(s, 2);
    job.job_name = ColumnText(s, 3);
    job.scheduler = ColumnText(s, 4);
    job.start_s = sqlite3_column_double(s, 5);
    job.end_s = ColumnOptional(s, 6);
    out.push_back(job);
  }
  if (step != SQLITE_DONE) return reader.Fail("reading job intervals");
  return OkStatus();
}

// The GPUs that the windows or jobs read refer to, with each one's last
// window end in the whole store.
Status ReadGpus(const Reader& reader, int schema_version, StoredHistory& history) {
  std::set<std::int64_t> wanted;
  for (const StoredWindow& w : history.windows) wanted.insert(w.gpu_id);
  for (const StoredJob& j : history.jobs) wanted.insert(j.gpu_id);
  OFU_ASSIGN_OR_RETURN(
      auto stmt,
      reader.Prepare(
          fmt::format("SELECT {}, (SELECT max(end_s) FROM windows w WHERE w.gpu_id = gpus.id) FROM gpus ORDER BY id",
                      schema_version < 3 ? kGpuColumnsV2 : kGpuColumns),
          "reading GPUs"));
  sqlite3_stmt* s = stmt.get();
  int step;
  while ((step = sqlite3_step(s)) == SQLITE_ROW) {
    if (wanted.count(sqlite3_column_int64(s, 0)) == 0) continue;
    StoredGpu gpu = ColumnGpu(s);
    gpu.last_end_s = ColumnOptional(s, kGpuColumnCount);
    history.gpus.push_back(gpu);
  }
  if (step != SQLITE_DONE) return reader.Fail("reading GPUs");
  return OkStatus();
}

}  // namespace

Result<StoredHistory> ReadHistory(const std::string& path, const HistoryQuery& query) {
  sqlite3* raw_db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw_db, SQLITE_OPEN_READONLY, nullptr);
  Db db(raw_db);
  if (rc != SQLITE_OK) {
    return Error::Io("history store {}: cannot open: {}", path,
                     raw_db != nullptr ? sqlite3_errmsg(raw_db) : sqlite3_errstr(rc));
  }
  sqlite3_busy_timeout(db.get(), 5000);
  Reader reader(path, db.get());
  OFU_ASSIGN_OR_RETURN(int schema_version, ReadSchemaVersion(reader, db.get(), path));

  StoredHistory history;
  history.path = path;
  history.query = query;
  // One read transaction: the three queries see the same committed state.
  if (sqlite3_exec(db.get(), "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK) return reader.Fail("reading");
  OFU_RETURN_IF_ERROR(ReadWindows(reader, schema_version, query, history.windows));
  OFU_RETURN_IF_ERROR(ReadJobs(reader, query, history.jobs));
  OFU_RETURN_IF_ERROR(ReadGpus(reader, schema_version, history));
  sqlite3_exec(db.get(), "COMMIT", nullptr, nullptr, nullptr);
  return history;
}

}  // namespace ofu::sinks
