// Streaming reader for Prometheus text 0.0.4 and OpenMetrics 1.0 text; the
// accepted grammar is described in the header.
//
// Layout: LineParser turns one line into at most one visitor call. The two
// public functions only cut their input into lines and feed them to it, so
// both variants accept exactly the same inputs and report the same errors.
// The stream variant keeps one buffer of kChunkBytes + kMaxLineBytes: the
// unfinished line at the end of a chunk is moved to the front and completed
// by the next read, so memory stays bounded whatever the file size.
//
// Speed: a sample line is parsed in place with string_views into the line.
// Label values are copied only when they contain a backslash, into a scratch
// string that is reserved to the line's length before the first copy, so it
// never reallocates (and never moves earlier values) while a line is parsed.
#include "ofu/formats/prometheus_text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace ofu::formats {
std::size_t Utf8CharLength(std::string_view s, std::size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  std::uint32_t code_point = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2;
    code_point = lead & 0x1Fu;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    code_point = lead & 0x0Fu;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    code_point = lead & 0x07u;
  } else {
    return 0;
  }
  if (s.size() - i < length) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(s[i + k]);
    if ((next & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (next & 0x3Fu);
  }
  // Overlong encodings, UTF-16 surrogates and values past U+10FFFF.
  constexpr std::uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code_point < kSmallest[length] || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) {
    return 0;
  }
  return length;
}

