// What `ofu report` reads a recording from: a file or standard input
// (--input), or dcgm-exporter's series in Prometheus over a range
// (--prometheus URL --series dcgm-exporter); and the progress lines a long
// read prints.
#pragma once

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"
#include "ofu/sources/replay.h"

#include "history_source.h"
#include "report_command.h"

namespace ofu::cli {

// One line on stderr saying what a long report is doing, on a terminal only.
void Progress(const char* what);

// --input FILE or - (stdin), read with the flags' options (--activity-scale,
// --interval, --strict).
Result<sources::Recording> LoadRecording(const ReportArgs& args);

// --series dcgm-exporter: whether the server's sums answer (history/
// dcgm_hourly.h: jobs asked for, --resolution hourly, or auto with rollups
// in the range) rather than every sample read as a recording (--html,
// --clock reported, --resolution raw without jobs, auto without rollups).
// `resolved` is the command's one resolution of args.history.
Result<bool> ReadsDcgmSums(const ReportArgs& args, const ResolvedSource& resolved);

// --prometheus URL --series dcgm-exporter: the range's samples as a recording.
Result<sources::Recording> LoadPrometheusRecording(const ReportArgs& args, const ResolvedSource& resolved);

}  // namespace ofu::cli
