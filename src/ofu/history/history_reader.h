// The agent's history store, read side: what `ofu report --store` reads.
//
// The store (sinks/history_store.h writes it) is a SQLite file with three tables:
//
//   gpus     one row per GPU ever seen: uuid (the GPU's key), index, model,
//            spec-database SKU (empty: model unknown), architecture, hostname
//   windows  one row per GPU window, whether or not it had an OFU:
//              end_s, span_s          the window (end_s - span_s, end_s], epoch s
//              observed_s             span_s when the window had an OFU, else 0
//              utilized_s             OFU x span_s over such windows
//              busy_s, busy_utilized_s  the same over busy windows with an OFU
//              tensor_active_s        tensor activity x span_s over windows with an OFU
//              clock_mhz (+min, max)  mean SM clock of the window; NULL when none
//              clock_windows          windows whose clock went into clock_mhz
//              up_s                   span_s when the GPU answered, else 0
//              flags                  HistoryFlag bits (what was missing, and
//                                     where the OFU's clock came from)
//              the other counters of core/output_counters.h, a column each:
//                                     the tensor pipe kinds (schema version 2),
//                                     the CUDA-core pipes and the non-tensor
//                                     bound (version 4); NULL when not
//                                     measured, or written before the store
//                                     had the column (one a newer table adds
//                                     is added, NULL in the old rows)
//            These follow the counter rules of docs/prometheus.md, so for any
//            set of rows sum(utilized_s) / sum(observed_s) is their OFU,
//            windows without data neither diluting nor inflating it.
//            A downsampled row (kDownsampled) holds the sums of the windows of
//            one GPU in (end_s - downsampled_span_s, end_s]; its span_s is the
//            sum of their spans, its flags the OR of theirs.
//   jobs     job intervals per GPU: (start_s, end_s] with the job's identity;
//            end_s NULL while the job runs. A window belongs to a job when
//            its end lies inside one of the job's intervals on that GPU.
//   rollups  (schema version 5) per GPU and closed hour (aligned to the
//            epoch), one row per part of the hour between job interval
//            boundaries, (after_s, until_s] (the whole hour when no boundary
//            is inside it), summing the windows ending in it so that a report
//            over weeks need not read each of them (history_rollup.h): the
//            window columns hold their sum as a downsampled row does (end_s the end of the last window), with
//            windows (how many), first_start_s and first_span_s (the start
//            and length of the first), clock_only_windows and
//            clock_only_s (windows with a clock but no OFU), and ofu_histogram
//            (the windows' OFUs in Summarizer bins). A part has a rollup only
//            when its windows are contiguous, full resolution and alike in
//            which pipes they have; the windows stay, so a rollup is never the
//            only copy of anything.
//
// ReadHistory opens the file read-only; it works while an agent writes it
// (WAL: readers see the last committed batch and never block the writer).
//
// Thread-safety: ReadHistory is a pure function of the file; the types are
// plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ofu/core/output_counters.h"
#include "ofu/core/result.h"
#include "ofu/core/sample.h"

