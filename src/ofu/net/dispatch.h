// Request dispatch for the HTTP server (http_server.h): from a request head
// to the reply, and the reply to the bytes sent. No sockets here, so every
// decision is a pure function a test can call.
//
//   CheckRequest  parses a complete head and refuses what the server does
//                 not serve (400 malformed, 505 not HTTP/1.x, 501 a
//                 Transfer-Encoding, 413 a Content-Length over the limit);
//   Router        paths to handlers: GET and HEAD only (405 with Allow for
//                 other methods), 404 for a path it does not know;
//   FormatReply   the status line, Content-Type, Content-Length, extra
//                 fields and Connection, then the body unless HEAD.
//
// Thread-safety: the functions are pure; a Router is read-only once built
// and may be used from any thread, its handlers on the server's thread.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ofu/net/http_request.h"

namespace ofu::net {

inline constexpr char kTextPlain[] = "text/plain; charset=utf-8";

struct Reply {
  int status = 200;
  std::string content_type = kTextPlain;
  std::string body;
  std::vector<std::pair<std::string_view, std::string>> headers;  // besides Content-Type/-Length, Connection
};

// "OK", "Not Found", ... for the statuses the server sends; "Unknown" else.
std::string_view ReasonPhrase(int status);

// The request in `head` (as delimited by FindRequestHeadEnd), or the reply
// that refuses it; a refused request's connection is closed after the reply.
std::variant<HttpRequestHead, Reply> CheckRequest(std::string_view head, std::size_t max_body_bytes);

// 401 with a Basic challenge for realm "ofu".
Reply Unauthorized();
// 503 with Retry-After: 1, for when too many password checks are queued.
Reply AuthenticationBusy();

class Router {
 public:
  using Handler = std::function<Reply(const HttpRequestHead&)>;

  // Serves `path` (exact match, without the query) with `handler`; a later
  // Add of the same path replaces it.
  void Add(std::string path, Handler handler);

  // The handler's reply for GET and HEAD of a known path; else 405 or 404.
  Reply Route(const HttpRequestHead& request) const;

 private:
  std::map<std::string, Handler, std::less<>> handlers_;
};

// The bytes of `reply`: headers only when `head_only` (a HEAD request; the
// Content-Length is still the body's). `close` sends "Connection: close";
// else `say_keep_alive` sends "Connection: keep-alive" (to an HTTP/1.0
// client that asked for it).
std::string FormatReply(const Reply& reply, bool head_only, bool close, bool say_keep_alive);

}  // namespace ofu::net
