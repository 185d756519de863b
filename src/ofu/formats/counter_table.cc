#include "ofu/formats/counter_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "ofu/formats/csv.h"
#include "ofu/formats/text_file.h"

namespace ofu::formats {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// The line without Markdown quote marks and the comment mark nvidia-smi dmon
// puts before its header ("> \# gpu ..." -> "gpu ...").
std::string_view StripMarks(std::string_view line) {
  for (;;) {
    line = TrimSpace(line);
    if (line.starts_with(">")) {
      line.remove_prefix(1);
    } else if (line.starts_with("\\#")) {
      line.remove_prefix(2);
    } else if (line.starts_with("#")) {
      line.remove_prefix(1);
    } else {
      return line;
    }
  }
}

std::vector<std::string> SplitBlanks(std::string_view line) {
  std::vector<std::string> tokens;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && IsBlank(line[i])) ++i;
    const std::size_t start = i;
    while (i < line.size() && !IsBlank(line[i])) ++i;
    if (i > start) tokens.emplace_back(line.substr(start, i - start));
  }
  return tokens;
}

// A line's cells: by commas (csv.h's lenient reader) or by blanks. Empty
// when the line cannot be split (a quote left open).
std::vector<std::string> Cells(std::string_view line, bool csv) {
  if (!csv) return SplitBlanks(line);
  auto records = ReadCsv(line, "", CsvOptions{.lenient = true});
  if (!records.ok() || records->size() != 1) return {};
  return std::move((*records)[0].fields);
}

// The number a cell starts with, when the rest is only a unit ("1980 MHz",
// "45 %", "45%"); absent for "-", "N/A" and other text.
std::optional<double> CellNumber(std::string_view cell) {
  cell = TrimSpace(cell);
  double v = 0;
  const char* end = cell.data() + cell.size();
  const auto [ptr, ec] = std::from_chars(cell.data(), end, v);
  if (ec != std::errc() || ptr == cell.data() || !std::isfinite(v)) return std::nullopt;
  const std::string unit = Lower(TrimSpace(std::string_view(ptr, static_cast<std::size_t>(end - ptr))));
  if (unit.empty() || unit == "mhz" || unit == "%" || unit == "w") return v;
  return std::nullopt;
}

bool AnyNumber(const std::vector<std::string>& cells) {
  return std::any_of(cells.begin(), cells.end(), [](const std::string& c) { return CellNumber(c).has_value(); });
}

// A column name as tables write them: letters, digits, "_", ".", "-", "%",
// then perhaps a unit in brackets ("clocks.sm [MHz]"). Prose is no header.
bool IsColumnName(std::string_view cell) {
  const std::size_t unit = cell.find_first_of("[(");
  if (unit != std::string_view::npos) cell = TrimSpace(cell.substr(0, unit));
  if (cell.empty()) return false;
  return std::all_of(cell.begin(), cell.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-' || c == '%';
  });
}

// The header's columns when `line` is one (see the header comment).
std::optional<std::vector<std::string>> HeaderOf(std::string_view raw, bool& csv) {
  const std::string_view line = StripMarks(raw);
  if (line.empty() || line.find('{') != std::string_view::npos) return std::nullopt;
  csv = line.find(',') != std::string_view::npos;
  std::vector<std::string> cells = Cells(line, csv);
  if (cells.size() < 2 || AnyNumber(cells) || !std::all_of(cells.begin(), cells.end(), IsColumnName)) {
    return std::nullopt;
  }
  const bool counter = std::any_of(cells.begin(), cells.end(), [](const std::string& c) {
    const TableColumn kind = TableColumnOf(c);
    return kind == TableColumn::kSmClock || kind == TableColumn::kTensor || kind == TableColumn::kGraphicsClock;
  });
  if (!counter) return std::nullopt;
  return cells;
}

bool IsPrometheusLine(std::string_view line) {
  line = TrimSpace(line);
  if (line.starts_with("# HELP") || line.starts_with("# TYPE") || line.starts_with("# UNIT") ||
      line.starts_with("# EOF")) {
    return true;
  }
  const std::size_t brace = line.find('{');
  return brace != std::string_view::npos && brace > 0 && line.find('}') != std::string_view::npos &&
         line.find(' ') > brace;
}

}  // namespace

