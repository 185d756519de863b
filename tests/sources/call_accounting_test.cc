// The accounting of library calls (call_accounting.h) with a scripted clock:
// every figure below is computed by hand from the clock's steps.
#include "ofu/sources/call_accounting.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace ofu::sources {
namespace {

// Each Read() advances wall time by 1000 ns, this thread's CPU by 400 ns,
// of which 100 ns user and 300 ns system. A call therefore costs exactly
// one step: 1 us wall, 0.4 us CPU, 0.1 us user, 0.3 us system.
class SteppingClock final : public CallClock {
 public:
  explicit SteppingClock(bool user_system = true) : user_system_(user_system) {}
  CallClockReading Read() const override {
    const std::int64_t n = steps_.fetch_add(1, std::memory_order_relaxed);
    CallClockReading r;
    r.wall_ns = 1000 * n;
    r.cpu_ns = 400 * n;
    if (user_system_) {
      r.user_ns = 100 * n;
      r.system_ns = 300 * n;
    }
    return r;
  }

 private:
  bool user_system_;
  mutable std::atomic<std::int64_t> steps_{0};
};

int Twice(int x) { return 2 * x; }
int calls_of_noop = 0;
void Noop() { ++calls_of_noop; }

TEST(CallAccountingTest, CountsAndTimesEveryCallUnderItsName) {
  const SteppingClock clock;
  CallAccounting accounting(clock);
  const auto twice = BindAccounted<int(int)>(reinterpret_cast<void*>(&Twice), "nvmlTwice", &accounting);
  const auto noop = BindAccounted<void()>(reinterpret_cast<void*>(&Noop), "nvmlNoop", &accounting);
  EXPECT_EQ(twice(21), 42);
  EXPECT_EQ(twice(1), 2);
  EXPECT_EQ(twice(0), 0);
  noop();  // a void function is accounted too
  EXPECT_EQ(calls_of_noop, 1);

  const std::vector<CallTotals> totals = accounting.Snapshot();
  ASSERT_EQ(totals.size(), 2u);
  EXPECT_EQ(totals[0].call, "nvmlNoop");  // sorted by name
  EXPECT_EQ(totals[0].calls, 1u);
  EXPECT_DOUBLE_EQ(totals[0].wall_s, 1e-6);
  EXPECT_EQ(totals[1].call, "nvmlTwice");
  EXPECT_EQ(totals[1].calls, 3u);
  EXPECT_DOUBLE_EQ(totals[1].wall_s, 3e-6);
  EXPECT_DOUBLE_EQ(totals[1].cpu_s, 1.2e-6);
  ASSERT_TRUE(totals[1].user_s && totals[1].system_s);
  EXPECT_DOUBLE_EQ(*totals[1].user_s, 0.3e-6);
  EXPECT_DOUBLE_EQ(*totals[1].system_s, 0.9e-6);
}

TEST(CallAccountingTest, ASymbolNeverCalledIsListedAtZero) {
  const SteppingClock clock;
  CallAccounting accounting(clock);
  accounting.Counter("nvmlShutdown");
  const auto totals = accounting.Snapshot();
  ASSERT_EQ(totals.size(), 1u);
  EXPECT_EQ(totals[0].calls, 0u);
  EXPECT_EQ(totals[0].wall_s, 0);
  ASSERT_TRUE(totals[0].user_s.has_value());  // the clock gives user time: 0, not absent
  EXPECT_EQ(*totals[0].user_s, 0);
}

TEST(CallAccountingTest, UserAndSystemAreAbsentWhereTheClockHasNone) {
  const SteppingClock clock(false);
  CallAccounting accounting(clock);
  const auto twice = BindAccounted<int(int)>(reinterpret_cast<void*>(&Twice), "nvmlTwice", &accounting);
  twice(1);
  const auto totals = accounting.Snapshot();
  ASSERT_EQ(totals.size(), 1u);
  EXPECT_DOUBLE_EQ(totals[0].cpu_s, 0.4e-6);
  EXPECT_FALSE(totals[0].user_s.has_value());
  EXPECT_FALSE(totals[0].system_s.has_value());
}

TEST(CallAccountingTest, TheSameNameIsTheSameCounterAcrossReloads) {
  const SteppingClock clock;
  CallAccounting accounting(clock);
  BindAccounted<int(int)>(reinterpret_cast<void*>(&Twice), "nvmlTwice", &accounting)(1);
  // A library loaded again (an agent reload) binds the same name.
  BindAccounted<int(int)>(reinterpret_cast<void*>(&Twice), "nvmlTwice", &accounting)(1);
  EXPECT_EQ(accounting.Snapshot().at(0).calls, 2u);
}

TEST(CallAccountingTest, WithoutAnAccountingASlotIsAPlainCall) {
  const auto twice = BindAccounted<int(int)>(reinterpret_cast<void*>(&Twice), "nvmlTwice", nullptr);
  EXPECT_FALSE(twice == nullptr);
  EXPECT_EQ(twice(4), 8);
  const auto absent = BindAccounted<int(int)>(nullptr, "", nullptr);
  EXPECT_TRUE(absent == nullptr);
  EXPECT_TRUE(AccountedFunction<int(int)>() == nullptr);
}

// The sampling thread and the clock oversampler call at once: no call lost.
TEST(CallAccountingTest, ConcurrentCallersLoseNoCall) {
  const SteppingClock clock;
  CallAccounting accounting(clock);
  const auto twice = BindAccounted<int(int)>(reinterpret_cast<void*>(&Twice), "nvmlTwice", &accounting);
  constexpr int kThreads = 4, kCalls = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kCalls; ++i) twice(i);
    });
  }
  // A reader meanwhile (the HTTP thread rendering /metrics).
  for (int i = 0; i < 100; ++i) EXPECT_LE(accounting.Snapshot().at(0).calls, std::uint64_t{kThreads * kCalls});
  for (auto& thread : threads) thread.join();
  const auto totals = accounting.Snapshot();
  EXPECT_EQ(totals.at(0).calls, std::uint64_t{kThreads * kCalls});
  // Interleaved readings make single calls' steps vary, but every step is
  // counted once: wall advanced 1000 ns per reading, two readings a call,
  // and each call's span is at least one step.
  EXPECT_GE(totals.at(0).wall_s, kThreads * kCalls * 1e-6 - 1e-9);
}

