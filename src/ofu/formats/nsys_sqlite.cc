#include "ofu/formats/nsys_sqlite.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ofu/formats/sqlite_handles.h"

namespace ofu::formats {
namespace {

constexpr std::string_view kKernelTable = "CUPTI_ACTIVITY_KIND_KERNEL";
constexpr std::string_view kRuntimeTable = "CUPTI_ACTIVITY_KIND_RUNTIME";
constexpr std::string_view kNvtxTable = "NVTX_EVENTS";
constexpr std::string_view kStringTable = "StringIds";
constexpr std::string_view kGpuTable = "TARGET_INFO_GPU";
constexpr std::string_view kCudaDeviceTable = "TARGET_INFO_CUDA_DEVICE";
constexpr int64_t kNvtxPushPopRange = 59;  // ENUM_NSYS_EVENT_TYPE
constexpr uint64_t kProgressEveryRows = 1 << 16;

using Db = SqliteDb;
using Stmt = SqliteStmt;

// SQLite's I/O failures are the file's fault; everything else (corruption,
// "not a database", a query the schema cannot answer) is the content's.
ErrorCode CodeFor(int rc) {
  switch (rc & 0xff) {
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_NOMEM:
    case SQLITE_FULL: return ErrorCode::kIo;
    default: return ErrorCode::kMalformedInput;
  }
}

std::string Quoted(std::string_view identifier) {
  std::string out = "\"";
  for (char c : identifier) {
    out += c;
    if (c == '"') out += '"';
  }
  out += '"';
  return out;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// --- PyTorch's NVTX range text ------------------------------------------------

// The op name: the text before the first ','.
std::string_view OpNameOf(std::string_view text) { return Trim(text.substr(0, text.find(','))); }

void SkipSpaces(std::string_view& s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
}

bool Consume(std::string_view& s, char c) {
  SkipSpaces(s);
  if (s.empty() || s.front() != c) return false;
  s.remove_prefix(1);
  return true;
}

// Parses "[[1024], [64, 1024], []]" at the start of `s`.
bool ParseShapeList(std::string_view s, std::vector<std::vector<int64_t>>* out) {
  out->clear();
  if (!Consume(s, '[')) return false;
  if (Consume(s, ']')) return true;
  while (true) {
    if (!Consume(s, '[')) return false;
    std::vector<int64_t> dims;
    if (!Consume(s, ']')) {
      while (true) {
        SkipSpaces(s);
        int64_t value = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
        if (ec != std::errc()) return false;
        s.remove_prefix(static_cast<std::size_t>(end - s.data()));
        dims.push_back(value);
        if (Consume(s, ']')) break;
        if (!Consume(s, ',')) return false;
      }
    }
    out->push_back(std::move(dims));
    if (Consume(s, ']')) return true;
    if (!Consume(s, ',')) return false;
  }
}

// The "sizes = [...]" part of getNvtxStr's text; false when there is none or
// it does not parse.
bool ParseSizes(std::string_view text, std::vector<std::vector<int64_t>>* dims) {
  constexpr std::string_view kSizes = ", sizes = ";
  const std::size_t at = text.find(kSizes);
  if (at == std::string_view::npos) return false;
  if (ParseShapeList(text.substr(at + kSizes.size()), dims)) return true;
  dims->clear();
  return false;
}

// --- Rows kept between the passes -------------------------------------------

// What a kernel needs to find its launch; parallel to KernelTrace::kernels.
struct LaunchKey {
  int64_t correlation_id = 0;
  uint64_t process = 0;  // globalPid >> 24
  bool has_correlation = false;
  bool has_process = false;
};

struct Launch {
  int64_t correlation_id;
  uint64_t process;  // globalTid >> 24
  uint64_t thread;   // globalTid
  int64_t start_ns;
  bool graph;  // the call is cudaGraphLaunch / cuGraphLaunch (from nameId)
};

struct GemmRange {
  uint64_t thread;
  int64_t start_ns;
  int64_t end_ns;
  uint32_t text;  // index into the reader's gemm_texts_
};

struct TableInfo {
  bool present = false;
  std::vector<std::string> columns;

  bool Has(std::string_view column) const {
    for (const std::string& c : columns) {
      if (EqualsNoCase(c, column)) return true;
    }
    return false;
  }
};

// The export's tables the reader looks at; `present` is false for those
// the file lacks.
struct ExportTables {
  TableInfo kernels, nvtx, runtime, strings, gpu, cuda_device;
};

// Where each column of the kernel query is: indices into its SELECT list,
// -1 for a column the table lacks. grid, block and cluster are the X column;
// Y and Z follow.
struct KernelColumns {
  int start = -1, end = -1, device = -1, stream = -1;
  int demangled = -1, short_name = -1;
  int correlation = -1, pid = -1;
  int grid = -1, block = -1, cluster = -1;
  bool has_demangled = false;  // names the NULL column when a row has no name
  std::string sql;             // SELECT rowid, ... FROM the kernel table
};

// --- The reader -----------------------------------------------------------------

// One read of one open database. Not reusable.
class Reader {
 public:
  Reader(sqlite3* db, std::string source, const TraceReadOptions& options)
      : db_(db), source_(std::move(source)), options_(options) {}

  Result<KernelTrace> Read();

 private:
  // Read's steps, in order.
  Status CheckIsDatabase();
  Result<ExportTables> DescribeTables();
  Status CheckStringTable(const TableInfo& strings);
  Status ReadGemmOps(const ExportTables& tables);
  void ReadFileSize();

  Error Malformed(const std::string& what) const { return Error::MalformedInput("{}", source_ + ": " + what); }
  Error SqlError(int rc, std::string_view doing) const {
    return Error{CodeFor(rc), source_ + ": " + std::string(doing) + ": " + sqlite3_errmsg(db_)};
  }

  Status Prepare(const std::string& sql, std::string_view doing, Stmt* out);
  Result<TableInfo> Describe(std::string_view table);
  Result<KernelColumns> PlanKernelQuery(const TableInfo& table) const;
  Status ReadKernels(const TableInfo& table);
  Result<TraceKernel> KernelOfRow(sqlite3_stmt* s, const KernelColumns& c, int64_t rowid,
                                  const std::optional<int64_t>& correlation);
  static LaunchKey LaunchKeyOfRow(sqlite3_stmt* s, const KernelColumns& c, const std::optional<int64_t>& correlation);
  Result<uint32_t> KernelNameId(int64_t string_id, int64_t rowid, const std::optional<int64_t>& correlation);
  Result<std::optional<std::string>> LookUpString(int64_t id);
  Status ReadGemmRanges(const TableInfo& table);
  Status ReadLaunches(const TableInfo& table);
  void LinkKernels();
  std::optional<std::size_t> InnermostGemmRange(uint64_t thread, int64_t t_ns) const;
  uint32_t OpFor(std::size_t range);
  Status ReadDevices(const TableInfo& gpu, const TableInfo& cuda_device);
  Status CountRows(const std::vector<std::string_view>& tables);
  void RowDone();

  sqlite3* db_;
  std::string source_;
  const TraceReadOptions& options_;
  KernelTrace trace_;

  std::vector<LaunchKey> launch_keys_;
  std::unordered_map<int64_t, uint32_t> name_of_string_id_;
  std::unordered_map<std::string, uint32_t> name_index_;
  Stmt string_lookup_;

  std::vector<std::string> gemm_texts_;
  std::unordered_map<int64_t, int64_t> gemm_text_of_text_id_;  // -1: not a GEMM
  std::vector<GemmRange> ranges_;                              // sorted by thread, start, end desc
  std::vector<int64_t> range_parent_;                          // enclosing range on the thread, or -1
  std::vector<int64_t> op_of_range_;                           // index into trace_.ops, or -1
  std::vector<Launch> launches_;                               // sorted by correlation id, process
  bool match_process_ = false;

  uint64_t rows_done_ = 0;
  uint64_t rows_total_ = 0;
};

Status Reader::Prepare(const std::string& sql, std::string_view doing, Stmt* out) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
  out->reset(stmt);
  if (rc != SQLITE_OK) return SqlError(rc, doing);
  return OkStatus();
}

// Only real tables count: a view or trigger with an export table's name in an
// untrusted file must not run arbitrary SQL during the read.
Result<TableInfo> Reader::Describe(std::string_view table) {
  TableInfo info;
  Stmt stmt;
  const std::string doing = "reading the schema";
  OFU_RETURN_IF_ERROR(Prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1 COLLATE NOCASE", doing,
                              &stmt));
  sqlite3_bind_text(stmt.get(), 1, table.data(), static_cast<int>(table.size()), SQLITE_TRANSIENT);
  int rc = sqlite3_step(stmt.get());
  if (rc == SQLITE_DONE) return info;
  if (rc != SQLITE_ROW) return SqlError(rc, doing);
  info.present = true;