TableColumn TableColumnOf(std::string_view raw) {
  std::string name = Lower(TrimSpace(raw));
  const std::size_t unit = name.find_first_of("[(");
  if (unit != std::string::npos && unit > 0) name = std::string(TrimSpace(std::string_view(name).substr(0, unit)));
  if (name == "gpu" || name == "idx" || name == "index" || name == "gpu_index" || name == "gpu_id" ||
      name == "gpu id") {
    return TableColumn::kGpuIndex;
  }
  if (name == "name" || name == "gpu_name" || name == "model") return TableColumn::kGpuName;
  if (name == "sm_clk" || name == "smclk" || name == "sm_clock" || name == "sm clock" || name == "sm_clock_mhz" ||
      name == "clocks.sm" || name == "clocks.current.sm" || name == "pclk" || name == "dcgm_fi_dev_sm_clock") {
    return TableColumn::kSmClock;
  }
  if (name == "clocks.gr" || name == "clocks.current.graphics") return TableColumn::kGraphicsClock;
  if (name.find("tenso") != std::string::npos) return TableColumn::kTensor;
  return TableColumn::kOther;
}

bool CounterTable::Has(TableColumn kind) const { return std::find(kinds.begin(), kinds.end(), kind) != kinds.end(); }

std::string CounterTable::NameOf(TableColumn kind) const {
  const auto it = std::find(kinds.begin(), kinds.end(), kind);
  return it == kinds.end() ? std::string() : columns[static_cast<std::size_t>(it - kinds.begin())];
}

bool LooksLikeCounterTable(std::string_view head) {
  // A header, then a row under it, before any line of Prometheus text.
  std::optional<std::vector<std::string>> header;
  bool csv = false;
  for (std::string_view line : TextLines(head)) {
    if (IsPrometheusLine(line)) return false;
    if (!header) {
      header = HeaderOf(line, csv);
      continue;
    }
    const std::vector<std::string> cells = Cells(StripMarks(line), csv);
    if (cells.size() == header->size() && AnyNumber(cells)) return true;
  }
  return false;
}

Result<CounterTable> ReadCounterTable(std::string_view text, std::string_view source_name) {
  if (text.find('\0') != std::string_view::npos) return Error::MalformedInput("{}: a NUL byte", source_name);
  CounterTable table;
  bool after_header = false;  // the line before was the header: a units line may follow
  const std::vector<std::string_view> lines = TextLines(text);
  table.lines = lines.size();
  for (std::size_t number = 1; number <= lines.size(); ++number) {
    const std::string_view line = lines[number - 1];
    const std::string_view trimmed = TrimSpace(line);
    if (trimmed.empty()) continue;
    const bool was_after_header = after_header;
    after_header = false;
    if (table.header_line == 0) {
      bool csv = false;
      if (auto columns = HeaderOf(line, csv)) {
        table.columns = std::move(*columns);
        table.csv = csv;
        table.header_line = number;
        for (const std::string& c : table.columns) {
          table.kinds.push_back(TableColumnOf(c));
          if (table.kinds.back() == TableColumn::kTensor && c.find('%') != std::string::npos) {
            table.tensor_percent = true;
          }
        }
        after_header = true;
        continue;
      }
      table.stray.push_back(CounterTableLine{std::string(trimmed), number});
      continue;
    }
    const std::vector<std::string> cells = Cells(StripMarks(line), table.csv);
    if (cells == table.columns) continue;  // the header again
    if (cells.size() == table.columns.size() && !AnyNumber(cells)) {
      if (was_after_header) {  // the units line
        for (std::size_t i = 0; i < cells.size(); ++i) {
          if (table.kinds[i] == TableColumn::kTensor && cells[i] == "%") table.tensor_percent = true;
        }
        continue;
      }
    }
    if (cells.size() != table.columns.size() || !AnyNumber(cells)) {
      table.stray.push_back(CounterTableLine{std::string(trimmed), number});
      continue;
    }
    CounterTableRow row;
    row.line = number;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      switch (table.kinds[i]) {
        case TableColumn::kGpuIndex: row.gpu = cells[i]; break;
        case TableColumn::kGpuName: row.name = cells[i]; break;
        case TableColumn::kSmClock: row.sm_clock_mhz = CellNumber(cells[i]); break;
        case TableColumn::kGraphicsClock: row.graphics_clock_mhz = CellNumber(cells[i]); break;
        case TableColumn::kTensor:
          row.tensor = CellNumber(cells[i]);
          if (cells[i].find('%') != std::string::npos) table.tensor_percent = true;
          break;
        case TableColumn::kOther: break;
      }
    }
    table.rows.push_back(std::move(row));
  }
  if (table.header_line == 0) {
    return Error::MalformedInput("{}: no table header with a clock or tensor column (e.g. 'gpu SM_CLK TENSOR')",
                                 source_name);
  }
  return table;
}

}  // namespace ofu::formats
