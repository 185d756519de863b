// The head of an HTTP/1.x request (request line and header fields), as the
// HTTP server (http_server.h) reads it from a client: bytes from
// the network, so the parser is strict where leniency would let two readers
// disagree about where a request ends (RFC 9112 §2.2, §6.3, §11.2) and
// fuzzed (fuzz/http_request_fuzz.cc).
//
//   FindRequestHeadEnd  where the head ends in what has arrived so far;
//   ParseRequestHead    the head's method, target, version and fields.
//
// Accepted: CRLF or bare LF line ends (RFC 9112 §2.2 allows a recipient to
// take LF alone), empty lines before the request line (§2.2), any method
// token, HTTP/<digit>.<digit> (the server answers 505 to all but 1.x).
// Refused (a kMalformedInput error; the server answers 400 and closes): a
// bare CR, control characters in the target or a field value, whitespace
// between a field name and its colon (§5.1), obsolete line folding (§5.2),
// a Content-Length that is not digits, or several that disagree (§6.3).
// Transfer-Encoding is reported, not decoded: the server serves GET and HEAD
// and answers a request with a body without reading it (see sessions.cc).
//
// Thread-safety: pure functions of their inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ofu/core/result.h"

namespace ofu::net {

struct HttpRequestHead {
  std::string method;  // as sent; methods are case-sensitive
  std::string target;  // as sent
  std::string path;    // the target without its query; for absolute-form, without scheme and authority
  int major_version = 1;
  int minor_version = 1;
  std::vector<std::pair<std::string, std::string>> fields;  // name as sent, value without surrounding whitespace

  std::uint64_t content_length = 0;  // 0 when absent
  bool has_transfer_encoding = false;
  bool connection_close = false;       // "Connection: close"
  bool connection_keep_alive = false;  // "Connection: keep-alive" (HTTP/1.0 clients ask this way)

  // The first field named `name` (case-insensitive); absent when none.
  std::optional<std::string_view> Field(std::string_view name) const;
  // All fields named `name` joined with ", " (RFC 9110 §5.3); "" when none.
  std::string JoinedField(std::string_view name) const;
  // How many fields are named `name`.
  std::size_t CountField(std::string_view name) const;

  // Whether the connection may carry another request after this one's
  // response (RFC 9112 §9.3): HTTP/1.1 unless "close", HTTP/1.0 only with
  // "keep-alive".
  bool KeepAlive() const;
};

// The offset just past the empty line that ends the head in `received`
// (leading empty lines do not count), or absent while it is incomplete.
std::optional<std::size_t> FindRequestHeadEnd(std::string_view received);

// Parses a complete head: `head` as delimited by FindRequestHeadEnd.
Result<HttpRequestHead> ParseRequestHead(std::string_view head);

}  // namespace ofu::net