  OFU_RETURN_IF_ERROR(Prepare("SELECT name FROM pragma_table_info(?1)", doing, &stmt));
  sqlite3_bind_text(stmt.get(), 1, table.data(), static_cast<int>(table.size()), SQLITE_TRANSIENT);
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    const unsigned char* name = sqlite3_column_text(stmt.get(), 0);
    if (name != nullptr) info.columns.emplace_back(reinterpret_cast<const char*>(name));
  }
  if (rc != SQLITE_DONE) return SqlError(rc, doing);
  return info;
}

Status Reader::CountRows(const std::vector<std::string_view>& tables) {
  for (std::string_view table : tables) {
    Stmt stmt;
    OFU_RETURN_IF_ERROR(Prepare("SELECT COUNT(*) FROM " + Quoted(table), "counting rows", &stmt));
    const int rc = sqlite3_step(stmt.get());
    if (rc != SQLITE_ROW) return SqlError(rc, "counting rows");
    rows_total_ += static_cast<uint64_t>(std::max<sqlite3_int64>(0, sqlite3_column_int64(stmt.get(), 0)));
  }
  return OkStatus();
}

void Reader::RowDone() {
  ++rows_done_;
  if (options_.progress && rows_done_ % kProgressEveryRows == 0) {
    options_.progress(rows_done_, std::max(rows_done_, rows_total_));
  }
}

Result<std::optional<std::string>> Reader::LookUpString(int64_t id) {
  if (!string_lookup_) {
    OFU_RETURN_IF_ERROR(Prepare("SELECT value FROM " + Quoted(kStringTable) + " WHERE id = ?1", "reading StringIds",
                                &string_lookup_));
  }
  sqlite3_stmt* stmt = string_lookup_.get();
  sqlite3_reset(stmt);
  sqlite3_bind_int64(stmt, 1, id);
  const int rc = sqlite3_step(stmt);
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  if (rc != SQLITE_ROW) return SqlError(rc, "reading StringIds");
  const unsigned char* text = sqlite3_column_text(stmt, 0);
  if (text == nullptr) return std::optional<std::string>();
  return std::optional<std::string>(std::string(reinterpret_cast<const char*>(text),
                                                static_cast<std::size_t>(sqlite3_column_bytes(stmt, 0))));
}

