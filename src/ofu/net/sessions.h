// How the HTTP server (http_server.h) carries each connection through its
// phases once the event loop has accepted it: the TLS start and handshake
// (tls.h), reading the request head, dispatch (dispatch.h), authentication
// off the loop (basic_auth.h), writing the response, then keep-alive or a
// lingering close. The event loop owns the sockets' epoll set and calls in
// here with each event; the table (connections.h) keeps the phases'
// waiting lists and deadlines.
//
// Thread-safety: the event loop's thread only, but for the AuthQueue's
// thread, which only calls `wake`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "ofu/net/basic_auth.h"
#include "ofu/net/connection_rejection.h"
#include "ofu/net/connections.h"
#include "ofu/net/dispatch.h"
#include "ofu/net/http_server.h"
#include "ofu/net/tls.h"

namespace ofu::net {

class Sessions {
 public:
  // `router`, `count_rejection` and `table` must outlive this; `epoll_fd`
  // is the loop's. With `auth`, a thread checks passwords and calls `wake`
  // after each check, so that the loop calls FinishAuthentications.
  Sessions(const Router& router, const HttpServer::RejectionCounter& count_rejection, const ServerLimits& limits,
           ConnectionTable& table, int epoll_fd, std::unique_ptr<BasicAuthenticator> auth,
           std::unique_ptr<TlsContext> tls, std::function<void()> wake);

  // The epoll events a newly added connection waits for, having set its
  // phase (a TLS connection starts in the handshake).
  std::uint32_t Open(Connection& c);
  void OnEvent(Connection& c, std::uint32_t events);
  // The connection's deadline passed.
  void Expire(Connection& c);
  // Answers the requests whose passwords were checked.
  void FinishAuthentications();
  // Closes now; `reason` is counted when given. The object lives on until
  // the table releases it, so callers up the stack may still look at
  // c.closed.
  void Close(Connection& c, std::optional<ConnectionRejection> reason);
  // Stops the password thread (idempotent).
  void StopAuthentication();

 private:
  void SetInterest(Connection& c, std::uint32_t interest);
  void Await(Connection& c, Io io);
  // After a Receive or Send: true when bytes moved (Io::kDone). Otherwise
  // the connection was closed by the peer (closed here, uncounted) or
  // must wait for the socket (interest set), and the caller returns.
  bool Moved(Connection& c, Io io);
  void SetDeadlineIn(Connection& c, double seconds);
  bool AwaitFirstRecord(Connection& c, std::uint32_t events);
  void Handshake(Connection& c);
  void ReadHead(Connection& c);
  void Write(Connection& c);
  void StartKeepAlive(Connection& c);
  void StartLinger(Connection& c);
  void Linger(Connection& c);
  void Dispatch(Connection& c, std::size_t head_end);
  void Reject(Connection& c, int status, std::string body);
  void Reject(Connection& c, const Reply& reply);
  void Respond(Connection& c, const HttpRequestHead& request, const Reply& reply);
  void StartResponse(Connection& c, const Reply& reply, bool head_only, bool say_keep_alive);
  void Authenticate(Connection& c, HttpRequestHead request, const BasicCredentials& credentials);

  const Router& router_;
  const HttpServer::RejectionCounter& count_rejection_;
  const ServerLimits limits_;
  ConnectionTable& table_;
  const int epoll_fd_;
  const std::unique_ptr<BasicAuthenticator> auth_;
  const std::unique_ptr<TlsContext> tls_;  // null: plain HTTP
  std::unique_ptr<AuthQueue> auth_queue_;  // with auth_: the bcrypt thread
};

}  // namespace ofu::net
