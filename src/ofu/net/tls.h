// TLS for the HTTP server (http_server.h), on OpenSSL, and the one read and
// write the server does on a connection, TLS or plain.
//
//   TlsContext          the server's SSL_CTX as the web config says
//                       (certificate chain, key, minimum version), with no
//                       session cache, compression or renegotiation;
//   NextFirstRecordStep when a new connection may get its SSL object (see
//                       there: a stalled handshake costs no OpenSSL memory);
//   StepHandshake       one non-blocking step of the server handshake;
//   Receive, Send       one non-blocking read or write.
//
// Thread-safety: a TlsContext may make sessions from one thread at a time
// (the server's); a session (SSL) belongs to its connection's thread; the
// free functions keep no state of their own. OpenSSL's error queue is per
// thread and each function leaves it empty.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "ofu/core/result.h"
#include "ofu/net/web_config.h"

namespace ofu::net {

struct SslCtxFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
struct SslFree {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};
using SslPtr = std::unique_ptr<SSL, SslFree>;

// The OpenSSL error queue as one line (and emptied, so the next failure on
// this thread starts clean).
std::string OpenSslErrors();

class TlsContext {
 public:
  // Loads the certificate chain and key `tls` names. Errors: kUnavailable,
  // "cannot serve TLS: ..." naming the file and OpenSSL's reason.
  static Result<std::unique_ptr<TlsContext>> Create(const TlsServerConfig& tls);

  // A server session on `fd`, in accept state; null when OpenSSL cannot
  // make one.
  SslPtr NewSession(int fd) const;

 private:
  explicit TlsContext(std::unique_ptr<SSL_CTX, SslCtxFree> ctx) : ctx_(std::move(ctx)) {}
  std::unique_ptr<SSL_CTX, SslCtxFree> ctx_;
};

// A TLS record header: type, version (2), length (2).
inline constexpr std::size_t kTlsRecordHeader = 5;
// At most this much of the first record is waited for: a ClientHello is
// well under 2 KiB even with post-quantum key shares, and SO_RCVLOWAT must
// stay below half the receive buffer, where Linux clamps it.
inline constexpr std::size_t kFirstRecordWait = 8 * 1024;

// A TLS connection gets its SSL object, and with it OpenSSL's buffers (a
// 16 KiB handshake buffer, a 17 KiB record buffer: some 40 KiB in all),
// only once the client's first record is in the kernel's receive buffer, so
// a client that stalls or trickles the start of its handshake costs that
// buffer's bytes in the kernel and nothing in the server. SO_RCVLOWAT keeps
// epoll quiet until the record header, then the record, is in: no wake-up
// per trickled byte either.
struct FirstRecordStep {
  enum Kind {
    kStart,      // make the session and start the handshake (low water back to 1)
    kWait,       // set SO_RCVLOWAT to `wanted` and wait
    kTruncated,  // part of a record and the client hung up: a failed handshake
  };
  Kind kind = kWait;
  std::size_t wanted = 0;  // bytes of the first record that must be in before starting
};
// `peeked`: what a MSG_PEEK of up to kTlsRecordHeader bytes returned (at
// least one byte; a connection that left without one is the caller's);
// `available`: the bytes in the receive buffer (FIONREAD); `hung_up`: the
// client closed its side. Bytes that are not a handshake record (plain HTTP
// on the TLS port) start at once, for OpenSSL to refuse.
FirstRecordStep NextFirstRecordStep(std::string_view peeked, std::size_t available, bool hung_up);

// The outcome of one read, write or handshake step.
enum class Io { kDone, kWantRead, kWantWrite, kClosed };

// One step of the server handshake. kClosed: it failed or the client left;
// `spoke` then says whether the client sent any byte (a port check that
// connects and leaves is no failed handshake).
Io StepHandshake(SSL& ssl, bool& spoke);

// Reads up to `size` bytes into `buffer` (through `ssl` when not null);
// kDone with `received` > 0, or why not.
Io Receive(int fd, SSL* ssl, char* buffer, std::size_t size, std::size_t& received);
// Writes up to `size` bytes of `data`; kDone with `sent`, or why not. Never
// raises SIGPIPE on a plain socket (OpenSSL's writes may: the server blocks it).
Io Send(int fd, SSL* ssl, const char* data, std::size_t size, std::size_t& sent);

// Whether errno `error` of a non-blocking socket call means "not now"
// (EAGAIN, EWOULDBLOCK, EINTR) rather than a dead connection.
bool WouldBlock(int error);

// Sends close_notify, best effort.
void SendCloseNotify(SSL& ssl);

}  // namespace ofu::net
