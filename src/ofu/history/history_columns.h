// The `windows`, `rollups` and `gpus` tables' columns as the store writes
// them and the reader reads them: one list, one binder, one reader, so the two
// cannot drift.
// Internal to the history store (history_store.cc, history_reader.cc).
//
// Thread-safety: stateless; the statement passed in keeps its connection's
// one-thread-at-a-time rule.
#pragma once

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ofu/core/gpu_identity.h"
#include "ofu/core/output_counters.h"
#include "ofu/core/result.h"
#include "ofu/formats/sqlite_handles.h"
#include "ofu/history/history_reader.h"
#include "ofu/history/history_rollup.h"

namespace ofu::history {

// The columns of a window, in the `windows` and `rollups` tables alike, in
// the order Bind binds and Read reads them: gpu_id, end_s, span_s, the
// clock, up_s and flags, then one per output counter (core/output_counters.h,
// in table order). Written once from the counter table, so a counter added
// there is a column here.
//
// The tables declare the counters before the clock (Definitions); reading
// the clock first costs SQLite's record decoding about 520 fewer
// instructions a row (sqlite3VdbeExec 1,172M -> 981M instructions for
// `ofu regress --store` on the 64-GPU bench fleet, cachegrind, 2026-11-27),
// hence the two orders.
class WindowColumns {
 public:
  // The columns of the table's counters. `have`: the counter columns a store
  // has (PRAGMA table_info); a column it lacks reads as NULL (absent), as in
  // a store from before that column. Without `have`: every column.
  explicit WindowColumns(const OutputCounterTable& table, const std::set<std::string>* have = nullptr) : table_(table) {
    columns_ = {"gpu_id",        "end_s",         "span_s", "clock_mhz", "clock_min_mhz",
                "clock_max_mhz", "clock_windows", "up_s",   "flags"};
    for (const OutputCounter& row : table.rows()) {
      columns_.emplace_back(have == nullptr || have->count(std::string(row.column)) != 0 ? row.column : "NULL");
    }
    names_ = fmt::format("{}", fmt::join(columns_, ", "));
  }

  // "gpu_id, end_s, ...", for SELECT and INSERT; the same one by one.
  const std::string& names() const { return names_; }
  const std::vector<std::string>& columns() const { return columns_; }
  int count() const { return static_cast<int>(columns_.size()); }

  // The table definitions of the columns after gpu_id, for CREATE TABLE.
  static std::string Definitions(const OutputCounterTable& table) {
    std::string out = "end_s REAL NOT NULL,\n  span_s REAL NOT NULL";
    for (const OutputCounter& row : table.rows()) {
      out += fmt::format(",\n  {} REAL{}", row.column, row.presence == Presence::kAlways ? " NOT NULL" : "");
    }
    out +=
        ",\n  clock_mhz REAL,\n  clock_min_mhz REAL,\n  clock_max_mhz REAL,\n  clock_windows INTEGER NOT NULL,"
        "\n  up_s REAL NOT NULL,\n  flags INTEGER NOT NULL";
    return out;
  }

  // Binds ?first .. ?(first + count() - 1).
  void Bind(sqlite3_stmt* s, const StoredWindow& w, int first = 1) const {
    int i = first;
    sqlite3_bind_int64(s, i++, w.gpu_id);
    sqlite3_bind_double(s, i++, w.end_s);
    sqlite3_bind_double(s, i++, w.span_s);
    formats::BindOptional(s, i++, w.clock_mhz);
    formats::BindOptional(s, i++, w.clock_min_mhz);
    formats::BindOptional(s, i++, w.clock_max_mhz);
    sqlite3_bind_int64(s, i++, w.clock_windows);
    sqlite3_bind_double(s, i++, w.up_s);
    sqlite3_bind_int64(s, i++, static_cast<sqlite3_int64>(w.flags));
    for (std::size_t id = 0; id < table_.size(); ++id) formats::BindOptional(s, i++, w.counters[id]);
  }

