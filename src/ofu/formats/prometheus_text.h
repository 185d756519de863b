// Streaming reader for the Prometheus text exposition format 0.0.4 and
// OpenMetrics 1.0 text.
//
// The reader turns bytes into (family, labels, value, timestamp) tuples and
// nothing more: it knows no metric names and does no arithmetic. It reads the
// input in chunks and never holds more than one chunk plus one line, so files
// of any size stream through.
//
// What it accepts
//   * sample lines  name{label="value",...} value [timestamp] [# exemplar]
//     - label values may contain the escapes \\ \" \n (unescaped for you);
//     - a trailing comma inside {} is accepted (0.0.4 allows it);
//     - value: a float as Go's strconv.ParseFloat takes it, NaN, +Inf, -Inf;
//     - OpenMetrics exemplars (" # {...} v [ts]") are skipped.
//   * with ParseOptions::non_numeric_values = kReport, a sample line whose
//     name and label set are well formed but whose value is not such a float
//     (dcgm-exporter writes "ERROR - FAILED TO CONVERT TO STRING" for fields
//     it cannot format, and the text of string fields as is), or a float
//     beyond the range of a double: it is handed to
//     TextVisitor::OnNonNumericSample with the rest of the line as its value
//     text, no timestamp is looked for, and the read goes on. Under the
//     default, kError, such a line is an error, as in Prometheus.
//   * # HELP / # TYPE / # UNIT lines, reported as metadata; "# EOF" ends the
//     input (text after it is an error, blank lines are not); other "#"
//     lines are comments.
//   * with ParseOptions::stray_lines = kSkip, a line that cannot be a sample
//     as people paste scrapes: text around the exposition rather than in it
//     (a shell prompt "$ curl ...", curl's "* Connection #0 to host ... left
//     intact" and other "*", "<", ">" verbose lines, a progress meter, a
//     "..." elision, markup such as "<code>" or a ``` fence, prose). It is
//     handed to TextVisitor::OnStrayLine and the read goes on. A line is
//     stray when, after leading blanks, it
//       - starts with a byte that cannot start a metric name (and is not '#'
//         or the '{' of a label set),
//       - or has a metric name followed by something other than a blank or
//         '{' ("root@host:~$ ...", 'container="ctr",'),
//       - or has a name, no label set, and a first token after it that is no
//         number at all ("curl localhost:9400/metrics", "Handling connection
//         for 9400").
//     Anything else malformed (a label set not closed, a bad escape, a bad
//     timestamp) is still an error: it looks like a sample, so skipping it
//     could hide a broken one. Under the default, kError, a stray line is an
//     error, as in Prometheus. Stray lines are also skipped after "# EOF".
//   * blank lines (0.0.4 allows them) and CRLF line ends.
//   * spaces and tabs around every token, as Prometheus' own parser allows.
//   * many scrapes in one file: the same series may appear any number of
//     times, interleaved or grouped by family; the reader does not care.
// What it rejects: syntax errors (a missing name or value, a label set that
// is not closed, text after the timestamp, ...), a duplicate label name in
// one series, a label value that is not UTF-8, an escape other than
// \\ \" \n in a label value (in HELP text unknown escapes are kept as
// written), an invalid timestamp, a TYPE word it does not know, a NUL byte,
// a line longer than 1 MiB.
//
// Timestamps
//   0.0.4 writes integer milliseconds since the epoch; OpenMetrics writes
//   seconds, possibly fractional. A file does not say which it is until its
//   last line, so each timestamp is read by its own form:
//     - has a '.' or an exponent              -> seconds
//     - integer >= 1e11 (after 1973 in ms)    -> milliseconds
//     - integer <  1e11                       -> seconds
//   ParseOptions::timestamps overrides the rule for a whole file.
//
// Errors
//   The first malformed line stops the read. The error (kMalformedInput) says
//   "<source_name>:<line>: <what is wrong>" with the 1-based line number;
//   a stream that fails to read gives kIo.
//
// Lifetime: every string_view handed to the visitor points into the reader's
// buffers and is valid only during that call. Copy what you keep.
// Thread-safety: a call to ReadPrometheusText uses no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <span>
#include <string_view>

