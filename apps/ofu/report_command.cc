#include "report_command.h"

#include <unistd.h>

#include <iostream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "format_flag.h"
#include "history_source.h"
#include "ofu/analysis/correction.h"
#include "ofu/analysis/fleet_report.h"
#include "ofu/analysis/html_report.h"
#include "ofu/analysis/prometheus_recording.h"
#include "ofu/analysis/recording_history.h"
#include "ofu/analysis/report.h"
#include "ofu/analysis/store_report.h"
#include "ofu/cli/exit_codes.h"
#include "ofu/cli/spec_db.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/formats/text_file.h"
#include "ofu/history/history_reader.h"
#include "ofu/render/html_page.h"
#include "ofu/render/report_text.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/replay.h"
#include "report_html.h"
#include "report_inputs.h"
#include "trace_input.h"
#include "window_flag.h"

namespace ofu::cli {
namespace {

constexpr const char* kReportHelp = R"(Compute OFU per GPU and overall from a recording.

OFU (Overall FLOP Utilization) = tensor activity x SM clock / f_spec, where
f_spec is the clock behind the vendor's quoted dense peak (1830 MHz on H100
SXM5). It is the share of the GPU's peak tensor FLOP rate the GPU delivered.

The input is dcgm-exporter output or an OpenMetrics recording (--input):
many scrapes, with or without timestamps. ofu needs DCGM_FI_PROF_PIPE_TENSOR_ACTIVE
(or DCGM_FI_PROF_TENSOR_UTIL_RATIO) and DCGM_FI_DEV_SM_CLOCK per GPU.
Or it is the history `ofu agent` keeps (--store), or the same counters as a
Prometheus server scraped them from the agents (--prometheus): per GPU,
overall and per job, over a time range (--since, --until: Unix seconds,
RFC 3339 or -2h/-7d; Prometheus defaults to the last day). A Prometheus that
scrapes dcgm-exporter and no ofu agent: --prometheus URL --series
dcgm-exporter reads dcgm-exporter's gauges: from the hourly rollups of
`ofu rules hourly --series dcgm-exporter` where they cover the range
(--resolution auto|hourly) and the raw series for the rest, with jobs from
its labels (--job-labels slurm: hpc_job; kubernetes: namespace/pod), else
every sample as a recording (the answer --input gives for the same scrapes).

Examples:
  ofu report --input scrapes.prom
  ofu report --input run.om --format json --window 10
  curl -s localhost:9400/metrics | ofu report --input - --gpu-model h100-sxm5
  ofu report --store /var/lib/ofu/history.sqlite --since -1d
  ofu report --store /var/lib/ofu/history.sqlite --job 4242 --format json
  ofu report --prometheus http://prometheus:9090 --job 4242 --since -7d
  ofu report --prometheus http://prometheus:9090 --series dcgm-exporter --since -2h
  ofu report --prometheus http://prometheus:9090 --series dcgm-exporter --job-labels slurm --since -30d
  ofu report --store /var/lib/ofu/history.sqlite --since -7d --html week.html

--html OUT.html writes one self-contained page (no network needed to view
it): OFU timelines per job and per GPU, distributions by GPU model, the
work outside the tensor cores (CUDA-core pipes beside OFU, the CUDA-core
advice) where measured, and room for the OFU-vs-MFU scatter and regression
markers. It prints the
file's path instead of the text report. With --trace (a kernel trace of a
job, as `ofu correct --trace` reads it; repeatable) the page also lists the
GEMMs that ran on kernels built for an older GPU architecture or waste
tensor time on tile padding, with advice, and the correction factor. See
docs/html-report.md.

A GPU ofu cannot compute OFU for (a model missing from the spec database,
a missing counter, a MIG profile it does not know) is shown without OFU,
with a note saying what to do; every other GPU gets its answer and the
overall line says how many GPUs and GPU-seconds it covers. A sample whose
value is not a number (dcgm-exporter writes "ERROR - FAILED TO CONVERT TO
STRING" for some fields) is skipped or left absent, with one note per
family. A line that cannot be a sample, as scrapes are pasted (a shell
prompt, curl -v's "*", "<" and ">" lines, a "..." elision, a ``` fence or
<code> tag, prose), is skipped with a note naming its line. --strict makes
an unknown model fail the whole report instead (exit 3), and a value that
is not a number or a line that cannot be a sample too (exit 2).

Exit status: 0 ok (also when some GPUs have no OFU), 1 usage, 2 unreadable
or malformed input, 3 unknown GPU model with --strict, 4 no GPU at all has
an OFU. See docs/cli.md.)";