  // Reads columns first .. first + count() - 1.
  StoredWindow Read(sqlite3_stmt* s, int first = 0) const {
    StoredWindow w;
    int i = first;
    w.gpu_id = sqlite3_column_int64(s, i++);
    w.end_s = sqlite3_column_double(s, i++);
    w.span_s = sqlite3_column_double(s, i++);
    w.clock_mhz = formats::ColumnOptional(s, i++);
    w.clock_min_mhz = formats::ColumnOptional(s, i++);
    w.clock_max_mhz = formats::ColumnOptional(s, i++);
    w.clock_windows = sqlite3_column_int64(s, i++);
    w.up_s = sqlite3_column_double(s, i++);
    w.flags = static_cast<std::uint32_t>(sqlite3_column_int64(s, i++));
    // A kAlways column is NOT NULL: read without asking its type (a tenth of
    // the time of `ofu report --store --per-window` went to the asking). The
    // table's mask, not its rows, says which: this loop runs once per
    // counter of every stored row.
    const std::size_t counters = table_.size();
    const std::uint32_t always = table_.always();
    for (std::size_t id = 0; id < counters; ++id, ++i) {
      if ((always >> id & 1u) != 0) {
        w.counters.Set(id, sqlite3_column_double(s, i));
      } else {
        w.counters.Set(id, formats::ColumnOptional(s, i));
      }
    }
    return w;
  }

 private:
  const OutputCounterTable& table_;
  std::vector<std::string> columns_;  // in Bind's and Read's order
  std::string names_;                 // columns_, joined
};

// "?1, ?2, ..., ?count": the parameters of an INSERT of that many columns.
inline std::string Placeholders(int count) {
  std::string out;
  for (int i = 1; i <= count; ++i) out += fmt::format("{}?{}", i > 1 ? ", " : "", i);
  return out;
}

// The columns `table_name` has (PRAGMA table_info): for WindowColumns and the gpus table.
inline Result<std::set<std::string>> ColumnsOf(sqlite3* db, const std::string& table_name) {
  sqlite3_stmt* raw = nullptr;
  const std::string sql = fmt::format("PRAGMA table_info({})", table_name);
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    return Error::Io("reading the columns of {}: {}", table_name, sqlite3_errmsg(db));
  }
  formats::SqliteStmt stmt(raw);
  std::set<std::string> names;
  while (sqlite3_step(raw) == SQLITE_ROW) names.insert(formats::ColumnText(raw, 1));
  return names;
}

// A `rollups` row is a window's columns (its sums, WindowColumns), then
// these: BindRollup binds them after the window's, ColumnRollup reads them
// after the window's, as "SELECT <window columns>, kRollupColumns" gives them.
inline constexpr const char* kRollupColumns =
    "after_s, until_s, windows, first_start_s, first_span_s, clock_only_windows, clock_only_s, ofu_histogram";
inline constexpr int kRollupColumnCount = 8;

inline void BindRollup(sqlite3_stmt* s, const WindowColumns& columns, const StoredRollup& r) {
  columns.Bind(s, r.total);
  int i = columns.count() + 1;
  sqlite3_bind_double(s, i++, r.after_s);
  sqlite3_bind_double(s, i++, r.until_s);
  sqlite3_bind_int64(s, i++, r.windows);
  sqlite3_bind_double(s, i++, r.first_start_s);
  sqlite3_bind_double(s, i++, r.first_span_s);
  sqlite3_bind_int64(s, i++, r.clock_only_windows);
  sqlite3_bind_double(s, i++, r.clock_only_s);
  const std::string bins = EncodeOfuBins(r.ofu_bins);
  sqlite3_bind_blob(s, i, bins.data(), static_cast<int>(bins.size()), SQLITE_TRANSIENT);
}

