#include "report_inputs.h"

#include <unistd.h>

#include <iostream>

#include <fmt/format.h>

#include "history_source.h"
#include "ofu/analysis/prometheus_recording.h"
#include "ofu/history/dcgm_hourly.h"
#include "ofu/history/history_reader.h"

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

Result<bool> ReadsDcgmSums(const ReportArgs& args, const ResolvedSource& resolved) {
  const HistorySourceArgs& history = args.history;
  const bool jobs = history.job_labels != "none";
  if (!jobs && history.job) {
    return Error::InvalidArgument(
        "--job with --series dcgm-exporter needs --job-labels slurm or kubernetes: which of dcgm-exporter's "
        "labels name the job");
  }
  const bool every_sample = !args.html.empty() || args.clock != "model";
  if (every_sample && (jobs || history.resolution == "hourly")) {
    return Error::InvalidArgument(
        "--html and --clock reported read every sample of dcgm-exporter's series: no --job-labels, no "
        "--resolution hourly");
  }
  if (every_sample || (!jobs && history.resolution == "raw")) return false;
  if (jobs || history.resolution == "hourly") return true;
  // Several servers are added as sums (the every-sample path reads one).
  if (resolved.source.prometheus.size() > 1) return true;
  return history::DcgmRollupsIn(resolved.source.prometheus.front(), *resolved.query.since_s, *resolved.query.until_s,
                                resolved.source.timeout_s);
}

// --prometheus URL --series dcgm-exporter: the range's dcgm-exporter samples as a recording.
Result<sources::Recording> LoadPrometheusRecording(const ReportArgs& args, const ResolvedSource& resolved) {
  history::RawSeriesOptions read;
  read.timeout_s = resolved.source.timeout_s;
  read.progress = resolved.source.progress;
  Progress("querying Prometheus for dcgm-exporter's series");
  if (resolved.source.prometheus.size() != 1) {
    return Error::InvalidArgument(
        "--series dcgm-exporter reads every sample from one Prometheus server (--html, --clock reported, "
        "--resolution raw without --job-labels); give one --prometheus, or read the servers' sums");
  }
  auto recording = analysis::ReadPrometheusRecording(resolved.source.prometheus.front(), *resolved.query.since_s,
                                                     *resolved.query.until_s, RecordingOptionsOf(args), read);
  EndProgress(resolved.source);
  return recording;
}

}  // namespace ofu::cli
