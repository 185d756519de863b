#include "ofu/sinks/metrics_server.h"

#include <string>

#include "ofu/formats/exposition.h"

namespace ofu::sinks {
namespace {

constexpr char kIndexPage[] =
    "ofu agent\n"
    "\n"
    "/metrics  OFU and tensor activity per GPU (Prometheus text or OpenMetrics)\n"
    "/healthz  200 when windows arrive and some GPU answers, else 503 with the reason\n";

}  // namespace

net::Router MetricsRoutes(MetricsState& state) {
  net::Router router;
  router.Add("/metrics", [&state](const net::HttpRequestHead& request) {
    const formats::ExpositionFormat format = formats::NegotiateExposition(request.JoinedField("Accept"));
    net::Reply reply;
    reply.content_type = std::string(formats::ContentTypeOf(format));
    reply.body = state.Render(format);
    return reply;
  });
  router.Add("/healthz", [&state](const net::HttpRequestHead&) {
    const Health health = state.CheckHealth();
    net::Reply reply;
    reply.status = health.healthy ? 200 : 503;
    reply.body = health.healthy ? std::string("ok\n") : health.reason + "\n";
    return reply;
  });
  router.Add("/", [](const net::HttpRequestHead&) {
    net::Reply reply;
    reply.body = kIndexPage;
    return reply;
  });
  return router;
}

MetricsServer::MetricsServer(MetricsState& state, net::ServerLimits limits)
    : server_(
          MetricsRoutes(state), [&state](ConnectionRejection reason) { state.CountRejectedConnection(reason); },
          limits) {}

}  // namespace ofu::sinks
