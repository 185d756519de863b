// Headless Chromium for the HTML report tests: load a file, give back the
// DOM after the page's scripts ran (--dump-dom), or a screenshot.
//
// Each run gets a private profile (--user-data-dir) under the test's scratch
// directory and a deadline; stdout and stderr go to separate files, so the
// dumped DOM is not mixed with Chromium's log.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "support/cli_runner.h"

extern char** environ;

namespace ofu::testing {

// The browser tests find at configure time (tests/html/tests.cmake); empty
// when there is none.
inline std::string ChromiumPath() { return ProgramFound(OFU_CHROMIUM) ? OFU_CHROMIUM : std::string(); }

struct BrowserRun {
  int exit_code = -1;  // -1: killed at the deadline or not started
  bool timed_out = false;
  std::string out;
  std::string err;
};

inline BrowserRun RunChromium(const std::vector<std::string>& extra_args, const std::filesystem::path& scratch,
                              std::chrono::seconds deadline = std::chrono::seconds(60)) {
  std::filesystem::create_directories(scratch / "profile");
  std::vector<std::string> argv = {ChromiumPath(),
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-dev-shm-usage",
                                   "--no-first-run",
                                   "--disable-extensions",
                                   "--user-data-dir=" + (scratch / "profile").string()};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> args;
  for (std::string& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);

  const std::string out_path = (scratch / "chromium.out").string(), err_path = (scratch / "chromium.err").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  // Its own process group, so that the deadline ends its helper processes too.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  BrowserRun run;
  if (rc != 0) return run;

  const auto until = std::chrono::steady_clock::now() + deadline;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > until) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      run.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!run.timed_out && WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  ::kill(-pid, SIGKILL);                                        // helpers left in its group, if any
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // they release the profile dir
  run.out = Slurp(out_path);
  run.err = Slurp(err_path);
  return run;
}

}  // namespace ofu::testing
