// The byte layer of the Kineto trace reader (kineto_trace.cc): where the
// uncompressed text comes from, and a scanner that walks it by bytes and
// bracket depth without parsing it. Internal to ofu_formats: included only by
// kineto_*.cc; nothing here is part of the library's interface.
//
// Thread-safety: a Scanner and its ByteSource belong to one read, on one
// thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"

namespace ofu::formats::kineto_internal {

constexpr std::uint64_t kProgressEveryBytes = std::uint64_t{4} << 20;

// A failed read: kIo messages are completed with the source's name,
// kMalformedInput ones (a broken gzip stream) also with the byte offset.
struct SourceError {
  ErrorCode code;
  std::string what;
};

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `max` bytes into `out`; returns the count, 0 at the end.
  virtual std::size_t Read(char* out, std::size_t max, std::optional<SourceError>* error) = 0;
  // Bytes of the input as stored (compressed, for gzip) consumed so far.
  virtual std::uint64_t StoredBytesConsumed() const = 0;
};

// A window on the text: bytes [0, end_) of buf_ are the text from offset
// base_ on; pos_ is the cursor. A refill drops the bytes before pos_ (or
// before the held position, see Hold()) and appends a chunk. The buffer
// always has SIMDJSON_PADDING bytes allocated past end_, so a held range can
// be handed to simdjson in place.
//
// Every method returning bool returns false on an error (then error() is
// set) or, for the Peek methods, at the end of the input (error() unset).
class Scanner {
 public:
  using Progress = std::function<void(std::uint64_t, std::uint64_t)>;

  Scanner(ByteSource& source, std::string_view name, std::size_t chunk_bytes, Progress progress,
          std::uint64_t total_bytes)
      : source_(source),
        name_(name),
        chunk_(std::max<std::size_t>(chunk_bytes, 1)),
        progress_(std::move(progress)),
        total_bytes_(total_bytes) {}

  const std::optional<Error>& error() const { return error_; }
  std::uint64_t Offset() const { return base_ + pos_; }
  std::uint64_t BytesRead() const { return base_ + end_; }

  // The byte at the cursor.
  bool Peek(char* c) {
    if (pos_ == end_ && !Refill()) return false;
    *c = buf_[pos_];
    return true;
  }
  // The first byte at or after the cursor that is not JSON whitespace.
  bool PeekToken(char* c) {
    for (;;) {
      while (pos_ < end_) {
        const char b = buf_[pos_];
        if (b != ' ' && b != '\n' && b != '\r' && b != '\t') {
          *c = b;
          return true;
        }
        ++pos_;
      }
      if (!Refill()) return false;
    }
  }
  // Precondition: a byte is available at the cursor (Peek returned true).
  void Advance() { ++pos_; }

  // The cursor is on '"'; leaves it after the closing quote.
  bool SkipString();
  // The cursor is on '{' or '['; leaves it after the matching close.
  bool SkipCompound();
  // The cursor is on the first byte of a value; leaves it after the value.
  bool SkipValue();
  // The cursor is on '"'; reads the string as written (escapes not decoded).
  bool ReadRawString(std::string* out);

  // Keeps the bytes from the cursor on in the buffer until Release(), so that
  // Held() can return them in one piece.
  void Hold() { hold_ = pos_; }
  // The bytes from Hold() to the cursor, followed by SIMDJSON_PADDING
  // allocated bytes. Valid until the next refill.
  std::string_view Held() const { return {buf_.data() + *hold_, pos_ - *hold_}; }
  void Release() { hold_.reset(); }

  bool Fail(std::string_view what) { return FailAt(Offset(), what); }
  bool FailAt(std::uint64_t offset, std::string_view what) {
    if (!error_) {
      error_ = Error::MalformedInput("{}: byte {}: {}", name_, offset, what);
    }
    return false;
  }
  // After a Peek returned false: an error if the input ended here.
  bool Truncated(std::string_view what = "unexpected end of input") {
    return error_ ? false : FailAt(BytesRead(), what);
  }

  void ReportProgress(bool force) {
    if (!progress_) return;
    const std::uint64_t done = source_.StoredBytesConsumed();
    if (force || done - last_progress_ >= kProgressEveryBytes) {
      last_progress_ = done;
      progress_(done, total_bytes_);
    }
  }

 private:
  bool Refill();

  ByteSource& source_;
  std::string name_;
  std::size_t chunk_;
  Progress progress_;
  std::uint64_t total_bytes_;
  std::uint64_t last_progress_ = 0;

  std::vector<char> buf_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  std::uint64_t base_ = 0;
  std::optional<std::size_t> hold_;
  bool eof_ = false;
  std::optional<Error> error_;
};

}  // namespace ofu::formats::kineto_internal