std::string RowName(std::string_view table, int64_t rowid, const std::optional<int64_t>& correlation) {
  std::string out = std::string(table) + " row " + std::to_string(rowid);
  if (correlation) out += " (correlationId " + std::to_string(*correlation) + ")";
  return out;
}

Result<uint32_t> Reader::KernelNameId(int64_t string_id, int64_t rowid, const std::optional<int64_t>& correlation) {
  const auto found = name_of_string_id_.find(string_id);
  if (found != name_of_string_id_.end()) return found->second;
  OFU_ASSIGN_OR_RETURN(std::optional<std::string> name, LookUpString(string_id));
  if (!name.has_value()) {
    return Malformed(RowName(kKernelTable, rowid, correlation) + ": name id " + std::to_string(string_id) +
                     " is not in StringIds");
  }
  // Distinct ids normally mean distinct strings, but intern by value anyway.
  const auto [slot, inserted] = name_index_.try_emplace(*name, static_cast<uint32_t>(trace_.kernel_names.size()));
  if (inserted) trace_.kernel_names.push_back(*name);
  name_of_string_id_.emplace(string_id, slot->second);
  return slot->second;
}

// Builds the SELECT over the kernel table from the columns it has; fails
// when a column every kernel needs is missing.
Result<KernelColumns> Reader::PlanKernelQuery(const TableInfo& table) const {
  for (std::string_view required :
       {"start", "end", "deviceId", "streamId", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ"}) {
    if (!table.Has(required)) {
      return Malformed(std::string(kKernelTable) + " has no column " + std::string(required));
    }
  }
  KernelColumns c;
  c.has_demangled = table.Has("demangledName");
  const bool has_short = table.Has("shortName");
  if (!c.has_demangled && !has_short) {
    return Malformed(std::string(kKernelTable) + " has no column demangledName or shortName");
  }
  // Column list built from what the table has; indices remembered by name.
  std::vector<std::string> select = {"rowid"};
  auto add = [&select](std::string_view column) {
    select.push_back(Quoted(column));
    return static_cast<int>(select.size() - 1);
  };
  c.start = add("start");
  c.end = add("end");
  c.device = add("deviceId");
  c.stream = add("streamId");
  c.demangled = c.has_demangled ? add("demangledName") : -1;
  c.short_name = has_short ? add("shortName") : -1;
  c.correlation = table.Has("correlationId") ? add("correlationId") : -1;
  c.pid = table.Has("globalPid") ? add("globalPid") : -1;
  c.grid = add("gridX");
  add("gridY");
  add("gridZ");
  c.block = add("blockX");
  add("blockY");
  add("blockZ");
  if (table.Has("clusterX") && table.Has("clusterY") && table.Has("clusterZ")) {
    c.cluster = add("clusterX");
    add("clusterY");
    add("clusterZ");
  }
  c.sql = "SELECT ";
  for (std::size_t i = 0; i < select.size(); ++i) c.sql += (i ? ", " : "") + select[i];
  c.sql += " FROM " + Quoted(kKernelTable);
  return c;
}

Status Reader::ReadKernels(const TableInfo& table) {
  OFU_ASSIGN_OR_RETURN(KernelColumns columns, PlanKernelQuery(table));
  const KernelColumns& c = columns;
  match_process_ = c.pid >= 0;
  if (c.correlation < 0) {
    trace_.notes.push_back(std::string(kKernelTable) +
                           " has no correlationId column: kernels cannot be tied to their launches");
  }

  Stmt stmt;
  OFU_RETURN_IF_ERROR(Prepare(c.sql, "reading " + std::string(kKernelTable), &stmt));
  sqlite3_stmt* s = stmt.get();
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    const int64_t rowid = sqlite3_column_int64(s, 0);
    std::optional<int64_t> correlation;
    if (c.correlation >= 0 && sqlite3_column_type(s, c.correlation) != SQLITE_NULL) {
      correlation = sqlite3_column_int64(s, c.correlation);
    }
    OFU_ASSIGN_OR_RETURN(TraceKernel kernel, KernelOfRow(s, c, rowid, correlation));
    trace_.kernels.push_back(kernel);
    launch_keys_.push_back(LaunchKeyOfRow(s, c, correlation));
    RowDone();
  }
  if (rc != SQLITE_DONE) return SqlError(rc, "reading " + std::string(kKernelTable));
  return OkStatus();
}

