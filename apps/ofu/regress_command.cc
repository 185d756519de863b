#include "regress_command.h"

#include <fmt/format.h>

#include "format_flag.h"
#include "ofu/analysis/regress.h"
#include "ofu/analysis/store_report.h"
#include "ofu/cli/exit_codes.h"
#include "ofu/cli/spec_db.h"
#include "ofu/render/regress_output.h"
#include "ofu/sources/clock.h"

namespace ofu::cli {
namespace {

constexpr const char* kRegressHelp = R"(Find OFU regressions and precision shifts in the fleet's history.

Three scans over the store (--store) or Prometheus (--prometheus):
  within jobs    change points in each GPU's window OFU while it ran a job;
                 changes on several GPUs of a job within --group seconds are
                 one event: when, how large (e.g. 2.5x lower), on which GPUs
  across runs    change points in the OFU of successive runs of one job name
                 (at least --min-runs runs on each side)
  precision      shifts in the HMMA/IMMA/DFMA shares of tensor time (agents
                 whose source has the per-pipe counters; bf16 <-> fp8 is all
                 HMMA and does not show)
Method: binary segmentation for a change in mean, robust noise scale; a
change needs statistic >= --threshold, --min-windows on each side, and an
effect of at least --min-ratio (OFU) or --min-share-shift (shares).

Examples:
  ofu regress --store /var/lib/ofu/history.sqlite --since -7d
  ofu regress --prometheus http://prometheus:9090 --job 4242 --format json

Exit status: 0 ok, 1 usage, 2 unreadable input, 4 no job windows in the
range, 5 Prometheus unreachable, 6 findings with --fail-on-finding.
See docs/fleet-analysis.md.)";

}  // namespace

void AddRegressFlags(CLI::App& cmd, RegressArgs& args) {
  cmd.description(kRegressHelp);
  AddHistorySourceOptions(cmd, args.history, /*with_job=*/true);
  AddFormatFlag(cmd, args.format,
                {render::OutputFormat::kTable, render::OutputFormat::kJson, render::OutputFormat::kCsv},
                "Output: table (for people), json or csv (for programs)");
  cmd.add_option("--min-windows", args.min_windows, "Windows on each side of a change")
      ->check(CLI::Range(2, 1000000))
      ->capture_default_str();
  cmd.add_option("--threshold", args.threshold, "Change statistic (mean shift in robust noise units x sqrt(n))")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  cmd.add_option("--min-ratio", args.min_ratio, "Smallest OFU change reported, as a ratio (1.25: 25 %)")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  cmd.add_option("--min-share-shift", args.min_share_shift, "Smallest change of a pipe's share of tensor time")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd.add_option("--min-runs", args.min_runs, "Runs of a job name on each side of a change across runs")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd.add_option("--group", args.group_s, "Seconds within which a job's GPUs' changes are one event")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  cmd.add_flag("--fail-on-finding", args.fail_on_finding, "Exit 6 when anything is found (for CI and cron)");
  AddSpecDbFlag(cmd, args.spec_db);
}

Result<int> RunRegress(const RegressArgs& args) {
  OFU_ASSIGN_OR_RETURN(auto specs, LoadSpecDatabase(args.spec_db));
  analysis::RegressOptions options;
  options.ofu.min_segment = args.min_windows;
  options.ofu.threshold = args.threshold;
  options.ofu.min_ratio = args.min_ratio;
  options.shares.min_segment = args.min_windows;
  options.shares.threshold = args.threshold;
  options.shares.min_difference = args.min_share_shift;
  options.min_runs = args.min_runs;
  options.group_s = args.group_s;
  // GPU by GPU as the history is read: a fleet's windows are never all held.
  analysis::RegressScanner scanner(options);
  OFU_ASSIGN_OR_RETURN(const ResolvedSource resolved,
                       ResolveHistorySource(args.history, sources::SystemClock().NowS()));
  OFU_ASSIGN_OR_RETURN(auto fleet, ScanFleetHistory(resolved, specs, [&](const history::StoredHistory& batch) {
                         scanner.Add(batch);
                         return OkStatus();
                       }));
  analysis::RegressReport report = scanner.Finish(fleet.history.path, fleet.report);
  if (fleet.history.step_s > 0) {
    report.notes.push_back(fmt::format(
        "the range has more scrapes than a scan needs: the server read the counters every {:g} s (--step), so the "
        "windows, --min-windows and the change times are in steps of {:g} s; --step 0 reads every scrape",
        fleet.history.step_s, fleet.history.step_s));
  }
  if (args.format == render::OutputFormat::kJson) {
    fmt::print("{}", render::RenderRegressJson(report));
  } else if (args.format == render::OutputFormat::kCsv) {
    fmt::print("{}", render::RenderRegressCsv(report));
  } else {
    fmt::print("{}", render::RenderRegressTable(report));
  }
  if (report.series == 0) return Error::NoData("{}: no job windows in the range", fleet.history.path);
  const bool found = !report.changes.empty() || !report.run_changes.empty() || !report.precision_shifts.empty();
  return found && args.fail_on_finding ? kExitFindings : kExitOk;
}

}  // namespace ofu::cli
