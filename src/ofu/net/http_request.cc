#include "ofu/net/http_request.h"

#include <algorithm>

#include <fmt/format.h>

namespace ofu::net {
namespace {

// RFC 9110 §5.6.2 tchar.
bool IsTokenChar(char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view text) { return !text.empty() && std::all_of(text.begin(), text.end(), IsTokenChar); }

// A field value's characters (RFC 9110 §5.5): visible ASCII, space, tab and
// obs-text; no other control character, in particular no CR, LF or NUL.
bool IsFieldValueChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u == '\t' || (u >= 0x20 && u != 0x7f);
}

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return Lower(x) == Lower(y); });
}

std::string_view TrimWhitespace(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Length of the empty lines at the start of `text` (RFC 9112 §2.2: a server
// SHOULD ignore at least one empty line before the request line).
std::size_t LeadingEmptyLines(std::string_view text) {
  std::size_t at = 0;
  while (true) {
    if (text.substr(at, 1) == "\n") {
      at += 1;
    } else if (text.substr(at, 2) == "\r\n") {
      at += 2;
    } else {
      return at;
    }
  }
}

// Calls `each(item)` for the comma-separated items of a field value, trimmed;
// empty items are skipped (RFC 9110 §5.6.1).
template <typename Each>
void ForEachListItem(std::string_view value, Each each) {
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    const std::string_view item = TrimWhitespace(value.substr(0, comma));
    if (!item.empty()) each(item);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}

Error Malformed(std::string message) { return Error::MalformedInput("{}", std::move(message)); }

// The origin-form path of a request target: without query or fragment;
// for absolute-form (RFC 9112 §3.2.2) without scheme and authority.
std::string PathOf(std::string_view target) {
  for (const std::string_view scheme : {"http://", "https://"}) {
    if (target.size() >= scheme.size() && EqualsIgnoreCase(target.substr(0, scheme.size()), scheme)) {
      const std::size_t slash = target.find('/', scheme.size());
      target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
      break;
    }
  }
  return std::string(target.substr(0, target.find_first_of("?#")));
}

Result<HttpRequestHead> ParseRequestLine(std::string_view line) {
  HttpRequestHead head;
  const std::size_t first = line.find(' ');
  const std::size_t second = first == std::string_view::npos ? first : line.find(' ', first + 1);
  if (second == std::string_view::npos || line.find(' ', second + 1) != std::string_view::npos) {
    return Malformed("the request line is not 'METHOD TARGET HTTP/x.y' with single spaces");
  }
  const std::string_view method = line.substr(0, first);
  const std::string_view target = line.substr(first + 1, second - first - 1);
  const std::string_view version = line.substr(second + 1);
  if (!IsToken(method)) return Malformed("the method is not a token");
  if (target.empty() || !std::all_of(target.begin(), target.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u > 0x20 && u < 0x7f;
      })) {
    return Malformed("the request target is empty or has characters other than visible ASCII");
  }
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[5] < '0' || version[5] > '9' ||
      version[6] != '.' || version[7] < '0' || version[7] > '9') {
    return Malformed("the protocol is not HTTP/<digit>.<digit>");
  }
  head.method = std::string(method);
  head.target = std::string(target);
  head.path = PathOf(target);
  head.major_version = version[5] - '0';
  head.minor_version = version[7] - '0';
  return head;
}

// Content-Length (RFC 9110 §8.6, RFC 9112 §6.3): digits; a list of equal
// values, or equal values in several fields, is one value; anything else is
// an error, since two readers could take different ones.
Status ReadContentLength(std::string_view value, std::optional<std::uint64_t>& length) {
  bool any = false;
  bool bad = false;
  ForEachListItem(value, [&](std::string_view item) {
    any = true;
    if (item.size() > 18 || !std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      bad = true;
      return;
    }
    std::uint64_t parsed = 0;
    for (const char c : item) parsed = parsed * 10 + static_cast<std::uint64_t>(c - '0');
    if (length && *length != parsed) bad = true;
    length = parsed;
  });
  if (bad || !any) return Malformed("Content-Length is not one decimal number");
  return OkStatus();
}

}  // namespace

std::optional<std::string_view> HttpRequestHead::Field(std::string_view name) const {
  for (const auto& [field, value] : fields) {
    if (EqualsIgnoreCase(field, name)) return std::string_view(value);
  }
  return std::nullopt;
}

std::string HttpRequestHead::JoinedField(std::string_view name) const {
  std::string joined;
  for (const auto& [field, value] : fields) {
    if (!EqualsIgnoreCase(field, name)) continue;
    if (!joined.empty()) joined += ", ";
    joined += value;
  }
  return joined;
}

std::size_t HttpRequestHead::CountField(std::string_view name) const {
  return static_cast<std::size_t>(std::count_if(fields.begin(), fields.end(), [name](const auto& field) {
    return EqualsIgnoreCase(field.first, name);
  }));
}

bool HttpRequestHead::KeepAlive() const {
  if (connection_close) return false;
  return minor_version >= 1 || connection_keep_alive;
}

std::optional<std::size_t> FindRequestHeadEnd(std::string_view received) {
  std::size_t at = LeadingEmptyLines(received);
  while (true) {
    const std::size_t newline = received.find('\n', at);
    if (newline == std::string_view::npos) return std::nullopt;
    const std::string_view rest = received.substr(newline + 1);
    if (rest.substr(0, 1) == "\n") return newline + 2;
    if (rest.substr(0, 2) == "\r\n") return newline + 3;
    at = newline + 1;
  }
}

Result<HttpRequestHead> ParseRequestHead(std::string_view head) {
  head.remove_prefix(LeadingEmptyLines(head));
  std::vector<std::string_view> lines;
  while (!head.empty()) {
    const std::size_t newline = head.find('\n');
    if (newline == std::string_view::npos) return Malformed("the request head does not end with an empty line");
    std::string_view line = head.substr(0, newline);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find('\r') != std::string_view::npos) return Malformed("a bare CR in the request head");
    lines.push_back(line);
    head.remove_prefix(newline + 1);
  }
  if (lines.size() < 2 || !lines.back().empty()) return Malformed("the request head does not end with an empty line");
  lines.pop_back();

  OFU_ASSIGN_OR_RETURN(auto parsed, ParseRequestLine(lines.front()));
  HttpRequestHead& request = parsed;
  std::optional<std::uint64_t> content_length;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.empty()) return Malformed("an empty line inside the request head");
    if (line.front() == ' ' || line.front() == '\t') return Malformed("obsolete line folding in a header field");
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return Malformed("a header line without a colon");
    const std::string_view name = line.substr(0, colon);
    if (!IsToken(name)) {
      return Malformed("a header field name is not a token (or has whitespace before its colon)");
    }
    const std::string_view value = TrimWhitespace(line.substr(colon + 1));
    if (!std::all_of(value.begin(), value.end(), IsFieldValueChar)) {
      return Malformed(fmt::format("header field '{}' has a control character in its value", name));
    }
    if (EqualsIgnoreCase(name, "content-length")) {
      OFU_RETURN_IF_ERROR(ReadContentLength(value, content_length));
    } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
      request.has_transfer_encoding = true;
    } else if (EqualsIgnoreCase(name, "connection")) {
      ForEachListItem(value, [&request](std::string_view option) {
        if (EqualsIgnoreCase(option, "close")) request.connection_close = true;
        if (EqualsIgnoreCase(option, "keep-alive")) request.connection_keep_alive = true;
      });
    }
    request.fields.emplace_back(std::string(name), std::string(value));
  }
  request.content_length = content_length.value_or(0);
  return parsed;
}

}  // namespace ofu::net
