#include "ofu/formats/csv.h"

#include <cctype>

namespace ofu::formats {
namespace {

// The lenient dialect skips a line that is blank or a comment.
bool SkippedLine(std::string_view line) {
  const std::string_view trimmed = TrimSpace(line);
  return trimmed.empty() || trimmed.front() == '#';
}

}  // namespace

std::string_view TrimSpace(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

Result<std::vector<CsvRecord>> ReadCsv(std::string_view text, std::string_view source_name, const CsvOptions& options) {
  const bool lenient = options.lenient;
  std::vector<CsvRecord> records;
  int line = 1;
  std::size_t i = 0;
  while (i < text.size()) {
    if (lenient) {
      const std::size_t end = text.find('\n', i);  // the line ends here (npos: at the end of text)
      if (SkippedLine(text.substr(i, end - i))) {
        i = end == std::string_view::npos ? text.size() : end + 1;
        ++line;
        continue;
      }
    }
    CsvRecord record;
    record.line = line;
    std::string field;
    bool quoted = false;
    bool closed_quote = false;  // strict: the field's closing quote has been read
    int quote_line = line;
    const auto field_number = [&] { return record.fields.size() + 1; };
    bool end_of_record = false;
    while (!end_of_record && i < text.size()) {
      const char c = text[i];
      if (quoted) {
        ++i;
        if (c == '"' && i < text.size() && text[i] == '"') {
          field += '"';
          ++i;
        } else if (c == '"') {
          quoted = false;
          closed_quote = !lenient;
        } else if (c == '\n' && lenient) {
          return Error::MalformedInput("{}:{}: unterminated quote", source_name, quote_line);
        } else {
          if (c == '\n') ++line;
          field += c;
        }
        continue;
      }
      if (c == ',') {
        record.fields.push_back(std::move(field));
        field.clear();
        closed_quote = false;
        ++i;
      } else if (c == '\n' || (c == '\r' && !lenient)) {
        i += c == '\r' && i + 1 < text.size() && text[i + 1] == '\n' ? 2 : 1;
        ++line;
        end_of_record = true;
      } else if (c == '\r') {
        ++i;  // lenient: a stray CR is dropped
      } else if (closed_quote) {
        return Error::MalformedInput("{}:{}: text after a closing quote (field {})", source_name, line, field_number());
      } else if (c == '"' && !lenient && !field.empty()) {
        return Error::MalformedInput("{}:{}: a quote inside an unquoted field (field {})", source_name, line,
                                     field_number());
      } else if (c == '"') {
        quoted = true;
        quote_line = line;
        ++i;
      } else {
        field += c;
        ++i;
      }
    }
    if (quoted) {
      if (lenient) return Error::MalformedInput("{}:{}: unterminated quote", source_name, quote_line);
      return Error::MalformedInput("{}:{}: a quoted field is not closed", source_name, quote_line);
    }
    record.fields.push_back(std::move(field));
    if (lenient) {
      for (std::string& cell : record.fields) cell = std::string(TrimSpace(cell));
    }
    const bool blank = record.fields.size() == 1 && record.fields[0].empty();
    if (!blank) records.push_back(std::move(record));
  }
  return records;
}

}  // namespace ofu::formats
