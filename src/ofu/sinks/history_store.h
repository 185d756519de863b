// The agent's embedded history: every window of every GPU, and which job ran
// where, in a SQLite file (schema: history/history_reader.h; docs/agent.md).
//
// Durability. One transaction per window batch, in WAL mode with
// synchronous=NORMAL. A committed WAL transaction survives a crash of the
// process (kill -9): the WAL is written before COMMIT returns and only fsync
// is deferred, which matters for power loss or an OS crash alone (SQLite's
// PRAGMA synchronous and WAL documentation). So kill -9 loses at most the
// batch in flight, never part of one.
//
// Full disk. A batch that cannot be written (SQLITE_FULL, or any other write
// error) is rolled back entirely and Consume returns an Error saying so; the
// agent logs it and keeps serving /metrics. The next Consume tries again, so
// the store recovers by itself when space frees; the windows in between are
// not kept.
//
// Maintenance runs inside Consume, at most every maintenance_interval_s of
// the injected clock, in its own transaction: it deletes windows and closed
// job intervals older than retention_days, and sums windows older than
// full_resolution_days into one row per GPU per downsampled_span_s (exactly:
// sum(utilized_s) / sum(observed_s) over any whole spans is unchanged). Ages
// are measured from the newest batch's end (the data's own clock), so a
// replay of an old recording is not deleted on arrival; for a live source
// that is wall time.
//
// Rollups. When a GPU's window falls in a later hour than its window before,
// the hours in between are closed: each gets its rollups, the sums of its
// windows (history_rollup.h), one per part between the GPU's job interval
// boundaries, in the same transaction (after the window's job interval
// opened or closed). A window that arrives late, into a closed hour, rolls
// that hour up again. Retention deletes a rollup with the first window of
// its part; downsampling leaves it, since it sums the windows as they were.
//
// Job intervals. When a GPU's job appears, an interval opens at the start of
// that window; when it changes or disappears, the open interval closes at the
// start of the window that no longer has it (the end of the last that did).
// Opening the store closes intervals left open by a previous run at that
// GPU's last stored window: nothing is known of the time the agent was down.
//
// The directory must exist: a path in a missing directory is an error naming
// it (the store is where the user said, or nowhere).
//
// Ownership: owns its database connection. Thread-safety: one thread at a
// time calls Consume (in the agent, an AsyncSink's worker: a commit may wait
// on the disk, and must not stall sampling); readers use ReadHistory, in this
// or another process.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ofu/core/gpu_identity.h"
#include "ofu/core/output_counters.h"
#include "ofu/core/result.h"
#include "ofu/history/history_reader.h"
#include "ofu/sinks/sink.h"
#include "ofu/sources/clock.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ofu::history {
class WindowColumns;
struct GpuColumn;
}  // namespace ofu::history

namespace ofu::sinks {

struct HistoryOptions {
  std::string path;
  double retention_days = 14;
  double full_resolution_days = 2;
  double downsampled_span_s = 60;
  double maintenance_interval_s = 3600;
  // Tests: simulate a full disk (PRAGMA max_page_count).
  std::optional<std::int64_t> max_page_count;
  // The counters stored, a column each (core/output_counters.h); not owned,
  // outlives the store. A store made with fewer gets the others' columns.
  const OutputCounterTable* counters = &OutputCounterTable::Builtin();
  // The identity fields stored (core/gpu_identity.h): an added row is a
  // column of `gpus`; not owned, outlives the store. A store made without
  // the row gets its column, '' for the GPUs already there.
  const IdentityFieldTable* identity = &IdentityFieldTable::Builtin();
};

// The row one GPU window becomes (history/row_of_window.h). gpu_id is left 0.
history::StoredWindow RowOfWindow(const GpuWindow& gpu, double end_s, double window_s,
                                  const OutputCounterTable& counters = OutputCounterTable::Builtin());

class HistoryStore final : public Sink {
 public:
  // Creates the file and schema when missing; upgrades a schema version 1
  // store to version 2 (history_reader.h). kIo when the directory is
  // missing or the file cannot be opened; kMalformedInput when the file is
  // not an ofu history store or has an unknown schema version.
  static Result<std::unique_ptr<HistoryStore>> Open(const HistoryOptions& options, sources::Clock& clock);

  ~HistoryStore() override;
  HistoryStore(const HistoryStore&) = delete;
  HistoryStore& operator=(const HistoryStore&) = delete;

  std::string_view name() const override { return "store"; }
  // Writes the batch in one transaction, then runs maintenance when due.
  Status Consume(const WindowBatch& batch) override;

  // Rolls up every closed hour of every GPU, in one transaction: for a store
  // whose windows were written by other means (bench/store_fill.cc).
  Status RollUpClosedHours();

  // Tests: the disk "fills" or "frees" (PRAGMA max_page_count).
  Status SetMaxPageCount(std::int64_t pages);

  const std::string& path() const { return options_.path; }

 private:
  struct OpenJob {
    std::int64_t rowid = 0;
    std::string job_id, user, job_name, scheduler;
  };

  HistoryStore(HistoryOptions options, sources::Clock& clock, sqlite3* db);
  Status Initialize();
  Status AddCounterColumns();  // in the schema transaction
  Status WriteBatch(const WindowBatch& batch, std::map<std::string, history::StoredGpu>& gpus,
                    std::map<std::int64_t, OpenJob>& open_jobs, std::map<std::int64_t, double>& newest_ends);
  // The end of a GPU's newest stored window, from `newest_ends` or the file.
  Result<std::optional<double>> NewestEnd(std::int64_t gpu_id, const std::map<std::int64_t, double>& newest_ends);
  // After a window ending at end_s joined a GPU whose newest window ended at
  // newest_s: rolls up the hours that closed, or the closed hour it joined.
  Status RollUpAfter(std::int64_t gpu_id, std::optional<double> newest_s, double end_s);
  // Rolls up each hour of the GPU's windows ending in (after_s, until_s].
  Status RollUpHours(std::int64_t gpu_id, double after_s, double until_s);
  // Replaces the rollups of the hour ending at hour_end_s by those of `rows`,
  // its windows in time order: one per part between job interval boundaries.
  Status RollUpHour(std::int64_t gpu_id, double hour_end_s, const std::vector<history::StoredWindow>& rows);
  Status Maintain(double newest_end_s);
  Status Exec(const char* sql, const char* doing);
  Status Step(sqlite3_stmt* statement, const char* doing);  // a prepared statement without rows
  Error WriteError(const char* doing) const;

  // The statements of every window, prepared once: parsing them again for
  // each window was most of the agent's CPU time at 10 Hz.
  struct WindowStatements;
  Status PrepareWindowStatements();

  HistoryOptions options_;
  std::unique_ptr<const history::WindowColumns> columns_;  // of options_.counters (history/history_columns.h)
  std::vector<history::GpuColumn> gpu_columns_;            // of options_.identity (history/history_columns.h)
  sources::Clock& clock_;
  sqlite3* db_;
  std::unique_ptr<WindowStatements> statements_;  // finalized before db_ closes
  // Caches of what is committed: GPUs by key, open job intervals by gpu id.
  std::map<std::string, history::StoredGpu> gpus_;
  std::map<std::int64_t, OpenJob> open_jobs_;
  std::map<std::int64_t, double> newest_ends_;  // gpu id -> end of its newest window
  std::optional<double> last_maintenance_s_;
};

}  // namespace ofu::sinks
