// PyTorch profiler (Kineto) Chrome-trace reader; what it accepts is described
// in the header.
//
// Layout
//   ByteSource    the trace's uncompressed bytes, in order: a file through
//                 zlib (which reads plain and gzip alike) or a buffer in
//                 memory (both here). Both readers share everything below it.
//   Scanner       (kineto_scanner.h) a chunk buffer that slides over the
//                 text, plus a small hand-written walker that knows only
//                 strings and bracket depth. It finds each event's byte
//                 range; when one event spans a refill, the buffer keeps it
//                 (and grows if needed).
//   ReadDocument  (here) walks the top-level object and the "traceEvents"
//                 array with the scanner and hands each event's bytes on.
//   EventReader   (kineto_events.h) parses one event's bytes with simdjson
//                 and keeps what the analysis needs; once the whole file is
//                 read it ties kernels to GEMM ops, since Kineto writes events
//                 out of time order.
//
// Why not simdjson over the whole file: it wants the whole document in
// memory, and traces run to gigabytes. Events are small, so a scanner that
// only balances brackets plus a validating parse of each event keeps memory
// bounded and still checks every byte the reader uses.
#include "ofu/formats/kineto_trace.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include "ofu/formats/kineto_events.h"
#include "ofu/formats/kineto_scanner.h"

namespace ofu::formats {
namespace {

using kineto_internal::ByteSource;
using kineto_internal::EventReader;
using kineto_internal::Scanner;
using kineto_internal::SourceError;

constexpr unsigned kGzBufferBytes = 1u << 20;

// ---------------------------------------------------------------------------
// Byte sources

class MemorySource : public ByteSource {
 public:
  explicit MemorySource(std::string_view text) : text_(text) {}

