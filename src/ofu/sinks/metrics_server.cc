#include "ofu/sinks/metrics_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <list>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ofu/sinks/http_request.h"
#include "ofu/sinks/thread_name.h"

namespace ofu::sinks {
namespace {

using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;

constexpr char kIndexPage[] =
    "ofu agent\n"
    "\n"
    "/metrics  OFU and tensor activity per GPU (Prometheus text or OpenMetrics)\n"
    "/healthz  200 when windows arrive and some GPU answers, else 503 with the reason\n";
constexpr char kTextPlain[] = "text/plain; charset=utf-8";

// epoll user data: these two, then connection ids.
constexpr std::uint64_t kListenerId = 0;
constexpr std::uint64_t kWakeId = 1;

constexpr int kListenBacklog = 128;
constexpr int kAcceptBatch = 64;          // accepts per wake-up, so one busy listener cannot starve the rest
constexpr std::size_t kReadChunk = 4096;  // bytes per read of a request head
constexpr int kFdReserve = 64;            // descriptors of RLIMIT_NOFILE left to the rest of the agent
constexpr auto kAcceptPause = std::chrono::milliseconds(100);   // after EMFILE: no accepts for this long
constexpr auto kLinger = std::chrono::seconds(2);               // lingering close: see StartLinger
constexpr std::size_t kLingerBytes = 1 << 20;                   // ... and at most this much discarded
constexpr auto kSweepInterval = std::chrono::milliseconds(50);  // deadlines are checked at most this often
constexpr std::size_t kMaxAuthQueue = 8;                        // uncached credentials awaiting bcrypt; more: 503
constexpr int kTlsRecordHeader = 5;                             // type, version (2), length (2)
// AwaitFirstRecord waits for at most this much of the first record: a
// ClientHello is well under 2 KiB even with post-quantum key shares, and
// SO_RCVLOWAT must stay below half the receive buffer, where Linux clamps it.
constexpr std::size_t kFirstRecordWait = 8 * 1024;

struct SslCtxFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
struct SslFree {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxFree>;
using SslPtr = std::unique_ptr<SSL, SslFree>;

// The OpenSSL error queue as one line (and emptied, so the next failure on
// this thread starts clean).
std::string OpenSslErrors() {
  std::string text;
  while (const unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof buffer);
    if (!text.empty()) text += "; ";
    text += buffer;
  }
  return text.empty() ? "unknown OpenSSL error" : text;
}

// Sets up the TLS context; on failure `error` says why.
bool SetUpTls(SSL_CTX& ctx, const TlsServerConfig& tls, std::string& error) {
  ERR_clear_error();
  const int min_version = tls.min_version == TlsVersion::kTls13 ? TLS1_3_VERSION : TLS1_2_VERSION;
  if (SSL_CTX_set_min_proto_version(&ctx, min_version) != 1) {
    error = "cannot set the minimum TLS version: " + OpenSslErrors();
    return false;
  }
  SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  // Non-blocking writes resume with the same buffer, possibly partially;
  // idle connections give their 16 KiB record buffers back.
  SSL_CTX_set_mode(&ctx,
                   SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
  // No server-side session cache: by default it keeps up to 20,480 TLS 1.2
  // sessions, memory that any client can fill. Resumption still works
  // through stateless tickets.
  SSL_CTX_set_session_cache_mode(&ctx, SSL_SESS_CACHE_OFF);
  if (SSL_CTX_use_certificate_chain_file(&ctx, tls.cert_file.c_str()) != 1) {
    error = fmt::format("tls_server_config.cert_file '{}': {}", tls.cert_file, OpenSslErrors());
    return false;
  }
  if (SSL_CTX_use_PrivateKey_file(&ctx, tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    error = fmt::format("tls_server_config.key_file '{}': {}", tls.key_file, OpenSslErrors());
    return false;
  }
  if (SSL_CTX_check_private_key(&ctx) != 1) {
    error = fmt::format("tls_server_config: key_file '{}' does not match cert_file '{}': {}", tls.key_file,
                        tls.cert_file, OpenSslErrors());
    return false;
  }
  return true;
}

// The peer a connection is counted against: an IPv4 address (also when it
// arrives IPv4-mapped on an IPv6 socket), or an IPv6 /64, the smallest block
// a site is given, so one host cannot take a new address per connection.
std::string PeerKeyOf(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    return std::string(reinterpret_cast<const char*>(&v4.sin_addr), 4);
  }
  if (address.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
    const auto* bytes = reinterpret_cast<const char*>(&v6.sin6_addr);
    if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr)) return std::string(bytes + 12, 4);
    return std::string("6") + std::string(bytes, 8);
  }
  return "?";
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
  }
  return "Unknown";
}

