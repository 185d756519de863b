// Running the built `ofu` program from tests, in a scratch directory.
//
// CliTest gives each test its own directory under the system temp dir
// (removed afterwards), Write() to put input files there, and Ofu() to run
// the program with arguments (a shell fragment, so quote paths) and capture
// its exit status, stdout and stderr. Ofu() exists in test programs that
// depend on the `ofu` target (ofu_cli_test() in tests/CMakeLists.txt).
//
// ProgramFound() tells whether an optional tool that CMake looked for
// (promtool, prometheus, tmux, chromium) is there.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace ofu::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `command` through the shell; stdout and stderr go to files in `dir`.
inline CommandResult RunShell(const std::string& command, const std::filesystem::path& dir) {
  const auto out = dir / "stdout", err = dir / "stderr";
  const std::string full = fmt::format("{} >'{}' 2>'{}'", command, out.string(), err.string());
  const int status = std::system(full.c_str());
  return CommandResult{WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(out), Slurp(err)};
}

// `path` is what CMake's find_program() gave: the program's path, or
// "<VARIABLE>-NOTFOUND" (and empty when the variable was never set).
inline bool ProgramFound(std::string_view path) { return !path.empty() && !path.ends_with("-NOTFOUND"); }

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           fmt::format("ofu-{}-{}-{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path Write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

#ifdef OFU_BINARY  // test programs declared with ofu_cli_test() (tests/CMakeLists.txt)
  // `args` is pasted into a shell command line after the program path.
  CommandResult Ofu(const std::string& args) { return RunShell(fmt::format("'{}' {}", OFU_BINARY, args), dir_); }
#endif

  std::filesystem::path dir_;
};

}  // namespace ofu::testing
