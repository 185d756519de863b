#include "report_command.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "exit_codes.h"
#include "history_source.h"
#include "spec_db.h"
#include "ofu/analysis/html_report.h"
#include "ofu/analysis/reconcile.h"
#include "ofu/analysis/regress.h"
#include "ofu/analysis/report.h"
#include "ofu/analysis/report_output.h"
#include "ofu/analysis/store_report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/sinks/history_reader.h"
#include "ofu/sinks/history_store.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/replay.h"

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
RFC 3339 or -2h/-7d; Prometheus defaults to the last day).

Examples:
  ofu report --input scrapes.prom
  ofu report --input run.om --format json --window 10
  curl -s localhost:9400/metrics | ofu report --input - --gpu-model h100-sxm5
  ofu report --store /var/lib/ofu/history.sqlite --since -1d
  ofu report --store /var/lib/ofu/history.sqlite --job 4242 --format json
  ofu report --prometheus http://prometheus:9090 --job 4242 --since -7d
  ofu report --store /var/lib/ofu/history.sqlite --since -7d --html week.html

--html OUT.html writes one self-contained page (no network needed to view
it): OFU timelines per job and per GPU, distributions by GPU model, and
room for the OFU-vs-MFU scatter and regression markers. It prints the
file's path instead of the text report. See docs/html-report.md.

A GPU ofu cannot compute OFU for (a model missing from the spec database,
a missing counter, a MIG profile it does not know) is shown without OFU,
with a note saying what to do; every other GPU gets its answer and the
overall line says how many GPUs and GPU-seconds it covers. A sample whose
value is not a number (dcgm-exporter writes "ERROR - FAILED TO CONVERT TO
STRING" for some fields) is skipped or left absent, with one note per
family. --strict makes an unknown model fail the whole report instead
(exit 3), and a value that is not a number too (exit 2).

Exit status: 0 ok (also when some GPUs have no OFU), 1 usage, 2 unreadable
or malformed input, 3 unknown GPU model with --strict, 4 no GPU at all has
an OFU. See docs/cli.md.)";

Result<sources::Recording> LoadRecording(const ReportArgs& args) {
  sources::RecordingOptions options;
  if (args.activity_scale == "ratio") options.activity_scale = sources::ValueScale::kRatio;
  if (args.activity_scale == "percent") options.activity_scale = sources::ValueScale::kPercent;
  if (args.interval_s) options.untimestamped_interval_s = *args.interval_s;
  options.strict_values = args.strict;
  if (args.input == "-") return sources::ReadRecording(std::cin, "<stdin>", options);
  return sources::ReadRecordingFile(args.input, options);
}

int Fail(const Error& error) {
  fmt::print(stderr, "ofu report: {}\n", error.message);
  return ExitCodeFor(error.code);
}

// Progress for people watching a terminal; nothing when stderr is a file.
void Progress(const char* what) {
  if (::isatty(STDERR_FILENO) == 1) fmt::print(stderr, "ofu report: {}\n", what);
}

// --html: the page of `history`, written next to its destination first so a
// reader never sees half a file. The fleet analyses fill the page's markers
// (the regression scan) and scatter (the reconciliation, with --mfu).
// `store` is BuildStoreReport of `history`.
int WriteHtmlReport(const ReportArgs& args, const sinks::StoredHistory& history, const analysis::StoreReport& store,
                    const GpuSpecDatabase& specs, const std::string& source, double now_s, bool synthetic) {
  Progress("building the HTML report");
  analysis::HtmlReportOptions options;
  options.source = source;
  options.synthetic = synthetic;
  options.generated_at_s = now_s;
  options.title = args.title.value_or(args.job ? fmt::format("OFU report: job {}", *args.job) : "OFU report");
  analysis::HtmlReportView view = analysis::BuildHtmlReportView(history, store, options);

  // The analyses that need jobs: a recording has none.
  if (!history.jobs.empty()) {
    Progress("scanning for regressions");
    view.markers = analysis::MarkersOfRegressions(analysis::ScanRegressions(history, store, {}));
    if (args.mfu) {
      auto inputs = ReadMfuInputs(*args.mfu, args.corrections);
      if (!inputs.ok()) return Fail(inputs.error());
      Progress("reconciling OFU with the MFU log");
      view.scatter = analysis::ScatterOfReconciliation(analysis::Reconcile(
          history, store, inputs->log, inputs->corrections, &specs, analysis::ReconcileOptions{}));
    }
  } else if (args.mfu) {
    fmt::print(stderr, "ofu report: {} has no jobs, so --mfu has nothing to reconcile\n", source);
  }
  const std::string html = analysis::RenderHtmlReport(view);

  const std::string temporary = args.html + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << html;
    out.close();
    if (!out) {
      std::remove(temporary.c_str());
      return Fail(Error{ErrorCode::kIo, fmt::format("cannot write {}", args.html)});
    }
  }
  std::error_code renamed;
  std::filesystem::rename(temporary, args.html, renamed);
  if (renamed) {
    std::remove(temporary.c_str());
    return Fail(Error{ErrorCode::kIo, fmt::format("cannot write {}: {}", args.html, renamed.message())});
  }
  fmt::print("{}\n", args.html);
  return kExitOk;
}

