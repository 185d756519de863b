#include "ofu/net/http_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "ofu/net/basic_auth.h"
#include "ofu/net/connections.h"
#include "ofu/net/sessions.h"
#include "ofu/net/tls.h"
#include "ofu/platform/thread_name.h"

namespace ofu::net {
namespace {

// epoll user data: these two, then connection ids.
constexpr std::uint64_t kListenerId = 0;
constexpr std::uint64_t kWakeId = 1;

constexpr int kAcceptBatch = 64;  // accepts per wake-up, so one busy listener cannot starve the rest
constexpr int kFdReserve = 64;    // descriptors of RLIMIT_NOFILE left to the rest of the process
constexpr auto kAcceptPause = std::chrono::milliseconds(100);  // after EMFILE: no accepts for this long

}  // namespace

// The event loop: one thread, every connection, non-blocking. It owns the
// sockets: it accepts, admits under the caps and sweeps deadlines with the
// table (connections.h), and hands each connection's events to Sessions
// (sessions.h), which carries it through its phases.
class HttpServer::Loop {
 public:
  Loop(const Router& router, const RejectionCounter& count_rejection, const ServerLimits& limits,
       std::unique_ptr<BasicAuthenticator> auth, std::unique_ptr<TlsContext> tls, int listen_fd)
      : router_(router),
        count_rejection_(count_rejection),
        limits_(limits),
        auth_(std::move(auth)),
        tls_(std::move(tls)),
        listen_fd_(listen_fd) {}

  ~Loop() {
    if (thread_.joinable()) Shutdown();
    table_.CloseAll();
    if (wake_fd_ >= 0) ::close(wake_fd_);
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }

  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  Status Start() {
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll_fd_ < 0 || wake_fd_ < 0) {
      return Error::Unavailable("cannot set up the HTTP event loop: {}", std::strerror(errno));
    }
    epoll_event listener{EPOLLIN, {.u64 = kListenerId}};
    epoll_event wake{EPOLLIN, {.u64 = kWakeId}};
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &listener) != 0 ||
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &wake) != 0) {
      return Error::Unavailable("cannot set up the HTTP event loop: {}", std::strerror(errno));
    }
    sessions_ = std::make_unique<Sessions>(router_, count_rejection_, limits_, table_, epoll_fd_, std::move(auth_),
                                           std::move(tls_), [this] { Wake(); });
    thread_ = std::thread([this] { Run(); });
    return OkStatus();
  }

  void Shutdown() {
    stopping_.store(true);
    Wake();
    if (thread_.joinable()) thread_.join();
    if (sessions_) sessions_->StopAuthentication();
  }

  std::size_t open_connections() const { return table_.open_connections(); }

 private:
  void Run() {
    platform::NameThisThread("ofu-http");
    // OpenSSL writes with write(2), which raises SIGPIPE on a socket the
    // peer has closed; blocked on this thread it stays pending here, harmless,
    // and the write fails with EPIPE instead of killing the process.
    sigset_t sigpipe;
    sigemptyset(&sigpipe);
    sigaddset(&sigpipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigpipe, nullptr);

    epoll_event events[64];
    while (!stopping_.load()) {
      int timeout_ms = -1;
      if (table_.next_sweep() != TimePoint::max()) {
        const auto wait = std::chrono::ceil<std::chrono::milliseconds>(table_.next_sweep() - SteadyClock::now());
        timeout_ms = static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(wait.count(), 0, 60'000));
      }
      const int n = ::epoll_wait(epoll_fd_, events, 64, timeout_ms);
      if (n < 0 && errno != EINTR) break;  // EBADF, EFAULT, EINVAL: cannot happen with our own descriptors
      for (int i = 0; i < n; ++i) {
        const std::uint64_t id = events[i].data.u64;
        if (id == kListenerId) {
          Accept();
        } else if (id == kWakeId) {
          std::uint64_t count = 0;
          [[maybe_unused]] const ssize_t r = ::read(wake_fd_, &count, sizeof count);
          sessions_->FinishAuthentications();
        } else if (Connection* c = table_.Find(id)) {
          sessions_->OnEvent(*c, events[i].events);
        }
      }
      const TimePoint now = SteadyClock::now();
      if (now >= table_.next_sweep()) Sweep(now);
      table_.ReleaseClosed();
    }
    table_.CloseAll();
  }

  void Wake() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t w = ::write(wake_fd_, &one, sizeof one);
  }

  void Sweep(TimePoint now) {
    if (accept_paused_until_ != TimePoint::max() && now >= accept_paused_until_) {
      accept_paused_until_ = TimePoint::max();
      epoll_event listener{EPOLLIN, {.u64 = kListenerId}};
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &listener);
    }
    for (Connection* c : table_.Sweep(now, accept_paused_until_)) sessions_->Expire(*c);
  }

  void Accept() {
    for (int i = 0; i < kAcceptBatch; ++i) {
      sockaddr_storage address{};
      socklen_t length = sizeof address;
      const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors (or memory) elsewhere in the process: the
          // pending connection stays in the backlog; look again shortly
          // instead of spinning on a listener that stays readable.
          epoll_event none{0, {.u64 = kListenerId}};
          ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &none);
          accept_paused_until_ = SteadyClock::now() + kAcceptPause;
          table_.ScheduleSweep(accept_paused_until_);
        }
        return;  // EAGAIN: all taken
      }
      Admit(fd, PeerKeyOf(address));
    }
  }

  void Admit(int fd, std::string peer) {
    // At a cap, a waiting connection makes room (connections.h); when every
    // one is being answered, the new one is refused. At most one eviction
    // per cap.
    for (int cap = 0; cap < 2; ++cap) {
      const ConnectionTable::Room room = table_.MakeRoom(peer, limits_.max_connections_per_peer,
                                                         limits_.max_connections);
      if (!room.reason) break;
      if (room.evict == nullptr) {
        ::close(fd);
        count_rejection_(*room.reason);
        return;
      }
      sessions_->Close(*room.evict, *room.reason);
    }
    const int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);

    Connection& c = table_.Add(fd, std::move(peer), After(SteadyClock::now(), limits_.header_timeout_s));
    epoll_event event{sessions_->Open(c), {.u64 = c.id}};
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) table_.Close(c);
    // Nothing to read yet, most likely; the first event will say.
  }

  const Router& router_;
  const RejectionCounter& count_rejection_;
  const ServerLimits limits_;
  std::unique_ptr<BasicAuthenticator> auth_;  // until Start hands them to sessions_
  std::unique_ptr<TlsContext> tls_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  // The loop thread's alone (open_connections() aside).
  ConnectionTable table_{kWakeId + 1};
  TimePoint accept_paused_until_ = TimePoint::max();
  std::unique_ptr<Sessions> sessions_;  // from Start
};

