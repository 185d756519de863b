#include "ofu/net/tls.h"

#include <openssl/err.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

namespace ofu::net {
namespace {

// Sets up the TLS context; on failure `error` says why.
bool SetUpTls(SSL_CTX& ctx, const TlsServerConfig& tls, std::string& error) {
  ERR_clear_error();
  const int min_version = tls.min_version == TlsVersion::kTls13 ? TLS1_3_VERSION : TLS1_2_VERSION;
  if (SSL_CTX_set_min_proto_version(&ctx, min_version) != 1) {
    error = "cannot set the minimum TLS version: " + OpenSslErrors();
    return false;
  }
  SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  // Non-blocking writes resume with the same buffer, possibly partially;
  // idle connections give their 16 KiB record buffers back.
  SSL_CTX_set_mode(&ctx,
                   SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
  // No server-side session cache: by default it keeps up to 20,480 TLS 1.2
  // sessions, memory that any client can fill. Resumption still works
  // through stateless tickets.
  SSL_CTX_set_session_cache_mode(&ctx, SSL_SESS_CACHE_OFF);
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

Io SslOutcome(SSL& ssl) {
  const int error = SSL_get_error(&ssl, 0);
  ERR_clear_error();
  if (error == SSL_ERROR_WANT_READ) return Io::kWantRead;
  if (error == SSL_ERROR_WANT_WRITE) return Io::kWantWrite;
  return Io::kClosed;
}

}  // namespace

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

Result<std::unique_ptr<TlsContext>> TlsContext::Create(const TlsServerConfig& tls) {
  ERR_clear_error();
  std::unique_ptr<SSL_CTX, SslCtxFree> ctx(SSL_CTX_new(TLS_server_method()));
  std::string tls_error;
  if (!ctx || !SetUpTls(*ctx, tls, tls_error)) {
    return Error::Unavailable("{}", "cannot serve TLS: " + (tls_error.empty() ? OpenSslErrors() : tls_error));
  }
  return std::unique_ptr<TlsContext>(new TlsContext(std::move(ctx)));
}

SslPtr TlsContext::NewSession(int fd) const {
  SslPtr ssl(SSL_new(ctx_.get()));
  if (!ssl || SSL_set_fd(ssl.get(), fd) != 1) {
    ERR_clear_error();
    return nullptr;
  }
  SSL_set_accept_state(ssl.get());
  return ssl;
}

FirstRecordStep NextFirstRecordStep(std::string_view peeked, std::size_t available, bool hung_up) {
  std::size_t wanted = kTlsRecordHeader;
  // Not a TLS handshake record (plain HTTP, say): OpenSSL says so.
  if (!peeked.empty() && static_cast<unsigned char>(peeked[0]) != 0x16) wanted = 0;
  if (peeked.size() == kTlsRecordHeader && wanted != 0) {
    const std::size_t length = std::size_t{static_cast<unsigned char>(peeked[3])} << 8 |
                               static_cast<unsigned char>(peeked[4]);
    wanted = std::min<std::size_t>(kTlsRecordHeader + length, kFirstRecordWait);
  }
  if (available < wanted) return {hung_up ? FirstRecordStep::kTruncated : FirstRecordStep::kWait, wanted};
  return {FirstRecordStep::kStart, wanted};
}

Io StepHandshake(SSL& ssl, bool& spoke) {
  ERR_clear_error();
  if (SSL_do_handshake(&ssl) == 1) return Io::kDone;
  const Io io = SslOutcome(ssl);
  spoke = io == Io::kClosed && BIO_number_read(SSL_get_rbio(&ssl)) > 0;
  return io;
}

Io Receive(int fd, SSL* ssl, char* buffer, std::size_t size, std::size_t& received) {
  received = 0;
  if (ssl != nullptr) {
    ERR_clear_error();
    if (SSL_read_ex(ssl, buffer, size, &received) == 1) return Io::kDone;
    return SslOutcome(*ssl);
  }
  const ssize_t n = ::recv(fd, buffer, size, 0);
  if (n > 0) {
    received = static_cast<std::size_t>(n);
    return Io::kDone;
  }
  if (n < 0 && WouldBlock(errno)) return Io::kWantRead;
  return Io::kClosed;
}

Io Send(int fd, SSL* ssl, const char* data, std::size_t size, std::size_t& sent) {
  sent = 0;
  if (ssl != nullptr) {
    ERR_clear_error();
    if (SSL_write_ex(ssl, data, size, &sent) == 1) return Io::kDone;
    return SslOutcome(*ssl);
  }
  const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
  if (n >= 0) {
    sent = static_cast<std::size_t>(n);
    return Io::kDone;
  }
  if (WouldBlock(errno)) return Io::kWantWrite;
  return Io::kClosed;
}

bool WouldBlock(int error) { return error == EAGAIN || error == EWOULDBLOCK || error == EINTR; }

void SendCloseNotify(SSL& ssl) {
  ERR_clear_error();
  SSL_shutdown(&ssl);
  ERR_clear_error();
}

}  // namespace ofu::net