// One row of the kernel table, checked: no NULL where a value is needed, end
// not before start, a device id that fits.
Result<TraceKernel> Reader::KernelOfRow(sqlite3_stmt* s, const KernelColumns& c, int64_t rowid,
                                        const std::optional<int64_t>& correlation) {
  auto null_in = [&](std::string_view name) {
    return Malformed(RowName(kKernelTable, rowid, correlation) + ": " + std::string(name) + " is NULL");
  };
  auto is_null = [s](int column) { return sqlite3_column_type(s, column) == SQLITE_NULL; };

  static constexpr std::string_view kRequiredNames[] = {"start", "end", "deviceId", "streamId"};
  const int required[] = {c.start, c.end, c.device, c.stream};
  for (std::size_t i = 0; i < std::size(required); ++i) {
    if (is_null(required[i])) return null_in(kRequiredNames[i]);
  }
  static constexpr std::string_view kDimNames[] = {"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ"};
  for (int i = 0; i < 6; ++i) {
    const int column = (i < 3 ? c.grid : c.block) + i % 3;
    if (is_null(column)) return null_in(kDimNames[i]);
  }

  const int64_t start = sqlite3_column_int64(s, c.start);
  const int64_t end = sqlite3_column_int64(s, c.end);
  if (end < start) {
    return Malformed(RowName(kKernelTable, rowid, correlation) + ": end " + std::to_string(end) + " is before start " +
                     std::to_string(start));
  }
  const int64_t device = sqlite3_column_int64(s, c.device);
  if (device < 0 || device > std::numeric_limits<int32_t>::max()) {
    return Malformed(RowName(kKernelTable, rowid, correlation) + ": deviceId " + std::to_string(device) +
                     " is out of range");
  }

  int64_t name_string_id = 0;
  if (c.demangled >= 0 && !is_null(c.demangled)) {
    name_string_id = sqlite3_column_int64(s, c.demangled);
  } else if (c.short_name >= 0 && !is_null(c.short_name)) {
    name_string_id = sqlite3_column_int64(s, c.short_name);
  } else {
    return null_in(c.has_demangled ? "demangledName" : "shortName");
  }
  OFU_ASSIGN_OR_RETURN(uint32_t name, KernelNameId(name_string_id, rowid, correlation));

  TraceKernel kernel;
  kernel.name_id = name;
  kernel.start_us = static_cast<double>(start) / 1000.0;
  // The difference as unsigned is exact for end >= start, where the signed
  // one could overflow.
  kernel.duration_us = static_cast<double>(static_cast<uint64_t>(end) - static_cast<uint64_t>(start)) / 1000.0;
  kernel.device = static_cast<int32_t>(device);
  kernel.stream = sqlite3_column_int64(s, c.stream);
  kernel.grid = Dim3{sqlite3_column_int64(s, c.grid), sqlite3_column_int64(s, c.grid + 1),
                     sqlite3_column_int64(s, c.grid + 2)};
  kernel.block = Dim3{sqlite3_column_int64(s, c.block), sqlite3_column_int64(s, c.block + 1),
                      sqlite3_column_int64(s, c.block + 2)};
  if (c.cluster >= 0 && !is_null(c.cluster) && !is_null(c.cluster + 1) && !is_null(c.cluster + 2)) {
    const Dim3 cluster{sqlite3_column_int64(s, c.cluster), sqlite3_column_int64(s, c.cluster + 1),
                       sqlite3_column_int64(s, c.cluster + 2)};
    if (!(cluster == Dim3{})) kernel.cluster = cluster;
  }
  return kernel;
}

// What ties a kernel row to its launch: correlation id and process, where
// the row has them.
LaunchKey Reader::LaunchKeyOfRow(sqlite3_stmt* s, const KernelColumns& c, const std::optional<int64_t>& correlation) {
  LaunchKey key;
  if (correlation) {
    key.has_correlation = true;
    key.correlation_id = *correlation;
  }
  if (c.pid >= 0 && sqlite3_column_type(s, c.pid) != SQLITE_NULL) {
    key.has_process = true;
    key.process = static_cast<uint64_t>(sqlite3_column_int64(s, c.pid)) >> 24;
  }
  return key;
}