// `ofu report --store` and `--prometheus`: the windows (or sums) of the
// flags' source as the command resolved it, at `now`.
Result<int> RunHistoryReport(const ReportArgs& args, const GpuSpecDatabase& specs, const GpuSpec* gpu_model,
                             const ResolvedSource& resolved, double now) {
  const HistorySourceArgs& source = args.history;
  Progress(source.store.empty() ? "querying Prometheus" : "reading the store");
  OFU_ASSIGN_OR_RETURN(analysis::FleetReport fleet, LoadFleetReport(resolved, specs, !args.html.empty()));
  const analysis::Report& report = fleet.report;
  if (!args.html.empty()) {
    // The page is the output; the text report is not printed.
    const std::string where = history::SourceName(resolved.source);
    OFU_RETURN_IF_ERROR(WriteHtmlReport(args, fleet.history, report, specs, gpu_model, where, now,
                                        /*synthetic=*/false));
  } else {
    fmt::print("{}", render::ReportText(report, args.format));
  }
  OFU_RETURN_IF_ERROR(analysis::CheckFleetHasOfu(fleet, resolved.source, resolved.query,
                                                 /*range_given=*/source.since || source.until));
  return kExitOk;
}

// A recording's report (--input, or --series dcgm-exporter), read from `source`.
Result<int> RunRecordingReport(const ReportArgs& args, const sources::Recording& recording,
                               const GpuSpecDatabase& specs, const GpuSpec* gpu_model, const std::string& source) {
  analysis::ReportOptions options;
  options.windows.window_s = args.window_s;
  options.windows.interval_s = args.interval_s;
  options.windows.busy_threshold = args.busy_threshold;
  options.gpu_model = gpu_model;
  options.strict = args.strict;
  options.reported_clock = args.clock == "reported";
  OFU_ASSIGN_OR_RETURN(auto report, analysis::BuildReport(recording, specs, options));

  if (!args.html.empty()) {
    // The page draws the recording at its own resolution, one window per sample.
    options.windows.window_s = analysis::OwnResolutionS(report);
    OFU_ASSIGN_OR_RETURN(const analysis::Report fine, analysis::BuildReport(recording, specs, options));
    sources::SystemClock clock;
    OFU_RETURN_IF_ERROR(WriteHtmlReport(args, analysis::HistoryOfRecording(fine), fine, specs, gpu_model, source,
                                        clock.NowS(), fine.synthetic.value_or(false),
                                        analysis::RunPageOfRecording(fine, recording)));
  } else {
    fmt::print("{}", render::ReportText(report, args.format));
  }
  OFU_RETURN_IF_ERROR(analysis::CheckReportHasOfu(report, source, recording.samples_read));
  return kExitOk;
}

}  // namespace

