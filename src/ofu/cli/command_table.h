// Runs a command table: adds each Command (command.h) as a subcommand, parses
// the command line, runs the one given and turns its outcome into the exit
// status. `ofu`'s main is one call of RunCommandTable; a test builds a table
// of its own to follow the "add a subcommand" recipe (docs/ARCHITECTURE.md).
//
// Output: --help, --version and usage errors print as CLI11 does; a command's
// Error prints once, as "PROGRAM COMMAND: message" on stderr, and its code
// becomes the exit status through ExitCodeFor (exit_codes.h).
// Not thread-safe; call it from main's thread.
#pragma once

#include <string>
#include <vector>

#include "ofu/cli/command.h"

namespace ofu::cli {

struct CommandTable {
  std::string program;  // "ofu": the prefix of error messages and the usage line
  std::string version;  // printed by --version
  std::string intro;    // `PROGRAM --help` before the list of commands
  std::string outro;    // and after it
  std::vector<Command> commands;
};

// `PROGRAM --help`: the introduction, one line per command, the outro.
std::string AboutText(const CommandTable& table);

// Parses argv against the table and runs the command it names. Returns the
// exit status (exit_codes.h): the command's own, or kExitUsage for a usage
// error or no command, or ExitCodeFor of the command's Error.
int RunCommandTable(const CommandTable& table, int argc, char** argv);

}  // namespace ofu::cli
