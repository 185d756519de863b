// PyTorch profiler (Kineto) Chrome-trace reader; what it accepts is described
// in the header.
//
// Layout
//   ByteSource    the trace's uncompressed bytes, in order: a file through
//                 zlib (which reads plain and gzip alike) or a buffer in
//                 memory. Both readers share everything below it.
//   Scanner       a chunk buffer that slides over the text, plus a small
//                 hand-written walker that knows only strings and bracket
//                 depth. It finds each event's byte range; when one event
//                 spans a refill, the buffer keeps it (and grows if needed).
//   EventReader   parses one event's bytes with simdjson and keeps what the
//                 analysis needs.
//   Link()        ties kernels to GEMM ops once the whole file is read, since
//                 Kineto writes events out of time order.
//
// Why not simdjson over the whole file: it wants the whole document in
// memory, and traces run to gigabytes. Events are small, so a scanner that
// only balances brackets plus a validating parse of each event keeps memory
// bounded and still checks every byte the reader uses.
#include "ofu/formats/kineto_trace.h"

#include <fmt/format.h>
#include <simdjson.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ofu::formats {
namespace {

constexpr unsigned kGzBufferBytes = 1u << 20;
constexpr std::uint64_t kProgressEveryBytes = std::uint64_t{4} << 20;
constexpr std::int64_t kNoId = std::numeric_limits<std::int64_t>::min();

// ---------------------------------------------------------------------------
// Byte sources

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
// Scanner

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

// ---------------------------------------------------------------------------
// Events

enum class EventKind { kOther, kKernel, kCpuOp, kLaunch };

EventKind KindOf(std::string_view cat) {
  if (cat == "kernel" || cat == "Kernel") return EventKind::kKernel;
  if (cat == "cpu_op" || cat == "operator" || cat == "Operator") return EventKind::kCpuOp;
  if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime") return EventKind::kLaunch;
  return EventKind::kOther;
}

bool IsExternalIdKey(std::string_view key) { return key == "External id" || key == "external id"; }

std::optional<std::int64_t> AsInt(simdjson::dom::element value) {
  std::int64_t n;
  if (value.get_int64().get(n)) return std::nullopt;
  return n;
}

std::optional<Dim3> AsDim3(simdjson::dom::element value) {
  simdjson::dom::array array;
  if (value.get_array().get(array) || array.size() != 3) return std::nullopt;
  std::int64_t xyz[3];
  std::size_t i = 0;
  for (simdjson::dom::element item : array) {
    if (item.get_int64().get(xyz[i])) return std::nullopt;
    ++i;
  }
  return Dim3{xyz[0], xyz[1], xyz[2]};
}

// A GEMM op as read, before linking.
struct PendingOp {
  FrameworkOp op;
  std::int64_t external_id = kNoId;
  std::uint32_t thread = 0;
  bool has_input_dims = false;
};

// The ids a kernel carries, used only for linking.
struct KernelIds {
  std::int64_t external_id = kNoId;
  std::int64_t correlation = kNoId;
};

// A CUDA runtime or driver call.
struct Launch {
  std::int64_t correlation;
  double start_us;
  std::uint32_t thread;
  bool graph;  // cudaGraphLaunch / cuGraphLaunch
};

// Hash and equality that look up a std::string key by string_view, so that
// interning a kernel name copies it only the first time it is seen.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class EventReader {
 public:
  // Reads one event (its JSON text, padded as simdjson needs). On a
  // malformed event returns false and says why in `what`.
  bool Read(std::string_view json, std::string* what);
  // Reads the value of "deviceProperties" or "computeProperties".
  bool ReadDevices(std::string_view json, std::string* what);

  KernelTrace Finish(std::uint64_t bytes_read);

 private:
  bool ReadKernel(std::string_view name, const simdjson::dom::element* ts, const simdjson::dom::element* dur,
                  const simdjson::dom::element* args, std::string* what);
  bool ReadCpuOp(std::string_view name, const simdjson::dom::element* ts, const simdjson::dom::element* dur,
                 const simdjson::dom::element* pid, const simdjson::dom::element* tid,
                 const simdjson::dom::element* args, std::string* what);
  bool ReadLaunch(std::string_view name, const simdjson::dom::element* ts, const simdjson::dom::element* pid,
                  const simdjson::dom::element* tid, const simdjson::dom::element* args, std::string* what);
  std::uint32_t ThreadOf(const simdjson::dom::element* pid, const simdjson::dom::element* tid);
  std::uint32_t InternKernelName(std::string_view name);
  void Link(KernelTrace& trace);

  simdjson::dom::parser parser_;

