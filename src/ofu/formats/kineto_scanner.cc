// The Kineto reader's scanner: see kineto_scanner.h.
#include "ofu/formats/kineto_scanner.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace ofu::formats::kineto_internal {
namespace {

// Bytes that matter when skipping through an object or array.
constexpr std::array<bool, 256> MakeStructural() {
  std::array<bool, 256> table{};
  for (const char c : {'"', '{', '}', '[', ']'}) table[static_cast<unsigned char>(c)] = true;
  return table;
}
constexpr std::array<bool, 256> kStructural = MakeStructural();

bool IsScalarByte(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '+' || c == '.';
}

}  // namespace

bool Scanner::Refill() {
  if (error_ || eof_) return false;
  const std::size_t keep_from = hold_ ? *hold_ : pos_;
  if (keep_from > 0) {
    const std::size_t kept = end_ - keep_from;
    if (kept > 0) std::memmove(buf_.data(), buf_.data() + keep_from, kept);
    base_ += keep_from;
    pos_ -= keep_from;
    end_ = kept;
    if (hold_) *hold_ -= keep_from;
  }
  const std::size_t needed = end_ + chunk_ + simdjson::SIMDJSON_PADDING;
  if (buf_.size() < needed) buf_.resize(std::max(needed, buf_.size() * 2));

  std::optional<SourceError> read_error;
  const std::size_t n = source_.Read(buf_.data() + end_, chunk_, &read_error);
  if (read_error) {
    if (read_error->code == ErrorCode::kMalformedInput) return FailAt(BytesRead(), read_error->what);
    error_ = Error{read_error->code, fmt::format("{}: {}", name_, read_error->what)};
    return false;
  }
  if (n == 0) {
    eof_ = true;
    return false;
  }
  end_ += n;
  ReportProgress(false);
  return true;
}

bool Scanner::SkipString() {
  ++pos_;  // the opening quote
  // Invariant: the byte before `from` is not a backslash that belongs to
  // this string, so counting backslashes back from a quote may stop there.
  std::size_t from = pos_;
  for (;;) {
    const char* data = buf_.data();
    const void* hit = std::memchr(data + from, '"', end_ - from);
    if (hit != nullptr) {
      const std::size_t quote = static_cast<std::size_t>(static_cast<const char*>(hit) - data);
      std::size_t backslashes = 0;
      while (quote - backslashes > from && data[quote - backslashes - 1] == '\\') ++backslashes;
      if (backslashes % 2 == 0) {
        pos_ = quote + 1;
        return true;
      }
      from = quote + 1;  // an escaped quote
      continue;
    }
    // No quote yet. Keep a trailing run of backslashes for the next search,
    // since it decides whether the next chunk's first quote is escaped.
    std::size_t keep = end_;
    while (keep > from && data[keep - 1] == '\\') --keep;
    pos_ = keep;
    if (!Refill()) return Truncated("unexpected end of input inside a string");
    from = pos_;
  }
}

bool Scanner::SkipCompound() {
  std::size_t depth = 0;
  for (;;) {
    if (pos_ == end_ && !Refill()) return Truncated();
    const char c = buf_[pos_];
    if (c == '"') {
      if (!SkipString()) return false;
      continue;
    }
    ++pos_;
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      // depth > 0: the cursor started on an opening bracket.
      if (--depth == 0) return true;
    } else {
      // Numbers, literals, punctuation and whitespace: nothing to track.
      while (pos_ < end_ && !kStructural[static_cast<unsigned char>(buf_[pos_])]) ++pos_;
    }
  }
}

bool Scanner::SkipValue() {
  char c;
  if (!Peek(&c)) return Truncated();
  if (c == '"') return SkipString();
  if (c == '{' || c == '[') return SkipCompound();
  const std::uint64_t start = Offset();
  while (Peek(&c) && IsScalarByte(c)) Advance();
  if (error_) return false;
  if (Offset() == start) return Fail("expected a JSON value");
  return true;
}

bool Scanner::ReadRawString(std::string* out) {
  Hold();
  if (!SkipString()) return false;
  const std::string_view held = Held();
  out->assign(held.substr(1, held.size() - 2));
  Release();
  return true;
}
}  // namespace ofu::formats::kineto_internal
