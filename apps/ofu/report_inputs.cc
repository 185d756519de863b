#include "report_inputs.h"

#include <unistd.h>

#include <iostream>

#include <fmt/format.h>

#include "history_source.h"
#include "ofu/analysis/prometheus_recording.h"
#include "ofu/history/history_reader.h"
#include "ofu/sources/clock.h"

namespace ofu::cli {
namespace {

// How a recording is read, from the flags (--activity-scale, --interval, --strict).
sources::RecordingOptions RecordingOptionsOf(const ReportArgs& args) {
  sources::RecordingOptions options;
  if (args.activity_scale == "ratio") options.activity_scale = sources::ValueScale::kRatio;
  if (args.activity_scale == "percent") options.activity_scale = sources::ValueScale::kPercent;
  if (args.interval_s) options.untimestamped_interval_s = *args.interval_s;
  options.strict_values = args.strict;
  return options;
}

}  // namespace

void Progress(const char* what) {
  if (::isatty(STDERR_FILENO) == 1) fmt::print(stderr, "ofu report: {}\n", what);
}

Result<sources::Recording> LoadRecording(const ReportArgs& args) {
  const sources::RecordingOptions options = RecordingOptionsOf(args);
  if (args.input == "-") return sources::ReadRecording(std::cin, "<stdin>", options);
  return sources::ReadRecordingFile(args.input, options);
}

// --prometheus URL --series dcgm-exporter: the range's dcgm-exporter samples as a recording.
Result<sources::Recording> LoadPrometheusRecording(const ReportArgs& args) {
  OFU_ASSIGN_OR_RETURN(const ResolvedSource resolved,
                       ResolveHistorySource(args.history, sources::SystemClock().NowS()));
  history::RawSeriesOptions read;
  read.timeout_s = resolved.source.timeout_s;
  read.progress = resolved.source.progress;
  Progress("querying Prometheus for dcgm-exporter's series");
  if (resolved.source.prometheus.size() != 1) {
    return Error::InvalidArgument("--series dcgm-exporter reads one Prometheus server; give one --prometheus");
  }
  auto recording = analysis::ReadPrometheusRecording(resolved.source.prometheus.front(), *resolved.query.since_s,
                                                     *resolved.query.until_s, RecordingOptionsOf(args), read);
  EndProgress(resolved.source);
  return recording;
}

}  // namespace ofu::cli
