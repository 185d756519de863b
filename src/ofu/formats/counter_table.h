// Reader for tables of GPU counters whose columns are recognised by name:
// `nvidia-smi dmon` (whitespace columns under a "# gpu ... pclk" header),
// `nvidia-smi --query-gpu=... --format=csv` (comma-separated, units in the
// header: "clocks.current.sm [MHz]"), and tables people make by hand
// ("GPU SM_CLK TENSOR", CSV or whitespace). It knows column names, not
// metrics: which column is a GPU index, a GPU name, the SM clock, the
// graphics clock, tensor activity, or something else.
//
// The generic rule (TableColumnOf): a column's name, lower-cased and without
// a unit in "[...]" or "(...)", is
//   GPU index     gpu, idx, index, gpu_index, gpu_id, "gpu id"
//   GPU name      name, gpu_name, model
//   SM clock      sm_clk, smclk, sm_clock, "sm clock", sm_clock_mhz,
//                 clocks.sm, clocks.current.sm, pclk, dcgm_fi_dev_sm_clock
//   graphics clk  clocks.gr, clocks.current.graphics (nvidia-smi's; not the SM clock)
//   tensor        any name holding "tenso" (TENSO, tensor, tensor_active,
//                 PIPE_TENSOR_ACTIVE, DCGM_FI_PROF_PIPE_TENSOR_ACTIVE)
//   other         the rest (kept by name, e.g. dmon's "sm" %, which is SM
//                 occupancy of any pipe, not tensor activity)
//
// What it accepts
//   * a header: a line of at least two column names (letters, digits, "_",
//     ".", "-", "%", perhaps a unit in brackets; no prose), none a number, at
//     least one of them a clock or tensor column; comma-separated when it
//     holds a comma. Leading Markdown quote marks ("> "), "#" and "\#"
//     before the names are dropped (nvidia-smi dmon writes "# gpu ...");
//   * a units line right after it ("# Idx W C % ... MHz"): no number in it;
//     a "%" under the tensor column makes tensor values percent;
//   * rows: as many cells as columns, at least one a number. A cell is a
//     number, optionally followed by its unit ("1980 MHz", "45 %"); "-",
//     "N/A", "[N/A]", "[Not Supported]" and any other text are absent (never
//     0), except in the name column, kept as text;
//   * anything else (a prompt, the command line, a Markdown fence, a row with
//     the wrong number of cells, a second header's repeat): a stray line,
//     returned in `stray`, never an error. A header that repeats the first
//     one (dmon writes it every few rows) is skipped silently.
// What it rejects (kMalformedInput "<source>: ..."): a text with no header;
// a NUL byte.
//
// Lifetime: the result owns its strings. Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"

namespace ofu::formats {

enum class TableColumn { kGpuIndex, kGpuName, kSmClock, kGraphicsClock, kTensor, kOther };

// What a column named `name` holds, by the generic rule above.
TableColumn TableColumnOf(std::string_view name);

struct CounterTableRow {
  std::optional<std::string> gpu;  // the index column's text; absent without one
  std::string name;                // the name column's text; empty without one
  std::optional<double> sm_clock_mhz;
  std::optional<double> graphics_clock_mhz;
  std::optional<double> tensor;  // as written; see CounterTable::tensor_percent
  std::size_t line = 0;          // 1-based
};

struct CounterTableLine {
  std::string text;  // without its line end and leading blanks; never empty
  std::size_t line = 0;
};

struct CounterTable {
  std::vector<std::string> columns;  // as written in the header
  std::vector<TableColumn> kinds;    // one per column
  std::size_t header_line = 0;
  bool csv = false;
  bool tensor_percent = false;  // the tensor column's unit is %
  std::vector<CounterTableRow> rows;
  std::vector<CounterTableLine> stray;
  std::size_t lines = 0;

  bool Has(TableColumn kind) const;
  // The header name of the first column of `kind`; empty when none.
  std::string NameOf(TableColumn kind) const;
};

// True when `head` holds a header line of such a table (above) and a row
// under it, before any line of Prometheus text ("# HELP", "# TYPE", "# UNIT",
// "# EOF", a name followed by '{').
bool LooksLikeCounterTable(std::string_view head);

Result<CounterTable> ReadCounterTable(std::string_view text, std::string_view source_name);

}  // namespace ofu::formats
