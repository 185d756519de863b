// AuthQueue (basic_auth.h): bcrypt checks on a thread of their own, with a
// bounded queue; the verdicts come back by ticket and a wrong password is
// refused. Hashes are made here at cost 4 (web_test_support.h).
#include "ofu/net/basic_auth.h"

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "net/web_test_support.h"

namespace ofu::net {
namespace {

// The verdicts of `queue` once `count` have arrived (waiting up to 10 s).
std::vector<AuthQueue::Verdict> AwaitVerdicts(AuthQueue& queue, const std::atomic<int>& woken, int count) {
  std::vector<AuthQueue::Verdict> verdicts;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (static_cast<int>(verdicts.size()) < count && std::chrono::steady_clock::now() < until) {
    if (woken.load() > 0) {
      for (const auto& verdict : queue.TakeDone()) verdicts.push_back(verdict);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return verdicts;
}

TEST(AuthQueue, RightPasswordPassesWrongOneAndUnknownUserAreRefused) {
  BasicAuthenticator authenticator({{"prometheus", ofu::testing::Bcrypt("s3cret")}});
  std::atomic<int> woken{0};
  AuthQueue queue(authenticator, 8, [&] { woken.fetch_add(1); });
  ASSERT_TRUE(queue.Submit(7, {"prometheus", "s3cret"}));
  ASSERT_TRUE(queue.Submit(8, {"prometheus", "s3cret!"}));
  ASSERT_TRUE(queue.Submit(9, {"grafana", "s3cret"}));
  const auto verdicts = AwaitVerdicts(queue, woken, 3);
  ASSERT_EQ(verdicts.size(), 3u);
  std::map<std::uint64_t, bool> by_ticket;
  for (const auto& verdict : verdicts) by_ticket[verdict.ticket] = verdict.ok;
  EXPECT_EQ(by_ticket, (std::map<std::uint64_t, bool>{{7, true}, {8, false}, {9, false}}));
  EXPECT_GE(woken.load(), 3);
  // The right password is cached now; the wrong ones never are.
  EXPECT_TRUE(authenticator.CheckCached("prometheus", "s3cret"));
  EXPECT_FALSE(authenticator.CheckCached("prometheus", "s3cret!"));
}

TEST(AuthQueue, RefusesBeyondItsBoundAndStopsPromptly) {
  // A hash at cost 12 takes long enough that the first check is still running
  // when the rest are submitted: one running, `max_queued` waiting.
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  ASSERT_NE(crypt_gensalt_rn("$2b$", 12, nullptr, 0, setting, sizeof setting), nullptr);
  auto data = std::make_unique<crypt_data>();
  const char* hash = crypt_rn("pw", setting, data.get(), static_cast<int>(sizeof(crypt_data)));
  ASSERT_NE(hash, nullptr);
  BasicAuthenticator authenticator(std::map<std::string, std::string>{{"u", hash}});
  AuthQueue queue(authenticator, 2, [] {});
  // Two always fit; a third only once the thread has taken the first, and
  // it is busy with it long enough that no more than that fit.
  int accepted = 0;
  for (std::uint64_t ticket = 1; ticket <= 5; ++ticket) accepted += queue.Submit(ticket, {"u", "wrong"}) ? 1 : 0;
  EXPECT_GE(accepted, 2);
  EXPECT_LE(accepted, 3);
  const auto start = std::chrono::steady_clock::now();
  queue.Stop();  // waits for the check in progress only
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  queue.Stop();  // idempotent
}

}  // namespace
}  // namespace ofu::net