struct Response {
  int status = 200;
  std::string content_type = kTextPlain;
  std::string body;
  std::vector<std::pair<std::string_view, std::string>> headers;  // besides Content-Type/-Length, Connection
};

// The outcome of one read or write on a connection.
enum class Io { kDone, kWantRead, kWantWrite, kClosed };

}  // namespace

// The event loop: one thread, every connection, non-blocking. See the
// header for what it promises; the notes here say how.
//
// A connection is in one phase at a time. Handshake, ReadingHead and
// Lingering wait for the client: they are "waiting", listed per peer oldest
// first (by when the phase began), and the caps evict from the front of
// those lists: the per-peer cap from the newcomer's peer, the total cap from
// the peer with the most connections, so that many attacking addresses with
// many connections each do not evict a scraper's one or two. Writing and
// Authenticating wait for the server and are never evicted; they are
// bounded by write_timeout_s and by the auth queue. Every phase but
// Authenticating has a deadline; deadlines are swept when one is due, at
// most every kSweepInterval, and with none due the loop sleeps in
// epoll_wait without a timeout: an idle server never wakes.
//
// Closed connections are parked until the end of the loop iteration, so an
// epoll event for one that was evicted earlier in the same batch finds it
// gone from the table (ids are never reused) and nothing dangles.
class MetricsServer::Loop {
 public:
  Loop(MetricsState& state, const ServerLimits& limits, std::unique_ptr<BasicAuthenticator> auth, SslCtxPtr ctx,
       int listen_fd)
      : state_(state), limits_(limits), auth_(std::move(auth)), ctx_(std::move(ctx)), listen_fd_(listen_fd) {}

  ~Loop() {
    if (thread_.joinable()) Shutdown();
    for (auto& [id, connection] : connections_) CloseFd(*connection);
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
    thread_ = std::thread([this] { Run(); });
    if (auth_) auth_thread_ = std::thread([this] { RunAuth(); });
    return OkStatus();
  }

  void Shutdown() {
    stopping_.store(true);
    {
      std::lock_guard lock(auth_mutex_);
      auth_stopping_ = true;
    }
    auth_ready_.notify_all();
    Wake();
    if (thread_.joinable()) thread_.join();
    if (auth_thread_.joinable()) auth_thread_.join();
  }

  std::size_t open_connections() const { return open_.load(std::memory_order_relaxed); }

 private:
  enum class Phase { kHandshake, kReadingHead, kAuthenticating, kWriting, kLingering };

  struct Connection;
  struct Peer {
    std::size_t count = 0;
    std::list<Connection*> waiting;  // oldest first
  };

  struct Connection {
    std::uint64_t id = 0;
    int fd = -1;
    std::string peer;
    SslPtr ssl;
    Phase phase = Phase::kReadingHead;
    TimePoint deadline = TimePoint::max();
    bool kept_alive = false;  // an earlier response was sent on it
    bool got_bytes = false;   // some of the current request has arrived
    bool closed = false;
    std::string in;   // received and not yet consumed
    std::string out;  // the response being written
    std::size_t out_offset = 0;
    bool close_after = false;                // close (lingering) once `out` is written
    std::size_t lingered = 0;                // bytes discarded while lingering
    std::optional<HttpRequestHead> request;  // while authenticating
    std::uint32_t interest = EPOLLIN;
    bool waiting = false;
    std::uint64_t waiting_since = 0;  // order of entering the waiting phase
    std::list<Connection*>::iterator peer_waiting_at;
  };

  struct AuthJob {
    std::uint64_t connection = 0;
    std::string user, password;
  };

  // ---- the loop ----

