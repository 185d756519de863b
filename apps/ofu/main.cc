// ofu: Overall FLOP Utilization of GPUs, from one node to a fleet.
//
// The command table: one row per subcommand, each in its own file
// (command.h). This file adds them to the command line, runs the one asked
// for, and is the one place where an error becomes a message and an exit
// status (exit_codes.h).
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "agent_command.h"
#include "command.h"
#include "correct_command.h"
#include "exit_codes.h"
#include "kernels_command.h"
#include "ofu/core/version.h"
#include "parse_command_line.h"
#include "reconcile_command.h"
#include "record_command.h"
#include "regress_command.h"
#include "report_command.h"
#include "sources_command.h"
#include "top_command.h"

namespace ofu::cli {
namespace {

std::vector<Command> Commands() {
  return {
      MakeCommand("report", "OFU per GPU, per job and overall from a recording or the agent's history", AddReportFlags,
                  RunReport),
      MakeCommand("record", "counters from a source into an OpenMetrics recording", AddRecordFlags, RunRecord),
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

// `ofu --help`: the introduction and the table's one-line helps.
std::string About(const std::vector<Command>& commands) {
  std::string about = kIntro;
  for (const Command& command : commands) about += fmt::format("  {:<10} {}\n", command.name, command.help);
  return about + kOutro;
}

// "kernels parse" for `ofu kernels parse`: the command and the subcommands
// under it that were given, as errors name them.
std::string CommandPath(const CLI::App& command) {
  std::string path = command.get_name();
  for (const CLI::App* at = &command; !at->get_subcommands().empty();) {
    at = at->get_subcommands().front();
    path += " " + at->get_name();
  }
  return path;
}

// The exit status of a command's outcome; an error is printed first.
int ExitStatusOf(const CLI::App& command, const Result<int>& outcome) {
  if (outcome.ok()) return *outcome;
  fmt::print(stderr, "ofu {}: {}\n", CommandPath(command), outcome.error().message);
  return ExitCodeFor(outcome.error().code);
}

}  // namespace
}  // namespace ofu::cli

int main(int argc, char** argv) {
  using namespace ofu::cli;
  const std::vector<Command> commands = Commands();
  CLI::App app(About(commands), "ofu");
  app.set_version_flag("--version", fmt::format("ofu {}", ofu::kVersion));
  app.require_subcommand(1);

  std::vector<std::pair<CLI::App*, CommandRun>> runs;
  for (const Command& command : commands) {
    CLI::App* sub = app.add_subcommand(command.name, command.help);
    sub->group("");  // About() lists the commands; CLI11's list would repeat each one's long help
    runs.emplace_back(sub, command.add_flags(*sub));
  }
  if (auto exit_status = ParseCommandLine(app, argc, argv)) return *exit_status;
  for (const auto& [sub, run] : runs) {
    if (sub->parsed()) return ExitStatusOf(*sub, run());
  }
  return kExitUsage;
}
