// HTTP basic authentication for the server (http_server.h): the
// Authorization header, bcrypt verification with a cache of successes, and
// AuthQueue, the thread that runs the slow checks off the event loop.
//
// Thread-safety: ParseBasicAuthorization is pure; a BasicAuthenticator may
// be shared by threads (it locks); AuthQueue says its own.
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace ofu::net {

// Verifies basic-auth credentials against bcrypt hashes (libxcrypt).
//
// bcrypt costs ~70 ms at cost 10 by design, and Prometheus sends the same
// credentials every scrape, so successful verifications are cached (as the
// exporter-toolkit does). The cache key is SHA-256 over user, stored hash
// and password, so a hit proves this very password verified against this
// very hash before; failures are never cached, so there is nothing to hit
// with a wrong password. Verifications run one at a time (a flood of wrong
// passwords costs at most one core), and an unknown user is checked against
// a configured hash anyway, so timing does not reveal which users exist.
class BasicAuthenticator {
 public:
  // `users`: user -> bcrypt hash, as ParseWebConfig validated them.
  explicit BasicAuthenticator(std::map<std::string, std::string> users);

  bool enabled() const { return !users_.empty(); }

  // True when `password` is the user's. Thread-safe.
  bool Check(std::string_view user, std::string_view password);

  // True when this user and password verified before and are still cached:
  // Check would answer true without a bcrypt. False says nothing (ask
  // Check). Cheap, so an event loop may call it inline and hand only the
  // misses to a thread that may block on bcrypt. Thread-safe.
  bool CheckCached(std::string_view user, std::string_view password) const;

  // Verifications actually computed (not served from the cache); for tests.
  std::size_t bcrypt_runs() const;

 private:
  using Digest = std::array<unsigned char, 32>;
  static constexpr std::size_t kMaxCached = 100;

  const std::map<std::string, std::string> users_;
  mutable std::mutex cache_mutex_;
  std::set<Digest> verified_;    // guarded by cache_mutex_
  std::size_t bcrypt_runs_ = 0;  // guarded by cache_mutex_
  std::mutex bcrypt_mutex_;      // one bcrypt at a time
};

// Decodes an `Authorization: Basic <base64(user:password)>` header value.
// Absent when it is not Basic or is malformed.
struct BasicCredentials {
  std::string user;
  std::string password;
};
std::optional<BasicCredentials> ParseBasicAuthorization(std::string_view header);

// bcrypt checks of credentials that missed BasicAuthenticator's cache, on
// a thread of their own, so that a slow check (~70 ms at cost 10) or a
// flood of wrong passwords never stalls the event loop: the loop Submits a
// check and carries on, the thread runs them in order and calls `wake`
// after each, and the loop TakeDone()s the verdicts. At most `max_queued`
// checks wait; Submit refuses more (the server answers 503), so guesses
// cannot pile up ahead of Prometheus.
//
// Thread-safety: Submit and TakeDone from one thread (the loop); `wake` is
// called on the queue's thread. The destructor stops and joins the thread;
// checks still queued are dropped.
class AuthQueue {
 public:
  struct Verdict {
    std::uint64_t ticket = 0;  // as Submitted
    bool ok = false;
  };

  // `authenticator` must outlive the queue. Starts the thread.
  AuthQueue(BasicAuthenticator& authenticator, std::size_t max_queued, std::function<void()> wake);
  ~AuthQueue();
  AuthQueue(const AuthQueue&) = delete;
  AuthQueue& operator=(const AuthQueue&) = delete;

  // Queues a check of `credentials` under `ticket`; false when `max_queued`
  // already wait.
  bool Submit(std::uint64_t ticket, const BasicCredentials& credentials);

  // The verdicts reached since the last call, in order.
  std::vector<Verdict> TakeDone();

  // Stops the thread (idempotent); later Submits are never answered.
  void Stop();

 private:
  struct Job {
    std::uint64_t ticket = 0;
    std::string user, password;
  };
  void Run();

  BasicAuthenticator& authenticator_;
  const std::size_t max_queued_;
  const std::function<void()> wake_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Job> jobs_;       // guarded by mutex_
  std::vector<Verdict> done_;  // guarded by mutex_
  bool stopping_ = false;      // guarded by mutex_
  std::thread thread_;         // last: starts once the rest is built
};

}  // namespace ofu::net