  void Run() {
    NameThisThread("ofu-http");
    // OpenSSL writes with write(2), which raises SIGPIPE on a socket the
    // peer has closed; blocked on this thread it stays pending here, harmless,
    // and the write fails with EPIPE instead of killing the agent.
    sigset_t sigpipe;
    sigemptyset(&sigpipe);
    sigaddset(&sigpipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigpipe, nullptr);

    epoll_event events[64];
    while (!stopping_.load()) {
      int timeout_ms = -1;
      if (next_sweep_ != TimePoint::max()) {
        const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next_sweep_ - SteadyClock::now());
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
          FinishAuthentications();
        } else if (const auto found = connections_.find(id); found != connections_.end()) {
          OnEvent(*found->second, events[i].events);
        }
      }
      const TimePoint now = SteadyClock::now();
      if (now >= next_sweep_) Sweep(now);
      closed_.clear();
    }
    for (auto& [id, connection] : connections_) CloseFd(*connection);
    connections_.clear();
    peers_.clear();
    open_.store(0);
  }

  void Wake() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t w = ::write(wake_fd_, &one, sizeof one);
  }

  void ScheduleSweep(TimePoint when) { next_sweep_ = std::min(next_sweep_, when); }

  void SetDeadline(Connection& c, TimePoint deadline) {
    c.deadline = deadline;
    ScheduleSweep(deadline);
  }

  static TimePoint After(double seconds) {
    return SteadyClock::now() +
           std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(seconds));
  }

  void Sweep(TimePoint now) {
    TimePoint next = TimePoint::max();
    if (accept_paused_until_ != TimePoint::max()) {
      if (now >= accept_paused_until_) {
        accept_paused_until_ = TimePoint::max();
        epoll_event listener{EPOLLIN, {.u64 = kListenerId}};
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &listener);
      } else {
        next = accept_paused_until_;
      }
    }
    std::vector<Connection*> expired;
    for (auto& [id, connection] : connections_) {
      if (connection->deadline <= now) {
        expired.push_back(connection.get());
      } else {
        next = std::min(next, connection->deadline);
      }
    }
    for (Connection* c : expired) {
      switch (c->phase) {
        case Phase::kHandshake: Close(*c, ConnectionRejection::kTlsHandshakeDeadline); break;
        case Phase::kReadingHead:
          // An idle kept-alive connection timing out is the normal end of one.
          Close(*c,
                c->kept_alive && !c->got_bytes ? std::nullopt : std::optional(ConnectionRejection::kHeaderDeadline));
          break;
        case Phase::kWriting: Close(*c, ConnectionRejection::kWriteDeadline); break;
        case Phase::kLingering:
        case Phase::kAuthenticating: Close(*c, std::nullopt); break;
      }
    }
    next_sweep_ = next == TimePoint::max() ? next : std::max(next, now + kSweepInterval);
  }

  // ---- connections: admission, eviction, closing ----

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
          ScheduleSweep(accept_paused_until_);
        }
        return;  // EAGAIN: all taken
      }
      Admit(fd, PeerKeyOf(address));
    }
  }

  void Admit(int fd, std::string peer_key) {
    // At a cap, a waiting connection makes room (see the class comment);
    // when every one is being answered, the new one is refused.
    if (const auto peer = peers_.find(peer_key);
        peer != peers_.end() && peer->second.count >= limits_.max_connections_per_peer) {
      if (peer->second.waiting.empty()) {
        Refuse(fd, ConnectionRejection::kPerPeerLimit);
        return;
      }
      Close(*peer->second.waiting.front(), ConnectionRejection::kPerPeerLimit);
    }
    if (connections_.size() >= limits_.max_connections) {
      Connection* victim = OldestOfTheBusiestPeer();
      if (victim == nullptr) {
        Refuse(fd, ConnectionRejection::kTotalLimit);
        return;
      }
      Close(*victim, ConnectionRejection::kTotalLimit);
    }
    const int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);

    auto connection = std::make_unique<Connection>();
    Connection& c = *connection;
    c.id = next_id_++;
    c.fd = fd;
    c.peer = std::move(peer_key);
    if (ctx_) {
      // No SSL object yet: see AwaitFirstRecord.
      c.phase = Phase::kHandshake;
      const int header = kTlsRecordHeader;
      ::setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &header, sizeof header);
      c.interest = EPOLLIN | EPOLLRDHUP;
    }
    epoll_event event{c.interest, {.u64 = c.id}};
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
      ::close(fd);
      return;
    }
    peers_[c.peer].count += 1;
    connections_.emplace(c.id, std::move(connection));
    open_.store(connections_.size(), std::memory_order_relaxed);
    EnterWaiting(c);
    SetDeadline(c, After(limits_.header_timeout_s));
    // Nothing to read yet, most likely; the first event will say.
  }

  void Refuse(int fd, ConnectionRejection reason) {
    ::close(fd);
    state_.CountRejectedConnection(reason);
  }

  // The oldest waiting connection of the peer with the most connections
  // (of those with a waiting one); null when none waits. A scan: there are
  // at most max_connections peers, and it runs only at the total cap.
  Connection* OldestOfTheBusiestPeer() const {
    const Peer* busiest = nullptr;
    for (const auto& [key, peer] : peers_) {
      if (peer.waiting.empty()) continue;
      if (busiest == nullptr || peer.count > busiest->count ||
          (peer.count == busiest->count &&
           peer.waiting.front()->waiting_since < busiest->waiting.front()->waiting_since)) {
        busiest = &peer;
      }
    }
    return busiest == nullptr ? nullptr : busiest->waiting.front();
  }

  void EnterWaiting(Connection& c) {
    if (c.waiting) LeaveWaiting(c);
    auto& peer_waiting = peers_[c.peer].waiting;
    c.peer_waiting_at = peer_waiting.insert(peer_waiting.end(), &c);
    c.waiting_since = next_waiting_++;
    c.waiting = true;
  }

  void LeaveWaiting(Connection& c) {
    if (!c.waiting) return;
    peers_[c.peer].waiting.erase(c.peer_waiting_at);
    c.waiting = false;
  }

  void CloseFd(Connection& c) {
    if (c.fd < 0) return;
    c.ssl.reset();
    ::close(c.fd);  // also takes it out of the epoll set
    c.fd = -1;
  }

  // Closes now; `reason` is counted when given. The object lives on until
  // the end of the loop iteration (closed_), so callers up the stack may
  // still look at c.closed.
  void Close(Connection& c, std::optional<ConnectionRejection> reason) {
    if (c.closed) return;
    if (reason) state_.CountRejectedConnection(*reason);
    LeaveWaiting(c);
    CloseFd(c);
    c.closed = true;
    if (const auto peer = peers_.find(c.peer); peer != peers_.end() && --peer->second.count == 0) {
      peers_.erase(peer);
    }
    const auto found = connections_.find(c.id);
    closed_.push_back(std::move(found->second));
    connections_.erase(found);
    open_.store(connections_.size(), std::memory_order_relaxed);
  }

  void SetInterest(Connection& c, std::uint32_t interest) {
    if (c.closed || c.interest == interest) return;
    epoll_event event{interest, {.u64 = c.id}};
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &event) == 0) c.interest = interest;
  }

  // ---- I/O ----

  Io Receive(Connection& c, char* buffer, std::size_t size, std::size_t& received) {
    received = 0;
    if (c.ssl) {
      ERR_clear_error();
      if (SSL_read_ex(c.ssl.get(), buffer, size, &received) == 1) return Io::kDone;
      return SslOutcome(c);
    }
    const ssize_t n = ::recv(c.fd, buffer, size, 0);
    if (n > 0) {
      received = static_cast<std::size_t>(n);
      return Io::kDone;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return Io::kWantRead;
    return Io::kClosed;
  }

  Io Send(Connection& c, const char* data, std::size_t size, std::size_t& sent) {
    sent = 0;
    if (c.ssl) {
      ERR_clear_error();
      if (SSL_write_ex(c.ssl.get(), data, size, &sent) == 1) return Io::kDone;
      return SslOutcome(c);
    }
    const ssize_t n = ::send(c.fd, data, size, MSG_NOSIGNAL);
    if (n >= 0) {
      sent = static_cast<std::size_t>(n);
      return Io::kDone;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return Io::kWantWrite;
    return Io::kClosed;
  }

  Io SslOutcome(Connection& c) {
    const int error = SSL_get_error(c.ssl.get(), 0);
    ERR_clear_error();
    if (error == SSL_ERROR_WANT_READ) return Io::kWantRead;
    if (error == SSL_ERROR_WANT_WRITE) return Io::kWantWrite;
    return Io::kClosed;
  }

  void Await(Connection& c, Io io) { SetInterest(c, io == Io::kWantWrite ? EPOLLOUT : EPOLLIN); }

  void OnEvent(Connection& c, std::uint32_t events) {
    if ((events & EPOLLERR) != 0) {
      Close(c, std::nullopt);
      return;
    }
    switch (c.phase) {
      case Phase::kHandshake:
        if (!c.ssl && !AwaitFirstRecord(c, events)) break;
        Handshake(c);
        break;
      case Phase::kReadingHead: ReadHead(c); break;
      case Phase::kWriting:
        Write(c);
        if (!c.closed && c.phase == Phase::kReadingHead) ReadHead(c);  // see StartKeepAlive
        break;
      case Phase::kLingering: Linger(c); break;
      case Phase::kAuthenticating:
        // Interest is off; a hang-up still reports. The answer will find out.
        if ((events & EPOLLHUP) != 0) Close(c, std::nullopt);
        break;
    }
  }

  // A TLS connection gets its SSL object, and with it OpenSSL's buffers
  // (a 16 KiB handshake buffer, a 17 KiB record buffer: some 40 KiB in all),
  // only once the client's first record is in the kernel's receive buffer,
  // so a client that stalls or trickles the start of its handshake costs
  // that buffer's bytes in the kernel and nothing here. SO_RCVLOWAT keeps
  // epoll quiet until the record header, then the record, is in: no wake-up
  // per trickled byte either. True when the handshake can start.
  bool AwaitFirstRecord(Connection& c, std::uint32_t events) {
    unsigned char header[kTlsRecordHeader];
    const ssize_t n = ::recv(c.fd, header, sizeof header, MSG_PEEK);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      Close(c, std::nullopt);  // left without a byte: a port check, not a failed handshake
      return false;
    }
    const bool hung_up = (events & (EPOLLRDHUP | EPOLLHUP)) != 0;
    std::size_t wanted = kTlsRecordHeader;
    // Not a TLS handshake record (plain HTTP, say): OpenSSL says so below.
    if (n >= 1 && header[0] != 0x16) wanted = 0;
    if (n == kTlsRecordHeader && wanted != 0) {
      wanted = std::min<std::size_t>(kTlsRecordHeader + (std::size_t{header[3]} << 8 | header[4]), kFirstRecordWait);
    }
    int available = 0;
    ::ioctl(c.fd, FIONREAD, &available);
    if (static_cast<std::size_t>(std::max(available, 0)) < wanted) {
      if (hung_up) {
        Close(c, ConnectionRejection::kTlsHandshakeFailed);  // a part of a record, and no more to come
        return false;
      }
      const int low_water = static_cast<int>(wanted);
      ::setsockopt(c.fd, SOL_SOCKET, SO_RCVLOWAT, &low_water, sizeof low_water);
      return false;
    }
    const int one = 1;
    ::setsockopt(c.fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
    c.ssl.reset(SSL_new(ctx_.get()));
    if (!c.ssl || SSL_set_fd(c.ssl.get(), c.fd) != 1) {
      ERR_clear_error();
      Close(c, std::nullopt);
      return false;
    }
    SSL_set_accept_state(c.ssl.get());
    SetInterest(c, EPOLLIN);
    return true;
  }

  void Handshake(Connection& c) {
    ERR_clear_error();
    if (SSL_do_handshake(c.ssl.get()) == 1) {
      c.phase = Phase::kReadingHead;  // the deadline from accept goes on
      ReadHead(c);
      return;
    }
    const Io io = SslOutcome(c);
    if (io != Io::kClosed) {
      Await(c, io);
      return;
    }
    // A client that connects and leaves without a byte (a port check, a TCP
    // probe) is no failed handshake; anything else is: plain HTTP on the TLS
    // port, no protocol or cipher in common.
    const bool spoke = BIO_number_read(SSL_get_rbio(c.ssl.get())) > 0;
    Close(c, spoke ? std::optional(ConnectionRejection::kTlsHandshakeFailed) : std::nullopt);
  }

  void ReadHead(Connection& c) {
    char buffer[kReadChunk];
    while (!c.closed && c.phase == Phase::kReadingHead) {
      if (const auto end = FindRequestHeadEnd(c.in)) {
        if (*end > limits_.max_header_bytes) {
          Reject(c, 431, "request headers too large\n");
          return;
        }
        Dispatch(c, *end);
        continue;  // a pipelined request may follow
      }
      if (c.in.size() > limits_.max_header_bytes) {
        Reject(c, 431, "request headers too large\n");
        return;
      }
      std::size_t received = 0;
      const Io io = Receive(c, buffer, std::min(sizeof buffer, limits_.max_header_bytes + 1 - c.in.size()), received);
      if (io == Io::kClosed) {
        Close(c, std::nullopt);
        return;
      }
      if (io != Io::kDone) {
        Await(c, io);
        return;
      }
      if (!c.got_bytes) {
        c.got_bytes = true;
        // A kept-alive connection's next request has header_timeout_s from
        // its first byte; a new connection's clock started at accept.
        if (c.kept_alive) SetDeadline(c, After(limits_.header_timeout_s));
      }
      c.in.append(buffer, received);
    }
  }

  void Write(Connection& c) {
    while (c.out_offset < c.out.size()) {
      std::size_t sent = 0;
      const Io io = Send(c, c.out.data() + c.out_offset, c.out.size() - c.out_offset, sent);
      if (io == Io::kClosed) {
        Close(c, std::nullopt);
        return;
      }
      if (io != Io::kDone) {
        Await(c, io);
        return;
      }
      c.out_offset += sent;
    }
    c.out.clear();
    c.out.shrink_to_fit();  // a /metrics body need not stay with an idle connection
    c.out_offset = 0;
    if (c.close_after) {
      StartLinger(c);
    } else {
      StartKeepAlive(c);
    }
  }

  void StartKeepAlive(Connection& c) {
    c.phase = Phase::kReadingHead;
    c.kept_alive = true;
    c.got_bytes = !c.in.empty();  // pipelined bytes already in
    EnterWaiting(c);
    SetDeadline(c, After(c.got_bytes ? limits_.header_timeout_s : limits_.keep_alive_timeout_s));
    SetInterest(c, EPOLLIN);
    // Bytes may already wait, in `in` or inside OpenSSL where epoll cannot
    // see them, so whoever wrote the response reads next: ReadHead's own
    // loop when it answered synchronously, else OnEvent or
    // FinishAuthentications. Not from here, which would recurse once per
    // pipelined request.
  }

  // After a response that closes the connection, its request's body (never
  // read) or a pipelined request may still be on the way. Closing with
  // unread data makes the kernel send RST, which can destroy the response
  // before the client reads it; so send FIN, and read and discard until
  // the client closes, kLinger passes or kLingerBytes came in.
  void StartLinger(Connection& c) {
    c.phase = Phase::kLingering;
    c.in.clear();
    c.in.shrink_to_fit();
    if (c.ssl) {
      ERR_clear_error();
      SSL_shutdown(c.ssl.get());  // close_notify, best effort
      ERR_clear_error();
    }
    ::shutdown(c.fd, SHUT_WR);
    EnterWaiting(c);
    SetDeadline(c, SteadyClock::now() + kLinger);
    SetInterest(c, EPOLLIN);
    Linger(c);
  }

  void Linger(Connection& c) {
    char buffer[kReadChunk];
    while (true) {
      const ssize_t n = ::recv(c.fd, buffer, sizeof buffer, 0);
      if (n > 0) {
        c.lingered += static_cast<std::size_t>(n);
        if (c.lingered > kLingerBytes) break;
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
      break;
    }
    Close(c, std::nullopt);
  }

  // ---- requests ----

  void Dispatch(Connection& c, std::size_t head_end) {
    auto parsed = ParseRequestHead(std::string_view(c.in).substr(0, head_end));
    c.in.erase(0, head_end);
    c.got_bytes = false;
    if (!parsed.ok()) {
      Reject(c, 400, "bad request: " + parsed.error().message + "\n");
      return;
    }
    HttpRequestHead& request = *parsed;
    if (request.major_version != 1) {
      Reject(c, 505, "only HTTP/1.0 and HTTP/1.1 are served\n");
      return;
    }
    if (request.has_transfer_encoding) {
      Reject(c, 501, "request bodies with a Transfer-Encoding are not supported\n");
      return;
    }
    if (request.content_length > limits_.max_body_bytes) {
      Reject(c, 413, "request body too large\n");
      return;
    }
    // The body is never read: nothing here takes one. After answering, the
    // connection closes (lingering) rather than skip it.
    c.close_after = !request.KeepAlive() || request.content_length > 0;

    if (auth_) {
      const auto credentials = ParseBasicAuthorization(request.Field("Authorization").value_or(""));
      if (!credentials) {
        Respond(c, request, Unauthorized());
        return;
      }
      if (!auth_->CheckCached(credentials->user, credentials->password)) {
        Authenticate(c, std::move(request), *credentials);
        return;
      }
    }
    Respond(c, request, Route(request));
  }

  // Answers a request the server will not serve, and closes.
  void Reject(Connection& c, int status, std::string body) {
    state_.CountRejectedConnection(ConnectionRejection::kBadRequest);
    c.close_after = true;
    c.in.clear();
    Response response;
    response.status = status;
    response.body = std::move(body);
    StartResponse(c, response, false);
  }

  static Response Unauthorized() {
    Response response;
    response.status = 401;
    response.headers.emplace_back("WWW-Authenticate", "Basic realm=\"ofu\"");
    response.body = "unauthorized\n";
    return response;
  }

  Response Route(const HttpRequestHead& request) const {
    Response response;
    if (request.method != "GET" && request.method != "HEAD") {
      response.status = 405;
      response.headers.emplace_back("Allow", "GET, HEAD");
      response.body = "method not allowed: use GET\n";
    } else if (request.path == "/metrics") {
      const formats::ExpositionFormat format = formats::NegotiateExposition(request.JoinedField("Accept"));
      response.content_type = std::string(formats::ContentTypeOf(format));
      response.body = state_.Render(format);
    } else if (request.path == "/healthz") {
      const Health health = state_.CheckHealth();
      response.status = health.healthy ? 200 : 503;
      response.body = health.healthy ? std::string("ok\n") : health.reason + "\n";
    } else if (request.path == "/") {
      response.body = kIndexPage;
    } else {
      response.status = 404;
      response.body = "not found; see /\n";
    }
    return response;
  }

  void Respond(Connection& c, const HttpRequestHead& request, const Response& response) {
    StartResponse(c, response, request.method == "HEAD", request.minor_version == 0 && request.KeepAlive());
  }

  // Writes `response` (headers only for HEAD), as much as the socket takes now.
  void StartResponse(Connection& c, const Response& response, bool head_only, bool say_keep_alive = false) {
    std::string& out = c.out;
    out.clear();
    out.reserve(160 + (head_only ? 0 : response.body.size()));
    out += fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n", response.status,
                       ReasonPhrase(response.status), response.content_type, response.body.size());
    for (const auto& [name, value] : response.headers) out += fmt::format("{}: {}\r\n", name, value);
    if (c.close_after) {
      out += "Connection: close\r\n";
    } else if (say_keep_alive) {
      out += "Connection: keep-alive\r\n";
    }
    out += "\r\n";
    if (!head_only) out += response.body;
    c.out_offset = 0;
    c.phase = Phase::kWriting;
    LeaveWaiting(c);
    SetDeadline(c, After(limits_.write_timeout_s));
    Write(c);
  }

  // ---- basic auth off the loop ----

  void Authenticate(Connection& c, HttpRequestHead request, const BasicCredentials& credentials) {
    {
      std::lock_guard lock(auth_mutex_);
      if (auth_jobs_.size() < kMaxAuthQueue) {
        auth_jobs_.push_back({c.id, credentials.user, credentials.password});
        c.request = std::move(request);
        c.phase = Phase::kAuthenticating;
        LeaveWaiting(c);
        c.deadline = TimePoint::max();
        SetInterest(c, 0);
        auth_ready_.notify_one();
        return;
      }
    }
    // A queue this long means someone is guessing passwords: answer at once
    // rather than let the guesses queue up ahead of Prometheus.
    Response busy;
    busy.status = 503;
    busy.headers.emplace_back("Retry-After", "1");
    busy.body = "too many authentication checks in progress; retry\n";
    c.close_after = true;
    Respond(c, request, busy);
  }

  void RunAuth() {
    NameThisThread("ofu-http-auth");
    while (true) {
      AuthJob job;
      {
        std::unique_lock lock(auth_mutex_);
        auth_ready_.wait(lock, [this] { return auth_stopping_ || !auth_jobs_.empty(); });
        if (auth_stopping_) return;
        job = std::move(auth_jobs_.front());
        auth_jobs_.pop_front();
      }
      const bool ok = auth_->Check(job.user, job.password);
      std::fill(job.password.begin(), job.password.end(), '\0');
      {
        std::lock_guard lock(auth_mutex_);
        auth_done_.emplace_back(job.connection, ok);
      }
      Wake();
    }
  }

  void FinishAuthentications() {
    std::vector<std::pair<std::uint64_t, bool>> done;
    {
      std::lock_guard lock(auth_mutex_);
      done.swap(auth_done_);
    }
    for (const auto& [id, ok] : done) {
      const auto found = connections_.find(id);
      if (found == connections_.end()) continue;  // closed meanwhile
      Connection& c = *found->second;
      if (c.phase != Phase::kAuthenticating || !c.request) continue;
      const HttpRequestHead request = std::move(*c.request);
      c.request.reset();
      Respond(c, request, ok ? Route(request) : Unauthorized());
      if (!c.closed && c.phase == Phase::kReadingHead) ReadHead(c);  // see StartKeepAlive
    }
  }

  MetricsState& state_;
  const ServerLimits limits_;
  const std::unique_ptr<BasicAuthenticator> auth_;
  const SslCtxPtr ctx_;  // null: plain HTTP
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> open_{0};

  // The loop thread's alone.
  std::unordered_map<std::uint64_t, std::unique_ptr<Connection>> connections_;
  std::unordered_map<std::string, Peer> peers_;
  std::uint64_t next_waiting_ = 0;
  std::vector<std::unique_ptr<Connection>> closed_;
  std::uint64_t next_id_ = kWakeId + 1;
  TimePoint next_sweep_ = TimePoint::max();
  TimePoint accept_paused_until_ = TimePoint::max();

  // Shared with the auth thread, under auth_mutex_.
  std::thread auth_thread_;
  std::mutex auth_mutex_;
  std::condition_variable auth_ready_;
  std::deque<AuthJob> auth_jobs_;
  std::vector<std::pair<std::uint64_t, bool>> auth_done_;
  bool auth_stopping_ = false;
};

namespace {

// A listening socket on host:port, non-blocking; port 0 picks one.
Result<int> Listen(const std::string& host, int port) {
  const auto fail = [&](std::string_view why) {
    return Error::Unavailable("cannot listen on {}:{} ({})", host, port, why);
  };
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return fail(fmt::format("{}; not an address of this host?", ::gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> list(found, ::freeaddrinfo);
  int last_errno = 0;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last_errno = errno;
      continue;
    }
    // SO_REUSEADDR allows a quick restart; deliberately no SO_REUSEPORT, with
    // which a second agent (or any process of the same user) could bind the
    // same port and silently take half the scrapes.
    const int yes = 1;
    const int no = 0;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (a->ai_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof no);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, kListenBacklog) == 0) return fd;
    last_errno = errno;
    ::close(fd);
  }
  return fail(last_errno == EADDRINUSE
                  ? "address in use"
                  : fmt::format("{}; address in use, or not an address of this host?", std::strerror(last_errno)));
}

