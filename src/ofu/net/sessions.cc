#include "ofu/net/sessions.h"

#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <string_view>
#include <utility>
#include <variant>

namespace ofu::net {
namespace {

constexpr std::size_t kReadChunk = 4096;           // bytes per read of a request head
constexpr auto kLinger = std::chrono::seconds(2);  // lingering close: see StartLinger
constexpr std::size_t kLingerBytes = 1 << 20;      // ... and at most this much discarded
constexpr std::size_t kMaxAuthQueue = 8;           // uncached credentials awaiting bcrypt; more: 503

}  // namespace

Sessions::Sessions(const Router& router, const HttpServer::RejectionCounter& count_rejection,
                   const ServerLimits& limits, ConnectionTable& table, int epoll_fd,
                   std::unique_ptr<BasicAuthenticator> auth, std::unique_ptr<TlsContext> tls,
                   std::function<void()> wake)
    : router_(router),
      count_rejection_(count_rejection),
      limits_(limits),
      table_(table),
      epoll_fd_(epoll_fd),
      auth_(std::move(auth)),
      tls_(std::move(tls)) {
  if (auth_) auth_queue_ = std::make_unique<AuthQueue>(*auth_, kMaxAuthQueue, std::move(wake));
}

void Sessions::StopAuthentication() {
  if (auth_queue_) auth_queue_->Stop();
}

std::uint32_t Sessions::Open(Connection& c) {
  c.interest = EPOLLIN;
  if (tls_) {
    // No SSL object yet: see AwaitFirstRecord.
    c.phase = Phase::kHandshake;
    const int header = kTlsRecordHeader;
    ::setsockopt(c.fd, SOL_SOCKET, SO_RCVLOWAT, &header, sizeof header);
    c.interest = EPOLLIN | EPOLLRDHUP;
  }
  return c.interest;
}

void Sessions::Expire(Connection& c) {
  switch (c.phase) {
    case Phase::kHandshake: Close(c, ConnectionRejection::kTlsHandshakeDeadline); break;
    case Phase::kReadingHead:
      // An idle kept-alive connection timing out is the normal end of one.
      Close(c, c.kept_alive && !c.got_bytes ? std::nullopt : std::optional(ConnectionRejection::kHeaderDeadline));
      break;
    case Phase::kWriting: Close(c, ConnectionRejection::kWriteDeadline); break;
    case Phase::kLingering:
    case Phase::kAuthenticating: Close(c, std::nullopt); break;
  }
}

void Sessions::SetDeadlineIn(Connection& c, double seconds) {
  table_.SetDeadline(c, After(SteadyClock::now(), seconds));
}

void Sessions::Close(Connection& c, std::optional<ConnectionRejection> reason) {
  if (c.closed) return;
  if (reason) count_rejection_(*reason);
  table_.Close(c);
}

void Sessions::SetInterest(Connection& c, std::uint32_t interest) {
  if (c.closed || c.interest == interest) return;
  epoll_event event{interest, {.u64 = c.id}};
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &event) == 0) c.interest = interest;
}

void Sessions::Await(Connection& c, Io io) { SetInterest(c, io == Io::kWantWrite ? EPOLLOUT : EPOLLIN); }

bool Sessions::Moved(Connection& c, Io io) {
  if (io == Io::kClosed) {
    Close(c, std::nullopt);
  } else if (io != Io::kDone) {
    Await(c, io);
  }
  return io == Io::kDone;
}

void Sessions::OnEvent(Connection& c, std::uint32_t events) {
  if ((events & EPOLLERR) != 0) {
    Close(c, std::nullopt);
    return;
  }
  switch (c.phase) {
    case Phase::kHandshake:
      if (!c.ssl && !AwaitFirstRecord(c, events)) break;
      Handshake(c);
      break;
    case Phase::kReadingHead: ReadHead(c); break;
    case Phase::kWriting:
      Write(c);
      if (!c.closed && c.phase == Phase::kReadingHead) ReadHead(c);  // see StartKeepAlive
      break;
    case Phase::kLingering: Linger(c); break;
    case Phase::kAuthenticating:
      // Interest is off; a hang-up still reports. The answer will find out.
      if ((events & EPOLLHUP) != 0) Close(c, std::nullopt);
      break;
  }
}