namespace {

constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;

// The kAuto rule's boundary: 1e11 seconds is the year 5138, while 1e11
// milliseconds is March 1973, so no real timestamp is ambiguous.
constexpr double kMillisecondsThreshold = 1e11;

// ---------------------------------------------------------------------------
// Characters

enum CharClass : unsigned {
  kMetricNameStart = 1u << 0,  // [a-zA-Z_:]
  kMetricNameChar = 1u << 1,   // [a-zA-Z0-9_:]
  kLabelNameStart = 1u << 2,   // [a-zA-Z_]
  kLabelNameChar = 1u << 3,    // [a-zA-Z0-9_]
};

// A table rather than comparisons: names are most of the bytes of a line.
constexpr std::array<unsigned char, 256> MakeCharClasses() {
  std::array<unsigned char, 256> table{};
  for (int c = 0; c < 256; ++c) {
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    unsigned bits = 0;
    if (letter) bits |= kMetricNameStart | kMetricNameChar | kLabelNameStart | kLabelNameChar;
    if (digit) bits |= kMetricNameChar | kLabelNameChar;
    if (c == ':') bits |= kMetricNameStart | kMetricNameChar;
    table[static_cast<std::size_t>(c)] = static_cast<unsigned char>(bits);
  }
  return table;
}

constexpr std::array<unsigned char, 256> kCharClasses = MakeCharClasses();

bool HasClass(char c, CharClass cls) { return (kCharClasses[static_cast<unsigned char>(c)] & cls) != 0; }

bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

bool IsMetricName(std::string_view s) {
  if (s.empty() || !HasClass(s[0], kMetricNameStart)) return false;
  for (const char c : s) {
    if (!HasClass(c, kMetricNameChar)) return false;
  }
  return true;
}

// `lower` must be lower case.
bool EqualsIgnoreCase(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

// Labels end up as keys in reports and JSON; Prometheus rejects values that
// are not UTF-8, and so do we rather than pass on bytes that break later.
bool IsValidUtf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t length = Utf8CharLength(s, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

// One byte as it should appear in a message: itself if printable, else \xNN.
std::string Printable(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte < 0x7F) return std::string(1, c);
  char hex[8];
  std::snprintf(hex, sizeof hex, "\\x%02x", byte);
  return hex;
}

// A piece of input quoted for a message: cut to a readable length, with
// quotes, backslashes and unprintable bytes escaped so the message stays one
// printable line.
std::string Quote(std::string_view text) {
  constexpr std::size_t kMaxShown = 64;
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    if (text[i] == '"' || text[i] == '\\') out += '\\';
    out += Printable(text[i]);
  }
  if (text.size() > kMaxShown) out += "...";
  out += '"';
  return out;
}

// ---------------------------------------------------------------------------
// Numbers

enum class NumberStatus { kOk, kInvalid, kOutOfRange };

// Whether a finite number that from_chars found out of range is tiny rather
// than huge, judged by where its first significant digit sits. `digits` has
// no sign and no 0x prefix; `exponent_mark` is 'e' (decimal) or 'p' (hex).
bool IsUnderflow(std::string_view digits, char exponent_mark) {
  const std::size_t mark = digits.find_first_of(exponent_mark == 'e' ? "eE" : "pP");
  long long exponent = 0;
  if (mark != std::string_view::npos) {
    std::string_view e = digits.substr(mark + 1);
    const bool negative = !e.empty() && e[0] == '-';
    if (!e.empty() && (e[0] == '-' || e[0] == '+')) e.remove_prefix(1);
    for (const char c : e) {
      exponent = std::min(exponent * 10 + (c - '0'), 1'000'000'000LL);
    }
    if (negative) exponent = -exponent;
    digits = digits.substr(0, mark);
  }
  const std::size_t point = std::min(digits.find('.'), digits.size());
  const std::size_t first_nonzero = digits.find_first_not_of("0.");
  if (first_nonzero == std::string_view::npos) return true;  // all zeros
  // Place of the first significant digit: >= 0 left of the point. A hex
  // digit is four binary places, the unit of a 'p' exponent.
  const long long place = first_nonzero < point ? static_cast<long long>(point - first_nonzero) - 1
                                                : -static_cast<long long>(first_nonzero - point);
  const long long digit_weight = exponent_mark == 'e' ? 1 : 4;
  return place * digit_weight + exponent < 0;
}

// Parses a float the way Go's strconv.ParseFloat does (Prometheus uses it):
// [+-] decimal or 0x hex float (with p exponent), [+-]Inf, [+-]Infinity and
// unsigned NaN in any case. Overflow is an error, underflow gives zero.
NumberStatus ParseGoFloat(std::string_view token, double& out) {
  std::string_view body = token;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (body.empty()) return NumberStatus::kInvalid;

  if (!IsDigit(body[0]) && body[0] != '.') {
    if (EqualsIgnoreCase(body, "inf") || EqualsIgnoreCase(body, "infinity")) {
      const double inf = std::numeric_limits<double>::infinity();
      out = negative ? -inf : inf;
      return NumberStatus::kOk;
    }
    if (body.size() == token.size() && EqualsIgnoreCase(body, "nan")) {
      out = std::numeric_limits<double>::quiet_NaN();
      return NumberStatus::kOk;
    }
    return NumberStatus::kInvalid;
  }

  // from_chars has no '+' and no prefix, and would take "inf" or "nan(...)"
  // after a 0x: hence the checks on what follows the prefix.
  auto format = std::chars_format::general;
  char exponent_mark = 'e';
  if (body.size() > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    body.remove_prefix(2);
    if (body.empty() || !(IsHexDigit(body[0]) || body[0] == '.') ||
        body.find_first_of("pP") == std::string_view::npos) {
      return NumberStatus::kInvalid;
    }
    format = std::chars_format::hex;
    exponent_mark = 'p';
  }
  double value = 0;
  const char* end = body.data() + body.size();
  const auto [ptr, ec] = std::from_chars(body.data(), end, value, format);
  if (ptr != end) return NumberStatus::kInvalid;
  if (ec == std::errc::result_out_of_range) {
    if (!IsUnderflow(body, exponent_mark)) return NumberStatus::kOutOfRange;
    value = 0;
  } else if (ec != std::errc{}) {
    return NumberStatus::kInvalid;
  }
  out = negative ? -value : value;
  return NumberStatus::kOk;
}

// [+-]?[0-9]+
bool IsInteger(std::string_view token) {
  if (!token.empty() && (token[0] == '+' || token[0] == '-')) token.remove_prefix(1);
  if (token.empty()) return false;
  for (const char c : token) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

// Seconds since the epoch, by the rule in the header; nullopt if the token
// is no finite number.
std::optional<double> ParseTimestamp(std::string_view token, TimestampUnit unit) {
  const bool integer = IsInteger(token);
  double value = 0;
  if (integer) {
    if (token[0] == '+') token.remove_prefix(1);  // from_chars takes no '+'
    std::int64_t n = 0;
    const char* end = token.data() + token.size();
    const auto [ptr, ec] = std::from_chars(token.data(), end, n);
    if (ec != std::errc{} || ptr != end) return std::nullopt;
    value = static_cast<double>(n);
  } else if (ParseGoFloat(token, value) != NumberStatus::kOk || !std::isfinite(value)) {
    return std::nullopt;
  }
  switch (unit) {
    case TimestampUnit::kMilliseconds: return value / 1000;
    case TimestampUnit::kSeconds: return value;
    case TimestampUnit::kAuto: break;
  }
  return integer && std::fabs(value) >= kMillisecondsThreshold ? value / 1000 : value;
}

// Whether a line (leading blanks removed, not a comment) cannot be a sample
// at all, by the rules in the header: what surrounds a pasted scrape rather
// than a broken sample in it.
bool IsStrayLine(std::string_view line) {
  // '{' starts a label set: a sample whose name is missing, not a stray line.
  if (!HasClass(line[0], kMetricNameStart)) return line[0] != '{';
  std::size_t i = 1;
  while (i < line.size() && HasClass(line[i], kMetricNameChar)) ++i;
  if (i == line.size()) return false;  // a name alone: "sample value missing"
  if (line[i] == '{') return false;
  if (!IsBlank(line[i])) return true;
  while (i < line.size() && IsBlank(line[i])) ++i;
  if (i == line.size() || line[i] == '{') return false;
  std::size_t end = i;
  while (end < line.size() && !IsBlank(line[end])) ++end;
  double value = 0;
  return ParseGoFloat(line.substr(i, end - i), value) == NumberStatus::kInvalid;
}

bool IsKnownMetricType(std::string_view type) {
  constexpr std::string_view kTypes[] = {"counter", "gauge", "histogram", "summary",       "untyped",
                                         "unknown", "info",  "stateset",  "gaugehistogram"};
  for (const std::string_view known : kTypes) {
    if (type == known) return true;
  }
  return false;
}

const char* MetadataKeyword(MetadataKind kind) {
  switch (kind) {
    case MetadataKind::kHelp: return "HELP";
    case MetadataKind::kType: return "TYPE";
    case MetadataKind::kUnit: return "UNIT";
  }
  return "?";
}

// ---------------------------------------------------------------------------
// Lines

// A read position inside one line; parsing steps move it past what they take.
struct Cursor {
  const char* pos;
  const char* end;

  bool done() const { return pos == end; }
  char peek() const { return *pos; }  // precondition: !done()
  bool at(char c) const { return pos != end && *pos == c; }
  void SkipBlanks() {
    while (pos != end && IsBlank(*pos)) ++pos;
  }
  std::string_view TakeUntilBlank() {
    const char* start = pos;
    while (pos != end && !IsBlank(*pos)) ++pos;
    return {start, static_cast<std::size_t>(pos - start)};
  }
  std::string_view Rest() const { return {pos, static_cast<std::size_t>(end - pos)}; }
};

class LineParser {
 public:
  LineParser(std::string_view source_name, TextVisitor& visitor, const ParseOptions& options)
      : source_name_(source_name), visitor_(visitor), options_(options) {}

  // Parses the next line, given without its '\n'. False if it is malformed;
  // error() then says why.
  bool Parse(std::string_view line);

  Error error() const {
    return Error::MalformedInput("{}", std::string(source_name_) + ":" + std::to_string(stats_.lines) + ": " + reason_);
  }

  const ReadStats& stats() const { return stats_; }

 private:
  bool ParseSample(Cursor c);
  bool ReportNonNumeric(std::string_view name, Cursor rest, bool out_of_range);
  bool ParseLabels(Cursor& c);
  bool ParseLabelValue(Cursor& c, std::string_view label_name, std::string_view& value);
  bool UnescapeLabelValue(std::string_view raw, std::string_view& value);
  bool SkipExemplar(Cursor& c);
  bool ParseComment(Cursor c);
  bool ParseMetadata(MetadataKind kind, Cursor c);
  std::string_view UnescapeHelp(std::string_view raw);
  void ReserveScratch();

  bool Fail(std::string reason) {
    reason_ = std::move(reason);
    return false;
  }

  std::string_view source_name_;
  TextVisitor& visitor_;
  ParseOptions options_;
  ReadStats stats_;
  std::string_view line_;      // the line being parsed
  std::vector<Label> labels_;  // reused across lines
  std::string scratch_;        // unescaped text of the current line
  std::string reason_;
};

bool LineParser::Parse(std::string_view line) {
  ++stats_.lines;
  if (line.size() > kMaxLineBytes) return Fail("line longer than 1 MiB");
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!line.empty() && std::memchr(line.data(), '\0', line.size()) != nullptr) {
    return Fail("line contains a NUL byte");
  }
  line_ = line;
  scratch_.clear();
  Cursor c{line.data(), line.data() + line.size()};
  c.SkipBlanks();
  if (c.done()) return true;  // blank lines are allowed anywhere
  if (options_.stray_lines == StrayLines::kSkip && c.peek() != '#' && IsStrayLine(c.Rest())) {
    visitor_.OnStrayLine(StrayLine{c.Rest(), stats_.lines});
    ++stats_.stray_lines;
    return true;
  }
  if (stats_.saw_eof_marker) return Fail("text after \"# EOF\"");
  if (c.peek() == '#') {
    ++c.pos;
    return ParseComment(c);
  }
  return ParseSample(c);
}

bool LineParser::ParseSample(Cursor c) {
  const char* name_start = c.pos;
  if (!HasClass(c.peek(), kMetricNameStart)) return Fail("metric name missing");
  while (!c.done() && HasClass(c.peek(), kMetricNameChar)) ++c.pos;
  const std::string_view name(name_start, static_cast<std::size_t>(c.pos - name_start));
  if (!c.done() && !IsBlank(c.peek()) && c.peek() != '{') {
    return Fail("invalid character '" + Printable(c.peek()) + "' after metric name " + Quote(name));
  }

  labels_.clear();
  c.SkipBlanks();
  if (c.at('{')) {
    ++c.pos;
    if (!ParseLabels(c)) return false;
    c.SkipBlanks();
  }

  const char* value_start = c.pos;
  const std::string_view value_token = c.TakeUntilBlank();
  if (value_token.empty()) return Fail("sample value missing");
  double value = 0;
  const NumberStatus status = ParseGoFloat(value_token, value);
  if (status != NumberStatus::kOk) {
    if (options_.non_numeric_values == NonNumericValues::kReport) {
      return ReportNonNumeric(name, Cursor{value_start, c.end}, status == NumberStatus::kOutOfRange);
    }
    if (status == NumberStatus::kOutOfRange) {
      return Fail("sample value " + Quote(value_token) + " is out of range");
    }
    return Fail("invalid sample value " + Quote(value_token));
  }

  c.SkipBlanks();
  std::optional<double> timestamp;
  if (!c.done() && c.peek() != '#') {
    const std::string_view token = c.TakeUntilBlank();
    timestamp = ParseTimestamp(token, options_.timestamps);
    if (!timestamp) return Fail("invalid timestamp " + Quote(token));
    c.SkipBlanks();
  }
  if (!c.done()) {
    if (c.peek() != '#') return Fail("unexpected text after timestamp");
    if (!SkipExemplar(c)) return false;
  }

  TextSample sample;
  sample.name = name;
  sample.labels = labels_;
  sample.value = value;
  sample.timestamp_s = timestamp;
  sample.line = stats_.lines;
  visitor_.OnSample(sample);
  ++stats_.samples;
  return true;
}

// The value of a sample whose name and labels are fine is not a number: the
// rest of the line, whatever it holds, is its text. No timestamp is looked
// for, since a text value may itself contain blanks ("ERROR - FAILED TO
// CONVERT TO STRING").
bool LineParser::ReportNonNumeric(std::string_view name, Cursor rest, bool out_of_range) {
  std::string_view text = rest.Rest();
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  NonNumericSample sample;
  sample.name = name;
  sample.labels = labels_;
  sample.value_text = text;
  sample.out_of_range = out_of_range;
  sample.line = stats_.lines;
  visitor_.OnNonNumericSample(sample);
  ++stats_.non_numeric_samples;
  return true;
}

// From just after '{' to just after the matching '}', appending to labels_.
// Blanks are allowed around every token, and a comma before '}'.
bool LineParser::ParseLabels(Cursor& c) {
  const std::size_t first = labels_.size();
  for (;;) {
    c.SkipBlanks();
    if (c.done()) return Fail("label set is not closed with '}'");
    if (c.peek() == '}') {
      ++c.pos;
      return true;
    }
    if (!HasClass(c.peek(), kLabelNameStart)) {
      return Fail("expected a label name or '}', found '" + Printable(c.peek()) + "'");
    }
    const char* name_start = c.pos;
    while (!c.done() && HasClass(c.peek(), kLabelNameChar)) ++c.pos;
    const std::string_view name(name_start, static_cast<std::size_t>(c.pos - name_start));

    c.SkipBlanks();
    if (!c.at('=')) return Fail("expected '=' after label name " + Quote(name));
    ++c.pos;
    c.SkipBlanks();
    if (!c.at('"')) return Fail("expected '\"' to open the value of label " + Quote(name));
    ++c.pos;
    std::string_view value;
    if (!ParseLabelValue(c, name, value)) return false;

    for (std::size_t i = first; i < labels_.size(); ++i) {
      if (labels_[i].name == name) return Fail("duplicate label name " + Quote(name));
    }
    labels_.push_back(Label{name, value});

    c.SkipBlanks();
    if (c.at(',')) {
      ++c.pos;
    } else if (!c.at('}')) {
      if (c.done()) return Fail("label set is not closed with '}'");
      return Fail("expected ',' or '}' after the value of label " + Quote(name));
    }
  }
}

// From just after the opening quote to just after the closing one.
bool LineParser::ParseLabelValue(Cursor& c, std::string_view label_name, std::string_view& value) {
  const char* start = c.pos;
  bool has_escape = false;
  bool has_non_ascii = false;
  for (;;) {
    if (c.done()) return Fail("label value is not terminated");
    const char ch = *c.pos;
    if (ch == '"') break;
    if (ch == '\\') {
      has_escape = true;
      ++c.pos;  // the escaped byte is checked when unescaping
      if (c.done()) return Fail("label value is not terminated");
    } else if (static_cast<unsigned char>(ch) >= 0x80) {
      has_non_ascii = true;
    }
    ++c.pos;
  }
  const std::string_view raw(start, static_cast<std::size_t>(c.pos - start));
  ++c.pos;  // the closing quote

  if (has_non_ascii && !IsValidUtf8(raw)) {
    return Fail("value of label " + Quote(label_name) + " is not valid UTF-8");
  }
  if (!has_escape) {
    value = raw;
    return true;
  }
  return UnescapeLabelValue(raw, value);
}

// Unescaped text of one line never exceeds the line, so one reservation per
// line keeps every earlier view into scratch_ valid.
void LineParser::ReserveScratch() {
  if (scratch_.capacity() < line_.size()) scratch_.reserve(line_.size());
}

// `raw` has a byte after every backslash (ParseLabelValue checked).
bool LineParser::UnescapeLabelValue(std::string_view raw, std::string_view& value) {
  ReserveScratch();
  const std::size_t start = scratch_.size();
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\') {
      scratch_ += raw[i];
      continue;
    }
    const char escaped = raw[++i];
    switch (escaped) {
      case '\\': scratch_ += '\\'; break;
      case '"': scratch_ += '"'; break;
      case 'n': scratch_ += '\n'; break;
      default: return Fail("unknown escape \\" + Printable(escaped) + " in label value");
    }
  }
  value = std::string_view(scratch_).substr(start);
  return true;
}