  std::vector<std::string> kernel_names_;
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> kernel_name_ids_;
  std::vector<TraceKernel> kernels_;
  std::vector<KernelIds> kernel_ids_;
  std::vector<PendingOp> ops_;
  std::vector<Launch> launches_;
  std::vector<TraceDevice> devices_;
  std::unordered_map<std::string, std::uint32_t> thread_ids_;
  std::string thread_key_;  // scratch, kept to reuse its allocation
  std::uint64_t cpu_ops_seen_ = 0;
  std::vector<std::string> notes_;
};

// Reads a required time field ("ts" or "dur") of a kept event.
bool RequireTime(const simdjson::dom::element* field, std::string_view field_name, std::string_view kind, double* out,
                 std::string* what) {
  if (field == nullptr) {
    *what = fmt::format("a {} event has no \"{}\"", kind, field_name);
    return false;
  }
  if (field->get_double().get(*out)) {
    *what = fmt::format("a {} event's \"{}\" is not a number", kind, field_name);
    return false;
  }
  return true;
}

bool EventReader::Read(std::string_view json, std::string* what) {
  simdjson::dom::element doc;
  if (const auto error =
          parser_.parse(reinterpret_cast<const std::uint8_t*>(json.data()), json.size(), false).get(doc)) {
    *what = fmt::format("the event is not valid JSON ({})", simdjson::error_message(error));
    return false;
  }
  simdjson::dom::object event;
  if (doc.get_object().get(event)) {
    *what = "the event is not a JSON object";
    return false;
  }

  // One pass over the fields; events have ten or so.
  std::string_view ph, cat, name;
  bool has_name = false;
  simdjson::dom::element ts, dur, pid, tid, args;
  bool has_ts = false, has_dur = false, has_pid = false, has_tid = false, has_args = false;
  for (const simdjson::dom::key_value_pair field : event) {
    const std::string_view key = field.key;
    if (key == "ph") {
      if (field.value.get_string().get(ph)) ph = {};
    } else if (key == "cat") {
      if (field.value.get_string().get(cat)) cat = {};
    } else if (key == "name") {
      has_name = !field.value.get_string().get(name);
    } else if (key == "ts") {
      ts = field.value;
      has_ts = true;
    } else if (key == "dur") {
      dur = field.value;
      has_dur = true;
    } else if (key == "pid") {
      pid = field.value;
      has_pid = true;
    } else if (key == "tid") {
      tid = field.value;
      has_tid = true;
    } else if (key == "args") {
      args = field.value;
      has_args = true;
    }
  }
  if (ph != "X") return true;

  const simdjson::dom::element* ts_p = has_ts ? &ts : nullptr;
  const simdjson::dom::element* dur_p = has_dur ? &dur : nullptr;
  const simdjson::dom::element* pid_p = has_pid ? &pid : nullptr;
  const simdjson::dom::element* tid_p = has_tid ? &tid : nullptr;
  const simdjson::dom::element* args_p = has_args ? &args : nullptr;
  switch (KindOf(cat)) {
    case EventKind::kKernel:
      if (!has_name) {
        *what = "a kernel event has no \"name\" string";
        return false;
      }
      return ReadKernel(name, ts_p, dur_p, args_p, what);
    case EventKind::kCpuOp:
      ++cpu_ops_seen_;
      // Only GEMM ops are kept; the rest are not checked further.
      if (!has_name || !IsGemmOpName(name)) return true;
      return ReadCpuOp(name, ts_p, dur_p, pid_p, tid_p, args_p, what);
    case EventKind::kLaunch: return ReadLaunch(has_name ? name : std::string_view(), ts_p, pid_p, tid_p, args_p, what);
    case EventKind::kOther: return true;
  }
  return true;
}

bool EventReader::ReadKernel(std::string_view name, const simdjson::dom::element* ts, const simdjson::dom::element* dur,
                             const simdjson::dom::element* args, std::string* what) {
  TraceKernel kernel;
  if (!RequireTime(ts, "ts", "kernel", &kernel.start_us, what)) return false;
  if (!RequireTime(dur, "dur", "kernel", &kernel.duration_us, what)) return false;
  if (kernel.duration_us < 0) {
    *what = "a kernel event has a negative \"dur\"";
    return false;
  }
  KernelIds ids;
  simdjson::dom::object fields;
  if (args != nullptr && !args->get_object().get(fields)) {
    for (const simdjson::dom::key_value_pair field : fields) {
      const std::string_view key = field.key;
      if (key == "device") {
        const std::optional<std::int64_t> device = AsInt(field.value);
        if (device && *device >= 0 && *device <= std::numeric_limits<std::int32_t>::max()) {
          kernel.device = static_cast<std::int32_t>(*device);
        }
      } else if (key == "stream") {
        kernel.stream = AsInt(field.value).value_or(-1);
      } else if (key == "grid") {
        kernel.grid = AsDim3(field.value);
      } else if (key == "block") {
        kernel.block = AsDim3(field.value);
      } else if (key == "correlation") {
        ids.correlation = AsInt(field.value).value_or(kNoId);
      } else if (IsExternalIdKey(key)) {
        ids.external_id = AsInt(field.value).value_or(kNoId);
      }
    }
  }
  kernel.name_id = InternKernelName(name);
  kernels_.push_back(kernel);
  kernel_ids_.push_back(ids);
  return true;
}