// True when the handshake can start (tls.h, NextFirstRecordStep).
bool Sessions::AwaitFirstRecord(Connection& c, std::uint32_t events) {
  char header[kTlsRecordHeader];
  const ssize_t n = ::recv(c.fd, header, sizeof header, MSG_PEEK);
  if (n == 0 || (n < 0 && !WouldBlock(errno))) {
    Close(c, std::nullopt);  // left without a byte: a port check, not a failed handshake
    return false;
  }
  int available = 0;
  ::ioctl(c.fd, FIONREAD, &available);
  const FirstRecordStep step = NextFirstRecordStep(std::string_view(header, n > 0 ? static_cast<std::size_t>(n) : 0),
                                                   static_cast<std::size_t>(std::max(available, 0)),
                                                   (events & (EPOLLRDHUP | EPOLLHUP)) != 0);
  if (step.kind == FirstRecordStep::kTruncated) {
    Close(c, ConnectionRejection::kTlsHandshakeFailed);  // a part of a record, and no more to come
    return false;
  }
  if (step.kind == FirstRecordStep::kWait) {
    const int low_water = static_cast<int>(step.wanted);
    ::setsockopt(c.fd, SOL_SOCKET, SO_RCVLOWAT, &low_water, sizeof low_water);
    return false;
  }
  const int one = 1;
  ::setsockopt(c.fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
  c.ssl = tls_->NewSession(c.fd);
  if (!c.ssl) {
    Close(c, std::nullopt);
    return false;
  }
  SetInterest(c, EPOLLIN);
  return true;
}

void Sessions::Handshake(Connection& c) {
  bool spoke = false;
  const Io io = StepHandshake(*c.ssl, spoke);
  if (io == Io::kDone) {
    c.phase = Phase::kReadingHead;  // the deadline from accept goes on
    ReadHead(c);
  } else if (io != Io::kClosed) {
    Await(c, io);
  } else {
    // Plain HTTP on the TLS port, no protocol or cipher in common.
    Close(c, spoke ? std::optional(ConnectionRejection::kTlsHandshakeFailed) : std::nullopt);
  }
}

void Sessions::ReadHead(Connection& c) {
  char buffer[kReadChunk];
  while (!c.closed && c.phase == Phase::kReadingHead) {
    if (const auto end = FindRequestHeadEnd(c.in)) {
      if (*end > limits_.max_header_bytes) {
        Reject(c, 431, "request headers too large\n");
        return;
      }
      Dispatch(c, *end);
      continue;  // a pipelined request may follow
    }
    if (c.in.size() > limits_.max_header_bytes) {
      Reject(c, 431, "request headers too large\n");
      return;
    }
    std::size_t received = 0;
    const Io io = Receive(c.fd, c.ssl.get(), buffer,
                          std::min(sizeof buffer, limits_.max_header_bytes + 1 - c.in.size()), received);
    if (!Moved(c, io)) return;
    if (!c.got_bytes) {
      c.got_bytes = true;
      // A kept-alive connection's next request has header_timeout_s from
      // its first byte; a new connection's clock started at accept.
      if (c.kept_alive) SetDeadlineIn(c, limits_.header_timeout_s);
    }
    c.in.append(buffer, received);
  }
}

void Sessions::Write(Connection& c) {
  while (c.out_offset < c.out.size()) {
    std::size_t sent = 0;
    const Io io = Send(c.fd, c.ssl.get(), c.out.data() + c.out_offset, c.out.size() - c.out_offset, sent);
    if (!Moved(c, io)) return;
    c.out_offset += sent;
  }
  c.out.clear();
  c.out.shrink_to_fit();  // a large body need not stay with an idle connection
  c.out_offset = 0;
  if (c.close_after) {
    StartLinger(c);
  } else {
    StartKeepAlive(c);
  }
}

void Sessions::StartKeepAlive(Connection& c) {
  c.phase = Phase::kReadingHead;
  c.kept_alive = true;
  c.got_bytes = !c.in.empty();  // pipelined bytes already in
  table_.EnterWaiting(c);
  SetDeadlineIn(c, c.got_bytes ? limits_.header_timeout_s : limits_.keep_alive_timeout_s);
  SetInterest(c, EPOLLIN);
  // Bytes may already wait, in `in` or inside OpenSSL where epoll cannot
  // see them, so whoever wrote the response reads next: ReadHead's own
  // loop when it answered synchronously, else OnEvent or
  // FinishAuthentications. Not from here, which would recurse once per
  // pipelined request.
}

// After a response that closes the connection, its request's body (never
// read) or a pipelined request may still be on the way. Closing with
// unread data makes the kernel send RST, which can destroy the response
// before the client reads it; so send FIN, and read and discard until
// the client closes, kLinger passes or kLingerBytes came in.
void Sessions::StartLinger(Connection& c) {
  c.phase = Phase::kLingering;
  c.in.clear();
  c.in.shrink_to_fit();
  if (c.ssl) SendCloseNotify(*c.ssl);
  ::shutdown(c.fd, SHUT_WR);
  table_.EnterWaiting(c);
  table_.SetDeadline(c, SteadyClock::now() + kLinger);
  SetInterest(c, EPOLLIN);
  Linger(c);
}

void Sessions::Linger(Connection& c) {
  char buffer[kReadChunk];
  while (true) {
    const ssize_t n = ::recv(c.fd, buffer, sizeof buffer, 0);
    if (n > 0) {
      c.lingered += static_cast<std::size_t>(n);
      if (c.lingered > kLingerBytes) break;
      continue;
    }
    if (n < 0 && WouldBlock(errno)) return;
    break;
  }
  Close(c, std::nullopt);
}

// ---- requests ----

void Sessions::Dispatch(Connection& c, std::size_t head_end) {
  auto checked = CheckRequest(std::string_view(c.in).substr(0, head_end), limits_.max_body_bytes);
  c.in.erase(0, head_end);
  c.got_bytes = false;
  if (auto* refusal = std::get_if<Reply>(&checked)) {
    Reject(c, *refusal);
    return;
  }
  HttpRequestHead& request = std::get<HttpRequestHead>(checked);
  // The body is never read: nothing here takes one. After answering, the
  // connection closes (lingering) rather than skip it.
  c.close_after = !request.KeepAlive() || request.content_length > 0;

  if (auth_) {
    const auto credentials = ParseBasicAuthorization(request.Field("Authorization").value_or(""));
    if (!credentials) {
      Respond(c, request, Unauthorized());
      return;
    }
    if (!auth_->CheckCached(credentials->user, credentials->password)) {
      Authenticate(c, std::move(request), *credentials);
      return;
    }
  }
  Respond(c, request, router_.Route(request));
}

// Answers a request the server will not serve, and closes.
void Sessions::Reject(Connection& c, int status, std::string body) {
  Reply reply;
  reply.status = status;
  reply.body = std::move(body);
  Reject(c, reply);
}
void Sessions::Reject(Connection& c, const Reply& reply) {
  count_rejection_(ConnectionRejection::kBadRequest);
  c.close_after = true;
  c.in.clear();
  StartResponse(c, reply, false, false);
}

void Sessions::Respond(Connection& c, const HttpRequestHead& request, const Reply& reply) {
  StartResponse(c, reply, request.method == "HEAD", request.minor_version == 0 && request.KeepAlive());
}

// Writes `reply` (headers only for HEAD), as much as the socket takes now.
void Sessions::StartResponse(Connection& c, const Reply& reply, bool head_only, bool say_keep_alive) {
  c.out = FormatReply(reply, head_only, c.close_after, say_keep_alive);
  c.out_offset = 0;
  c.phase = Phase::kWriting;
  table_.LeaveWaiting(c);
  SetDeadlineIn(c, limits_.write_timeout_s);
  Write(c);
}

// ---- basic auth off the loop (basic_auth.h) ----

void Sessions::Authenticate(Connection& c, HttpRequestHead request, const BasicCredentials& credentials) {
  if (auth_queue_->Submit(c.id, credentials)) {
    c.request = std::move(request);
    c.phase = Phase::kAuthenticating;
    table_.LeaveWaiting(c);
    c.deadline = TimePoint::max();
    SetInterest(c, 0);
    return;
  }
  // A queue this long means someone is guessing passwords: answer at once
  // rather than let the guesses queue up ahead of the scrapes.
  c.close_after = true;
  Respond(c, request, AuthenticationBusy());
}

void Sessions::FinishAuthentications() {
  if (!auth_queue_) return;
  for (const AuthQueue::Verdict& verdict : auth_queue_->TakeDone()) {
    Connection* c = table_.Find(verdict.ticket);
    if (c == nullptr) continue;  // closed meanwhile
    if (c->phase != Phase::kAuthenticating || !c->request) continue;
    const HttpRequestHead request = std::move(*c->request);
    c->request.reset();
    Respond(*c, request, verdict.ok ? router_.Route(request) : Unauthorized());
    if (!c->closed && c->phase == Phase::kReadingHead) ReadHead(*c);  // see StartKeepAlive
  }
}

}  // namespace ofu::net