namespace ofu::history {

// Version 2 added the per-pipe columns. A version 1 store is read with them
// absent, and HistoryStore::Open upgrades it in place (ALTER TABLE ADD COLUMN:
// the old rows keep NULL, which is what they are: not measured).
// Version 3 added the GPUs' MIG profile and instance; older stores are read
// with them empty (whole GPUs), as they were written.
// Version 4 added the CUDA-core pipes and the non-tensor bound; older rows
// read them as NULL (not measured).
// Version 5 added the hourly rollups; an older store has none, and is read
// window by window.
inline constexpr int kHistorySchemaVersion = 5;
inline constexpr int kOldestReadableSchemaVersion = 1;

// Bits of StoredWindow::flags.
enum HistoryFlag : std::uint32_t {
  kHistoryNoTensor = 1u << 0,      // no tensor activity in the window
  kHistoryNoClock = 1u << 1,       // no SM clock reading
  kHistoryUnknownModel = 1u << 2,  // the model is not in the spec database: no f_spec
  kHistoryGpuDown = 1u << 3,       // the GPU did not answer (lost, no permission, ...)
  // Where the window's OFU took its SM clock from (core/clock_model.h's
  // ClockSource bits, shifted by kHistoryClockShift): exact cycles, the
  // measured clock model, or the reported clock as it is. None in a window
  // without an OFU, and none in rows written before 2026-11-27 (unknown:
  // then the reported clock). A downsampled row ORs its windows'.
  kHistoryClockExact = 1u << 4,
  kHistoryClockModel = 1u << 5,
  kHistoryClockReported = 1u << 6,
  kHistoryDownsampled = 1u << 8,  // a sum of windows, not one window
};
inline constexpr int kHistoryClockShift = 4;
inline constexpr std::uint32_t kHistoryClockMask = kHistoryClockExact | kHistoryClockModel | kHistoryClockReported;

// ClockSource bits (OR of core/clock_model.h's ClockSource) to flags and back.
inline std::uint32_t FlagsOfClockSources(std::uint8_t sources) {
  return (static_cast<std::uint32_t>(sources) << kHistoryClockShift) & kHistoryClockMask;
}
inline std::uint8_t ClockSourcesOfFlags(std::uint32_t flags) {
  return static_cast<std::uint8_t>((flags & kHistoryClockMask) >> kHistoryClockShift);
}

struct StoredGpu {
  std::int64_t id = 0;
  // As the window named it (core/sample.h). What is kept: key (GpuWindow::
  // key(), the source's per-device key: UUID, or UUID/gi<N> for MIG; the
  // store's and Prometheus' `uuid`), gpu_index, model, hostname, mig_profile
  // and mig_instance; not uuid (the key holds it) nor pci_bus_id.
  GpuIdentity identity;
  std::string sku;  // empty when the model is unknown
  std::string architecture;
  std::optional<double> last_end_s;  // end of its newest stored window, in the whole store

  const std::string& key() const { return identity.key; }
};

struct StoredWindow {
  std::int64_t gpu_id = 0;
  double end_s = 0;
  double span_s = 0;
  // The output counters (core/output_counters.h): observed_s, utilized_s,
  // busy_s, busy_utilized_s, tensor_active_s, and the per-pipe ones, absent,
  // not 0, when not measured or written before the store had their column.
  CounterValues counters;
  std::optional<double> clock_mhz;
  std::optional<double> clock_min_mhz;
  std::optional<double> clock_max_mhz;
  std::int64_t clock_windows = 0;
  double up_s = 0;
  std::uint32_t flags = 0;

  friend bool operator==(const StoredWindow&, const StoredWindow&) = default;
};

// A closed hour of one GPU's windows, or a part of it, summed (the `rollups` table;
// history_rollup.h makes them and says what they stand for).
struct StoredRollup {
  // It sums the windows ending in (after_s, until_s]: an hour, or the part of
  // one between job interval boundaries.
  double after_s = 0;
  double until_s = 0;
  double first_start_s = 0;             // start of its first window
  double first_span_s = 0;              // the length of its first window
  std::int64_t windows = 0;             // windows summed
  StoredWindow total;                   // the windows summed (kHistoryDownsampled); end_s: the last one's end
  std::int64_t clock_only_windows = 0;  // windows with a clock reading but no OFU
  double clock_only_s = 0;              // their seconds
  // (Summarizer::HistogramBin, windows): the OFUs of the windows that have one.
  std::vector<std::pair<int, std::int64_t>> ofu_bins;

  friend bool operator==(const StoredRollup&, const StoredRollup&) = default;
};

struct StoredJob {
  std::int64_t gpu_id = 0;
  std::string job_id;
  std::string user;
  std::string job_name;
  std::string scheduler;
  double start_s = 0;           // exclusive
  std::optional<double> end_s;  // inclusive; absent while the job runs

