// ofu: Overall FLOP Utilization of GPUs, from one node to a fleet.
//
// One subcommand per file; this file only wires them up and maps errors to
// exit statuses (exit_codes.h).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "exit_codes.h"
#include "report_command.h"

namespace {

constexpr const char* kAbout = R"(ofu -- how much of your GPUs' tensor-core capacity does useful work.

OFU (Overall FLOP Utilization) = tensor pipe activity x SM clock / f_spec,
per GPU, per job and per fleet, with no change to the training code.

Commands:
  report   OFU per GPU and overall from a recording (dcgm-exporter scrapes,
           OpenMetrics). Try: ofu report --input FILE

Run 'ofu COMMAND --help' for a command's flags. Docs: docs/cli.md, docs/metrics.md.)";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(kAbout, "ofu");
  app.set_version_flag("--version", "ofu 0.1.0");
  app.require_subcommand(1);

  ofu::cli::ReportArgs report_args;
  CLI::App* report = ofu::cli::AddReportCommand(app, report_args);

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
  return ofu::cli::kExitUsage;
}
