#include "ofu/net/dispatch.h"

#include <fmt/format.h>

namespace ofu::net {
namespace {

Reply Refusal(int status, std::string body) {
  Reply reply;
  reply.status = status;
  reply.body = std::move(body);
  return reply;
}

}  // namespace

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

std::variant<HttpRequestHead, Reply> CheckRequest(std::string_view head, std::size_t max_body_bytes) {
  auto parsed = ParseRequestHead(head);
  if (!parsed.ok()) return Refusal(400, "bad request: " + parsed.error().message + "\n");
  if (parsed->major_version != 1) return Refusal(505, "only HTTP/1.0 and HTTP/1.1 are served\n");
  if (parsed->has_transfer_encoding) {
    return Refusal(501, "request bodies with a Transfer-Encoding are not supported\n");
  }
  if (parsed->content_length > max_body_bytes) return Refusal(413, "request body too large\n");
  return std::move(*parsed);
}

Reply Unauthorized() {
  Reply reply = Refusal(401, "unauthorized\n");
  reply.headers.emplace_back("WWW-Authenticate", "Basic realm=\"ofu\"");
  return reply;
}

Reply AuthenticationBusy() {
  Reply reply = Refusal(503, "too many authentication checks in progress; retry\n");
  reply.headers.emplace_back("Retry-After", "1");
  return reply;
}

void Router::Add(std::string path, Handler handler) { handlers_[std::move(path)] = std::move(handler); }

Reply Router::Route(const HttpRequestHead& request) const {
  if (request.method != "GET" && request.method != "HEAD") {
    Reply reply = Refusal(405, "method not allowed: use GET\n");
    reply.headers.emplace_back("Allow", "GET, HEAD");
    return reply;
  }
  const auto found = handlers_.find(request.path);
  if (found == handlers_.end()) return Refusal(404, "not found; see /\n");
  return found->second(request);
}

std::string FormatReply(const Reply& reply, bool head_only, bool close, bool say_keep_alive) {
  std::string out;
  out.reserve(160 + (head_only ? 0 : reply.body.size()));
  out += fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n", reply.status,
                     ReasonPhrase(reply.status), reply.content_type, reply.body.size());
  for (const auto& [name, value] : reply.headers) out += fmt::format("{}: {}\r\n", name, value);
  if (close) {
    out += "Connection: close\r\n";
  } else if (say_keep_alive) {
    out += "Connection: keep-alive\r\n";
  }
  out += "\r\n";
  if (!head_only) out += reply.body;
  return out;
}

}  // namespace ofu::net
