#include "ofu/net/connections.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

namespace ofu::net {
namespace {

constexpr int kListenBacklog = 128;

}  // namespace

TimePoint After(TimePoint now, double seconds) {
  return now + std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(seconds));
}

ConnectionTable::Room ConnectionTable::MakeRoom(const std::string& peer, std::size_t per_peer,
                                                std::size_t total) const {
  if (const auto found = peers_.find(peer); found != peers_.end() && found->second.count >= per_peer) {
    const auto& waiting = found->second.waiting;
    return {waiting.empty() ? nullptr : waiting.front(), ConnectionRejection::kPerPeerLimit};
  }
  if (connections_.size() >= total) return {OldestOfTheBusiestPeer(), ConnectionRejection::kTotalLimit};
  return {};
}

// A scan: there are at most max_connections peers, and it runs only at the
// total cap.
Connection* ConnectionTable::OldestOfTheBusiestPeer() const {
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

Connection& ConnectionTable::Add(int fd, std::string peer, TimePoint deadline) {
  auto connection = std::make_unique<Connection>();
  Connection& c = *connection;
  c.id = next_id_++;
  c.fd = fd;
  c.peer = std::move(peer);
  peers_[c.peer].count += 1;
  connections_.emplace(c.id, std::move(connection));
  open_.store(connections_.size(), std::memory_order_relaxed);
  EnterWaiting(c);
  SetDeadline(c, deadline);
  return c;
}

Connection* ConnectionTable::Find(std::uint64_t id) {
  const auto found = connections_.find(id);
  return found == connections_.end() ? nullptr : found->second.get();
}

void ConnectionTable::EnterWaiting(Connection& c) {
  if (c.waiting) LeaveWaiting(c);
  auto& peer_waiting = peers_[c.peer].waiting;
  c.peer_waiting_at = peer_waiting.insert(peer_waiting.end(), &c);
  c.waiting_since = next_waiting_++;
  c.waiting = true;
}

void ConnectionTable::LeaveWaiting(Connection& c) {
  if (!c.waiting) return;
  peers_[c.peer].waiting.erase(c.peer_waiting_at);
  c.waiting = false;
}

void ConnectionTable::Close(Connection& c) {
  if (c.closed) return;
  LeaveWaiting(c);
  c.ssl.reset();
  if (c.fd >= 0) ::close(c.fd);  // also takes it out of the epoll set
  c.fd = -1;
  c.closed = true;
  if (const auto peer = peers_.find(c.peer); peer != peers_.end() && --peer->second.count == 0) peers_.erase(peer);
  const auto found = connections_.find(c.id);
  closed_.push_back(std::move(found->second));
  connections_.erase(found);
  open_.store(connections_.size(), std::memory_order_relaxed);
}

void ConnectionTable::CloseAll() {
  for (auto& [id, connection] : connections_) {
    connection->ssl.reset();
    if (connection->fd >= 0) ::close(connection->fd);
    connection->fd = -1;
  }
  connections_.clear();
  peers_.clear();
  closed_.clear();
  open_.store(0);
}

void ConnectionTable::SetDeadline(Connection& c, TimePoint deadline) {
  c.deadline = deadline;
  ScheduleSweep(deadline);
}

std::vector<Connection*> ConnectionTable::Sweep(TimePoint now, TimePoint also_due) {
  TimePoint next = also_due;
  std::vector<Connection*> expired;
  for (auto& [id, connection] : connections_) {
    if (connection->deadline <= now) {
      expired.push_back(connection.get());
    } else {
      next = std::min(next, connection->deadline);
    }
  }
  next_sweep_ = next == TimePoint::max() ? next : std::max(next, now + kSweepInterval);
  return expired;
}

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

}  // namespace ofu::net
