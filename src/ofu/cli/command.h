// One row of `ofu`'s command table (apps/ofu/main.cc): a subcommand's name, its
// one-line help, how it adds its flags and how it runs.
//
// A command file provides three things:
//   struct FooArgs { ... };                          // what the flags parse into
//   void AddFooFlags(CLI::App& cmd, FooArgs& args);  // its flags and long help
//   Result<int> RunFoo(const FooArgs& args);         // the work
// and apps/ofu/main.cc lists it with MakeCommand("foo", "one line", AddFooFlags, RunFoo).
//
// RunFoo returns the exit status when the command did its work (kExitOk, or
// a status that reports a finding rather than a failure: exit_codes.h), and
// an Error otherwise. main prints the error as "ofu foo: <message>" and maps
// its code to the exit status, once for every command (exit_codes.h).
//
// Thread-safety, for this header and every command header in apps/ofu:
// flags are added, parsed and run on main's thread. A command that starts
// threads of its own (the agent, through the library) says so in its header.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"

namespace ofu::cli {

// Runs a command whose flags have been parsed.
using CommandRun = std::function<Result<int>()>;

struct Command {
  std::string name;
  std::string help;  // one line, listed by `ofu --help`
  // Adds the command's flags to `cmd` and returns what runs it once they
  // have been parsed. The returned function owns the parsed values.
  std::function<CommandRun(CLI::App& cmd)> add_flags;
};

template <typename Args>
Command MakeCommand(std::string name, std::string help, void (*add_flags)(CLI::App&, Args&),
                    Result<int> (*run)(const Args&)) {
  return Command{std::move(name), std::move(help), [add_flags, run](CLI::App& cmd) -> CommandRun {
                   auto args = std::make_shared<Args>();
                   add_flags(cmd, *args);
                   return [args, run] { return run(*args); };
                 }};
}

}  // namespace ofu::cli
