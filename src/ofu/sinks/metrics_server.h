// The node agent's HTTP endpoint: /metrics, /healthz and an index page,
// served from MetricsState on a thread of its own (cpp-httplib).
//
//   GET /metrics  the metrics of docs/prometheus.md §1, as OpenMetrics when
//                 the Accept header asks for it (Prometheus does), else
//                 Prometheus text 0.0.4; Content-Type to match.
//   GET /healthz  200 "ok\n" while MetricsState::CheckHealth() is healthy,
//                 else 503 with the reason.
//   GET /         a short text page listing the endpoints.
// Other paths: 404. HEAD is served like GET without the body; other methods
// get 405.
//
// Security (docs/agent-security.md):
//   * the listen address is the caller's; kDefaultListenAddress (loopback)
//     is what the agent uses unless told otherwise, so a fresh install is
//     not reachable from the network;
//   * with a WebConfig, TLS (its tls_server_config) and basic auth (its
//     basic_auth_users). When users are configured every path needs them,
//     /healthz included, as with exporter-toolkit's exporters;
//   * requests are bounded (ServerLimits): small bodies, small headers,
//     read/write timeouts and a fixed pool of worker threads, so a slow or
//     hostile client cannot exhaust the agent's memory or threads.
//
// Thread-safety: Start and Stop belong to the owner's thread; requests run
// on the server's workers and only call MetricsState's thread-safe
// Render/CheckHealth.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "ofu/core/result.h"
#include "ofu/sinks/metrics_state.h"
#include "ofu/sinks/web_config.h"

namespace httplib {
class Server;
}

namespace ofu::sinks {

// Loopback only: exposing the endpoint is a decision, not a default.
inline constexpr std::string_view kDefaultListenAddress = "127.0.0.1";

struct ServerLimits {
  std::size_t max_body_bytes = 8 * 1024;    // request bodies (GET has none); larger: 413
  std::size_t max_header_bytes = 8 * 1024;  // all request headers together; larger: 431
  int read_timeout_s = 5;                   // per read of a request
  int write_timeout_s = 5;                  // per write of a response
  int keep_alive_timeout_s = 5;             // idle keep-alive connections close after this
  std::size_t threads = 4;                  // worker threads; further connections wait
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

  // Stops accepting, finishes requests in flight and joins the thread.
  // Idempotent. May wait up to keep_alive_timeout_s for an idle client.
  void Stop();

  // The bound port; 0 before Start.
  int port() const { return port_; }
  bool tls() const { return tls_; }

 private:
  void Route();

  MetricsState& state_;
  ServerLimits limits_;
  std::unique_ptr<BasicAuthenticator> auth_;  // null: no basic auth
  std::unique_ptr<httplib::Server> server_;   // an httplib::SSLServer with TLS
  std::thread thread_;
  int port_ = 0;
  bool tls_ = false;
};

}  // namespace ofu::sinks