void AddReportFlags(CLI::App& cmd, ReportArgs& args) {
  cmd.description(kReportHelp);
  CLI::Option* input = cmd.add_option("--input,-i", args.input,
                                      "Recording to read: Prometheus text or OpenMetrics; - for stdin");
  // --store or --prometheus instead of --input, with --job, --since, --until.
  const HistorySourceOptions history = AddHistorySourceOptions(cmd, args.history, /*with_job=*/true);
  input->excludes(history.store)->excludes(history.prometheus)->excludes(history.prometheus_file);
  CLI::Option* html =
      cmd.add_option("--html", args.html,
                     "Write the visual report (one self-contained HTML file) here instead of printing the text report");
  cmd.add_option("--title", args.title, "With --html: the page's title")->needs(html);
  cmd.add_option("--max-windows", args.history.max_windows,
                 "With --html and --store: refuse a range of more windows than this (the page's analyses hold "
                 "every window, about 300 bytes each)")
      ->needs(html)
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  CLI::Option* mfu = cmd.add_option("--mfu", args.mfu,
                                    "With --html and --store/--prometheus: the MFU log to plot OFU against (see "
                                    "ofu reconcile)")
                         ->needs(html);
  cmd.add_option("--corrections", args.corrections, "With --mfu: per-job corrections (see ofu reconcile)")->needs(mfu);
  cmd.add_option("--trace,-t", args.trace,
                 "With --html: a kernel trace of the job (as ofu correct --trace; a directory reads every trace in "
                 "it; repeatable): the page adds its GEMM findings")
      ->needs(html)
      ->take_all();
  AddSeriesFlags(cmd, args.history, history);
  AddFormatFlag(cmd, args.format,
                {render::OutputFormat::kTable, render::OutputFormat::kJson, render::OutputFormat::kCsv},
                "Output: table (for people), json or csv (for programs)");
  AddGpuModelFlag(cmd, args.gpu_model, "Treat every GPU as this model");
  AddWindowFlag(cmd, "--window", args.window_s, kMaxReportWindowS, "Window length");
  cmd.add_option("--clock", args.clock,
                 "The SM clock OFU multiplies: model (the clock the SMs ran, from the reported one by the board's "
                 "measured clock model where there is one; docs/metrics.md#the-sm-clock) or reported (the driver's "
                 "reading as it is, as DCGM dashboards use it)")
      ->check(CLI::IsMember({"model", "reported"}))
      ->capture_default_str();
  cmd.add_option("--interval", args.interval_s,
                 "Nominal sampling interval in seconds (default: measured from the data; 30 for files "
                 "without timestamps)")
      ->check(CLI::Range(0.001, kMaxIntervalS));
  cmd.add_option("--activity-scale", args.activity_scale,
                 "Scale of activity values: auto (per metric, 0..1 for DCGM), ratio (0..1) or percent (0..100)")
      ->check(CLI::IsMember({"auto", "ratio", "percent"}))
      ->capture_default_str();
  AddSpecDbFlag(cmd, args.spec_db);
  cmd.add_option("--busy-threshold", args.busy_threshold,
                 "A window is busy (counts for active OFU) when engine activity is at least this ratio")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd.add_flag("--strict", args.strict,
               "All or nothing: fail (exit 3) when a GPU's model is not in the spec database, and (exit 2) on a "
               "value that is not a number or a line that cannot be a sample (a pasted prompt, curl -v line, "
               "elision or markup), instead of reporting the rest with notes");
}

Result<int> RunReport(const ReportArgs& args) {
  const HistorySourceArgs& history = args.history;
  const bool prometheus = !history.prometheus.empty() || !history.prometheus_file.empty();
  const int given = !args.input.empty() + !history.store.empty() + prometheus;
  if (given != 1) {
    return Error::InvalidArgument(
        "give one of --input FILE (a recording), --store PATH (the agent's history) or --prometheus URL");
  }
  if (!args.input.empty() && (history.job || history.since || history.until)) {
    return Error::InvalidArgument("--job, --since and --until go with --store or --prometheus, not --input");
  }
  const bool dcgm_series = history.series == "dcgm-exporter";
  if (dcgm_series && !prometheus) {
    return Error::InvalidArgument("--series dcgm-exporter goes with --prometheus URL");
  }
  if (args.input.empty() && !dcgm_series && args.clock != "model") {
    return Error::InvalidArgument(
        "--clock reported goes with --input or --series dcgm-exporter: the store and the agent's counters hold "
        "the OFU the agent computed");
  }
  OFU_ASSIGN_OR_RETURN(auto specs, LoadSpecDatabase(args.spec_db));
  // The one lookup of --gpu-model: an unknown model fails before any reading.
  OFU_ASSIGN_OR_RETURN(const GpuSpec* const gpu_model, ResolveGpuModel(specs, args.gpu_model));
  if (args.input.empty()) {
    // The flags' source, resolved once for the command.
    const double now = sources::SystemClock().NowS();
    OFU_ASSIGN_OR_RETURN(const ResolvedSource resolved, ResolveHistorySource(history, now));
    // dcgm-exporter's series: their sums (rollups, jobs), or every sample as a
    // recording (history/dcgm_hourly.h).
    bool sums = true;
    if (dcgm_series) {
      OFU_ASSIGN_OR_RETURN(sums, ReadsDcgmSums(args, resolved));
    }
    if (sums) return RunHistoryReport(args, specs, gpu_model, resolved, now);
    OFU_ASSIGN_OR_RETURN(auto recording, LoadPrometheusRecording(args, resolved));
    return RunRecordingReport(args, recording, specs, gpu_model, recording.source_name);
  }
  OFU_ASSIGN_OR_RETURN(auto recording, LoadRecording(args));
  return RunRecordingReport(args, recording, specs, gpu_model, args.input);
}

}  // namespace ofu::cli