// A recording's windows as the rows the agent would have stored from them,
// so that the HTML report has one input. No jobs: a recording does not say
// which job ran.
sinks::StoredHistory HistoryOfRecording(const analysis::Report& report) {
  sinks::StoredHistory history;
  history.path = report.source_name;
  for (const analysis::GpuReport& gpu : report.gpus) {
    sinks::StoredGpu stored;
    stored.id = static_cast<std::int64_t>(history.gpus.size()) + 1;
    stored.uuid = gpu.identity.uuid.empty() ? gpu.identity.key : gpu.identity.uuid;
    stored.gpu_index = gpu.identity.gpu_index;
    stored.model = gpu.model;
    stored.hostname = gpu.identity.hostname;
    if (gpu.spec) {
      stored.sku = gpu.spec->id;
      stored.architecture = gpu.spec->architecture;
    }
    for (const OfuWindow& w : gpu.windowed.windows) {
      sinks::GpuWindow window;
      window.identity = gpu.identity;
      window.sku = stored.sku;
      window.window = w;
      sinks::StoredWindow row = sinks::RowOfWindow(window, w.end_s, w.end_s - w.start_s);
      row.gpu_id = stored.id;
      history.windows.push_back(row);
      stored.last_end_s = w.end_s;
    }
    history.gpus.push_back(std::move(stored));
  }
  return history;
}

// `ofu report --store` and `--prometheus`: the windows are the agent's; only
// the range and the job are chosen here.
int RunHistoryReport(const ReportArgs& args, const GpuSpecDatabase& specs) {
  sources::SystemClock clock;
  const double now = clock.NowS();
  const std::string& where = args.store.empty() ? args.prometheus : args.store;
  Progress(args.store.empty() ? "querying Prometheus" : "reading the store");
  Result<sinks::StoredHistory> history =
      LoadFleetHistory(HistorySourceArgs{args.store, args.prometheus, args.job, args.since, args.until}, now);
  if (!history.ok()) return Fail(history.error());
  const analysis::StoreReport report = analysis::BuildStoreReport(*history, specs);
  if (!args.html.empty()) {
    const int written = WriteHtmlReport(args, *history, report, specs, where, now, /*synthetic=*/false);
    if (written != kExitOk) return written;
  }

  if (!args.html.empty()) {
    // The page is the output; the text report is not printed.
  } else if (args.format == "json") {
    fmt::print("{}", analysis::RenderJson(report));
  } else if (args.format == "csv") {
    fmt::print("{}", analysis::RenderCsv(report));
  } else {
    fmt::print("{}", analysis::RenderTable(report));
  }
  if (history->windows.empty()) {
    fmt::print(stderr, "ofu report: {}: no windows{}{} in the {}\n", where,
               args.job ? fmt::format(" of job {}", *args.job) : "",
               args.since || args.until ? " in that time range" : "", args.store.empty() ? "server" : "store");
    return kExitNoData;
  }
  if (!report.report.overall.ofu) {
    fmt::print(stderr, "ofu report: {}: no stored window has an OFU (see the notes above)\n", where);
    return kExitNoData;
  }
  return kExitOk;
}

}  // namespace

