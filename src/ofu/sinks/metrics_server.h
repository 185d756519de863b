// The node agent's HTTP endpoint: /metrics, /healthz and an index page,
// served from MetricsState by one event-driven thread of its own (epoll,
// non-blocking sockets, OpenSSL for TLS).
//
//   GET /metrics  the metrics of docs/prometheus.md §1, as OpenMetrics when
//                 the Accept header asks for it (Prometheus does), else
//                 Prometheus text 0.0.4; Content-Type to match.
//   GET /healthz  200 "ok\n" while MetricsState::CheckHealth() is healthy,
//                 else 503 with the reason.
//   GET /         a short text page listing the endpoints.
// Other paths: 404. HEAD is served like GET without the body; other methods
// get 405. HTTP/1.0 and 1.1, keep-alive and pipelining; no HTTP/2.
//
// Security (docs/agent-security.md):
//   * the listen address is the caller's; kDefaultListenAddress (loopback)
//     is what the agent uses unless told otherwise, so a fresh install is
//     not reachable from the network;
//   * with a WebConfig, TLS (its tls_server_config) and basic auth (its
//     basic_auth_users). When users are configured every path needs them,
//     /healthz included, as with exporter-toolkit's exporters;
//   * a slow or hostile client cannot exhaust the agent's memory or threads,
//     nor keep others from being served (ServerLimits): no connection ever
//     holds a thread, since one thread multiplexes them all and each request
//     is answered as soon as its head is in; a connection has a total
//     deadline for its TLS handshake and request head (not a per-read one
//     that each trickled byte resets) and for writing its response;
//     connections are capped per peer address and in total, and at a cap
//     the oldest connection that is not being answered (of that peer; of
//     the peer with the most connections for the total) is closed to admit
//     the new one; request heads and bodies are bounded (431, 413; a body is
//     never read). bcrypt checks of uncached credentials run on a second
//     thread, a bounded queue of them, so wrong passwords cannot stall
//     /metrics either. What was closed or refused, and why, is counted in
//     ofu_http_connections_rejected_total{reason} (MetricsState).
//
// Thread-safety: Start and Stop belong to the owner's thread; requests run
// on the server's thread and only call MetricsState's thread-safe
// Render/CheckHealth/CountRejectedConnection.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ofu/core/result.h"
#include "ofu/sinks/metrics_state.h"
#include "ofu/sinks/web_config.h"

namespace ofu::sinks {

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
  // leave 64 descriptors of RLIMIT_NOFILE to the rest of the agent.
  std::size_t max_connections = 256;
  std::size_t max_connections_per_peer = 32;
};

class MetricsServer {
 public:
  // `state` must outlive the server.
  explicit MetricsServer(MetricsState& state, ServerLimits limits = {});
  ~MetricsServer();  // Stop()s

  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

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

  MetricsState& state_;
  ServerLimits limits_;
  std::unique_ptr<Loop> loop_;
  int port_ = 0;
  bool tls_ = false;
};

}  // namespace ofu::sinks