// An OpenMetrics exemplar, " # {labels} value [timestamp]", from the '#' to
// the end of the line. It is checked but not reported.
bool LineParser::SkipExemplar(Cursor& c) {
  ++c.pos;  // '#'
  c.SkipBlanks();
  if (!c.at('{')) return Fail("exemplar must start with '{'");
  ++c.pos;
  const std::size_t sample_labels = labels_.size();
  if (!ParseLabels(c)) return false;
  labels_.resize(sample_labels);

  c.SkipBlanks();
  const std::string_view value_token = c.TakeUntilBlank();
  if (value_token.empty()) return Fail("exemplar value missing");
  double value = 0;
  if (ParseGoFloat(value_token, value) != NumberStatus::kOk) {
    return Fail("invalid exemplar value " + Quote(value_token));
  }
  c.SkipBlanks();
  if (c.done()) return true;
  const std::string_view timestamp = c.TakeUntilBlank();
  if (!ParseTimestamp(timestamp, TimestampUnit::kSeconds)) {
    return Fail("invalid exemplar timestamp " + Quote(timestamp));
  }
  c.SkipBlanks();
  if (!c.done()) return Fail("unexpected text after exemplar");
  return true;
}

// From just after the '#'. Only HELP, TYPE, UNIT and EOF mean something;
// anything else is a comment, as in Prometheus.
bool LineParser::ParseComment(Cursor c) {
  c.SkipBlanks();
  const std::string_view keyword = c.TakeUntilBlank();
  if (keyword == "HELP") return ParseMetadata(MetadataKind::kHelp, c);
  if (keyword == "TYPE") return ParseMetadata(MetadataKind::kType, c);
  if (keyword == "UNIT") return ParseMetadata(MetadataKind::kUnit, c);
  if (keyword == "EOF") {
    c.SkipBlanks();
    if (c.done()) stats_.saw_eof_marker = true;
  }
  return true;
}

