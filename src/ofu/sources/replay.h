// Replay of a recorded file: dcgm-exporter scrapes (Prometheus text 0.0.4)
// or an OpenMetrics recording, turned into per-GPU CounterSample streams.
//
// What it understands
//   * the dcgm-exporter metrics of dcgm_exporter_names.h, legacy and DCGM 4.6
//     spellings; other metrics are counted and skipped;
//   * GPU identity from the labels UUID or uuid (else Hostname/hostname plus
//     gpu), MIG instances from GPU_I_ID/GPU_I_PROFILE; a MIG instance with no
//     clock readings of its own takes its parent GPU's (clocks are per chip);
//   * samples with timestamps, or a file of scrapes without any: then a new
//     scrape starts whenever a series repeats, and scrapes are taken to be
//     RecordingOptions::untimestamped_interval_s apart (Recording says so);
//   * activity scale: per metric (see dcgm_exporter_names.h), overridden by an
//     OpenMetrics "# UNIT family ratio|percent" line or by the caller. A value
//     outside the scale's range is an error naming the line, not a guess;
//   * DCGM blank sentinels and NaN mean "no value" and become absent;
//   * an info series ofu_recording_info{synthetic="true|false",
//     description="..."} 1 that says what the recording is.
//
// Errors: malformed text, a sample without GPU identity, an out-of-range
// value, a series given twice at one instant, or timestamps on some samples
// but not others: kMalformedInput with "<source>:<line>: ...".
//
// Thread-safety: ReadRecording uses no shared state.
#pragma once

#include <cstddef>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/core/sample.h"
#include "ofu/formats/prometheus_text.h"
#include "ofu/sources/dcgm_exporter_names.h"

namespace ofu::sources {

struct RecordingOptions {
  std::optional<ValueScale> activity_scale;  // overrides the per-metric scale of activity fields
  double untimestamped_interval_s = 30;      // dcgm-exporter's default scrape interval
  formats::ParseOptions parse;
};

struct GpuRecording {
  GpuIdentity identity;
  std::vector<CounterSample> samples;  // sorted by time, one per instant
};

struct Recording {
  std::string source_name;
  std::vector<GpuRecording> gpus;  // in order of first appearance
  bool timestamps_assumed = false; // the file had none; see untimestamped_interval_s
  double assumed_interval_s = 0;
  std::optional<bool> synthetic;   // from ofu_recording_info; absent when not stated
  std::string description;         // from ofu_recording_info
  std::size_t lines = 0;
  std::size_t samples_read = 0;    // every sample line
  std::size_t samples_used = 0;    // lines that carried a counter ofu uses
  std::size_t blank_values = 0;    // DCGM blanks and NaN, kept absent
};

Result<Recording> ReadRecording(std::istream& in, std::string_view source_name,
                                const RecordingOptions& options = {});

// The same for the file at `path`; kIo "<path>: cannot open: <why>" when it
// cannot be opened.
Result<Recording> ReadRecordingFile(const std::string& path, const RecordingOptions& options = {});

}  // namespace ofu::sources
