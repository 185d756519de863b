// The "add a subcommand" recipe of docs/ARCHITECTURE.md, followed once: a
// command file's three parts (HelloArgs, AddHelloFlags, RunHello), one
// MakeCommand row, and the table run as `ofu`'s main runs its own.
#include "ofu/cli/command_table.h"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ofu/cli/command.h"
#include "ofu/cli/exit_codes.h"

namespace ofu::cli {
namespace {

// The command file's three parts.
struct HelloArgs {
  std::string name;
  int times = 1;
};

void AddHelloFlags(CLI::App& cmd, HelloArgs& args) {
  cmd.add_option("--name", args.name, "who to greet")->required();
  cmd.add_option("--times", args.times, "how often")->check(CLI::Range(1, 3));
}

Result<int> RunHello(const HelloArgs& args) {
  if (args.name == "nobody") return Error::NoData("--name {}: nobody to greet", args.name);
  for (int i = 0; i < args.times; ++i) fmt::print("hello {}\n", args.name);
  return kExitOk;
}

CommandTable Table() {
  return CommandTable{"prog",
                      "prog 1.2.3",
                      "prog -- a test table\n\nCommands:\n",
                      "\nThe end.",
                      {MakeCommand("hello", "greets someone", AddHelloFlags, RunHello)}};
}

struct Outcome {
  int exit_status;
  std::string out;
  std::string err;
};

Outcome RunTable(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int status = RunCommandTable(Table(), static_cast<int>(argv.size()), argv.data());
  std::string out = ::testing::internal::GetCapturedStdout();
  return Outcome{status, std::move(out), ::testing::internal::GetCapturedStderr()};
}

TEST(CommandTable, RunsTheCommandNamedWithItsFlags) {
  const Outcome outcome = RunTable({"prog", "hello", "--name", "ada", "--times", "2"});
  EXPECT_EQ(outcome.exit_status, kExitOk) << outcome.err;
  EXPECT_EQ(outcome.out, "hello ada\nhello ada\n");
}

TEST(CommandTable, HelpListsTheCommandWithItsOneLine) {
  const Outcome outcome = RunTable({"prog", "--help"});
  EXPECT_EQ(outcome.exit_status, kExitOk);
  EXPECT_NE(outcome.out.find("prog -- a test table"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("  hello      greets someone\n"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("The end."), std::string::npos) << outcome.out;
}

TEST(CommandTable, VersionPrintsTheTablesVersion) {
  const Outcome outcome = RunTable({"prog", "--version"});
  EXPECT_EQ(outcome.exit_status, kExitOk);
  EXPECT_EQ(outcome.out, "prog 1.2.3\n");
}

TEST(CommandTable, UsageErrorsExitOne) {
  EXPECT_EQ(RunTable({"prog"}).exit_status, kExitUsage);                                          // no command
  EXPECT_EQ(RunTable({"prog", "hello"}).exit_status, kExitUsage);                                 // --name missing
  EXPECT_EQ(RunTable({"prog", "hello", "--name", "x", "--times", "9"}).exit_status, kExitUsage);  // out of range
  EXPECT_EQ(RunTable({"prog", "goodbye"}).exit_status, kExitUsage);                               // unknown command
}

TEST(CommandTable, ACommandsErrorIsPrintedOnceAndMappedToItsExitStatus) {
  const Outcome outcome = RunTable({"prog", "hello", "--name", "nobody"});
  EXPECT_EQ(outcome.exit_status, kExitNoData);
  EXPECT_EQ(outcome.err, "prog hello: --name nobody: nobody to greet\n");
  EXPECT_EQ(outcome.out, "");
}

}  // namespace
}  // namespace ofu::cli
