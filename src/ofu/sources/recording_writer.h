// Writing Snapshots as an OpenMetrics 1.0 recording (`ofu record`).
//
// The file is the one ReadRecording (replay.h) reads and
// `promtool tsdb create-blocks-from openmetrics` imports:
//
//   # TYPE ofu_recording info
//   # HELP ofu_recording What this recording is and how it was made.
//   ofu_recording_info{synthetic="false",description="..."} 1 <ts>
//   # TYPE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE gauge
//   # HELP DCGM_FI_PROF_PIPE_TENSOR_ACTIVE ...
//   DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu="0",UUID="...",...} 0.5 1700000000
//   ...
//   # EOF
//
// Contract
//   * metric names and scales come from DcgmExporterNameFor, the table the
//     reader reads with; a field with no dcgm-exporter name (DMMA) is not
//     written;
//   * labels gpu, UUID, pci_bus_id, device, modelName, Hostname, and
//     GPU_I_PROFILE/GPU_I_ID for a MIG instance; a label with an empty value
//     is left out (the reader ignores empty labels anyway);
//   * values and timestamps (seconds) in the shortest form that reads back
//     to the same double, so a round trip is exact;
//   * every sample has a timestamp, the info line included (promtool
//     rejects a file where one has none);
//   * each family's samples are contiguous, families in CounterField order;
//   * absent values are not written; neither are values the reader would
//     reject (NaN, infinities, negatives, an activity above 1.05), which
//     are counted in skipped_values();
//   * no # UNIT lines: OpenMetrics (and promtool) require the unit to be a
//     suffix of the family name, which dcgm-exporter's names are not.
//
// Buffering: samples are kept in memory as (series, time, value) triples,
// 24 bytes each, and rendered once at the end; an hour of 1 s windows of 8
// GPUs with 16 counters is about 11 MiB.
//
// Thread-safety: a RecordingWriter belongs to one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/sources/source.h"

namespace ofu::sources {

struct RecordingInfo {
  bool synthetic = false;
  std::string description;
  // Timestamp of the info line; when absent, the first snapshot's time
  // (and 0 for a recording with no snapshot at all).
  std::optional<double> time_s;
};

class RecordingWriter {
 public:
  RecordingWriter() = default;

  // Buffers every present value of every GPU of `snapshot`.
  void Add(const Snapshot& snapshot);

  // Writes the whole recording to `out`. May be called more than once.
  void Write(const RecordingInfo& info, std::ostream& out) const;

  // Writes it to `path` through a temporary file in the same directory and
  // a rename, so an interrupted run never leaves half a file behind.
  // Errors: kIo naming the path.
  Status WriteFile(const RecordingInfo& info, const std::string& path) const;

  std::size_t samples() const { return samples_; }  // sample lines, info line excluded
  std::size_t skipped_values() const { return skipped_values_; }
  std::optional<double> first_time_s() const { return first_time_s_; }

 private:
  struct Point {
    std::uint32_t series;  // index into series_labels_
    double time_s;
    double value;
  };

  std::uint32_t SeriesFor(const GpuReading& gpu, std::size_t position);

  std::vector<std::string> series_labels_;                       // rendered "{gpu=\"0\",...}"
  std::unordered_map<std::string, std::uint32_t> series_index_;  // by identity key
  std::vector<std::vector<Point>> families_;                     // indexed by CounterField
  std::size_t samples_ = 0;
  std::size_t skipped_values_ = 0;
  std::optional<double> first_time_s_;
};

}  // namespace ofu::sources
