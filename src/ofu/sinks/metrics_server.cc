#include "ofu/sinks/metrics_server.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <chrono>
#include <utility>

#include <fmt/format.h>
#include <httplib.h>

namespace ofu::sinks {
namespace {

constexpr char kIndexPage[] =
    "ofu agent\n"
    "\n"
    "/metrics  OFU and tensor activity per GPU (Prometheus text or OpenMetrics)\n"
    "/healthz  200 when windows arrive and some GPU answers, else 503 with the reason\n";

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

// Sets up the TLS context of the SSLServer; on failure `error` says why.
bool SetUpTls(SSL_CTX& ctx, const TlsServerConfig& tls, std::string& error) {
  ERR_clear_error();
  const int min_version = tls.min_version == TlsVersion::kTls13 ? TLS1_3_VERSION : TLS1_2_VERSION;
  if (SSL_CTX_set_min_proto_version(&ctx, min_version) != 1) {
    error = "cannot set the minimum TLS version: " + OpenSslErrors();
    return false;
  }
  SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
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

std::size_t HeaderBytes(const httplib::Request& request) {
  std::size_t bytes = request.method.size() + request.target.size() + request.version.size();
  for (const auto& [name, value] : request.headers) bytes += name.size() + value.size() + 4;  // ": " CRLF
  return bytes;
}

bool IsKnownMethod(const std::string& method) {
  return method == "GET" || method == "HEAD" || method == "POST" || method == "PUT" || method == "PATCH" ||
         method == "DELETE" || method == "OPTIONS";
}

void MethodNotAllowed(const httplib::Request&, httplib::Response& response) {
  response.status = 405;
  response.set_header("Allow", "GET, HEAD");
  response.set_content("method not allowed: use GET\n", "text/plain; charset=utf-8");
}

}  // namespace

MetricsServer::MetricsServer(MetricsState& state, ServerLimits limits) : state_(state), limits_(limits) {}

MetricsServer::~MetricsServer() { Stop(); }

Status MetricsServer::Start(const std::string& listen_address, int port, const std::optional<WebConfig>& web_config) {
  if (server_) return Error{ErrorCode::kInvalidArgument, "the metrics server is already started"};

  std::unique_ptr<httplib::Server> server;
  if (web_config && web_config->tls) {
    std::string tls_error;
    const TlsServerConfig tls = *web_config->tls;
    auto ssl_server = std::make_unique<httplib::SSLServer>(
        [&tls, &tls_error](SSL_CTX& ctx) { return SetUpTls(ctx, tls, tls_error); });
    if (!ssl_server->is_valid()) {
      return Error{ErrorCode::kUnavailable,
                   "cannot serve TLS: " + (tls_error.empty() ? OpenSslErrors() : tls_error)};
    }
    server = std::move(ssl_server);
  } else {
    server = std::make_unique<httplib::Server>();
  }

  // Bounds: httplib otherwise accepts bodies of any size and starts a pool
  // of max(8, cores - 1) threads.
  const std::size_t threads = limits_.threads;
  server->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server->set_payload_max_length(limits_.max_body_bytes);
  server->set_read_timeout(limits_.read_timeout_s, 0);
  server->set_write_timeout(limits_.write_timeout_s, 0);
  server->set_keep_alive_timeout(limits_.keep_alive_timeout_s);
  // httplib's default adds SO_REUSEPORT, with which a second agent (or any
  // process of the same user) binds the same port and silently takes half
  // the scrapes. SO_REUSEADDR alone allows a quick restart and nothing more.
  server->set_socket_options([](socket_t socket) {
    int yes = 1;
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server_ = std::move(server);
  auth_.reset();
  if (web_config && !web_config->basic_auth_users.empty()) {
    auth_ = std::make_unique<BasicAuthenticator>(web_config->basic_auth_users);
  }
  Route();

  const int bound = port == 0 ? server_->bind_to_any_port(listen_address)
                              : (server_->bind_to_port(listen_address, port) ? port : -1);
  if (bound < 0) {
    server_.reset();
    return Error{ErrorCode::kUnavailable,
                 fmt::format("cannot listen on {}:{} (address in use, or not an address of this host?)",
                             listen_address, port)};
  }
  port_ = bound;
  tls_ = web_config && web_config->tls;

  httplib::Server* serving = server_.get();
  thread_ = std::thread([serving] { serving->listen_after_bind(); });
  // stop() does nothing until the accept loop runs, so wait for it: a Stop()
  // right after Start() must not leave the thread serving forever.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!serving->is_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!serving->is_running()) {
    Stop();
    return Error{ErrorCode::kUnavailable, fmt::format("the server on {}:{} did not start", listen_address, port)};
  }
  return OkStatus();
}

void MetricsServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
  port_ = 0;
  tls_ = false;
}

void MetricsServer::Route() {
  httplib::Server& server = *server_;

  // Before routing, so no path and no method is reachable without
  // credentials, and oversized headers go no further.
  server.set_pre_routing_handler([this](const httplib::Request& request, httplib::Response& response) {
    if (auth_) {
      const auto credentials = ParseBasicAuthorization(request.get_header_value("Authorization"));
      if (!credentials || !auth_->Check(credentials->user, credentials->password)) {
        response.status = 401;
        response.set_header("WWW-Authenticate", "Basic realm=\"ofu\"");
        response.set_content("unauthorized\n", "text/plain; charset=utf-8");
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    if (HeaderBytes(request) > limits_.max_header_bytes) {
      response.status = 431;
      response.set_header("Connection", "close");
      response.set_content("request headers too large\n", "text/plain; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!IsKnownMethod(request.method)) {  // TRACE, CONNECT, ...: httplib would answer 404
      MethodNotAllowed(request, response);
      response.set_header("Connection", "close");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  server.Get("/metrics", [this](const httplib::Request& request, httplib::Response& response) {
    const formats::ExpositionFormat format = formats::NegotiateExposition(request.get_header_value("Accept"));
    response.set_content(state_.Render(format), std::string(formats::ContentTypeOf(format)));
  });
  server.Get("/healthz", [this](const httplib::Request&, httplib::Response& response) {
    const Health health = state_.CheckHealth();
    response.status = health.healthy ? 200 : 503;
    response.set_content(health.healthy ? std::string("ok\n") : health.reason + "\n", "text/plain; charset=utf-8");
  });
  server.Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content(kIndexPage, "text/plain; charset=utf-8");
  });
  server.Get(".*", [](const httplib::Request&, httplib::Response& response) {
    response.status = 404;
    response.set_content("not found; see /\n", "text/plain; charset=utf-8");
  });
  // Registered for every path so that httplib reads (and bounds) the body
  // before answering, keeping a keep-alive connection in step.
  server.Post(".*", MethodNotAllowed);
  server.Put(".*", MethodNotAllowed);
  server.Patch(".*", MethodNotAllowed);
  server.Delete(".*", MethodNotAllowed);
  server.Options(".*", MethodNotAllowed);
}

}  // namespace ofu::sinks
