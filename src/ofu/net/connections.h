// The HTTP server's connections (http_server.h): the table of open ones,
// the per-peer and total caps with their eviction order, and the deadlines.
// The event loop does the I/O; this file decides who stays, who goes and
// when, with the time passed in, so tests drive it with a clock of their
// own.
//
// A connection is in one phase at a time. Handshake, ReadingHead and
// Lingering wait for the client: they are "waiting", listed per peer oldest
// first (by when the phase began), and the caps evict from the front of
// those lists: the per-peer cap from the newcomer's peer, the total cap from
// the peer with the most connections, so that many attacking addresses with
// many connections each do not evict a scraper's one or two. Writing and
// Authenticating wait for the server and are never evicted. Every phase but
// Authenticating has a deadline; the table says when the next one is due,
// at most every kSweepInterval, and none when none is set: an idle server
// never wakes.
//
// Closed connections are parked until ReleaseClosed (the end of a loop
// iteration), so an event for one that was closed earlier in the same batch
// finds it gone from the table (ids are never reused) and nothing dangles.
//
// Thread-safety: one thread (the server's), except open_connections().
#pragma once

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/net/connection_rejection.h"
#include "ofu/net/http_request.h"
#include "ofu/net/tls.h"

namespace ofu::net {

using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;

inline constexpr auto kSweepInterval = std::chrono::milliseconds(50);  // deadlines are checked at most this often

// `seconds` after `now`.
TimePoint After(TimePoint now, double seconds);

enum class Phase { kHandshake, kReadingHead, kAuthenticating, kWriting, kLingering };

struct Connection {
  std::uint64_t id = 0;
  int fd = -1;  // -1: none (closed, or a test's)
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
  std::uint32_t interest = 0;              // the epoll events asked for
  // The table's bookkeeping.
  bool waiting = false;
  std::uint64_t waiting_since = 0;  // order of entering the waiting phase
  std::list<Connection*>::iterator peer_waiting_at;
};

class ConnectionTable {
 public:
  // `first_id`: the id of the first connection (lower ones are the loop's).
  explicit ConnectionTable(std::uint64_t first_id) : next_id_(first_id) {}
  ~ConnectionTable() { CloseAll(); }
  ConnectionTable(const ConnectionTable&) = delete;
  ConnectionTable& operator=(const ConnectionTable&) = delete;

  // The connection that must close for a newcomer from `peer` to fit under
  // `per_peer` connections per peer and `total` in all, with the cap that
  // evicts it; `refuse` set instead when the cap is reached and no
  // connection there is waiting. Call again after closing the one named: a
  // newcomer may need room under both caps.
  struct Room {
    Connection* evict = nullptr;
    std::optional<ConnectionRejection> reason;  // the cap: evict `evict`, or refuse the newcomer when it is null
  };
  Room MakeRoom(const std::string& peer, std::size_t per_peer, std::size_t total) const;

  // A new connection on `fd` from `peer`, waiting, with `deadline`.
  Connection& Add(int fd, std::string peer, TimePoint deadline);
  Connection* Find(std::uint64_t id);
  std::size_t size() const { return connections_.size(); }
  std::size_t open_connections() const { return open_.load(std::memory_order_relaxed); }

  // Into a waiting phase (to the back of its peer's list), or out of one.
  void EnterWaiting(Connection& c);
  void LeaveWaiting(Connection& c);

  // Closes `c`'s descriptor (and session) and parks it; it leaves the table.
  void Close(Connection& c);
  // Frees the parked connections.
  void ReleaseClosed() { closed_.clear(); }
  // Closes every connection.
  void CloseAll();

  // Deadlines. SetDeadline(c, TimePoint::max()) clears one.
  void SetDeadline(Connection& c, TimePoint deadline);
  void ScheduleSweep(TimePoint when) { next_sweep_ = std::min(next_sweep_, when); }
  TimePoint next_sweep() const { return next_sweep_; }
  // The connections whose deadline is at or before `now`, and the next
  // sweep: the earliest deadline left or `also_due` (a time the loop wants
  // to wake at), but not before now + kSweepInterval; none when neither.
  std::vector<Connection*> Sweep(TimePoint now, TimePoint also_due = TimePoint::max());

 private:
  struct Peer {
    std::size_t count = 0;
    std::list<Connection*> waiting;  // oldest first
  };
  Connection* OldestOfTheBusiestPeer() const;

  std::unordered_map<std::uint64_t, std::unique_ptr<Connection>> connections_;
  std::unordered_map<std::string, Peer> peers_;
  std::vector<std::unique_ptr<Connection>> closed_;
  std::uint64_t next_id_;
  std::uint64_t next_waiting_ = 0;
  TimePoint next_sweep_ = TimePoint::max();
  std::atomic<std::size_t> open_{0};
};

// The peer a connection is counted against: an IPv4 address (also when it
// arrives IPv4-mapped on an IPv6 socket), or an IPv6 /64, the smallest block
// a site is given, so one host cannot take a new address per connection.
std::string PeerKeyOf(const sockaddr_storage& address);

// A listening socket on host:port, non-blocking; port 0 picks one. Errors:
// kUnavailable naming the address and why.
Result<int> Listen(const std::string& host, int port);
// The port `fd` is bound to; -1 when unknown.
int BoundPort(int fd);

}  // namespace ofu::net