// What the accounting adds to each call on this machine, printed for a
// person, with the real clocks: not asserted (timings belong in benchmarks;
// under ASan or on a loaded machine they vary). What is asserted: every one
// of the calls is counted.
TEST(CallAccountingTest, EveryCallOfAManyCallLoopIsCounted) {
  CallAccounting accounting;
  const auto twice = BindAccounted<int(int)>(reinterpret_cast<void*>(&Twice), "nvmlTwice", &accounting);
  constexpr int kCalls = 100000;
  const auto start = std::chrono::steady_clock::now();
  int sum = 0;
  for (int i = 0; i < kCalls; ++i) sum += twice(i & 1);
  const double per_call_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / kCalls;
  EXPECT_EQ(sum, kCalls);                                          // half the calls give 2, half 0
  const std::vector<CallTotals> snapshot = accounting.Snapshot();  // a copy: t must not outlive it
  ASSERT_EQ(snapshot.size(), 1u);
  const CallTotals& t = snapshot.at(0);
  EXPECT_EQ(t.calls, std::uint64_t{kCalls});
  std::printf(
      "accounted call overhead: %.3f us per call (%d calls); an empty call is recorded as %.3f us wall, "
      "%.3f us cpu\n",
      per_call_us, kCalls, t.wall_s * 1e6 / kCalls, t.cpu_s * 1e6 / kCalls);
}

}  // namespace
}  // namespace ofu::sources