bool LineParser::ParseMetadata(MetadataKind kind, Cursor c) {
  const std::string keyword = MetadataKeyword(kind);
  c.SkipBlanks();
  const std::string_view family = c.TakeUntilBlank();
  if (family.empty()) return Fail("metric name missing in " + keyword + " line");
  if (!IsMetricName(family)) {
    return Fail("invalid metric name " + Quote(family) + " in " + keyword + " line");
  }
  c.SkipBlanks();

  std::string_view text;
  switch (kind) {
    case MetadataKind::kType:
      text = c.TakeUntilBlank();
      c.SkipBlanks();
      if (text.empty()) return Fail("metric type missing in TYPE line");
      if (!c.done()) return Fail("unexpected text after metric type " + Quote(text));
      if (!IsKnownMetricType(text)) return Fail("unknown metric type " + Quote(text));
      break;
    case MetadataKind::kUnit:
      text = c.TakeUntilBlank();
      c.SkipBlanks();
      if (!c.done()) return Fail("unexpected text after unit " + Quote(text));
      break;
    case MetadataKind::kHelp:
      text = c.Rest();
      if (!IsValidUtf8(text)) return Fail("HELP text is not valid UTF-8");
      if (text.find('\\') != std::string_view::npos) text = UnescapeHelp(text);
      break;
  }
  visitor_.OnMetadata(TextMetadata{kind, family, text, stats_.lines});
  return true;
}