bool EventReader::ReadCpuOp(std::string_view name, const simdjson::dom::element* ts, const simdjson::dom::element* dur,
                            const simdjson::dom::element* pid, const simdjson::dom::element* tid,
                            const simdjson::dom::element* args, std::string* what) {
  PendingOp pending;
  FrameworkOp& op = pending.op;
  if (!RequireTime(ts, "ts", "cpu_op", &op.start_us, what)) return false;
  if (!RequireTime(dur, "dur", "cpu_op", &op.duration_us, what)) return false;
  if (op.duration_us < 0) {
    *what = "a cpu_op event has a negative \"dur\"";
    return false;
  }
  op.name = name;
  pending.thread = ThreadOf(pid, tid);
  simdjson::dom::object fields;
  if (args != nullptr && !args->get_object().get(fields)) {
    for (const simdjson::dom::key_value_pair field : fields) {
      const std::string_view key = field.key;
      if (IsExternalIdKey(key)) {
        pending.external_id = AsInt(field.value).value_or(kNoId);
      } else if (key == "Input Dims") {
        simdjson::dom::array inputs;
        if (field.value.get_array().get(inputs)) continue;
        pending.has_input_dims = true;
        op.input_dims.reserve(inputs.size());
        for (simdjson::dom::element input : inputs) {
          std::vector<std::int64_t>& dims = op.input_dims.emplace_back();
          simdjson::dom::array values;
          if (input.get_array().get(values)) continue;
          for (simdjson::dom::element value : values) {
            std::int64_t n;
            if (value.get_int64().get(n)) {  // e.g. a tensor list: [[2, 3], [4, 5]]
              dims.clear();
              break;
            }
            dims.push_back(n);
          }
        }
      } else if (key == "Input type") {
        simdjson::dom::array types;
        if (field.value.get_array().get(types)) continue;
        op.input_types.reserve(types.size());
        for (simdjson::dom::element type : types) {
          std::string_view text;
          op.input_types.emplace_back(type.get_string().get(text) ? std::string_view() : text);
        }
      }
    }
  }
  ops_.push_back(std::move(pending));
  return true;
}

bool EventReader::ReadLaunch(std::string_view name, const simdjson::dom::element* ts, const simdjson::dom::element* pid,
                             const simdjson::dom::element* tid, const simdjson::dom::element* args, std::string* what) {
  simdjson::dom::element correlation;
  std::int64_t id;
  if (args == nullptr || (*args)["correlation"].get(correlation) || correlation.get_int64().get(id)) {
    return true;  // a call that launches nothing, e.g. cudaStreamSynchronize in some versions
  }
  double start_us;
  if (!RequireTime(ts, "ts", "cuda_runtime", &start_us, what)) return false;
  launches_.push_back(Launch{id, start_us, ThreadOf(pid, tid), IsGraphLaunchName(name)});
  return true;
}

// Threads are named by "pid/tid" as text, so that a tid written as the
// string "24572" (old traces do, for CPU ops) and as the number 24572 (for
// the runtime calls of the same thread) are the same thread.
void AppendIdText(const simdjson::dom::element* value, std::string* key) {
  if (value == nullptr) return;
  std::int64_t n;
  std::string_view text;
  if (!value->get_int64().get(n)) {
    char digits[24];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, n);
    key->append(digits, end);
  } else if (!value->get_string().get(text)) {
    key->append(text);
  } else {
    key->append(simdjson::minify(*value));
  }
}

std::uint32_t EventReader::ThreadOf(const simdjson::dom::element* pid, const simdjson::dom::element* tid) {
  thread_key_.clear();
  AppendIdText(pid, &thread_key_);
  thread_key_.push_back('\0');  // cannot occur in the text of either id
  AppendIdText(tid, &thread_key_);
  const auto [it, inserted] = thread_ids_.try_emplace(thread_key_, static_cast<std::uint32_t>(thread_ids_.size()));
  return it->second;
}

