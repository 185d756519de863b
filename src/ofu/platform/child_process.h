// A command run as a child of this process, its output passed through.
//
// Start() runs argv (searched in PATH, as a shell would) with this process's
// environment and standard input; its standard output and error go to two
// pipes. Relay() copies what arrives on each pipe to this process's own
// standard output and error unchanged, as soon as it arrives, and hands every
// complete line (without its newline) to a callback: so the job's log shows
// live and ofu reads it too. The callback gets the bytes as they came, not
// lines, so that it can hand them on (a copy) and return at once: what the
// callback does costs the pass-through nothing more (LineSplitter below cuts
// them into lines where they are read). Relay blocks in poll() and wakes only for
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

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"

namespace ofu::platform {

// Bytes of the child's output as they arrived, and whether they came on
// standard error.
using OutputChunk = std::function<void(std::string_view bytes, bool from_stderr)>;

// Cuts one stream's bytes into lines (without the newline). A line longer
// than kMaxLineBytes is handed on in pieces of that length; Finish() hands on
// a last line without a newline; Resync() drops the line being assembled and
// skips to the next newline (bytes were lost in between).
inline constexpr std::size_t kMaxLineBytes = 1 << 16;
class LineSplitter {
 public:
  template <typename OnLine>
  void Add(std::string_view bytes, OnLine&& on_line);
  template <typename OnLine>
  void Finish(OnLine&& on_line) {
    if (!partial_.empty() && !skipping_) on_line(std::string_view(partial_));
    partial_.clear();
  }
  void Resync() {
    partial_.clear();
    skipping_ = true;
  }

 private:
  std::string partial_;
  bool skipping_ = false;
};

template <typename OnLine>
void LineSplitter::Add(std::string_view bytes, OnLine&& on_line) {
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    if (skipping_) {
      if (newline == std::string_view::npos) return;
      skipping_ = false;
      bytes.remove_prefix(newline + 1);
      continue;
    }
    const std::size_t take = newline == std::string_view::npos ? bytes.size() : newline;
    if (partial_.empty() && newline != std::string_view::npos && take <= kMaxLineBytes) {
      on_line(bytes.substr(0, take));  // a whole line in this chunk: no copy
      bytes.remove_prefix(newline + 1);
      continue;
    }
    const std::size_t room = kMaxLineBytes - partial_.size();
    partial_.append(bytes.substr(0, std::min(take, room)));
    if (take > room || (take == room && newline == std::string_view::npos)) {
      on_line(std::string_view(partial_));  // a piece of a very long line
      partial_.clear();
      bytes.remove_prefix(room);
      continue;
    }
    if (newline == std::string_view::npos) return;
    on_line(std::string_view(partial_));
    partial_.clear();
    bytes.remove_prefix(newline + 1);
  }
}

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

  // Copies the child's output to `out_fd` and `err_fd` and hands the bytes to
  // `on_chunk` (may be empty). Returns once both pipes are closed. A write to
  // `out_fd`/`err_fd` that fails (a closed terminal) drops that output; the
  // reading goes on, so the child is never blocked on a full pipe.
  void Relay(int out_fd, int err_fd, const OutputChunk& on_chunk);
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

// Gives the calling thread the lowest CPU priority (nice 19, Linux's
// per-thread setpriority): for a thread whose work may fall behind, such as
// reading what a child printed, so that the child and the relay keep the CPU.
// Best effort: a failure changes nothing.
void LowerThisThreadsPriority();

// The exit status a shell gives a wait() status: the exit code, or 128 + N
// for a child that signal N ended.
int ExitStatusOf(int wait_status);

}  // namespace ofu::platform