// HELP text is documentation, so unlike label values an unknown escape is
// kept as written instead of failing the whole file.
std::string_view LineParser::UnescapeHelp(std::string_view raw) {
  ReserveScratch();
  const std::size_t start = scratch_.size();
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char next = i + 1 < raw.size() ? raw[i + 1] : '\0';
    if (raw[i] == '\\' && (next == '\\' || next == '"' || next == 'n')) {
      scratch_ += next == 'n' ? '\n' : next;
      ++i;
    } else {
      scratch_ += raw[i];
    }
  }
  return std::string_view(scratch_).substr(start);
}

}  // namespace

Result<ReadStats> ReadPrometheusText(std::istream& in, std::string_view source_name, TextVisitor& visitor,
                                     const ParseOptions& options) {
  if (in.fail()) {
    return Error::Io("{}", std::string(source_name) + ": stream is not readable");
  }
  LineParser parser(source_name, visitor, options);
  constexpr std::size_t kBufferBytes = kChunkBytes + kMaxLineBytes;
  const auto buffer = std::make_unique_for_overwrite<char[]>(kBufferBytes);
  std::size_t carried = 0;  // bytes of an unfinished line at the front of buffer
  std::size_t bytes = 0;
  for (;;) {
    // Always a whole chunk (there is room: carried <= kMaxLineBytes), so
    // chunk k is bytes [k, k + 1) MiB of the input, whatever the lines.
    constexpr std::size_t wanted = kChunkBytes;
    in.read(buffer.get() + carried, static_cast<std::streamsize>(wanted));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (in.bad()) {
      return Error::Io("{}",
                       std::string(source_name) + ": read failed after " + std::to_string(bytes + got) + " bytes");
    }
    bytes += got;

    const char* pos = buffer.get();
    const char* end = buffer.get() + carried + got;
    while (const auto* newline = static_cast<const char*>(std::memchr(pos, '\n',
                                                                      static_cast<std::size_t>(end - pos)))) {
      if (!parser.Parse(std::string_view(pos, static_cast<std::size_t>(newline - pos)))) {
        return parser.error();
      }
      pos = newline + 1;
    }
    carried = static_cast<std::size_t>(end - pos);

    if (got < wanted) {  // end of input: what is left is a last line without '\n'
      if (carried > 0 && !parser.Parse(std::string_view(pos, carried))) return parser.error();
      break;
    }
    // An unfinished line already over the limit: Parse rejects it by length
    // alone, before the rest of it is ever read.
    if (carried > kMaxLineBytes) {
      static_cast<void>(parser.Parse(std::string_view(pos, carried)));
      return parser.error();
    }
    std::memmove(buffer.get(), pos, carried);
  }

  ReadStats stats = parser.stats();
  stats.bytes = bytes;
  return stats;
}

Result<ReadStats> ReadPrometheusText(std::string_view text, std::string_view source_name, TextVisitor& visitor,
                                     const ParseOptions& options) {
  LineParser parser(source_name, visitor, options);
  const std::size_t bytes = text.size();
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    if (!parser.Parse(text.substr(0, newline))) return parser.error();
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
  }
  ReadStats stats = parser.stats();
  stats.bytes = bytes;
  return stats;
}

}  // namespace ofu::formats