std::uint32_t EventReader::InternKernelName(std::string_view name) {
  const auto it = kernel_name_ids_.find(name);
  if (it != kernel_name_ids_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(kernel_names_.size());
  kernel_names_.emplace_back(name);
  kernel_name_ids_.emplace(kernel_names_.back(), id);
  return id;
}

bool EventReader::ReadDevices(std::string_view json, std::string* what) {
  simdjson::dom::element doc;
  if (const auto error =
          parser_.parse(reinterpret_cast<const std::uint8_t*>(json.data()), json.size(), false).get(doc)) {
    *what = fmt::format("the device properties are not valid JSON ({})", simdjson::error_message(error));
    return false;
  }
  simdjson::dom::array entries;
  if (doc.get_array().get(entries)) {
    // Only descriptive, so not worth refusing the trace for.
    notes_.push_back("the trace's device properties are not an array; its GPUs are not read");
    return true;
  }
  for (simdjson::dom::element entry : entries) {
    simdjson::dom::object fields;
    if (entry.get_object().get(fields)) continue;
    TraceDevice device;
    for (const simdjson::dom::key_value_pair field : fields) {
      const std::string_view key = field.key;
      const std::optional<std::int64_t> n = AsInt(field.value);
      const bool fits = n && *n >= std::numeric_limits<int>::min() && *n <= std::numeric_limits<int>::max();
      const int value = fits ? static_cast<int>(*n) : 0;
      if (key == "id") {
        if (fits) device.id = value;
      } else if (key == "name") {
        std::string_view name;
        if (!field.value.get_string().get(name)) device.name = name;
      } else if (key == "numSms" || key == "multiProcessorCount") {
        if (fits) device.sm_count = value;
      } else if (key == "computeMajor" || key == "major") {
        if (fits) device.compute_major = value;
      } else if (key == "computeMinor" || key == "minor") {
        if (fits) device.compute_minor = value;
      }
    }
    devices_.push_back(std::move(device));
  }
  return true;
}

// ---------------------------------------------------------------------------
// Linking

// The GEMM ops of one thread sorted by start (outer first on ties), each
// with the innermost earlier op that contains it. The ops one thread runs
// nest like calls, so the innermost op containing a time t is the last op
// starting at or before t, or, if that one ended before t, the nearest of
// its ancestors that did not: a walk as long as the nesting is deep.
class OpNesting {
 public:
  explicit OpNesting(const std::vector<PendingOp>& ops, std::size_t thread_count) : ops_(ops) {
    order_.resize(ops.size());
    for (std::uint32_t i = 0; i < ops.size(); ++i) order_[i] = i;
    std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
      const PendingOp& x = ops[a];
      const PendingOp& y = ops[b];
      if (x.thread != y.thread) return x.thread < y.thread;
      if (x.op.start_us != y.op.start_us) return x.op.start_us < y.op.start_us;
      if (End(a) != End(b)) return End(a) > End(b);
      return a < b;
    });
    ranges_.assign(thread_count, {0, 0});
    parent_.assign(order_.size(), -1);
    std::vector<std::size_t> open;  // positions in order_ of the ops still open
    for (std::size_t pos = 0; pos < order_.size(); ++pos) {
      const std::uint32_t thread = ops[order_[pos]].thread;
      if (pos == 0 || ops[order_[pos - 1]].thread != thread) {
        open.clear();
        ranges_[thread].first = pos;
      }
      ranges_[thread].second = pos + 1;
      while (!open.empty() && End(order_[open.back()]) < End(order_[pos])) open.pop_back();
      if (!open.empty()) parent_[pos] = static_cast<std::int64_t>(open.back());
      open.push_back(pos);
    }
  }

  // The innermost op on `thread` whose [start, end] holds `t`.
  std::optional<std::uint32_t> Innermost(std::uint32_t thread, double t) const {
    if (thread >= ranges_.size()) return std::nullopt;
    const auto [first, last] = ranges_[thread];
    const auto begin = order_.begin() + static_cast<std::ptrdiff_t>(first);
    const auto end = order_.begin() + static_cast<std::ptrdiff_t>(last);
    const auto after = std::upper_bound(begin, end, t,
                                        [&](double time, std::uint32_t op) { return time < ops_[op].op.start_us; });
    if (after == begin) return std::nullopt;
    auto pos = static_cast<std::int64_t>(after - order_.begin()) - 1;
    while (pos >= 0) {
      const std::uint32_t op = order_[static_cast<std::size_t>(pos)];
      if (End(op) >= t) return op;
      pos = parent_[static_cast<std::size_t>(pos)];
    }
    return std::nullopt;
  }

 private:
  double End(std::uint32_t op) const { return ops_[op].op.start_us + ops_[op].op.duration_us; }

  const std::vector<PendingOp>& ops_;
  std::vector<std::uint32_t> order_;
  std::vector<std::int64_t> parent_;                         // position in order_, -1 for none
  std::vector<std::pair<std::size_t, std::size_t>> ranges_;  // by thread: [first, last) in order_
};