// kMalformedInput, naming the GPU and the span, when the histogram is not valid.
inline Result<StoredRollup> ColumnRollup(sqlite3_stmt* s, const WindowColumns& columns) {
  StoredRollup r;
  r.total = columns.Read(s);
  int i = columns.count();
  r.after_s = sqlite3_column_double(s, i++);
  r.until_s = sqlite3_column_double(s, i++);
  r.windows = sqlite3_column_int64(s, i++);
  r.first_start_s = sqlite3_column_double(s, i++);
  r.first_span_s = sqlite3_column_double(s, i++);
  r.clock_only_windows = sqlite3_column_int64(s, i++);
  r.clock_only_s = sqlite3_column_double(s, i++);
  const auto* blob = static_cast<const unsigned char*>(sqlite3_column_blob(s, i));
  auto bins = DecodeOfuBins(blob, static_cast<std::size_t>(sqlite3_column_bytes(s, i)));
  if (!bins.ok()) {
    return Error::MalformedInput("rollup of GPU {} for the windows ending in ({}, {}]: {}", r.total.gpu_id, r.after_s,
                                 r.until_s, bins.error().message);
  }
  r.ofu_bins = std::move(*bins);
  return r;
}

// The `gpus` table's columns after `id`, in the order the table declares
// them, the store binds them (?1, ?2, ...) and ColumnGpu reads them (1, 2,
// ...): every statement about a GPU's row is made from one list, so a column
// added to it is declared, upgraded, written and read. A column holds a
// member of the GPU's identity, or for sku and architecture of StoredGpu, or
// (neither) the field of an identity row added to the table (core/
// gpu_identity.h), in GpuIdentity::added under the column's name.
// `since_schema` is the schema version that added a built-in column: an
// older store reads it as '' until HistoryStore::Open adds it (ALTER TABLE,
// default ''). An added row's column is 0: the store adds it when missing.
struct GpuColumn {
  std::string_view name;
  std::string GpuIdentity::*of_identity = nullptr;
  std::string StoredGpu::*of_gpu = nullptr;
  int since_schema = 1;

  bool added() const { return of_identity == nullptr && of_gpu == nullptr; }
  const std::string& In(const StoredGpu& gpu) const {
    if (of_identity != nullptr) return gpu.identity.*of_identity;
    return of_gpu != nullptr ? gpu.*of_gpu : gpu.identity.Added(name);
  }
  std::string& In(StoredGpu& gpu) const {
    if (of_identity != nullptr) return gpu.identity.*of_identity;
    if (of_gpu != nullptr) return gpu.*of_gpu;
    return gpu.identity.added[std::string(name)];
  }
};

// The built-in columns.
inline constexpr std::array<GpuColumn, 8> kGpuColumnList = {{
    {"uuid", &GpuIdentity::key},  // the key: UNIQUE, the upsert's conflict target
    {"gpu_index", &GpuIdentity::gpu_index},
    {"model", &GpuIdentity::model},
    {"sku", nullptr, &StoredGpu::sku},
    {"architecture", nullptr, &StoredGpu::architecture},
    {"hostname", &GpuIdentity::hostname},
    {"mig_profile", &GpuIdentity::mig_profile, nullptr, 3},
    {"mig_instance", &GpuIdentity::mig_instance, nullptr, 3},
}};
using GpuColumns = std::span<const GpuColumn>;

// The columns a store writes: the built-in ones, then one per row `table`
// added (the names point into the table's rows).
inline std::vector<GpuColumn> GpuColumnsOf(const IdentityFieldTable& table) {
  std::vector<GpuColumn> columns(kGpuColumnList.begin(), kGpuColumnList.end());
  for (const IdentityField& row : table.added()) columns.push_back({row.name, nullptr, nullptr, 0});
  return columns;
}

// The columns a reader reads from a store whose `gpus` table has the columns
// `have` (PRAGMA table_info): the built-in ones, then every other column but
// the id, which an added row made (the names point into `have`).
inline std::vector<GpuColumn> GpuColumnsIn(const std::set<std::string>& have) {
  std::vector<GpuColumn> columns(kGpuColumnList.begin(), kGpuColumnList.end());
  for (const std::string& name : have) {
    const bool builtin = std::any_of(kGpuColumnList.begin(), kGpuColumnList.end(),
                                     [&](const GpuColumn& c) { return c.name == name; });
    if (!builtin && name != "id") columns.push_back({name, nullptr, nullptr, 0});
  }
  return columns;
}