Status Reader::ReadGemmRanges(const TableInfo& table) {
  for (std::string_view required : {"start", "end", "eventType", "globalTid"}) {
    if (!table.Has(required)) {
      return Malformed(std::string(kNvtxTable) + " has no column " + std::string(required));
    }
  }
  const bool has_text = table.Has("text");
  const bool has_text_id = table.Has("textId");
  if (!has_text && !has_text_id) return Malformed(std::string(kNvtxTable) + " has no column text or textId");

  std::string sql = "SELECT rowid, \"start\", \"end\", \"globalTid\", ";
  sql += has_text ? "\"text\", " : "NULL, ";
  sql += has_text_id ? "\"textId\"" : "NULL";
  sql += " FROM " + Quoted(kNvtxTable) + " WHERE \"eventType\" = " + std::to_string(kNvtxPushPopRange);
  Stmt stmt;
  OFU_RETURN_IF_ERROR(Prepare(sql, "reading " + std::string(kNvtxTable), &stmt));

  sqlite3_stmt* s = stmt.get();
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    RowDone();
    const int64_t rowid = sqlite3_column_int64(s, 0);
    const std::string row = std::string(kNvtxTable) + " row " + std::to_string(rowid);
    if (sqlite3_column_type(s, 1) == SQLITE_NULL) return Malformed(row + ": start is NULL");
    // A range never popped, or on no thread, cannot hold a launch we can find.
    if (sqlite3_column_type(s, 2) == SQLITE_NULL || sqlite3_column_type(s, 3) == SQLITE_NULL) continue;
    const int64_t start = sqlite3_column_int64(s, 1);
    const int64_t end = sqlite3_column_int64(s, 2);
    if (end < start) {
      return Malformed(row + ": end " + std::to_string(end) + " is before start " + std::to_string(start));
    }

    int64_t text_index = -1;
    if (sqlite3_column_type(s, 4) != SQLITE_NULL) {
      const char* text = reinterpret_cast<const char*>(sqlite3_column_text(s, 4));
      const std::string_view view(text ? text : "", static_cast<std::size_t>(sqlite3_column_bytes(s, 4)));
      if (!IsGemmOpName(OpNameOf(view))) continue;
      text_index = static_cast<int64_t>(gemm_texts_.size());
      gemm_texts_.emplace_back(view);
    } else if (sqlite3_column_type(s, 5) != SQLITE_NULL) {
      // Registered strings repeat: decide once per id.
      const int64_t text_id = sqlite3_column_int64(s, 5);
      const auto found = gemm_text_of_text_id_.find(text_id);
      if (found != gemm_text_of_text_id_.end()) {
        text_index = found->second;
      } else {
        OFU_ASSIGN_OR_RETURN(std::optional<std::string> text, LookUpString(text_id));
        if (!text.has_value()) {
          return Malformed(row + ": textId " + std::to_string(text_id) + " is not in StringIds");
        }
        if (IsGemmOpName(OpNameOf(*text))) {
          text_index = static_cast<int64_t>(gemm_texts_.size());
          gemm_texts_.push_back(std::move(*text));
        }
        gemm_text_of_text_id_.emplace(text_id, text_index);
      }
    }
    if (text_index < 0) continue;
    ranges_.push_back(GemmRange{static_cast<uint64_t>(sqlite3_column_int64(s, 3)), start, end,
                                static_cast<uint32_t>(text_index)});
  }
  if (rc != SQLITE_DONE) return SqlError(rc, "reading " + std::string(kNvtxTable));

  // Sorted so that a thread's ranges are contiguous and an enclosing range
  // comes before the ranges inside it; then each range's parent is the
  // nearest earlier range still open at its start (a stack sweep).
  std::sort(ranges_.begin(), ranges_.end(), [](const GemmRange& a, const GemmRange& b) {
    if (a.thread != b.thread) return a.thread < b.thread;
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.end_ns > b.end_ns;
  });
  range_parent_.assign(ranges_.size(), -1);
  op_of_range_.assign(ranges_.size(), -1);
  std::vector<std::size_t> open;
  for (std::size_t i = 0; i < ranges_.size(); ++i) {
    if (i > 0 && ranges_[i].thread != ranges_[i - 1].thread) open.clear();
    while (!open.empty() && ranges_[open.back()].end_ns < ranges_[i].start_ns) open.pop_back();
    if (!open.empty()) range_parent_[i] = static_cast<int64_t>(open.back());
    open.push_back(i);
  }
  return OkStatus();
}

Status Reader::ReadLaunches(const TableInfo& table) {
  for (std::string_view required : {"start", "globalTid", "correlationId"}) {
    if (!table.Has(required)) {
      return Malformed(std::string(kRuntimeTable) + " has no column " + std::string(required));
    }
  }
  // Only the calls that launched a kernel in this file; the rest (copies,
  // synchronisations, ...) would only cost memory.
  // nameId (the API call's name, e.g. "cudaGraphLaunch_v10000") is optional:
  // without it no launch is known to replay a graph.
  const bool has_name = table.Has("nameId");
  const std::string sql = "SELECT rowid, \"correlationId\", \"globalTid\", \"start\", " +
                          std::string(has_name ? "\"nameId\"" : "NULL") + " FROM " + Quoted(kRuntimeTable) +
                          " WHERE \"correlationId\" IN (SELECT \"correlationId\" FROM " + Quoted(kKernelTable) +
                          ") AND \"globalTid\" IS NOT NULL";
  Stmt stmt;
  OFU_RETURN_IF_ERROR(Prepare(sql, "reading " + std::string(kRuntimeTable), &stmt));
  sqlite3_stmt* s = stmt.get();
  std::unordered_map<int64_t, bool> graph_of_name_id;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    RowDone();
    if (sqlite3_column_type(s, 3) == SQLITE_NULL) {
      return Malformed(std::string(kRuntimeTable) + " row " + std::to_string(sqlite3_column_int64(s, 0)) +
                       ": start is NULL");
    }
    bool graph = false;
    if (sqlite3_column_type(s, 4) != SQLITE_NULL) {
      const int64_t name_id = sqlite3_column_int64(s, 4);
      auto known = graph_of_name_id.find(name_id);
      if (known == graph_of_name_id.end()) {
        // A name id missing from StringIds only loses the graph mark.
        OFU_ASSIGN_OR_RETURN(std::optional<std::string> name, LookUpString(name_id));
        known = graph_of_name_id.emplace(name_id, name && IsGraphLaunchName(*name)).first;
      }
      graph = known->second;
    }
    const uint64_t thread = static_cast<uint64_t>(sqlite3_column_int64(s, 2));
    launches_.push_back(Launch{sqlite3_column_int64(s, 1), thread >> 24, thread, sqlite3_column_int64(s, 3), graph});
  }
  if (rc != SQLITE_DONE) return SqlError(rc, "reading " + std::string(kRuntimeTable));
  std::sort(launches_.begin(), launches_.end(), [](const Launch& a, const Launch& b) {
    if (a.correlation_id != b.correlation_id) return a.correlation_id < b.correlation_id;
    return a.process < b.process;
  });
  return OkStatus();
}