CLI::App* AddReportCommand(CLI::App& app, ReportArgs& args) {
  CLI::App* cmd = app.add_subcommand("report", "OFU per GPU and overall from a recording");
  cmd->description(kReportHelp);
  CLI::Option* input =
      cmd->add_option("--input,-i", args.input, "Recording to read: Prometheus text or OpenMetrics; - for stdin");
  CLI::Option* store = cmd->add_option("--store", args.store, "The agent's history store (SQLite) to read instead");
  CLI::Option* prometheus = cmd->add_option(
      "--prometheus", args.prometheus, "Prometheus (query API) that scrapes the agents, e.g. http://prometheus:9090");
  input->excludes(store)->excludes(prometheus);
  store->excludes(prometheus);
  cmd->add_option("--job", args.job, "With --store or --prometheus: only this job's GPUs and windows");
  cmd->add_option("--since", args.since,
                  "With --store or --prometheus: windows ending after this time (Unix seconds, RFC 3339, or -2h, -7d)");
  cmd->add_option("--until", args.until, "With --store or --prometheus: windows ending at or before this time");
  CLI::Option* html = cmd->add_option(
      "--html", args.html, "Write the visual report (one self-contained HTML file) here instead of printing the text report");
  cmd->add_option("--title", args.title, "With --html: the page's title")->needs(html);
  CLI::Option* mfu = cmd->add_option("--mfu", args.mfu,
                                     "With --html and --store/--prometheus: the MFU log to plot OFU against (see "
                                     "ofu reconcile)")
                         ->needs(html);
  cmd->add_option("--corrections", args.corrections, "With --mfu: per-job corrections (see ofu reconcile)")->needs(mfu);
  cmd->add_option("--format,-f", args.format, "Output: table (for people), json or csv (for programs)")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("--gpu-model", args.gpu_model,
                  "Treat every GPU as this model: a SKU id (h100-sxm5) or a name (\"NVIDIA H100 80GB HBM3\")");
  cmd->add_option("--window", args.window_s, "Window length in seconds (at least 0.1)")
      ->check(CLI::Range(kMinWindowS, 86400.0 * 366))
      ->capture_default_str();
  cmd->add_option("--interval", args.interval_s,
                  "Nominal sampling interval in seconds (default: measured from the data; 30 for files "
                  "without timestamps)")
      ->check(CLI::Range(0.001, kMaxIntervalS));
  cmd->add_option("--activity-scale", args.activity_scale,
                  "Scale of activity values: auto (per metric, 0..1 for DCGM), ratio (0..1) or percent (0..100)")
      ->check(CLI::IsMember({"auto", "ratio", "percent"}))
      ->capture_default_str();
  cmd->add_option("--spec-db", args.spec_db, "GPU spec database to use instead of the built-in data/gpu_specs.json");
  cmd->add_option("--busy-threshold", args.busy_threshold,
                  "A window is busy (counts for active OFU) when engine activity is at least this ratio")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_flag("--strict", args.strict,
                "All or nothing: fail (exit 3) when a GPU's model is not in the spec database, and (exit 2) on a "
                "value that is not a number, instead of reporting the rest with notes");
  return cmd;
}

int RunReport(const ReportArgs& args) {
  const int given = !args.input.empty() + !args.store.empty() + !args.prometheus.empty();
  if (given != 1) {
    fmt::print(stderr, "ofu report: give one of --input FILE (a recording), --store PATH (the agent's history) "
                       "or --prometheus URL\n");
    return kExitUsage;
  }
  if (!args.input.empty() && (args.job || args.since || args.until)) {
    fmt::print(stderr, "ofu report: --job, --since and --until go with --store or --prometheus, not --input\n");
    return kExitUsage;
  }
  auto specs = LoadSpecDatabase(args.spec_db);
  if (!specs.ok()) return Fail(specs.error());
  if (args.input.empty()) return RunHistoryReport(args, *specs);
  if (args.gpu_model) {
    if (auto known = specs->Lookup(*args.gpu_model); !known.ok()) return Fail(known.error());
  }
  auto recording = LoadRecording(args);
  if (!recording.ok()) return Fail(recording.error());

  analysis::ReportOptions options;
  options.windows.window_s = args.window_s;
  options.windows.interval_s = args.interval_s;
  options.windows.busy_threshold = args.busy_threshold;
  options.gpu_model = args.gpu_model;
  options.strict = args.strict;
  auto report = analysis::BuildReport(*recording, *specs, options);
  if (!report.ok()) return Fail(report.error());

  if (!args.html.empty()) {
    sources::SystemClock clock;
    const sinks::StoredHistory history = HistoryOfRecording(*report);
    const int written = WriteHtmlReport(args, history, analysis::BuildStoreReport(history, *specs), *specs,
                                        args.input, clock.NowS(), report->synthetic.value_or(false));
    if (written != kExitOk) return written;
  } else if (args.format == "json") {
    fmt::print("{}", analysis::RenderJson(*report));
  } else if (args.format == "csv") {
    fmt::print("{}", analysis::RenderCsv(*report));
  } else {
    fmt::print("{}", analysis::RenderTable(*report));
  }
  if (report->gpus.empty()) {
    fmt::print(stderr, "ofu report: {}: no GPU counters found (read {} samples, none from dcgm-exporter "
                       "metrics ofu knows)\n", args.input, recording->samples_read);
    return kExitNoData;
  }
  if (!report->overall.ofu) {
    fmt::print(stderr, "ofu report: {}: no GPU has both tensor activity and SM clock with a known model, "
                       "so no OFU could be computed (see the notes above)\n", args.input);
    return kExitNoData;
  }
  return kExitOk;
}

}  // namespace ofu::cli