  std::size_t Read(char* out, std::size_t max, std::optional<SourceError>*) override {
    const std::size_t n = std::min(max, text_.size() - pos_);
    if (n > 0) std::memcpy(out, text_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  std::uint64_t StoredBytesConsumed() const override { return pos_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// zlib's gz* functions read gzip (any number of members) and plain files
// alike, so the format is told by the bytes, not the name.
class GzFileSource : public ByteSource {
 public:
  explicit GzFileSource(gzFile file) : file_(file) {}
  ~GzFileSource() override { gzclose(file_); }
  GzFileSource(const GzFileSource&) = delete;
  GzFileSource& operator=(const GzFileSource&) = delete;

  std::size_t Read(char* out, std::size_t max, std::optional<SourceError>* error) override {
    constexpr std::size_t kMaxRead = std::size_t{1} << 30;  // gzread takes an unsigned, returns an int
    const int n = gzread(file_, out, static_cast<unsigned>(std::min(max, kMaxRead)));
    if (n > 0) return static_cast<std::size_t>(n);
    // 0 is the end of the input, or of what zlib could make of it: a stream
    // cut short reads as a short read with Z_BUF_ERROR, not as -1.
    int code = Z_OK;
    const char* message = gzerror(file_, &code);
    if (n == 0 && code == Z_OK) return 0;
    if (code == Z_BUF_ERROR) {
      *error = SourceError{ErrorCode::kMalformedInput, "the gzip stream is truncated"};
    } else if (code == Z_ERRNO) {
      *error = SourceError{ErrorCode::kIo, std::string("read failed: ") + std::strerror(errno)};
    } else if (code == Z_DATA_ERROR) {
      *error = SourceError{ErrorCode::kMalformedInput, std::string("the gzip data is corrupt: ") + message};
    } else {
      *error = SourceError{ErrorCode::kIo, std::string("read failed: ") + message};
    }
    return 0;
  }

  std::uint64_t StoredBytesConsumed() const override {
    const z_off_t offset = gzoffset(file_);
    return offset < 0 ? 0 : static_cast<std::uint64_t>(offset);
  }

 private:
  gzFile file_;
};

// ---------------------------------------------------------------------------
// The document

bool ReadEventArray(Scanner& scanner, EventReader& events) {
  char c;
  scanner.Advance();  // '['
  if (!scanner.PeekToken(&c)) return scanner.Truncated();
  if (c == ']') {
    scanner.Advance();
    return true;
  }
  std::string what;
  for (;;) {
    if (c != '{') return scanner.Fail("an event is not a JSON object");
    const std::uint64_t offset = scanner.Offset();
    scanner.Hold();
    if (!scanner.SkipCompound()) return false;
    if (!events.Read(scanner.Held(), &what)) return scanner.FailAt(offset, what);
    scanner.Release();
    if (!scanner.PeekToken(&c)) return scanner.Truncated();
    if (c == ']') {
      scanner.Advance();
      return true;
    }
    if (c != ',') return scanner.Fail("expected ',' or ']' after an event");
    scanner.Advance();
    if (!scanner.PeekToken(&c)) return scanner.Truncated();
  }
}

bool ReadDocument(Scanner& scanner, EventReader& events) {
  char c;
  if (!scanner.Peek(&c)) return scanner.Truncated("empty input");
  // A UTF-8 byte order mark may precede the text.
  if (c == '\xEF') {
    for (const char expected : {'\xEF', '\xBB', '\xBF'}) {
      if (!scanner.Peek(&c)) return scanner.Truncated();
      if (c != expected) return scanner.Fail("the top level is not a JSON object");
      scanner.Advance();
    }
  }
  if (!scanner.PeekToken(&c)) return scanner.Truncated("empty input");
  if (c != '{') return scanner.Fail("the top level is not a JSON object");
  scanner.Advance();

  bool saw_events = false;
  std::string key;
  std::string what;
  if (!scanner.PeekToken(&c)) return scanner.Truncated();
  if (c == '}') {
    scanner.Advance();
  } else {
    for (;;) {
      if (c != '"') return scanner.Fail("expected a key string");
      if (!scanner.ReadRawString(&key)) return false;
      if (!scanner.PeekToken(&c)) return scanner.Truncated();
      if (c != ':') return scanner.Fail("expected ':' after a key");
      scanner.Advance();
      if (!scanner.PeekToken(&c)) return scanner.Truncated();
      if (key == "traceEvents") {
        if (c != '[') return scanner.Fail("\"traceEvents\" is not an array");
        if (!ReadEventArray(scanner, events)) return false;
        saw_events = true;
      } else if (key == "deviceProperties" || key == "computeProperties") {
        const std::uint64_t offset = scanner.Offset();
        scanner.Hold();
        if (!scanner.SkipValue()) return false;
        if (!events.ReadDevices(scanner.Held(), &what)) return scanner.FailAt(offset, what);
        scanner.Release();
      } else if (key == "roctracer_version" || key == "hip_runtime_version" || key == "hip_driver_version") {
        scanner.Hold();
        if (!scanner.SkipValue()) return false;
        events.NoteTopLevel(key, scanner.Held());
        scanner.Release();
      } else if (!scanner.SkipValue()) {
        return false;
      }
      if (!scanner.PeekToken(&c)) return scanner.Truncated();
      if (c == '}') {
        scanner.Advance();
        break;
      }
      if (c != ',') return scanner.Fail("expected ',' or '}' after a value");
      scanner.Advance();
      if (!scanner.PeekToken(&c)) return scanner.Truncated();
    }
  }
  if (scanner.PeekToken(&c)) return scanner.Fail("text after the top-level object");
  if (scanner.error()) return false;
  if (!saw_events) return scanner.FailAt(scanner.BytesRead(), "no traceEvents array");
  return true;
}

Result<KernelTrace> Read(ByteSource& source, std::string_view name, const KinetoReadTuning& tuning,
                         Scanner::Progress progress, std::uint64_t total_bytes) {
  Scanner scanner(source, name, tuning.chunk_bytes, std::move(progress), total_bytes);
  EventReader events;
  if (!ReadDocument(scanner, events)) return *scanner.error();
  scanner.ReportProgress(true);
  return events.Finish(scanner.BytesRead());
}

}  // namespace

Result<KernelTrace> ReadKinetoTrace(const std::string& path, const TraceReadOptions& options) {
  return ReadKinetoTrace(path, options, KinetoReadTuning{});
}

Result<KernelTrace> ReadKinetoTrace(const std::string& path, const TraceReadOptions& options,
                                    const KinetoReadTuning& tuning) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return Error::Io("{}: cannot read: {}", path, ec.message());
  errno = 0;
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    return Error::Io("{}: cannot open: {}", path, errno != 0 ? std::strerror(errno) : "out of memory");
  }
  GzFileSource source(file);
  gzbuffer(file, kGzBufferBytes);
  return Read(source, path, tuning, options.progress, static_cast<std::uint64_t>(size));
}

Result<KernelTrace> ParseKinetoTrace(std::string_view json_text, std::string_view source_name) {
  return ParseKinetoTrace(json_text, source_name, KinetoReadTuning{});
}

Result<KernelTrace> ParseKinetoTrace(std::string_view json_text, std::string_view source_name,
                                     const KinetoReadTuning& tuning) {
  // No point in a buffer larger than the text (the fuzzer calls this often).
  KinetoReadTuning capped = tuning;
  capped.chunk_bytes = std::min(tuning.chunk_bytes, std::max<std::size_t>(json_text.size(), 1));
  MemorySource source(json_text);
  return Read(source, source_name, capped, nullptr, json_text.size());
}

}  // namespace ofu::formats
