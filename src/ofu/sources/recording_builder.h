// The assembly of a Recording (replay.h) from what a format's reader finds
// (replay.cc reads Prometheus text and query answers, dcgmi dmon and the
// other counter tables): the GPUs and their identities, each reading in
// ofu's units, the first error, the notes for people, and at the end one
// CounterSample per GPU and instant.
//
// A reader hands over readings as it meets them, in any order; Finish sorts
// them. It fills in itself what only it knows (Recording's counts, the
// recording's own info series, how the times were found) through
// recording(); Finish fills in the rest.
//
// Errors: the first Fail (or a value its counter cannot hold, or two values
// of one counter of one GPU at one instant) is the one Finish returns:
// kMalformedInput "<source>:<line>: ...". A reader adds nothing after one
// (failed()).
//
// Thread-safety: none; a builder is one read's.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/core/sample.h"
#include "ofu/formats/nvidia_smi.h"
#include "ofu/formats/prometheus_text.h"
#include "ofu/sources/dcgm_exporter_names.h"
#include "ofu/sources/replay.h"

namespace ofu::sources {

// A value's text as a note shows it: printable ASCII and valid UTF-8
// characters as they are, control bytes and bytes that are not UTF-8 as
// \xNN, cut after 64 bytes (never inside a character) with "..." after, so
// a note stays one readable line whatever the input held.
std::string ForNote(std::string_view text);

class RecordingBuilder {
 public:
  // `options` is copied; the counter table it names (else the built-in one)
  // must outlive the builder.
  RecordingBuilder(std::string_view source_name, const RecordingOptions& options);

  RecordingBuilder(const RecordingBuilder&) = delete;
  RecordingBuilder& operator=(const RecordingBuilder&) = delete;

  const std::string& source_name() const { return source_name_; }
  const RecordingOptions& options() const { return options_; }
  const CounterFieldTable& fields() const { return fields_; }

  // The recording being built, for the reader to fill in what it knows:
  // samples_read, blank_values and non_numeric_values as it meets them;
  // synthetic, description and phases from the recording's own info series;
  // timestamps_assumed, assumed_interval_s, scrapes and dcgmi_dmon before
  // Finish. The rest is the builder's.
  Recording& recording() { return recording_; }

  // An error naming `line` of the source, unless one came first.
  void Fail(std::size_t line, std::string_view what);
  bool failed() const { return error_.has_value(); }

  // The activity values of the metric `family` are in `scale` (an OpenMetrics
  // UNIT line, a table's percent column): over the metric's own scale, under
  // RecordingOptions::activity_scale.
  void SetUnitScale(std::string_view family, ValueScale scale);

  // `value` of the metric `name` in ofu's units (activities as 0..1); absent,
  // after a Fail naming `line`, for a value the counter cannot hold.
  std::optional<double> Scaled(std::string_view name, double value, std::size_t line, const KnownMetric& metric);

  // The GPU (or MIG instance) `identity.key`, added with that identity the
  // first time: its index, in order of first appearance. A MIG instance names
  // its whole GPU's key in `parent_key`, else it is empty.
  std::size_t GpuAt(GpuIdentity identity, std::string parent_key);
  // Its identity, for the reader to complete from labels that come later.
  GpuIdentity& identity(std::size_t gpu) { return gpus_[gpu].identity; }
  bool HasGpu(const std::string& key) const { return index_.contains(key); }
  std::size_t gpu_count() const { return gpus_.size(); }

  // A reading of `field` of the GPU `gpu` at `time_s`, in ofu's units (see
  // Scaled), from `line`: counted in samples_used.
  void AddReading(std::size_t gpu, double time_s, CounterField field, double value, std::size_t line);

  // Notes for people (Recording::notes), kept by kind and listed in this
  // order: how the text was read (AddFormatNote), the lines that cannot be a
  // sample (SkipStrayLine), the values skipped (AddValueNote), where GPU
  // models came from (NameModel, ApplyModelMentions), the GPUs that have no
  // counter ofu uses (AddGpuNote).
  void AddFormatNote(std::string note) { format_notes_.push_back(std::move(note)); }
  void AddValueNote(std::string note) { value_notes_.push_back(std::move(note)); }
  void AddGpuNote(std::string note) { gpu_notes_.push_back(std::move(note)); }

  // A line that cannot be a sample: counted in stray_lines and named in a
  // note (the first kMaxStrayLineNotes; one note counts the rest), never read.
  void SkipStrayLine(const formats::StrayLine& line);

  // The model of the GPU `key`, named on `line` of the text (by `where`),
  // where its labels named none. One note per model.
  void NameModel(const std::string& key, const std::string& model, std::size_t line, std::string_view where);

  // A model the text names anywhere (formats/nvidia_smi.h), for the GPUs
  // whose data named none: when the text names exactly one, else a note.
  void ApplyModelMentions(const std::vector<formats::GpuModelMention>& mentions);

  // The recording of a source of `lines` lines: the first error, or the notes
  // in order and each GPU's samples, sorted by time, one per instant. A MIG
  // instance without clock, power or clock-reason readings of its own takes
  // its parent's (they are the chip's). Call once.
  Result<Recording> Finish(std::size_t lines);

 private:
  // One value of one counter of one GPU, before samples are assembled.
  struct Point {
    double time_s;
    CounterField field;
    double value;
    std::size_t line;
  };

  struct GpuPoints {
    GpuIdentity identity;
    std::string parent_key;  // the whole GPU, for a MIG instance; else empty
    std::vector<Point> points;
  };

  void LendParentReadings();
  Result<std::vector<CounterSample>> Assemble(std::vector<Point>& points) const;

  std::string source_name_;
  RecordingOptions options_;
  const CounterFieldTable& fields_;
  Recording recording_;
  std::optional<Error> error_;
  std::vector<GpuPoints> gpus_;                         // in order of first appearance
  std::unordered_map<std::string, std::size_t> index_;  // key -> gpus_
  std::unordered_map<std::string, ValueScale> unit_scale_;
  std::vector<std::string> format_notes_;
  std::vector<std::string> stray_notes_;  // the first kMaxStrayLineNotes, in line order
  std::size_t more_stray_lines_ = 0;      // past those
  std::size_t more_stray_first_line_ = 0;
  std::vector<std::string> value_notes_;
  std::vector<std::string> model_notes_;
  std::vector<std::string> gpu_notes_;
};

}  // namespace ofu::sources
