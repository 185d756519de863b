// ofu's HTTP server: one event-driven thread of its own (epoll,
// non-blocking sockets, OpenSSL for TLS) serving the routes its owner gives
// (dispatch.h). The agent serves /metrics, /healthz and / through it
// (sinks/metrics_server.h).
//
// Only GET and HEAD are served; other methods get 405, unknown paths 404
// (Router). HEAD is served like GET without the body. HTTP/1.0 and 1.1,
// keep-alive and pipelining; no HTTP/2.
//
// Security (docs/agent-security.md):
//   * the listen address is the caller's; kDefaultListenAddress (loopback)
//     is what the agent uses unless told otherwise, so a fresh install is
//     not reachable from the network;
//   * with a WebConfig, TLS (its tls_server_config; tls.h) and basic auth
//     (its basic_auth_users; basic_auth.h). When users are configured every
//     path needs them, as with exporter-toolkit's exporters;
//   * a slow or hostile client cannot exhaust the server's memory or threads,
//     nor keep others from being served (ServerLimits): no connection ever
//     holds a thread, since one thread multiplexes them all and each request
//     is answered as soon as its head is in; a connection has a total
//     deadline for its TLS handshake and request head (not a per-read one
//     that each trickled byte resets) and for writing its response;
//     connections are capped per peer address and in total, and at a cap
//     the oldest connection that is not being answered (of that peer; of
//     the peer with the most connections for the total) is closed to admit
//     the new one (connections.h); request heads and bodies are bounded
//     (431, 413; a body is never read). bcrypt checks of uncached
//     credentials run on a second thread, a bounded queue of them, so wrong
//     passwords cannot stall the routes either. What was closed or refused,
//     and why, goes to the owner's RejectionCounter.
//
// Thread-safety: Start and Stop belong to the owner's thread; the routes'
// handlers and the RejectionCounter run on the server's thread.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ofu/core/result.h"
#include "ofu/net/connection_rejection.h"
#include "ofu/net/dispatch.h"
#include "ofu/net/web_config.h"

namespace ofu::net {

// Loopback only: exposing the endpoint is a decision, not a default.
inline constexpr std::string_view kDefaultListenAddress = "127.0.0.1";

struct ServerLimits {
  std::size_t max_body_bytes = 8 * 1024;    // a Content-Length above this: 413 (bodies are never read)
  std::size_t max_header_bytes = 8 * 1024;  // request line and header fields together; larger: 431
  // Total time for a request's head: from accept (TLS handshake included)
  // for the first request, from its first byte for a later one on a
  // kept-alive connection. Trickling bytes does not extend it.
  double header_timeout_s = 5;
  double keep_alive_timeout_s = 5;  // a kept-alive connection that sends nothing this long is closed
  double write_timeout_s = 5;       // total time to send one response
  // Connection caps. At the per-peer cap the peer's oldest connection that
  // is not being answered is closed for the new one; at the total cap, that
  // of the peer with the most connections. A peer is an IPv4 address or an
  // IPv6 /64. max_connections is lowered at Start to
  // leave 64 descriptors of RLIMIT_NOFILE to the rest of the process.
  std::size_t max_connections = 256;
  std::size_t max_connections_per_peer = 32;
};

class HttpServer {
 public:
  // Told of every connection closed or refused for a ConnectionRejection.
  using RejectionCounter = std::function<void(ConnectionRejection)>;

  HttpServer(Router router, RejectionCounter count_rejection, ServerLimits limits = {});
  ~HttpServer();  // Stop()s

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds `listen_address`:`port` (port 0: any free port, see port()) and
  // serves on a new thread until Stop(). With `web_config`, TLS and/or
  // basic auth as it says; its cert/key files are loaded now, and an error
  // names them. Errors: kUnavailable (cannot bind, bad certificate or key),
  // kInvalidArgument (already started).
  Status Start(const std::string& listen_address, int port, const std::optional<WebConfig>& web_config);

  // Stops serving, closes every connection and joins the threads; a
  // response being written is cut off. Idempotent; returns promptly.
  void Stop();

  // The bound port; 0 before Start.
  int port() const { return port_; }
  bool tls() const { return tls_; }
  // The limits in force (max_connections as lowered for RLIMIT_NOFILE).
  const ServerLimits& limits() const { return limits_; }
  // Connections open now; for tests and benchmarks. Thread-safe.
  std::size_t open_connections() const;

 private:
  class Loop;

  const Router router_;
  const RejectionCounter count_rejection_;
  ServerLimits limits_;
  std::unique_ptr<Loop> loop_;
  int port_ = 0;
  bool tls_ = false;
};

}  // namespace ofu::net
