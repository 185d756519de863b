// ofu: Overall FLOP Utilization of GPUs, from one node to a fleet.
//
// One subcommand per file; this file only wires them up and maps errors to
// exit statuses (exit_codes.h).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "agent_command.h"
#include "correct_command.h"
#include "exit_codes.h"
#include "kernels_command.h"
#include "reconcile_command.h"
#include "record_command.h"
#include "regress_command.h"
#include "report_command.h"
#include "top_command.h"
#include "sources_command.h"
#include "ofu/core/version.h"

namespace {

constexpr const char* kAbout = R"(ofu -- how much of your GPUs' tensor-core capacity does useful work.

OFU (Overall FLOP Utilization) = tensor pipe activity x SM clock / f_spec,
per GPU, per job and per fleet, with no change to the training code.

Commands:
  report   OFU per GPU and overall from a recording (dcgm-exporter scrapes,
           OpenMetrics). Try: ofu report --input FILE
  record   counters from a source into an OpenMetrics recording.
           Try: ofu record --duration 5m --out run.om
  top      a live terminal view of OFU per GPU. Try: ofu top
  sources  which counter sources (NVML, DCGM, scrape, replay) work here,
           and why the others do not
  kernels  what GEMM kernel names encode (tile, cluster, precision).
           Try: ofu kernels parse nvjet_tst_64x8_64x16_4x1_v_bz_TNT
  agent    the node daemon: OFU per GPU as Prometheus metrics, /healthz,
           job attribution. Try: ofu agent --source replay:FILE
  correct  OFU corrected for tile padding and precision, from a PyTorch
           profiler or Nsight Systems trace. Try: ofu correct --trace T --ofu 0.4
  reconcile  OFU against the MFU applications report, per job, with the likely
           FLOPs-accounting error behind a gap, and fleet r / rho.
           Try: ofu reconcile --store PATH --mfu mfu.csv
  regress  OFU regressions (when, how large, which GPUs) within jobs and
           across runs, and precision shifts. Try: ofu regress --store PATH

Run 'ofu COMMAND --help' for a command's flags. Docs: docs/cli.md, docs/metrics.md.)";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(kAbout, "ofu");
  app.set_version_flag("--version", fmt::format("ofu {}", ofu::kVersion));
  app.require_subcommand(1);

  ofu::cli::ReportArgs report_args;
  CLI::App* report = ofu::cli::AddReportCommand(app, report_args);
  ofu::cli::RecordArgs record_args;
  CLI::App* record = ofu::cli::AddRecordCommand(app, record_args);
  ofu::cli::TopArgs top_args;
  CLI::App* top = ofu::cli::AddTopCommand(app, top_args);
  ofu::cli::SourcesArgs sources_args;
  CLI::App* sources = ofu::cli::AddSourcesCommand(app, sources_args);
  ofu::cli::KernelsArgs kernels_args;
  CLI::App* kernels = ofu::cli::AddKernelsCommand(app, kernels_args);
  ofu::cli::AgentArgs agent_args;
  CLI::App* agent = ofu::cli::AddAgentCommand(app, agent_args);
  ofu::cli::CorrectArgs correct_args;
  CLI::App* correct = ofu::cli::AddCorrectCommand(app, correct_args);
  ofu::cli::ReconcileArgs reconcile_args;
  CLI::App* reconcile = ofu::cli::AddReconcileCommand(app, reconcile_args);
  ofu::cli::RegressArgs regress_args;
  CLI::App* regress = ofu::cli::AddRegressCommand(app, regress_args);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and usage
    return ofu::cli::kExitUsage;
  }

  if (report->parsed()) return ofu::cli::RunReport(report_args);
  if (record->parsed()) return ofu::cli::RunRecord(record_args);
  if (top->parsed()) return ofu::cli::RunTop(top_args);
  if (sources->parsed()) return ofu::cli::RunSources(sources_args);
  if (kernels->parsed()) return ofu::cli::RunKernels(kernels_args);
  if (agent->parsed()) return ofu::cli::RunAgent(agent_args);
  if (correct->parsed()) return ofu::cli::RunCorrect(correct_args);
  if (reconcile->parsed()) return ofu::cli::RunReconcile(reconcile_args);
  if (regress->parsed()) return ofu::cli::RunRegress(regress_args);
  return ofu::cli::kExitUsage;
}
