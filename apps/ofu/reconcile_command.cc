#include "reconcile_command.h"

#include <fmt/format.h>

#include "exit_codes.h"
#include "spec_db.h"
#include "ofu/analysis/mfu_log.h"
#include "ofu/analysis/prometheus_history.h"
#include "ofu/analysis/reconcile.h"
#include "ofu/analysis/store_report.h"
#include "ofu/sources/clock.h"

namespace ofu::cli {
namespace {

constexpr const char* kReconcileHelp = R"(Reconcile OFU with the MFU applications report, per job.

For each job of the MFU log: OFU (from the agent's store or Prometheus),
corrected OFU (x the tile-quantization factor `ofu correct` found), the MFU
expected from it under the job's reference precision, the reported MFU, the
residual (reported - expected), and a flag with the most likely explanation:
  ok                     within --tolerance (15 %)
  causal_attention_full  reported 1.15-1.7x expected: causal attention counted in full
  wrong_precision_peak   ~2x (or ~0.5x): divided by another precision's peak
  moe_total_params       above 2.3x: MoE counted by total, not active, parameters
  units                  100x and more: GFLOPs printed as TFLOPs
  recomputation          ~0.75x: OFU counts recomputed FLOPs (HFU), MFU does not
  under_counted          below otherwise: FLOPs the application does not count
Then Pearson r, Spearman rho and the mean absolute error over the fleet,
with and without the flagged jobs; --format json adds the scatter points.

MFU log (--mfu): CSV with a header, or JSON lines, fields job_id, mfu (a
ratio), reference_precision (bf16, fp8, ...), and optionally
model_flops_per_token, tokens_per_s, recompute (true/false).
Corrections (--corrections): a directory of <job_id>.json written by
`ofu correct --format json`, or a CSV job_id,factor[,mfu_scale,reference_precision].

Examples:
  ofu reconcile --store /var/lib/ofu/history.sqlite --mfu mfu.csv
  ofu reconcile --prometheus http://prometheus:9090 --since -7d --mfu mfu.jsonl \
      --corrections corrections/ --format json

Exit status: 0 ok (flags are findings, not failures), 1 usage, 2 unreadable
or malformed input, 4 no job has both an OFU and a reported MFU,
5 Prometheus unreachable. See docs/fleet-analysis.md.)";

int Fail(const Error& error) {
  fmt::print(stderr, "ofu reconcile: {}\n", error.message);
  return ExitCodeFor(error.code);
}

}  // namespace

void AddHistorySourceOptions(CLI::App& cmd, HistorySourceArgs& args, bool with_job) {
  CLI::Option* store = cmd.add_option("--store", args.store, "The agent's history store (SQLite) to read");
  CLI::Option* prometheus = cmd.add_option(
      "--prometheus", args.prometheus, "Prometheus (query API) that scrapes the agents, e.g. http://prometheus:9090");
  store->excludes(prometheus);
  if (with_job) cmd.add_option("--job", args.job, "Only this job's GPUs and windows");
  cmd.add_option("--since", args.since,
                 "Windows ending after this time (Unix seconds, RFC 3339, or -2h, -7d); Prometheus default -1d");
  cmd.add_option("--until", args.until, "Windows ending at or before this time; Prometheus default now");
}

Result<sinks::StoredHistory> LoadFleetHistory(const HistorySourceArgs& args) {
  if (args.store.empty() == args.prometheus.empty()) {
    return Error{ErrorCode::kInvalidArgument, "give one of --store PATH (the agent's history) or --prometheus URL"};
  }
  sources::SystemClock clock;
  const double now = clock.NowS();
  sinks::HistoryQuery query;
  query.job_id = args.job;
  for (auto [text, into] : {std::pair{&args.since, &query.since_s}, std::pair{&args.until, &query.until_s}}) {
    if (!*text) continue;
    auto time = analysis::ParseTimeArgument(**text, now);
    if (!time.ok()) return time.error();
    *into = *time;
  }
  if (!args.store.empty()) return sinks::ReadHistory(args.store, query);
  // A Prometheus range must be bounded: the last day unless told.
  if (!query.until_s) query.until_s = now;
  if (!query.since_s) query.since_s = *query.until_s - 86400;
  return analysis::ReadPrometheusHistory(args.prometheus, query);
}

CLI::App* AddReconcileCommand(CLI::App& app, ReconcileArgs& args) {
  CLI::App* cmd = app.add_subcommand("reconcile", "OFU vs the MFU applications report, per job, with explanations");
  cmd->description(kReconcileHelp);
  AddHistorySourceOptions(*cmd, args.history, /*with_job=*/false);
  cmd->add_option("--mfu", args.mfu, "MFU log: CSV or JSON lines (job_id, mfu, reference_precision, ...)")->required();
  cmd->add_option("--corrections", args.corrections,
                  "Per-job corrections: a directory of <job_id>.json from `ofu correct --format json`, or a CSV");
  cmd->add_option("--format,-f", args.format, "Output: table (for people), json or csv (for programs)")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("--tolerance", args.tolerance, "reported/expected within 1 +- this is ok")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--match", args.match, "Relative distance to a characteristic ratio (2x, 0.75x) that matches it")
      ->check(CLI::Range(0.0, 0.5))
      ->capture_default_str();
  cmd->add_option("--spec-db", args.spec_db, "GPU spec database to use instead of the built-in data/gpu_specs.json");
  return cmd;
}

int RunReconcile(const ReconcileArgs& args) {
  auto specs = LoadSpecDatabase(args.spec_db);
  if (!specs.ok()) return Fail(specs.error());
  auto log = analysis::ReadMfuLog(args.mfu);
  if (!log.ok()) return Fail(log.error());
  std::map<std::string, analysis::JobCorrection> corrections;
  if (args.corrections) {
    auto read = analysis::ReadCorrections(*args.corrections);
    if (!read.ok()) return Fail(read.error());
    corrections = std::move(*read);
  }
  auto history = LoadFleetHistory(args.history);
  if (!history.ok()) return Fail(history.error());
  const analysis::StoreReport store = analysis::BuildStoreReport(*history, *specs);
  analysis::ReconcileOptions options;
  options.tolerance = args.tolerance;
  options.match = args.match;
  const analysis::ReconcileReport report =
      analysis::Reconcile(*history, store, *log, corrections, &*specs, options);
  if (args.format == "json") {
    fmt::print("{}", analysis::RenderReconcileJson(report));
  } else if (args.format == "csv") {
    fmt::print("{}", analysis::RenderReconcileCsv(report));
  } else {
    fmt::print("{}", analysis::RenderReconcileTable(report));
  }
  if (report.all.jobs == 0) {
    fmt::print(stderr, "ofu reconcile: no job of {} has an OFU in {} for this range\n", args.mfu, history->path);
    return kExitNoData;
  }
  return kExitOk;
}

}  // namespace ofu::cli
