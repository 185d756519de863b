// Why the HTTP server (http_server.h) closed or refused a connection it did
// not answer normally. The server reports each one to its owner, which
// counts them (the agent: ofu_http_connections_rejected_total{reason},
// sinks/metrics_state.h, which also names them).
//
// Thread-safety: plain values.
#pragma once

#include <cstddef>

namespace ofu::net {

enum class ConnectionRejection {
  kPerPeerLimit,          // "per_peer_limit": its peer address had max_connections_per_peer
  kTotalLimit,            // "total_limit": the server had max_connections
  kHeaderDeadline,        // "header_deadline": the request head was not complete in time
  kTlsHandshakeDeadline,  // "tls_handshake_deadline": the TLS handshake was not complete in time
  kTlsHandshakeFailed,    // "tls_handshake_failed": not TLS, or no protocol/cipher in common
  kWriteDeadline,         // "write_deadline": the client did not read its response in time
  kBadRequest,            // "bad_request": a malformed or oversized request, answered and closed
};
inline constexpr std::size_t kConnectionRejections = 7;

}  // namespace ofu::net
