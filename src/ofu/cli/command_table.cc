#include "ofu/cli/command_table.h"

#include <utility>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "ofu/cli/exit_codes.h"
#include "ofu/cli/parse_command_line.h"

namespace ofu::cli {
namespace {

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
int ExitStatusOf(const std::string& program, const CLI::App& command, const Result<int>& outcome) {
  if (outcome.ok()) return *outcome;
  fmt::print(stderr, "{} {}: {}\n", program, CommandPath(command), outcome.error().message);
  return ExitCodeFor(outcome.error().code);
}

}  // namespace

std::string AboutText(const CommandTable& table) {
  std::string about = table.intro;
  for (const Command& command : table.commands) about += fmt::format("  {:<10} {}\n", command.name, command.help);
  return about + table.outro;
}

int RunCommandTable(const CommandTable& table, int argc, char** argv) {
  CLI::App app(AboutText(table), table.program);
  app.set_version_flag("--version", table.version);
  app.require_subcommand(1);

  std::vector<std::pair<CLI::App*, CommandRun>> runs;
  for (const Command& command : table.commands) {
    CLI::App* sub = app.add_subcommand(command.name, command.help);
    sub->group("");  // AboutText() lists the commands; CLI11's list would repeat each one's long help
    runs.emplace_back(sub, command.add_flags(*sub));
  }
  if (auto exit_status = ParseCommandLine(app, argc, argv)) return *exit_status;
  for (const auto& [sub, run] : runs) {
    if (sub->parsed()) return ExitStatusOf(table.program, *sub, run());
  }
  return kExitUsage;
}

}  // namespace ofu::cli