// A column's declaration in CREATE TABLE and ALTER TABLE ADD COLUMN.
inline std::string GpuColumnDefinition(const GpuColumn& c) {
  if (c.of_identity == &GpuIdentity::key) return fmt::format("{} TEXT UNIQUE NOT NULL", c.name);
  // A column added later needs a default for the rows already there.
  return fmt::format("{} TEXT NOT NULL{}", c.name, c.since_schema != 1 ? " DEFAULT ''" : "");
}

// The body of CREATE TABLE gpus(...), one column a line.
inline std::string GpuTableDefinitions(GpuColumns columns = kGpuColumnList) {
  std::string out = "\n  id INTEGER PRIMARY KEY";
  for (const GpuColumn& c : columns) out += ",\n  " + GpuColumnDefinition(c);
  return out;
}

// The statements that upgrade a store of schema `from` (one less than the
// version that added the columns) to have the columns added in `from + 1`.
inline std::string AddGpuColumnsSql(int from) {
  std::string out;
  for (const GpuColumn& c : kGpuColumnList) {
    if (c.since_schema == from + 1) out += fmt::format("ALTER TABLE gpus ADD COLUMN {};\n", GpuColumnDefinition(c));
  }
  return out;
}

// The statements that add the added rows' columns a store lacks (`have`).
inline std::string AddMissingGpuColumnsSql(GpuColumns columns, const std::set<std::string>& have) {
  std::string out;
  for (const GpuColumn& c : columns) {
    if (c.added() && !have.contains(std::string(c.name))) {
      out += fmt::format("ALTER TABLE gpus ADD COLUMN {};\n", GpuColumnDefinition(c));
    }
  }
  return out;
}

// "id, uuid, ...", for SELECT, in ColumnGpu's order. `have`: the columns
// the store has; one it has not (a built-in one newer than its schema) is
// selected as ''. nullptr: it has them all (HistoryStore, once open).
inline std::string GpuColumnNames(GpuColumns columns, const std::set<std::string>* have = nullptr) {
  std::string out = "id";
  for (const GpuColumn& c : columns) {
    out += have == nullptr || have->contains(std::string(c.name)) ? fmt::format(", {}", c.name) : ", ''";
  }
  return out;
}

// Inserts a GPU's row, or updates every column of the row with its key, and
// returns its id; binds as BindGpu.
inline std::string UpsertGpuSql(GpuColumns columns = kGpuColumnList) {
  std::string names, values, updates;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const std::string_view name = columns[i].name;
    names += fmt::format("{}{}", i == 0 ? "" : ", ", name);
    values += fmt::format("{}?{}", i == 0 ? "" : ", ", i + 1);
    if (i > 0) updates += fmt::format("{}{} = excluded.{}", i == 1 ? "" : ", ", name, name);
  }
  return fmt::format("INSERT INTO gpus({}) VALUES({}) ON CONFLICT(uuid) DO UPDATE SET {} RETURNING id", names, values,
                     updates);
}

inline void BindGpu(sqlite3_stmt* s, const StoredGpu& gpu, GpuColumns columns = kGpuColumnList) {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    formats::BindText(s, static_cast<int>(i) + 1, columns[i].In(gpu));
  }
}

// True when every column of the list is the same (the id is not compared).
inline bool SameGpuColumns(const StoredGpu& a, const StoredGpu& b, GpuColumns columns = kGpuColumnList) {
  for (const GpuColumn& c : columns) {
    if (c.In(a) != c.In(b)) return false;
  }
  return true;
}

// A `gpus` row selected with GpuColumnNames of the same columns. An added
// row's field is kept even when empty, so that the report has its key (null)
// for every GPU of the store.
inline StoredGpu ColumnGpu(sqlite3_stmt* s, GpuColumns columns = kGpuColumnList) {
  StoredGpu gpu;
  gpu.id = sqlite3_column_int64(s, 0);
  for (std::size_t i = 0; i < columns.size(); ++i) {
    columns[i].In(gpu) = formats::ColumnText(s, static_cast<int>(i) + 1);
  }
  return gpu;
}

}  // namespace ofu::history
