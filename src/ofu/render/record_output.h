// What `ofu record` shows when it has written its file: one line for people
// (on stderr, so that stdout stays free) or a JSON object (on stdout).
//
// Thread-safety: pure functions over values.
#pragma once

#include <cstddef>
#include <string>

namespace ofu::render {

struct RecordSummary {
  std::string out;     // the file written
  std::string source;  // Source::Describe()
  std::size_t windows = 0;
  std::size_t gpus = 0;            // the most any window had
  double seconds = 0;              // sum of the windows' lengths
  double duration_s = 0;           // what --duration asked for
  std::size_t samples = 0;         // sample lines written
  std::size_t skipped_values = 0;  // invalid values left out
  bool synthetic = false;
  bool interrupted = false;   // stopped by a signal
  bool source_ended = false;  // the source had no more windows
};

// "ofu record: wrote FILE: N windows of G GPUs, S s, K samples", then what
// was left out, SYNTHETIC, and why it stopped short; ends in a newline.
std::string FormatRecordSummaryLine(const RecordSummary& s);

// {"out", "source", "windows", "gpus", "seconds", "duration", "samples",
// "skipped_values", "synthetic", "interrupted", "source_ended"}, indented.
std::string FormatRecordSummaryJson(const RecordSummary& s);

}  // namespace ofu::render
