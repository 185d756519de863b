#include "reconcile_command.h"

#include <fmt/format.h>

#include "format_flag.h"
#include "ofu/analysis/mfu_inputs.h"
#include "ofu/analysis/reconcile.h"
#include "ofu/analysis/store_report.h"
#include "ofu/cli/exit_codes.h"
#include "ofu/cli/spec_db.h"
#include "ofu/formats/mfu_log.h"
#include "ofu/render/reconcile_output.h"
#include "ofu/sources/clock.h"

namespace ofu::cli {
namespace {

constexpr const char* kReconcileHelp = R"(Reconcile OFU with the MFU applications report, per job.

For each job of the MFU log: OFU (from the agent's store or Prometheus,
or dcgm-exporter's series with jobs from its labels: --series dcgm-exporter
--job-labels slurm|kubernetes),
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
model_flops_per_token, tokens_per_s, recompute (true/false), peak_flops
(FLOP/s per GPU the MFU divides by, when not the GPU's own peak).
Training logs (--training-log JOB=PATH, repeatable): a job's own log as
torchtitan, nanoGPT, nanochat, llm.c, prime-rl or modula print it; the job's
MFU is the median over its steps. nanoGPT divides by the A100's peak on any
GPU (older nanochat by the H100's): such an MFU is rescaled to the job's GPU.
Megatron-LM, MaxText and nanotron print TFLOP/s per GPU: it is divided by
the peak of the job's GPU (from the OFU data) in --reference-precision
(default bf16), both named in the job's notes. MFU values above 100 % or
below 0 are left out with a note; a log that cannot be used is noted, its
job left out and the others reconciled (exit 2).
Corrections (--corrections): a directory of <job_id>.json written by
`ofu correct --format json`, or a CSV job_id,factor[,mfu_scale,reference_precision].

Examples:
  ofu reconcile --store /var/lib/ofu/history.sqlite --mfu mfu.csv
  ofu reconcile --store history.sqlite --training-log 4242=slurm-4242.out
  ofu reconcile --prometheus http://prometheus:9090 --since -7d --mfu mfu.jsonl \
      --corrections corrections/ --format json
  ofu reconcile --prometheus http://prometheus:9090 --series dcgm-exporter \
      --job-labels slurm --since -7d --mfu mfu.csv

Exit status: 0 ok (flags are findings, not failures), 1 usage, 2 unreadable
or malformed input (a refused training log: after the report of the other
jobs), 4 no job has both an OFU and a reported MFU, 5 Prometheus
unreachable. See docs/fleet-analysis.md.)";

}  // namespace

void AddReconcileFlags(CLI::App& cmd, ReconcileArgs& args) {
  cmd.description(kReconcileHelp);
  const HistorySourceOptions history = AddHistorySourceOptions(cmd, args.history, /*with_job=*/false);
  AddSeriesFlags(cmd, args.history, history);
  cmd.add_option("--mfu", args.mfu, "MFU log: CSV or JSON lines (job_id, mfu, reference_precision, ...)");
  cmd.add_option("--training-log", args.training_logs,
                 "JOB=PATH: the job's training log (torchtitan, nanoGPT, nanochat, llm.c, prime-rl, modula, "
                 "Megatron-LM, MaxText, nanotron); repeatable")
      ->take_all();
  cmd.add_option("--reference-precision", args.reference_precision,
                 "Precision whose peak divides a training log's TFLOP/s per GPU (Megatron-LM, MaxText, nanotron)")
      ->check(CLI::IsMember({"fp16", "bf16", "tf32", "fp8", "fp4", "int8"}))
      ->capture_default_str();
  cmd.add_option("--corrections", args.corrections,
                 "Per-job corrections: a directory of <job_id>.json from `ofu correct --format json`, or a CSV");
  AddFormatFlag(cmd, args.format,
                {render::OutputFormat::kTable, render::OutputFormat::kJson, render::OutputFormat::kCsv},
                "Output: table (for people), json or csv (for programs)");
  cmd.add_option("--tolerance", args.tolerance, "reported/expected within 1 +- this is ok")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd.add_option("--match", args.match, "Relative distance to a characteristic ratio (2x, 0.75x) that matches it")
      ->check(CLI::Range(0.0, 0.5))
      ->capture_default_str();
  AddSpecDbFlag(cmd, args.spec_db);
}

Result<int> RunReconcile(const ReconcileArgs& args) {
  OFU_ASSIGN_OR_RETURN(auto specs, LoadSpecDatabase(args.spec_db));
  if (!args.mfu && args.training_logs.empty()) {
    return Error::InvalidArgument("give the reported MFU: --mfu LOG, or --training-log JOB=PATH (or both)");
  }
  if (args.history.series == "dcgm-exporter" && args.history.job_labels == "none") {
    return Error::InvalidArgument(
        "reconcile compares jobs: --series dcgm-exporter needs --job-labels slurm or kubernetes, the labels "
        "that name them");
  }
  OFU_ASSIGN_OR_RETURN(auto inputs, analysis::ReadMfuInputs(args.mfu, args.training_logs, args.corrections,
                                                            *PrecisionFromName(args.reference_precision)));
  OFU_ASSIGN_OR_RETURN(const ResolvedSource resolved,
                       ResolveHistorySource(args.history, sources::SystemClock().NowS()));
  OFU_ASSIGN_OR_RETURN(auto fleet, LoadFleetReport(resolved, specs, /*windows_needed=*/false));
  const history::StoredHistory& history = fleet.history;
  const analysis::Report& store = fleet.report;
  analysis::ReconcileOptions options;
  options.tolerance = args.tolerance;
  options.match = args.match;
  analysis::ReconcileReport report = analysis::Reconcile(history, store, inputs.log, inputs.corrections, &specs,
                                                         options);
  for (const Error& refused : inputs.refused_logs) {
    report.notes.push_back(fmt::format("refused, its job left out: {}", refused.message));
  }
  if (args.format == render::OutputFormat::kJson) {
    fmt::print("{}", render::RenderReconcileJson(report));
  } else if (args.format == render::OutputFormat::kCsv) {
    fmt::print("{}", render::RenderReconcileCsv(report));
  } else {
    fmt::print("{}", render::RenderReconcileTable(report));
  }
  if (report.all.jobs == 0) {
    return Error::NoData("no job of {} has an OFU in {} for this range", inputs.log.path, history.path);
  }
  // The other jobs are answered above; the refused log is still a
  // malformed input (exit 2), named on standard error.
  if (!inputs.refused_logs.empty()) return inputs.refused_logs.front();
  return kExitOk;
}

}  // namespace ofu::cli