  friend bool operator==(const StoredJob&, const StoredJob&) = default;
};

struct HistoryQuery {
  std::optional<double> since_s;  // windows ending after this (epoch s)
  std::optional<double> until_s;  // windows ending at or before this
  std::optional<std::string> job_id;
};

struct StoredHistory {
  std::string path;
  HistoryQuery query;
  std::vector<StoredGpu> gpus;        // by id; with a job: only the job's GPUs
  std::vector<StoredWindow> windows;  // by gpu_id, then end_s; in range (and in the job)
  std::vector<StoredJob> jobs;        // intervals overlapping the range (of the job)
  // 0: each window is one agent window (or scrape). > 0: the reader made
  // windows of this many seconds from the counters (Prometheus, a long range).
  double step_s = 0;
};

// What ReadHistory reads, for readers that must not hold every window
// (`ofu report --store` over 10^8 of them): Open reads the GPUs and the job
// intervals (history(), whose windows stay empty); Next then hands over the
// windows one at a time, in ReadHistory's order (by GPU id, then end). All
// of it is read in one read transaction, so it is one committed state.
// ReadHistory is Open, then Next until the end.
//
// With `rollups`, Next also hands over rollups (history_rollup.h) instead of
// the windows they sum, in the same order (a rollup where its windows would
// be), for each rollup whose span (after_s, until_s]
//   - lies wholly inside the query's range (and with a job, inside one of
//     the job's intervals on that GPU), and
//   - has no job interval on that GPU starting or ending inside it,
// so that every window it sums is selected, and belongs to the same jobs.
// The other hours' windows come one by one. A store before schema 5 has no
// rollups.
//
// Memory: the GPUs, the intervals, one GPU's rollups and SQLite's page cache
// (its default, about 2 MiB), however many windows there are. Each GPU's
// windows are read by its primary key, (gpu_id, end_s): no sort.
//
// Ownership: owns its read-only connection. Thread-safety: one thread at a time.
class HistoryStream {
 public:
  // Errors as ReadHistory's.
  // `counters`: the counter columns to read (a column the store lacks reads
  // as absent); not owned, outlives the stream.
  static Result<std::unique_ptr<HistoryStream>> Open(
      const std::string& path, const HistoryQuery& query, bool rollups = false,
      const OutputCounterTable& counters = OutputCounterTable::Builtin());
  ~HistoryStream();
  HistoryStream(const HistoryStream&) = delete;
  HistoryStream& operator=(const HistoryStream&) = delete;

  // path, query, GPUs and job intervals as ReadHistory gives them; no windows.
  const StoredHistory& history() const { return history_; }

  enum class Item { kEnd, kWindow, kRollup };
  // The next window into `row` (kWindow) or rollup into `rollup` (kRollup),
  // or kEnd after the last (then both are unchanged). kIo when the file
  // cannot be read, kMalformedInput when a rollup's histogram is not valid.
  Result<Item> Next(StoredWindow& row, StoredRollup& rollup);
  // Windows only: for a stream opened without rollups (kInvalidArgument for
  // one opened with them, whose rollups it would drop). True for a window,
  // false after the last.
  Result<bool> Next(StoredWindow& row);

 private:
  struct Connection;
  // A GPU's part of the stream: its windows in (after_s, until_s], or one of its rollups.
  struct Piece {
    double after_s = 0, until_s = 0;
    std::optional<StoredRollup> rollup;
  };
  HistoryStream(StoredHistory history, std::unique_ptr<Connection> connection);
  Status PlanGpu(std::int64_t gpu_id);  // pieces_ for the GPU

  StoredHistory history_;
  std::unique_ptr<Connection> connection_;
  std::size_t next_gpu_ = 0;      // index into history_.gpus of the GPU to read next
  std::vector<Piece> pieces_;     // of the GPU being read
  std::size_t next_piece_ = 0;    // index into pieces_ of the piece to read next
  bool reading_windows_ = false;  // the windows statement is bound to pieces_[next_piece_ - 1]
};

// Reads what `query` selects. kIo when the file cannot be opened or read,
// kMalformedInput when it is not an ofu history store or has a schema
// version this build does not know (versions 1 to 5 are read). An empty
// selection is not an error. Holds every window in memory: HistoryStream
// reads the same without that. kInvalidArgument, naming the file, when the
// selection has more than `max_windows` windows: the read stops there, before
// they are held.
Result<StoredHistory> ReadHistory(const std::string& path, const HistoryQuery& query,
                                  std::size_t max_windows = std::numeric_limits<std::size_t>::max(),
                                  const OutputCounterTable& counters = OutputCounterTable::Builtin());

}  // namespace ofu::history
