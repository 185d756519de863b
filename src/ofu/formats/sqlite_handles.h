// Small pieces every SQLite user in ofu needs (the Nsight Systems reader,
// the agent's history store and its reader): owning handles that close and
// finalize themselves, and column/parameter helpers that keep NULL apart
// from 0 (a missing value is absent, never zero).
//
// Header-only; the caller links SQLite::SQLite3.
//
// Thread-safety: a handle, and the statements of its connection, belong to
// one thread at a time, as the connection itself does.
#pragma once

#include <sqlite3.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace ofu::formats {

struct SqliteCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
using SqliteDb = std::unique_ptr<sqlite3, SqliteCloser>;

struct SqliteFinalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using SqliteStmt = std::unique_ptr<sqlite3_stmt, SqliteFinalizer>;

// Column `i` as text; "" for NULL.
inline std::string ColumnText(sqlite3_stmt* s, int i) {
  const unsigned char* text = sqlite3_column_text(s, i);
  return text == nullptr
             ? std::string()
             : std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(sqlite3_column_bytes(s, i)));
}

// Column `i` as a double; absent for NULL.
inline std::optional<double> ColumnOptional(sqlite3_stmt* s, int i) {
  if (sqlite3_column_type(s, i) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_double(s, i);
}

inline void BindText(sqlite3_stmt* s, int i, const std::string& text) {
  sqlite3_bind_text(s, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}

// Binds NULL for an absent value.
inline void BindOptional(sqlite3_stmt* s, int i, const std::optional<double>& v) {
  if (v) {
    sqlite3_bind_double(s, i, *v);
  } else {
    sqlite3_bind_null(s, i);
  }
}

}  // namespace ofu::formats
