// A command run as a child of this process, its output passed through.
//
// Start() runs argv (searched in PATH, as a shell would) with this process's
// environment and standard input; its standard output and error go to two
// pipes. Relay() copies what arrives on each pipe to this process's own
// standard output and error unchanged, as soon as it arrives, and hands every
// complete line (without its newline) to a callback: so the job's log shows
// live and ofu reads it too. Relay blocks in poll() and wakes only for
// output; it returns when both pipes are closed (the child and every process
// that inherited them exited or closed them).
//
// Wait() reaps the child: its exit status, or 128 + N when signal N killed
// it, as a shell reports it. Signal() sends it a signal.
//
// Ownership and threads: a ChildProcess owns the pipes' read ends and the
// child's pid; it is moved, not copied. Relay() runs on one thread (it is
// meant for a thread of its own) while Wait()/TryWait()/Signal() run on
// another: they touch no state Relay uses. The destructor closes the pipes
// and, if the child was never reaped, waits for it.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"

namespace ofu::platform {

// A line of the child's output: its text without the newline, and whether it
// came on standard error. A line longer than kMaxLineBytes is handed on in
// pieces of that length (the output itself passes through whole).
using OutputLine = std::function<void(std::string_view line, bool from_stderr)>;
inline constexpr std::size_t kMaxLineBytes = 1 << 16;

class ChildProcess {
 public:
  // kInvalidArgument for an empty argv; kUnavailable when the command cannot
  // be started (not found, not executable), naming it.
  static Result<ChildProcess> Start(const std::vector<std::string>& argv);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }

  // Copies the child's output to `out_fd` and `err_fd` and hands each line to
  // `on_line` (may be empty). Returns once both pipes are closed. A write to
  // `out_fd`/`err_fd` that fails (a closed terminal) drops that output; the
  // reading goes on, so the child is never blocked on a full pipe.
  void Relay(int out_fd, int err_fd, const OutputLine& on_line);
  // Makes a Relay() running on another thread return soon, with what it
  // has read (a grandchild that keeps the pipes open must not hold ofu).
  void StopRelay();

  // The exit status once the child has exited; nullopt while it runs.
  std::optional<int> TryWait();
  // Blocks until the child exits; its exit status.
  int Wait();
  // Sends `signal` to the child, unless it was already reaped.
  void Signal(int signal);

 private:
  ChildProcess(pid_t pid, int out_fd, int err_fd, int wake_read, int wake_write)
      : pid_(pid), out_fd_(out_fd), err_fd_(err_fd), wake_read_(wake_read), wake_write_(wake_write) {}

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  int wake_read_ = -1, wake_write_ = -1;  // StopRelay's pipe
  std::optional<int> status_;             // set once reaped
};

// The exit status a shell gives a wait() status: the exit code, or 128 + N
// for a child that signal N ended.
int ExitStatusOf(int wait_status);

}  // namespace ofu::platform