HttpServer::HttpServer(Router router, RejectionCounter count_rejection, ServerLimits limits)
    : router_(std::move(router)), count_rejection_(std::move(count_rejection)), limits_(limits) {}

HttpServer::~HttpServer() { Stop(); }

std::size_t HttpServer::open_connections() const { return loop_ ? loop_->open_connections() : 0; }

Status HttpServer::Start(const std::string& listen_address, int port, const std::optional<WebConfig>& web_config) {
  if (loop_) return Error::InvalidArgument("the HTTP server is already started");

  std::unique_ptr<TlsContext> tls;
  if (web_config && web_config->tls) {
    OFU_ASSIGN_OR_RETURN(tls, TlsContext::Create(*web_config->tls));
  }
  std::unique_ptr<BasicAuthenticator> auth;
  if (web_config && !web_config->basic_auth_users.empty()) {
    auth = std::make_unique<BasicAuthenticator>(web_config->basic_auth_users);
  }
  // Each connection is a descriptor: stay below the process's limit.
  if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    const auto room = files.rlim_cur > 2 * static_cast<rlim_t>(kFdReserve) ? files.rlim_cur - kFdReserve
                                                                           : files.rlim_cur / 2;
    limits_.max_connections = std::min<std::size_t>(limits_.max_connections, static_cast<std::size_t>(room));
  }
  limits_.max_connections = std::max<std::size_t>(limits_.max_connections, 1);
  limits_.max_connections_per_peer = std::max<std::size_t>(limits_.max_connections_per_peer, 1);

  OFU_ASSIGN_OR_RETURN(auto listening, Listen(listen_address, port));
  const int bound = BoundPort(listening);
  auto loop = std::make_unique<Loop>(router_, count_rejection_, limits_, std::move(auth), std::move(tls), listening);
  OFU_RETURN_IF_ERROR(loop->Start());
  loop_ = std::move(loop);
  port_ = bound;
  tls_ = web_config && web_config->tls;
  return OkStatus();
}

void HttpServer::Stop() {
  if (loop_) loop_->Shutdown();
  loop_.reset();
  port_ = 0;
  tls_ = false;
}

}  // namespace ofu::net
