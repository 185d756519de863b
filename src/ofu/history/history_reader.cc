#include "ofu/history/history_reader.h"

#include <sqlite3.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "ofu/formats/sqlite_handles.h"
#include "ofu/history/history_columns.h"
#include "ofu/history/history_rollup.h"

namespace ofu::history {
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

// A window is in the job when its end lies in one of the job's intervals on its GPU.
constexpr const char* kInJob =
    "(?3 IS NULL OR EXISTS (SELECT 1 FROM jobs j WHERE j.gpu_id = w.gpu_id AND j.job_id = ?3 "
    "AND w.end_s > j.start_s AND (j.end_s IS NULL OR w.end_s <= j.end_s)))";

// One GPU's (?4) windows ending in (since, until], and with a job only those
// inside its intervals, in time order: a range of the primary key.
Result<Stmt> PrepareWindows(const Reader& reader, const WindowColumns& columns) {
  return reader.Prepare(
      fmt::format("SELECT {} FROM windows w WHERE w.gpu_id = ?4 AND w.end_s > ?1 AND w.end_s <= ?2 AND {} "
                  "ORDER BY w.end_s",
                  columns.names(), kInJob),
      "reading windows");
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

// The GPUs that the windows or jobs selected refer to, with each one's last
// window end in the whole store. With a job, a GPU with a window in the job
// has one of its intervals, so the intervals name them all; without, a GPU
// is also in when it has a window in the range (a seek of the primary key).
// `have`: the columns of the store's `gpus` (a built-in one it lacks reads
// as ''; one an added identity row made is read into GpuIdentity::added).
Status ReadGpus(const Reader& reader, const std::set<std::string>& have, StoredHistory& history) {
  const std::vector<GpuColumn> columns = GpuColumnsIn(have);
  const int last_end = static_cast<int>(columns.size()) + 1;
  std::set<std::int64_t> of_jobs;
  for (const StoredJob& j : history.jobs) of_jobs.insert(j.gpu_id);
  OFU_ASSIGN_OR_RETURN(
      auto stmt, reader.Prepare(fmt::format("SELECT {}, (SELECT max(end_s) FROM windows w WHERE w.gpu_id = gpus.id), "
                                            "?3 IS NULL AND EXISTS (SELECT 1 FROM windows w WHERE w.gpu_id = gpus.id "
                                            "AND w.end_s > ?1 AND w.end_s <= ?2) FROM gpus ORDER BY id",
                                            GpuColumnNames(columns, &have)),
                                "reading GPUs"));
  sqlite3_stmt* s = stmt.get();
  BindQuery(s, history.query);
  int step;
  while ((step = sqlite3_step(s)) == SQLITE_ROW) {
    const bool has_windows = sqlite3_column_int(s, last_end + 1) != 0;
    if (!has_windows && of_jobs.count(sqlite3_column_int64(s, 0)) == 0) continue;
    StoredGpu gpu = ColumnGpu(s, columns);
    gpu.last_end_s = ColumnOptional(s, last_end);
    history.gpus.push_back(gpu);
  }
  if (step != SQLITE_DONE) return reader.Fail("reading GPUs");
  return OkStatus();
}

// One GPU's rollups whose spans lie in (?2, ?3], in time order (ColumnRollup reads them).
Result<Stmt> PrepareRollups(const Reader& reader, const WindowColumns& columns) {
  return reader.Prepare(fmt::format("SELECT {}, {} FROM rollups WHERE gpu_id = ?1 AND after_s >= ?2 AND until_s <= ?3 "
                                    "ORDER BY until_s",
                                    columns.names(), kRollupColumns),
                        "reading rollups");
}

// Whether the stream may hand over a rollup of the windows ending in
// (after_s, until_s] instead of them (HistoryStream, in the header).
// `intervals` are the GPU's job intervals as read (with a job: the job's).
bool RollupUsable(double after_s, double until_s, const std::vector<const StoredJob*>& intervals, bool one_job) {
  bool inside_the_job = false;
  for (const StoredJob* job : intervals) {
    const double end = job->end_s.value_or(std::numeric_limits<double>::infinity());
    if ((job->start_s > after_s && job->start_s < until_s) || (end > after_s && end < until_s)) return false;
    if (job->start_s <= after_s && end >= until_s) inside_the_job = true;
  }
  return !one_job || inside_the_job;
}

}  // namespace

struct HistoryStream::Connection {
  std::string path;
  Db db;
  Stmt windows;                                                        // PrepareWindows
  Stmt rollups;                                                        // PrepareRollups; none without rollups
  std::optional<WindowColumns> window_columns, rollup_columns;         // what the two read, for this store
  std::map<std::int64_t, std::vector<const StoredJob*>> intervals_of;  // gpu id -> its intervals in history_.jobs
  Reader reader() const { return Reader(path, db.get()); }
};

HistoryStream::HistoryStream(StoredHistory history, std::unique_ptr<Connection> connection)
    : history_(std::move(history)), connection_(std::move(connection)) {
  for (const StoredJob& job : history_.jobs) connection_->intervals_of[job.gpu_id].push_back(&job);
}

HistoryStream::~HistoryStream() = default;  // closing the connection ends its read transaction

Result<std::unique_ptr<HistoryStream>> HistoryStream::Open(const std::string& path, const HistoryQuery& query,
                                                           bool rollups, const OutputCounterTable& counters) {
  auto connection = std::make_unique<Connection>();
  connection->path = path;
  sqlite3* raw_db = nullptr;
  // NOMUTEX: the connection is one stream's, used by one thread at a time;
  // without it every column read takes the connection's mutex (a tenth of
  // the time of a report over 10^8 rows).
  const int rc = sqlite3_open_v2(path.c_str(), &raw_db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  connection->db.reset(raw_db);
  if (rc != SQLITE_OK) {
    return Error::Io("history store {}: cannot open: {}", path,
                     raw_db != nullptr ? sqlite3_errmsg(raw_db) : sqlite3_errstr(rc));
  }
  sqlite3* db = connection->db.get();
  sqlite3_busy_timeout(db, 5000);
  const Reader reader = connection->reader();
  OFU_ASSIGN_OR_RETURN(int schema_version, ReadSchemaVersion(reader, db, path));

  StoredHistory history;
  history.path = path;
  history.query = query;
  // One read transaction, until the stream closes: every query sees the same committed state.
  if (sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK) return reader.Fail("reading");
  OFU_RETURN_IF_ERROR(ReadJobs(reader, query, history.jobs));
  const auto columns_of = [&](const char* table_name) -> Result<std::set<std::string>> {
    auto have = ColumnsOf(db, table_name);
    if (!have.ok()) return Error::Io("history store {}: {}", path, have.error().message);
    return have;
  };
  OFU_ASSIGN_OR_RETURN(const std::set<std::string> gpu_have, columns_of("gpus"));
  OFU_RETURN_IF_ERROR(ReadGpus(reader, gpu_have, history));
  // A counter column the store lacks (older than the counter) reads as NULL.
  OFU_ASSIGN_OR_RETURN(const std::set<std::string> window_have, columns_of("windows"));
  connection->window_columns.emplace(counters, &window_have);
  OFU_ASSIGN_OR_RETURN(connection->windows, PrepareWindows(reader, *connection->window_columns));
  BindQuery(connection->windows.get(), query);
  if (rollups && schema_version >= 5) {
    OFU_ASSIGN_OR_RETURN(const std::set<std::string> rollup_have, columns_of("rollups"));
    connection->rollup_columns.emplace(counters, &rollup_have);
    OFU_ASSIGN_OR_RETURN(connection->rollups, PrepareRollups(reader, *connection->rollup_columns));
  }
  return std::unique_ptr<HistoryStream>(new HistoryStream(std::move(history), std::move(connection)));
}

Status HistoryStream::PlanGpu(std::int64_t gpu_id) {
  pieces_.clear();
  next_piece_ = 0;
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  double after = history_.query.since_s.value_or(-kInfinity);
  double until = history_.query.until_s.value_or(kInfinity);
  const std::vector<const StoredJob*>& intervals = connection_->intervals_of[gpu_id];  // empty: none on this GPU
  const bool one_job = history_.query.job_id.has_value();
  if (one_job) {
    // Only the span of the job's intervals on this GPU can hold its rows:
    // a narrower range of the primary key than (since, until].
    double first = kInfinity, last = -kInfinity;
    for (const StoredJob* job : intervals) {
      first = std::min(first, job->start_s);
      last = std::max(last, job->end_s.value_or(kInfinity));
    }
    if (first > last) return OkStatus();  // none here: no row of the job either
    after = std::max(after, first);
    until = std::min(until, last);
  }
  sqlite3_stmt* s = connection_->rollups.get();
  if (s != nullptr) {
    sqlite3_reset(s);
    sqlite3_bind_int64(s, 1, gpu_id);
    sqlite3_bind_double(s, 2, after);
    sqlite3_bind_double(s, 3, until);
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
      const WindowColumns& columns = *connection_->rollup_columns;
      const int after_column = columns.count();  // after_s, then until_s (kRollupColumns)
      if (!RollupUsable(sqlite3_column_double(s, after_column), sqlite3_column_double(s, after_column + 1), intervals,
                        one_job)) {
        continue;
      }
      OFU_ASSIGN_OR_RETURN(StoredRollup rollup, ColumnRollup(s, columns));
      // The windows before it, one by one, then it.
      const double covered = pieces_.empty() ? after : pieces_.back().until_s;
      if (rollup.after_s > covered) pieces_.push_back({covered, rollup.after_s, std::nullopt});
      const double after_s = rollup.after_s, until_s = rollup.until_s;
      pieces_.push_back({after_s, until_s, std::move(rollup)});
    }
    if (step != SQLITE_DONE) return connection_->reader().Fail("reading rollups");
  }
  const double covered = pieces_.empty() ? after : pieces_.back().until_s;
  if (pieces_.empty() || covered < until) pieces_.push_back({covered, until, std::nullopt});
  return OkStatus();
}

Result<HistoryStream::Item> HistoryStream::Next(StoredWindow& row, StoredRollup& rollup) {
  sqlite3_stmt* s = connection_->windows.get();
  while (true) {
    if (reading_windows_) {
      const int step = sqlite3_step(s);
      if (step == SQLITE_ROW) {
        row = connection_->window_columns->Read(s);
        return Item::kWindow;
      }
      if (step != SQLITE_DONE) return connection_->reader().Fail("reading windows");
      reading_windows_ = false;
    }
    if (next_piece_ == pieces_.size()) {
      if (next_gpu_ == history_.gpus.size()) return Item::kEnd;
      OFU_RETURN_IF_ERROR(PlanGpu(history_.gpus[next_gpu_++].id));
      continue;
    }
    Piece& piece = pieces_[next_piece_++];
    if (piece.rollup) {
      rollup = std::move(*piece.rollup);
      return Item::kRollup;
    }
    sqlite3_reset(s);
    sqlite3_bind_double(s, 1, piece.after_s);
    sqlite3_bind_double(s, 2, piece.until_s);
    sqlite3_bind_int64(s, 4, history_.gpus[next_gpu_ - 1].id);
    reading_windows_ = true;
  }
}

Result<bool> HistoryStream::Next(StoredWindow& row) {
  if (connection_->rollups.get() != nullptr) {
    // A rollup here would have to be dropped, and its windows with it.
    return Error::InvalidArgument("history store {}: a stream opened with rollups is read with Next(row, rollup)",
                                  history_.path);
  }
  StoredRollup unused;
  OFU_ASSIGN_OR_RETURN(Item item, Next(row, unused));
  return item == Item::kWindow;  // without rollups: windows, then the end
}

Result<StoredHistory> ReadHistory(const std::string& path, const HistoryQuery& query, std::size_t max_windows,
                                  const OutputCounterTable& counters) {
  OFU_ASSIGN_OR_RETURN(auto stream, HistoryStream::Open(path, query, false, counters));
  StoredHistory history = stream->history();
  StoredWindow row;
  while (true) {
    OFU_ASSIGN_OR_RETURN(bool more, stream->Next(row));
    if (!more) break;
    if (history.windows.size() == max_windows) {
      return Error::InvalidArgument(
          "{}: the selection has more than {} windows, more than this command holds in memory (about 300 bytes each)",
          path, max_windows);
    }
    history.windows.push_back(row);
  }
  return history;
}

}  // namespace ofu::history