#include "ofu/core/result.h"

namespace ofu::formats {

struct Label {
  std::string_view name;
  std::string_view value;  // unescaped
};

struct TextSample {
  std::string_view name;          // the series name as written, e.g. DCGM_FI_DEV_SM_CLOCK
  std::span<const Label> labels;  // in file order
  double value = 0;
  std::optional<double> timestamp_s;  // seconds since the epoch, when the line has one
  std::size_t line = 0;               // 1-based
};

// A line that cannot be a sample (see ParseOptions::stray_lines).
struct StrayLine {
  std::string_view text;  // the line without its line end and leading blanks; any bytes, never empty
  std::size_t line = 0;   // 1-based
};

// A sample line whose value is not a number (see ParseOptions::non_numeric_values).
struct NonNumericSample {
  std::string_view name;          // the series name as written
  std::span<const Label> labels;  // in file order
  // Everything after the label set (or the name), blanks trimmed at both ends:
  // "ERROR - FAILED TO CONVERT TO STRING". Any bytes; never empty.
  std::string_view value_text;
  bool out_of_range = false;  // a float, but beyond the range of a double ("1e999")
  std::size_t line = 0;       // 1-based
};

enum class MetadataKind { kHelp, kType, kUnit };

struct TextMetadata {
  MetadataKind kind;
  std::string_view family;
  std::string_view text;  // HELP text, TYPE name ("gauge", ...) or UNIT name
  std::size_t line = 0;
};

class TextVisitor {
 public:
  virtual ~TextVisitor() = default;
  virtual void OnSample(const TextSample& sample) = 0;
  virtual void OnMetadata(const TextMetadata& /*metadata*/) {}
  // Called only under NonNumericValues::kReport.
  virtual void OnNonNumericSample(const NonNumericSample& /*sample*/) {}
  // Called only under StrayLines::kSkip.
  virtual void OnStrayLine(const StrayLine& /*line*/) {}
};

enum class TimestampUnit { kAuto, kMilliseconds, kSeconds };

// What a sample whose value is not a number does to the read.
enum class NonNumericValues {
  kError,   // stops it, as in Prometheus
  kReport,  // goes to TextVisitor::OnNonNumericSample; the read goes on
};

// What a line that cannot be a sample (a pasted shell prompt, curl's
// verbose lines, an elision, markup) does to the read.
enum class StrayLines {
  kError,  // stops it, as in Prometheus
  kSkip,   // goes to TextVisitor::OnStrayLine; the read goes on
};

struct ParseOptions {
  TimestampUnit timestamps = TimestampUnit::kAuto;
  NonNumericValues non_numeric_values = NonNumericValues::kError;
  StrayLines stray_lines = StrayLines::kError;
};

struct ReadStats {
  std::size_t bytes = 0;
  std::size_t lines = 0;
  std::size_t samples = 0;              // handed to OnSample
  std::size_t non_numeric_samples = 0;  // handed to OnNonNumericSample
  std::size_t stray_lines = 0;          // handed to OnStrayLine
  bool saw_eof_marker = false;          // "# EOF" (OpenMetrics) was present
};

// The length (1 to 4) of the valid UTF-8 character that starts at s[i]
// (i < s.size()), or 0 where the bytes there are not one (a stray
// continuation byte, a sequence cut short, an overlong form, a surrogate).
std::size_t Utf8CharLength(std::string_view s, std::size_t i);

// Reads all of `in`, calling `visitor` for each sample and metadata line.
// `source_name` is used only in error messages (usually the file path).
Result<ReadStats> ReadPrometheusText(std::istream& in, std::string_view source_name, TextVisitor& visitor,
                                     const ParseOptions& options = {});

// The same over a buffer already in memory (used by fuzzing and tests).
Result<ReadStats> ReadPrometheusText(std::string_view text, std::string_view source_name, TextVisitor& visitor,
                                     const ParseOptions& options = {});

}  // namespace ofu::formats