std::optional<std::size_t> Reader::InnermostGemmRange(uint64_t thread, int64_t t_ns) const {
  const auto by_thread = std::equal_range(ranges_.begin(), ranges_.end(), thread, [](const auto& a, const auto& b) {
    if constexpr (std::is_same_v<std::decay_t<decltype(a)>, GemmRange>) {
      return a.thread < b;
    } else {
      return a < b.thread;
    }
  });
  // The last range on the thread that starts at or before t; if it ended
  // before t, the range around t (if any) encloses it, so walk outwards.
  const auto after = std::upper_bound(by_thread.first, by_thread.second, t_ns,
                                      [](int64_t t, const GemmRange& r) { return t < r.start_ns; });
  if (after == by_thread.first) return std::nullopt;
  int64_t i = static_cast<int64_t>(after - ranges_.begin()) - 1;
  while (i >= 0) {
    const GemmRange& range = ranges_[static_cast<std::size_t>(i)];
    if (range.start_ns <= t_ns && t_ns <= range.end_ns) return static_cast<std::size_t>(i);
    i = range_parent_[static_cast<std::size_t>(i)];
  }
  return std::nullopt;
}

uint32_t Reader::OpFor(std::size_t range_index) {
  if (op_of_range_[range_index] >= 0) return static_cast<uint32_t>(op_of_range_[range_index]);
  const GemmRange& range = ranges_[range_index];
  const std::string& text = gemm_texts_[range.text];
  FrameworkOp op;
  op.name = std::string(OpNameOf(text));
  ParseSizes(text, &op.input_dims);
  op.start_us = static_cast<double>(range.start_ns) / 1000.0;
  op.duration_us = static_cast<double>(static_cast<uint64_t>(range.end_ns) - static_cast<uint64_t>(range.start_ns)) /
                   1000.0;
  const auto index = static_cast<uint32_t>(trace_.ops.size());
  trace_.ops.push_back(std::move(op));
  op_of_range_[range_index] = index;
  return index;
}

void Reader::LinkKernels() {
  uint64_t without_launch = 0;
  uint64_t ambiguous = 0;
  for (std::size_t k = 0; k < trace_.kernels.size(); ++k) {
    const LaunchKey& key = launch_keys_[k];
    if (!key.has_correlation) {
      ++without_launch;
      continue;
    }
    const auto same_id = std::equal_range(launches_.begin(), launches_.end(), key.correlation_id,
                                          [](const auto& a, const auto& b) {
                                            if constexpr (std::is_same_v<std::decay_t<decltype(a)>, Launch>) {
                                              return a.correlation_id < b;
                                            } else {
                                              return a < b.correlation_id;
                                            }
                                          });
    const Launch* launch = nullptr;
    if (match_process_ && key.has_process) {
      for (auto it = same_id.first; it != same_id.second; ++it) {
        if (it->process == key.process) {
          launch = &*it;
          break;
        }
      }
    } else if (same_id.second - same_id.first == 1) {
      launch = &*same_id.first;
    } else if (same_id.second - same_id.first > 1) {
      ++ambiguous;
      continue;
    }
    if (launch == nullptr) {
      ++without_launch;
      continue;
    }
    if (launch->graph) {
      // The range around a graph launch replays the graph; it did not shape
      // this kernel.
      trace_.kernels[k].launch = LaunchKind::kGraph;
      continue;
    }
    trace_.kernels[k].launch = LaunchKind::kKernel;
    const std::optional<std::size_t> range = InnermostGemmRange(launch->thread, launch->start_ns);
    if (!range) continue;
    trace_.kernels[k].op = OpFor(*range);
    trace_.kernels[k].link = OpLink::kNvtxNesting;
  }
  if (without_launch > 0) {
    trace_.notes.push_back(std::to_string(without_launch) + " kernel(s) have no launch in " +
                           std::string(kRuntimeTable) + " (matched by correlationId" +
                           (match_process_ ? " and process" : "") + "); they are not tied to NVTX ranges");
  }
  if (ambiguous > 0) {
    trace_.notes.push_back(std::to_string(ambiguous) + " kernel(s) share their correlationId with launches in " +
                           "several processes and the kernel table has no globalPid; they are not tied to "
                           "NVTX ranges");
  }
  uint64_t ops_without_sizes = 0;
  for (const FrameworkOp& op : trace_.ops) {
    if (op.input_dims.empty()) ++ops_without_sizes;
  }
  if (ops_without_sizes > 0) {
    trace_.notes.push_back(std::to_string(ops_without_sizes) +
                           " GEMM NVTX range(s) carry no input sizes: run with "
                           "torch.autograd.profiler.emit_nvtx(record_shapes=True) to get GEMM shapes");
  }
}

std::optional<int> IntOrNothing(sqlite3_stmt* s, int column) {
  if (column < 0 || sqlite3_column_type(s, column) == SQLITE_NULL) return std::nullopt;
  const int64_t value = sqlite3_column_int64(s, column);
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) return std::nullopt;
  return static_cast<int>(value);
}

