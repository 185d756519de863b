// `ofu report`: OFU per GPU and overall from a recording (--input), or from
// the agent's history: its store (--store) or Prometheus (--prometheus), with
// --job, --since, --until. --html OUT.html writes the visual report
// (analysis/html_report.h) instead of the text one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "history_source.h"
#include "ofu/core/result.h"
#include "ofu/render/output_format.h"

namespace ofu::cli {

struct ReportArgs {
  std::string input;
  render::OutputFormat format = render::OutputFormat::kTable;  // --format; AddFormatFlag sets the default
  std::optional<std::string> gpu_model;
  double window_s = 60;
  std::string clock = "model";  // --clock: model or reported (analysis::ReportOptions::reported_clock)
  std::optional<double> interval_s;
  std::string activity_scale = "auto";
  std::optional<std::string> spec_db;
  double busy_threshold = 0.01;
  // --strict: a GPU model missing from the spec database fails the report
  // (exit 3) instead of leaving that GPU without OFU, and a value that is
  // not a number fails the read (exit 2) instead of being skipped.
  bool strict = false;
  // --store: the agent's history instead of a recording; --prometheus: the
  // same history from a Prometheus server that scrapes the agents; with
  // --job, --since and --until.
  HistorySourceArgs history;
  // --series and --job-labels with --prometheus are history.series and
  // history.job_labels (AddSeriesFlags, report_inputs.h).
  // --html: the self-contained visual report, written to this path.
  std::string html;
  std::optional<std::string> title;  // of the HTML report
  // With --html: the MFU log to reconcile OFU with (the scatter), and the
  // per-job corrections (ofu reconcile's --mfu and --corrections).
  std::optional<std::string> mfu;
  std::optional<std::string> corrections;
  // With --html: kernel traces of a job (files or directories of per-rank
  // traces, read as one job as `ofu correct --trace` does); the page then
  // shows `ofu correct`'s GEMM findings. Empty: no such section.
  std::vector<std::string> trace;
};

// Adds the command's flags to `cmd`; results land in `args` (command.h).
void AddReportFlags(CLI::App& cmd, ReportArgs& args);

// Runs it: the exit status (exit_codes.h), or the error that stopped it.
Result<int> RunReport(const ReportArgs& args);

}  // namespace ofu::cli
