#include "ofu/formats/dcgmi_dmon.h"

#include <charconv>
#include <cmath>
#include <string>
#include <vector>

namespace ofu::formats {
namespace {

constexpr std::size_t kMaxLine = std::size_t{1} << 20;

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

struct Token {
  std::string_view text;
  std::size_t column;  // offset of its first byte in the line
};

std::vector<Token> Tokens(std::string_view line) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && IsBlank(line[i])) ++i;
    const std::size_t start = i;
    while (i < line.size() && !IsBlank(line[i])) ++i;
    if (i > start) tokens.push_back(Token{line.substr(start, i - start), start});
  }
  return tokens;
}

// The index of the first column name in a header line's tokens, or 0 when
// the line is no header.
std::size_t HeaderStart(const std::vector<Token>& t) {
  if (t.empty()) return 0;
  if (t[0].text == "#Entity" || t[0].text == "#EntityId") return 1;
  if (t.size() >= 2 && t[0].text == "#" && (t[1].text == "Entity" || t[1].text == "EntityId")) return 2;
  return 0;
}

bool IsUnitsLine(const std::vector<Token>& t) {
  if (t.empty()) return false;
  if (EqualsIgnoringAsciiCase(t[0].text, "ID") || EqualsIgnoringAsciiCase(t[0].text, "#ID")) return true;
  return t.size() >= 2 && t[0].text == "#" && EqualsIgnoringAsciiCase(t[1].text, "ID");
}

bool IsNumber(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::optional<double> CellValue(std::string_view s) {
  double v = 0;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || ptr != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

// A row's entity: its kind, the tokens it takes and its number; 0 tokens
// when the line is no row.
struct Entity {
  DmonEntityKind kind = DmonEntityKind::kOther;
  std::size_t tokens = 0;
  std::string_view id;
};

Entity EntityOf(const std::vector<Token>& t) {
  Entity e;
  if (t.size() < 2) return e;
  const std::string_view group = t[0].text;
  if (group == "CPU" && t.size() >= 3 && t[1].text == "Core" && IsNumber(t[2].text)) {
    return Entity{DmonEntityKind::kOther, 3, t[2].text};
  }
  if (!IsNumber(t[1].text)) return e;
  if (group == "GPU") {
    if (t.size() >= 4 && t[2].text == "LINK" && IsNumber(t[3].text)) {
      return Entity{DmonEntityKind::kOther, 4, t[3].text};
    }
    return Entity{DmonEntityKind::kGpu, 2, t[1].text};
  }
  if (group == "SW" && t.size() >= 4 && t[2].text == "LINK" && IsNumber(t[3].text)) {
    return Entity{DmonEntityKind::kOther, 4, t[3].text};
  }
  if (group == "GPU-I") return Entity{DmonEntityKind::kGpuInstance, 2, t[1].text};
  if (group == "GPU-CI") return Entity{DmonEntityKind::kComputeInstance, 2, t[1].text};
  if (group == "vGPU" || group == "Switch" || group == "CPU" || group == "CX" || group == "UNKNOWN") {
    return Entity{DmonEntityKind::kOther, 2, t[1].text};
  }
  return e;
}

// The -d of a dmon command line ("dcgmi dmon -e 1004 -d 100",
// "--delay=100"), if the line is one.
std::optional<double> DelayOf(const std::vector<Token>& t) {
  bool dmon = false;
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i].text.ends_with("dcgmi") && t[i + 1].text == "dmon") dmon = true;
  }
  if (!dmon) return std::nullopt;
  for (std::size_t i = 0; i < t.size(); ++i) {
    std::string_view value;
    if ((t[i].text == "-d" || t[i].text == "--delay") && i + 1 < t.size()) {
      value = t[i + 1].text;
    } else if (t[i].text.starts_with("--delay=")) {
      value = t[i].text.substr(8);
    } else {
      continue;
    }
    const std::optional<double> ms = CellValue(value);
    if (ms && *ms >= 1) return ms;
  }
  return std::nullopt;
}

std::string_view TrimLeft(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && IsBlank(s[i])) ++i;
  return s.substr(i);
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

bool EqualsIgnoringAsciiCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