// Device facts are informational: odd or missing values are left out rather
// than failing the read.
Status Reader::ReadDevices(const TableInfo& gpu, const TableInfo& cuda_device) {
  std::unordered_map<int, int> cuda_id_of_gpu;
  std::unordered_map<int, int> sm_count_of_cuda_id;
  std::vector<int> cuda_ids;  // in table order, for when there is no GPU table
  if (cuda_device.present && cuda_device.Has("cudaId")) {
    std::string sql = "SELECT \"cudaId\", ";
    sql += cuda_device.Has("gpuId") ? "\"gpuId\", " : "NULL, ";
    sql += cuda_device.Has("numMultiprocessors") ? "\"numMultiprocessors\"" : "NULL";
    sql += " FROM " + Quoted(kCudaDeviceTable);
    Stmt stmt;
    OFU_RETURN_IF_ERROR(Prepare(sql, "reading " + std::string(kCudaDeviceTable), &stmt));
    int rc;
    while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
      const std::optional<int> cuda_id = IntOrNothing(stmt.get(), 0);
      if (!cuda_id) continue;
      const std::optional<int> gpu_id = IntOrNothing(stmt.get(), 1);
      const std::optional<int> sms = IntOrNothing(stmt.get(), 2);
      if (gpu_id) cuda_id_of_gpu.try_emplace(*gpu_id, *cuda_id);
      if (sms && *sms > 0) sm_count_of_cuda_id.try_emplace(*cuda_id, *sms);
      cuda_ids.push_back(*cuda_id);
    }
    if (rc != SQLITE_DONE) return SqlError(rc, "reading " + std::string(kCudaDeviceTable));
  }

  std::vector<TraceDevice> devices;
  if (gpu.present && gpu.Has("id")) {
    std::string sql = "SELECT \"id\"";
    for (std::string_view column : {"name", "smCount", "computeMajor", "computeMinor", "cuDevice"}) {
      sql += ", " + (gpu.Has(column) ? Quoted(column) : std::string("NULL"));
    }
    sql += " FROM " + Quoted(kGpuTable);
    Stmt stmt;
    OFU_RETURN_IF_ERROR(Prepare(sql, "reading " + std::string(kGpuTable), &stmt));
    sqlite3_stmt* s = stmt.get();
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      const std::optional<int> gpu_id = IntOrNothing(s, 0);
      if (!gpu_id) continue;
      TraceDevice device;
      const auto mapped = cuda_id_of_gpu.find(*gpu_id);
      const std::optional<int> cu_device = IntOrNothing(s, 5);
      device.id = mapped != cuda_id_of_gpu.end() ? mapped->second : cu_device.value_or(*gpu_id);
      if (const unsigned char* name = sqlite3_column_text(s, 1)) {
        device.name.assign(reinterpret_cast<const char*>(name), static_cast<std::size_t>(sqlite3_column_bytes(s, 1)));
      }
      device.sm_count = IntOrNothing(s, 2);
      if (device.sm_count && *device.sm_count <= 0) device.sm_count.reset();
      if (!device.sm_count) {
        const auto sms = sm_count_of_cuda_id.find(device.id);
        if (sms != sm_count_of_cuda_id.end()) device.sm_count = sms->second;
      }
      device.compute_major = IntOrNothing(s, 3);
      device.compute_minor = IntOrNothing(s, 4);
      devices.push_back(std::move(device));
    }
    if (rc != SQLITE_DONE) return SqlError(rc, "reading " + std::string(kGpuTable));
  } else {
    for (int cuda_id : cuda_ids) {
      TraceDevice device;
      device.id = cuda_id;
      const auto sms = sm_count_of_cuda_id.find(cuda_id);
      if (sms != sm_count_of_cuda_id.end()) device.sm_count = sms->second;
      devices.push_back(std::move(device));
    }
  }
  // One entry per device: several processes or VMs may describe the same one.
  std::stable_sort(devices.begin(), devices.end(),
                   [](const TraceDevice& a, const TraceDevice& b) { return a.id < b.id; });
  for (TraceDevice& device : devices) {
    if (trace_.devices.empty() || trace_.devices.back().id != device.id) trace_.devices.push_back(std::move(device));
  }
  return OkStatus();
}

Result<KernelTrace> Reader::Read() {
  trace_.format = "nsys-sqlite";
  OFU_RETURN_IF_ERROR(CheckIsDatabase());
  OFU_ASSIGN_OR_RETURN(ExportTables tables, DescribeTables());
  OFU_RETURN_IF_ERROR(CheckStringTable(tables.strings));
  const bool use_nvtx = tables.nvtx.present && tables.runtime.present;
  if (options_.progress) {
    std::vector<std::string_view> counted = {kKernelTable};
    if (use_nvtx) {
      counted.push_back(kNvtxTable);
      counted.push_back(kRuntimeTable);
    }
    OFU_RETURN_IF_ERROR(CountRows(counted));
  }
  OFU_RETURN_IF_ERROR(ReadKernels(tables.kernels));
  OFU_RETURN_IF_ERROR(ReadGemmOps(tables));
  OFU_RETURN_IF_ERROR(ReadDevices(tables.gpu, tables.cuda_device));

  // Start order; the table is close to it already, and ties keep table order.
  std::stable_sort(trace_.kernels.begin(), trace_.kernels.end(),
                   [](const TraceKernel& a, const TraceKernel& b) { return a.start_us < b.start_us; });
  ReadFileSize();
  if (options_.progress) options_.progress(rows_done_, std::max(rows_done_, rows_total_));
  return std::move(trace_);
}

// The first statement is where SQLite finds out whether this is a database.
Status Reader::CheckIsDatabase() {
  Stmt stmt;
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db_, "SELECT count(*) FROM sqlite_master", -1, &raw, nullptr);
  stmt.reset(raw);
  if (rc == SQLITE_OK) rc = sqlite3_step(raw);
  if (rc != SQLITE_ROW) {
    const ErrorCode code = CodeFor(rc);
    return Error{code, source_ + ": " + (code == ErrorCode::kIo ? "cannot read" : "not an SQLite database") +
                           " (sqlite: " + sqlite3_errmsg(db_) + ")"};
  }
  return OkStatus();
}

