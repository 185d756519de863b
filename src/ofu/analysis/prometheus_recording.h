// dcgm-exporter's series as a Prometheus server keeps them, read back as a
// recording (`ofu report --prometheus URL --series dcgm-exporter`): the
// zero-deploy path, for a fleet whose Prometheus scrapes dcgm-exporter and
// runs no ofu agent. The report is then exactly the one `ofu report --input`
// gives for the same scrapes saved to a file: the same reader
// (sources/replay.h: names, scales, GPU identity, MIG, blanks), the same
// windows, clock model and phases.
//
// It asks the server (history/prometheus_series.h) for every sample in the
// range of every metric name dcgm_exporter_names.h knows, and of a
// recording's own info series (ofu_recording_info, ofu_recording_phase_info)
// where a recording was backfilled into the server, and reads them as the
// text a file of timestamped scrapes would hold. Labels the server adds
// (instance, job) are read like any other label. Lines in the recording's
// notes name that text's line numbers, with the URL as the file.
//
// Memory: every sample in the range is held (as a recording read from a
// file is); for a fleet's week use the agent and its counters instead, or
// narrow the range with --since/--until.
//
// Errors: those of the Prometheus client (prometheus_client.h), and
// ReadRecording's for what the series hold.
// Thread-safety: no shared state.
#pragma once

#include <string>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/history/prometheus_client.h"
#include "ofu/history/prometheus_series.h"
#include "ofu/sources/replay.h"

namespace ofu::analysis {

// The PromQL selector of the series read: every dcgm-exporter metric name
// ofu knows, and the recording info series.
std::string DcgmExporterSelector();

// The series as the text of timestamped scrapes (seconds, OpenMetrics style):
// one line per sample, each name's series together. NaN, +Inf and -Inf are
// written as Prometheus writes them. For ReadRecording; exposed for tests.
std::string ScrapeTextOfSeries(const std::vector<history::PromSeries>& series);

Result<sources::Recording> ReadPrometheusRecording(const std::string& url, double since_s, double until_s,
                                                   const sources::RecordingOptions& recording,
                                                   const history::RawSeriesOptions& read = {});

}  // namespace ofu::analysis