void EventReader::Link(KernelTrace& trace) {
  std::unordered_map<std::int64_t, std::uint32_t> op_by_external_id;
  for (std::uint32_t i = 0; i < ops_.size(); ++i) {
    if (ops_[i].external_id != kNoId) op_by_external_id.try_emplace(ops_[i].external_id, i);
  }
  std::sort(launches_.begin(), launches_.end(),
            [](const Launch& a, const Launch& b) { return a.correlation < b.correlation; });
  const OpNesting nesting(ops_, thread_ids_.size());

  std::vector<std::int64_t> new_index(ops_.size(), -1);
  std::size_t by_external_id = 0, by_nesting = 0;
  for (std::size_t k = 0; k < kernels_.size(); ++k) {
    TraceKernel& kernel = kernels_[k];
    const KernelIds& ids = kernel_ids_[k];
    const Launch* launch = nullptr;
    if (ids.correlation != kNoId) {
      const auto it = std::lower_bound(launches_.begin(), launches_.end(), ids.correlation,
                                       [](const Launch& l, std::int64_t correlation) {
                                         return l.correlation < correlation;
                                       });
      if (it != launches_.end() && it->correlation == ids.correlation) {
        launch = &*it;
        kernel.launch = launch->graph ? LaunchKind::kGraph : LaunchKind::kKernel;
      }
    }
    // A graph's kernels are not tied to the op around the graph launch: that
    // op replays the graph, it did not shape this kernel.
    const bool graph = kernel.launch == LaunchKind::kGraph;
    std::optional<std::uint32_t> op;
    if (!graph && ids.external_id != kNoId) {
      const auto it = op_by_external_id.find(ids.external_id);
      if (it != op_by_external_id.end()) {
        op = it->second;
        kernel.link = OpLink::kExternalId;
        ++by_external_id;
      }
    }
    if (!op && !graph && launch != nullptr) {
      op = nesting.Innermost(launch->thread, launch->start_us);
      if (op) {
        kernel.link = OpLink::kCorrelationNesting;
        ++by_nesting;
      }
    }
    if (op) new_index[*op] = 0;  // marked; numbered below
    kernel.op = op;
  }

  // Keep only the ops some kernel links to, in file order.
  std::size_t without_dims = 0;
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    if (new_index[i] < 0) continue;
    new_index[i] = static_cast<std::int64_t>(trace.ops.size());
    if (!ops_[i].has_input_dims) ++without_dims;
    trace.ops.push_back(std::move(ops_[i].op));
  }
  for (TraceKernel& kernel : kernels_) {
    if (kernel.op) kernel.op = static_cast<std::uint32_t>(new_index[*kernel.op]);
  }

  if (kernels_.empty()) {
    trace.notes.push_back(
        "the trace has no GPU kernel events (\"cat\": \"kernel\"); record it with "
        "ProfilerActivity.CUDA");
    return;
  }
  if (cpu_ops_seen_ == 0) {
    trace.notes.push_back("the trace has no CPU op events, so kernels cannot be tied to framework ops");
  } else if (ops_.empty()) {
    trace.notes.push_back(fmt::format("none of the {} CPU ops is a GEMM op (aten::mm, addmm, bmm, ...)",
                                      cpu_ops_seen_));
  }
  trace.notes.push_back(
      fmt::format("{} of {} kernels are linked to a GEMM op ({} by External id, {} by correlation and nesting)",
                  by_external_id + by_nesting, kernels_.size(), by_external_id, by_nesting));
  if (without_dims > 0) {
    trace.notes.push_back(
        fmt::format("{} of {} linked GEMM ops have no \"Input Dims\"; record the trace with record_shapes=True",
                    without_dims, trace.ops.size()));
  }
}

KernelTrace EventReader::Finish(std::uint64_t bytes_read) {
  KernelTrace trace;
  trace.format = "kineto";
  trace.bytes_read = bytes_read;
  trace.notes = std::move(notes_);
  Link(trace);
  trace.kernel_names = std::move(kernel_names_);
  trace.kernels = std::move(kernels_);
  trace.devices = std::move(devices_);
  return trace;
}

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
