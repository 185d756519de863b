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
//   * a sample whose value is not a number (dcgm-exporter writes
//     "ERROR - FAILED TO CONVERT TO STRING" for fields it cannot format, and
//     string fields as text): in a family ofu does not use it is skipped; in
//     one it uses, that GPU's reading of that counter at that instant is
//     absent (never 0). Either way Recording::notes gets one note per family
//     naming the first such line and how many there were. The sample still
//     needs a GPU identity and still counts toward telling scrapes apart in
//     a file without timestamps;
//   * lines that cannot be a sample, as people paste scrapes (a shell prompt,
//     curl's verbose and progress lines, a "..." elision, markup, prose:
//     formats::StrayLines): skipped, each with a note naming its line and
//     what it looked like (the first kMaxStrayLineNotes; the rest in one
//     note that counts them). The samples around them are read;
//   * unknown families, repeated or changing HELP/TYPE lines: skipped;
//   * an info series ofu_recording_info{synthetic="true|false",
//     description="..."} 1 that says what the recording is (other labels on
//     it, such as gpu_name or driver, are for people and are not read);
//   * info series ofu_recording_phase_info{phase="...",start="<epoch s>",
//     end="<epoch s>"[,mfu="<0..>"][,kind=...][,precision=...]
//     [,peak_tflops=...]} 1: labelled intervals of the recording, each with
//     its true MFU when the workload measured it (docs/formats.md, "Phases").
//     A phase without a name, with a start or end that is not a number, with
//     end <= start, or with an mfu or peak_tflops that is not a finite
//     number >= 0 is an error naming the line.
//
// Errors: malformed text (whatever RecordingOptions::parse says, non-numeric
// values and stray lines are always read as above unless strict_values), a
// sample without GPU identity, a number
// outside what its counter can hold, a series given twice at one instant, or
// timestamps on some samples but not others: kMalformedInput with
// "<source>:<line>: ...".
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

// The sample names of the recording's own info series (above).
inline constexpr std::string_view kRecordingInfoName = "ofu_recording_info";
inline constexpr std::string_view kRecordingPhaseName = "ofu_recording_phase_info";

struct RecordingOptions {
  std::optional<ValueScale> activity_scale;  // overrides the per-metric scale of activity fields
  double untimestamped_interval_s = 30;      // dcgm-exporter's default scrape interval
  formats::ParseOptions parse;               // its non_numeric_values and stray_lines are not used: see above
  // Refuse a value that is not a number, in any family, and a line that
  // cannot be a sample, as Prometheus does (`ofu report --strict`):
  // kMalformedInput naming file and line.
  bool strict_values = false;
  // The counters to read: the built-in table when null. A table with added
  // rows (core/sample.h) also reads their metrics into CounterSample::added;
  // it must outlive the read.
  const CounterFieldTable* fields = nullptr;
};

// Stray lines named one by one in Recording::notes; past these, one note
// counts the rest.
inline constexpr std::size_t kMaxStrayLineNotes = 8;

// One labelled interval of a recording (an ofu_recording_phase_info sample),
// in the order of the file. Times in epoch seconds, the samples' clock.
struct RecordedPhase {
  std::string name;
  std::string kind;       // e.g. gemm, copy, idle; empty when not stated
  std::string precision;  // the precision its MFU is measured in; empty when not stated
  double start_s = 0;
  double end_s = 0;                   // > start_s
  std::optional<double> mfu;          // 0..1 ratio; absent when the recording does not know it
  std::optional<double> peak_tflops;  // the peak that mfu is measured against; absent when not stated
  std::size_t line = 0;
};

struct GpuRecording {
  GpuIdentity identity;
  std::vector<CounterSample> samples;  // sorted by time, one per instant
};

struct Recording {
  std::string source_name;
  std::vector<GpuRecording> gpus;   // in order of first appearance
  bool timestamps_assumed = false;  // the file had none; see untimestamped_interval_s
  double assumed_interval_s = 0;
  bool dcgmi_dmon = false;            // the file was a `dcgmi dmon` table, read as described in formats/dcgmi_dmon.h
  std::optional<bool> synthetic;      // from ofu_recording_info; absent when not stated
  std::string description;            // from ofu_recording_info
  std::vector<RecordedPhase> phases;  // from ofu_recording_phase_info; empty when none
  // The rows added to the counter table the read was given, whose values
  // the samples may carry (CounterSample::added); empty for the built-in one.
  std::vector<CounterFieldInfo> added_fields;
  std::size_t lines = 0;
  std::size_t samples_read = 0;        // every sample line
  std::size_t samples_used = 0;        // lines that carried a counter ofu uses
  std::size_t blank_values = 0;        // DCGM blanks and NaN, kept absent
  std::size_t non_numeric_values = 0;  // samples whose value is not a number, skipped
  std::size_t stray_lines = 0;         // lines that cannot be a sample, skipped
  // In a file without timestamps, how many scrapes it holds (a new one
  // starts where a series repeats); 0 in a file with timestamps.
  std::size_t scrapes = 0;
  // For people, in order of first line; each names the source and a line:
  // "dcgm.prom:210: DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION: value 'ERROR -
  // FAILED TO CONVERT TO STRING' is not a number; 10 such samples skipped
  // (family not used by ofu)", "README.md:2: skipped a line that cannot be a
  // sample: '$ curl localhost:9400/metrics'". Stray lines come first.
  std::vector<std::string> notes;
};

Result<Recording> ReadRecording(std::istream& in, std::string_view source_name, const RecordingOptions& options = {});

// The same for the file at `path`; kIo "<path>: cannot open: <why>" when it
// cannot be opened.
Result<Recording> ReadRecordingFile(const std::string& path, const RecordingOptions& options = {});

}  // namespace ofu::sources