bool LooksLikeDcgmiDmon(std::string_view head) {
  std::size_t pos = 0;
  while (pos < head.size()) {
    std::size_t end = head.find('\n', pos);
    if (end == std::string_view::npos) end = head.size();
    const std::string_view line = TrimLeft(head.substr(pos, end - pos));
    pos = end + 1;
    if (line.starts_with("# HELP") || line.starts_with("# TYPE") || line.starts_with("DCGM_") ||
        line.starts_with("dcgm_")) {
      return false;
    }
    if (HeaderStart(Tokens(line)) > 0) return true;
  }
  return false;
}

Result<DmonStats> ReadDcgmiDmon(std::string_view text, std::string_view source_name, DmonVisitor& visitor) {
  DmonStats stats;
  std::vector<std::string_view> columns;
  std::vector<std::size_t> starts;  // each column's offset in its header line
  std::vector<std::optional<double>> values;
  bool after_header = false;
  std::size_t pos = 0;
  const auto fail = [&](std::size_t line, std::string_view what) {
    return Error::MalformedInput("{}:{}: {}", source_name, line, what);
  };
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view raw = text.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t line_no = ++stats.lines;
    if (raw.size() > kMaxLine) return fail(line_no, "line longer than 1 MiB");
    if (raw.find('\0') != std::string_view::npos) return fail(line_no, "NUL byte");
    const std::string_view line = TrimRight(raw);
    const std::vector<Token> tokens = Tokens(line);
    if (tokens.empty()) continue;
    const bool was_after_header = after_header;
    after_header = false;

    if (const std::size_t first = HeaderStart(tokens); first > 0) {
      columns.clear();
      starts.clear();
      for (std::size_t i = first; i < tokens.size(); ++i) {
        columns.push_back(tokens[i].text);
        starts.push_back(tokens[i].column);
      }
      ++stats.headers;
      after_header = true;
      visitor.OnHeader(DmonHeader{columns, line_no});
      continue;
    }
    if (was_after_header && IsUnitsLine(tokens)) continue;

    const Entity entity = EntityOf(tokens);
    if (entity.tokens == 0) {
      if (const std::optional<double> delay = DelayOf(tokens); delay && !stats.delay_ms) {
        stats.delay_ms = delay;
        stats.delay_line = line_no;
      }
      ++stats.stray_lines;
      visitor.OnStrayLine(DmonStrayLine{TrimLeft(line), line_no});
      continue;
    }
    if (stats.headers == 0) return fail(line_no, "a dcgmi dmon row before any '#Entity' header line");
    const std::size_t cells = tokens.size() - entity.tokens;
    if (cells > columns.size()) {
      return fail(line_no, std::string("a dcgmi dmon row with more values than the header has columns"));
    }
    values.assign(columns.size(), std::nullopt);
    const auto set = [&](std::size_t column, std::string_view cell) {
      values[column] = CellValue(cell);
      if (!values[column]) ++stats.not_numbers;
    };
    if (cells == columns.size()) {
      for (std::size_t i = 0; i < cells; ++i) set(i, tokens[entity.tokens + i].text);
    } else {
      // Blank cells: place each token by where it starts.
      std::vector<bool> taken(columns.size(), false);
      for (std::size_t i = entity.tokens; i < tokens.size(); ++i) {
        std::size_t column = columns.size();
        for (std::size_t c = 0; c < columns.size(); ++c) {
          const std::size_t next = c + 1 < starts.size() ? starts[c + 1] : std::string_view::npos;
          if (tokens[i].column >= starts[c] && tokens[i].column < next) column = c;
        }
        if (column == columns.size() || taken[column]) {
          return fail(line_no, "cannot tell which column of the dcgmi dmon header each value of this row is in");
        }
        taken[column] = true;
        set(column, tokens[i].text);
      }
    }
    const std::size_t entity_end = tokens[entity.tokens - 1].column + tokens[entity.tokens - 1].text.size();
    const std::string_view entity_text = line.substr(tokens[0].column, entity_end - tokens[0].column);
    ++stats.rows;
    visitor.OnRow(DmonRow{entity.kind, entity_text, entity.id, values, line_no});
  }
  if (stats.headers == 0) {
    return Error::MalformedInput("{}: no dcgmi dmon header line ('#Entity ...')", source_name);
  }
  return stats;
}

}  // namespace ofu::formats