int BoundPort(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return -1;
  if (address.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
  return -1;
}

}  // namespace

MetricsServer::MetricsServer(MetricsState& state, ServerLimits limits) : state_(state), limits_(limits) {}

MetricsServer::~MetricsServer() { Stop(); }

std::size_t MetricsServer::open_connections() const { return loop_ ? loop_->open_connections() : 0; }

Status MetricsServer::Start(const std::string& listen_address, int port, const std::optional<WebConfig>& web_config) {
  if (loop_) return Error::InvalidArgument("the metrics server is already started");

  SslCtxPtr ctx;
  if (web_config && web_config->tls) {
    ERR_clear_error();
    ctx.reset(SSL_CTX_new(TLS_server_method()));
    std::string tls_error;
    if (!ctx || !SetUpTls(*ctx, *web_config->tls, tls_error)) {
      return Error::Unavailable("{}", "cannot serve TLS: " + (tls_error.empty() ? OpenSslErrors() : tls_error));
    }
  }
  std::unique_ptr<BasicAuthenticator> auth;
  if (web_config && !web_config->basic_auth_users.empty()) {
    auth = std::make_unique<BasicAuthenticator>(web_config->basic_auth_users);
  }
  // Each connection is a descriptor: stay below the process's limit.
  if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    const auto room = files.rlim_cur > static_cast<rlim_t>(2 * kFdReserve) ? files.rlim_cur - kFdReserve
                                                                           : files.rlim_cur / 2;
    limits_.max_connections = std::min<std::size_t>(limits_.max_connections, static_cast<std::size_t>(room));
  }
  limits_.max_connections = std::max<std::size_t>(limits_.max_connections, 1);
  limits_.max_connections_per_peer = std::max<std::size_t>(limits_.max_connections_per_peer, 1);

  OFU_ASSIGN_OR_RETURN(auto listening, Listen(listen_address, port));
  const int bound = BoundPort(listening);
  auto loop = std::make_unique<Loop>(state_, limits_, std::move(auth), std::move(ctx), listening);
  OFU_RETURN_IF_ERROR(loop->Start());
  loop_ = std::move(loop);
  port_ = bound;
  tls_ = web_config && web_config->tls;
  return OkStatus();
}

void MetricsServer::Stop() {
  if (loop_) loop_->Shutdown();
  loop_.reset();
  port_ = 0;
  tls_ = false;
}

}  // namespace ofu::sinks
