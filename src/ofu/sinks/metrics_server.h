// The node agent's HTTP endpoint: /metrics, /healthz and an index page,
// served from MetricsState by ofu's HTTP server (net/http_server.h, which
// says how connections, TLS, basic auth and limits work).
//
//   GET /metrics  the metrics of docs/prometheus.md §1, as OpenMetrics when
//                 the Accept header asks for it (Prometheus does), else
//                 Prometheus text 0.0.4; Content-Type to match.
//   GET /healthz  200 "ok\n" while MetricsState::CheckHealth() is healthy,
//                 else 503 with the reason.
//   GET /         a short text page listing the endpoints.
// Other paths: 404; other methods: 405 (net::Router). With basic auth
// configured every path needs it, /healthz included. What the server closes
// or refuses is counted in ofu_http_connections_rejected_total{reason}.
//
// Thread-safety: Start and Stop belong to the owner's thread; requests run
// on the server's thread and only call MetricsState's thread-safe
// Render/CheckHealth/CountRejectedConnection.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "ofu/core/result.h"
#include "ofu/net/dispatch.h"
#include "ofu/net/http_server.h"
#include "ofu/net/web_config.h"
#include "ofu/sinks/metrics_state.h"

namespace ofu::sinks {

// The agent's routes on `state`, which must outlive them.
net::Router MetricsRoutes(MetricsState& state);

class MetricsServer {
 public:
  // `state` must outlive the server.
  explicit MetricsServer(MetricsState& state, net::ServerLimits limits = {});

  // As net::HttpServer::Start.
  Status Start(const std::string& listen_address, int port, const std::optional<net::WebConfig>& web_config) {
    return server_.Start(listen_address, port, web_config);
  }
  void Stop() { server_.Stop(); }

  int port() const { return server_.port(); }
  bool tls() const { return server_.tls(); }
  const net::ServerLimits& limits() const { return server_.limits(); }
  std::size_t open_connections() const { return server_.open_connections(); }

 private:
  net::HttpServer server_;
};

}  // namespace ofu::sinks
