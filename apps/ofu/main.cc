// ofu: Overall FLOP Utilization of GPUs, from one node to a fleet.
//
// The command table: one row per subcommand, each in its own file
// (command.h). RunCommandTable (command_table.h) adds them to the command
// line, runs the one asked for, and is the one place where an error becomes a
// message and an exit status (exit_codes.h).
#include <vector>

#include <fmt/format.h>

#include "agent_command.h"
#include "correct_command.h"
#include "kernels_command.h"
#include "ofu/cli/command.h"
#include "ofu/cli/command_table.h"
#include "ofu/core/version.h"
#include "reconcile_command.h"
#include "record_command.h"
#include "regress_command.h"
#include "report_command.h"
#include "rules_command.h"
#include "run_command.h"
#include "sources_command.h"
#include "top_command.h"

namespace ofu::cli {
namespace {

std::vector<Command> Commands() {
  return {
      MakeCommand("report", "OFU per GPU, per job and overall from a recording or the agent's history", AddReportFlags,
                  RunReport),
      MakeCommand("record", "counters from a source into an OpenMetrics recording", AddRecordFlags, RunRecord),
      MakeCommand("run", "run a command and report its OFU, its stalls and the MFU it printed", AddRunFlags, RunRun),
      MakeCommand("top", "a live terminal view of OFU per GPU", AddTopFlags, RunTop),
      MakeCommand("sources", "which counter sources (NVML, DCGM, scrape, replay) work here, and why not",
                  AddSourcesFlags, RunSources),
      MakeCommand("kernels", "what GEMM kernel names encode (tile, cluster, precision)", AddKernelsFlags, RunKernels),
      MakeCommand("agent", "the node daemon: OFU per GPU as Prometheus metrics, /healthz, job attribution",
                  AddAgentFlags, RunAgent),
      MakeCommand("correct", "OFU corrected for tile padding and precision, from a kernel trace", AddCorrectFlags,
                  RunCorrect),
      MakeCommand("reconcile", "OFU against the MFU applications report, per job, with the likely cause of a gap",
                  AddReconcileFlags, RunReconcile),
      MakeCommand("regress", "OFU regressions and precision shifts within jobs and across runs", AddRegressFlags,
                  RunRegress),
      MakeCommand("rules", "Prometheus recording rules ofu reads from (hourly rollups for long ranges)", AddRulesFlags,
                  RunRules),
  };
}

constexpr const char* kIntro = R"(ofu -- how much of your GPUs' tensor-core capacity does useful work.

OFU (Overall FLOP Utilization) = tensor pipe activity x SM clock / f_spec,
per GPU, per job and per fleet, with no change to the training code.

Commands:
)";

constexpr const char* kOutro = R"(
Try: ofu report --input FILE, ofu top, ofu agent --source replay:FILE.
Run 'ofu COMMAND --help' for a command's flags and examples.
Docs: docs/cli.md, docs/metrics.md.)";

}  // namespace
}  // namespace ofu::cli

int main(int argc, char** argv) {
  using namespace ofu::cli;
  const CommandTable table{"ofu", fmt::format("ofu {}", ofu::kVersion), kIntro, kOutro, Commands()};
  return RunCommandTable(table, argc, argv);
}
