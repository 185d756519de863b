#include "ofu/platform/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>

extern char** environ;

namespace ofu::platform {
namespace {

void CloseIfOpen(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Writes all of `data` to `fd`; false when the descriptor refuses it.
bool WriteAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// One output stream: where its bytes go.
struct Stream {
  int* read_fd;
  int write_fd;
  bool is_stderr;
  bool write_ok = true;
};

}  // namespace

Result<ChildProcess> ChildProcess::Start(const std::vector<std::string>& argv) {
  if (argv.empty()) return Error::InvalidArgument("no command to run");
  std::array<int, 2> out{-1, -1}, err{-1, -1}, wake{-1, -1};
  if (::pipe2(out.data(), O_CLOEXEC) != 0 || ::pipe2(err.data(), O_CLOEXEC) != 0 ||
      ::pipe2(wake.data(), O_CLOEXEC | O_NONBLOCK) != 0) {
    const int saved = errno;
    for (int fd : {out[0], out[1], err[0], err[1], wake[0], wake[1]}) {
      if (fd >= 0) ::close(fd);
    }
    return Error::Unavailable("cannot make the pipes for '{}': {}", argv[0], std::strerror(saved));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  // The child starts with the default signal actions, whatever this process installed.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    for (int fd : {out[0], err[0], wake[0], wake[1]}) ::close(fd);
    return Error::Unavailable("cannot run '{}': {}", argv[0], std::strerror(rc));
  }
  return ChildProcess(pid, out[0], err[0], wake[0], wake[1]);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_),
      out_fd_(other.out_fd_),
      err_fd_(other.err_fd_),
      wake_read_(other.wake_read_),
      wake_write_(other.wake_write_),
      status_(other.status_) {
  other.pid_ = -1;
  other.out_fd_ = other.err_fd_ = other.wake_read_ = other.wake_write_ = -1;
}

ChildProcess::~ChildProcess() {
  CloseIfOpen(out_fd_);
  CloseIfOpen(err_fd_);
  CloseIfOpen(wake_read_);
  CloseIfOpen(wake_write_);
  if (pid_ > 0 && !status_) Wait();
}

void ChildProcess::Relay(int out_fd, int err_fd, const OutputChunk& on_chunk) {
  std::array<Stream, 2> streams = {Stream{&out_fd_, out_fd, false, true}, Stream{&err_fd_, err_fd, true, true}};
  std::vector<char> buffer(1 << 16);
  while (*streams[0].read_fd >= 0 || *streams[1].read_fd >= 0) {
    std::array<pollfd, 3> polled{};
    for (std::size_t i = 0; i < streams.size(); ++i) {
      polled[i] = pollfd{*streams[i].read_fd, POLLIN, 0};  // a negative fd is skipped by poll
    }
    polled[2] = pollfd{wake_read_, POLLIN, 0};
    if (::poll(polled.data(), polled.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (polled[2].revents != 0) break;  // StopRelay()
    for (std::size_t i = 0; i < streams.size(); ++i) {
      Stream& stream = streams[i];
      if (*stream.read_fd < 0 || (polled[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = ::read(*stream.read_fd, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        CloseIfOpen(*stream.read_fd);
        continue;
      }
      const auto size = static_cast<std::size_t>(n);
      if (stream.write_ok) stream.write_ok = WriteAll(stream.write_fd, buffer.data(), size);
      if (on_chunk) on_chunk(std::string_view(buffer.data(), size), stream.is_stderr);
    }
  }
}

void ChildProcess::StopRelay() {
  const char byte = 1;
  // A full pipe (EAGAIN) already holds a wake-up.
  if (wake_write_ >= 0 && ::write(wake_write_, &byte, 1) < 0 && errno != EAGAIN) return;
}

std::optional<int> ChildProcess::TryWait() {
  if (status_ || pid_ <= 0) return status_;
  int wait_status = 0;
  const pid_t done = ::waitpid(pid_, &wait_status, WNOHANG);
  if (done == pid_) status_ = ExitStatusOf(wait_status);
  return status_;
}

int ChildProcess::Wait() {
  if (status_ || pid_ <= 0) return status_.value_or(0);
  int wait_status = 0;
  while (::waitpid(pid_, &wait_status, 0) < 0) {
    if (errno != EINTR) return *(status_ = 1);
  }
  status_ = ExitStatusOf(wait_status);
  return *status_;
}

void ChildProcess::Signal(int signal) {
  if (pid_ > 0 && !status_) ::kill(pid_, signal);
}

void LowerThisThreadsPriority() {
  const auto thread = static_cast<id_t>(::syscall(SYS_gettid));
  ::setpriority(PRIO_PROCESS, thread, 19);
}

int ExitStatusOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace ofu::platform