// The export's tables this reader uses; only the kernel table must exist.
Result<ExportTables> Reader::DescribeTables() {
  ExportTables tables;
  std::pair<std::string_view, TableInfo*> wanted[] = {
      {kKernelTable, &tables.kernels}, {kNvtxTable, &tables.nvtx}, {kRuntimeTable, &tables.runtime},
      {kStringTable, &tables.strings}, {kGpuTable, &tables.gpu},   {kCudaDeviceTable, &tables.cuda_device}};
  for (auto& [name, info] : wanted) {
    OFU_ASSIGN_OR_RETURN(TableInfo described, Describe(name));
    *info = std::move(described);
    if (info == &tables.kernels && !info->present) {
      return Malformed("no " + std::string(kKernelTable) + " table: was the trace captured with --trace=cuda?");
    }
  }
  return tables;
}

// The lookups use StringIds(id, value); without it every name id dangles,
// which the first kernel would report less clearly. No kernels: no matter.
Status Reader::CheckStringTable(const TableInfo& strings) {
  if (strings.present && strings.Has("id") && strings.Has("value")) return OkStatus();
  Stmt stmt;
  OFU_RETURN_IF_ERROR(Prepare("SELECT 1 FROM " + Quoted(kKernelTable) + " LIMIT 1",
                              "reading " + std::string(kKernelTable), &stmt));
  const int rc = sqlite3_step(stmt.get());
  if (rc == SQLITE_ROW) {
    return Malformed(strings.present ? "StringIds has no column id or value"
                                     : "no StringIds table, so kernel names cannot be read");
  }
  if (rc != SQLITE_DONE) return SqlError(rc, "reading " + std::string(kKernelTable));
  return OkStatus();
}

// GEMM ops from NVTX ranges, tied to kernels through their launches; or a
// note saying which table is missing for that.
Status Reader::ReadGemmOps(const ExportTables& tables) {
  if (!tables.nvtx.present) {
    trace_.notes.push_back(
        "no NVTX ranges: run with torch.autograd.profiler.emit_nvtx(record_shapes=True) to get GEMM shapes");
    return OkStatus();
  }
  if (!tables.runtime.present) {
    trace_.notes.push_back("no " + std::string(kRuntimeTable) +
                           " table: kernels cannot be tied to their launches, so not to NVTX ranges");
    return OkStatus();
  }
  OFU_RETURN_IF_ERROR(ReadGemmRanges(tables.nvtx));
  if (ranges_.empty()) {
    trace_.notes.push_back(
        "no NVTX range names a GEMM op (aten::mm, addmm, ...): run with "
        "torch.autograd.profiler.emit_nvtx(record_shapes=True) to get GEMM shapes");
  } else if (!launch_keys_.empty() && tables.kernels.Has("correlationId")) {
    OFU_RETURN_IF_ERROR(ReadLaunches(tables.runtime));
    LinkKernels();
  }
  return OkStatus();
}

// The database's size, for throughput figures; left 0 when SQLite will not say.
void Reader::ReadFileSize() {
  Stmt stmt;
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size", -1, &raw,
                         nullptr) == SQLITE_OK) {
    stmt.reset(raw);
    if (sqlite3_step(raw) == SQLITE_ROW) {
      trace_.bytes_read = static_cast<uint64_t>(std::max<sqlite3_int64>(0, sqlite3_column_int64(raw, 0)));
    }
  } else {
    sqlite3_finalize(raw);
  }
}

// Settings for reading a file nobody vouches for.
void Harden(sqlite3* db) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 64 << 20);  // no real string comes near
}

}  // namespace

Result<KernelTrace> ReadNsysSqlite(const std::string& path, const TraceReadOptions& options) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  Db db(raw);  // sqlite3_open_v2 allocates a handle even when it fails
  if (rc != SQLITE_OK) {
    return Error::Io("{}", path + ": cannot open (sqlite: " + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)) + ")");
  }
  Harden(db.get());
  Reader reader(db.get(), path, options);
  return reader.Read();
}

Result<KernelTrace> ParseNsysSqliteImage(std::string_view bytes, std::string_view source_name) {
  const std::string source(source_name);
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) {
    return Error::Unavailable("{}", source + ": cannot open an in-memory SQLite database (sqlite: " +
                                        (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)) + ")");
  }
  if (!bytes.empty()) {
    // SQLite owns (and frees) the copy; read-only, so it is never resized.
    auto* image = static_cast<unsigned char*>(sqlite3_malloc64(bytes.size()));
    if (image == nullptr) return Error::Io("{}", source + ": out of memory for the database image");
    std::memcpy(image, bytes.data(), bytes.size());
    const auto size = static_cast<sqlite3_int64>(bytes.size());
    const int drc = sqlite3_deserialize(db.get(), "main", image, size, size,
                                        SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY);
    if (drc != SQLITE_OK) {
      return Error::MalformedInput("{}", source + ": not an SQLite database image (sqlite: " +
                                             sqlite3_errmsg(db.get()) + ")");
    }
  }
  Harden(db.get());
  const TraceReadOptions no_progress;
  Reader reader(db.get(), source, no_progress);
  return reader.Read();
}

}  // namespace ofu::formats
