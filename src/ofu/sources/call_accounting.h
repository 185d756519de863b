// What ofu's calls into a GPU library cost: per library function, how many
// calls and how much time they took.
//
// On a real H100 94 % of the agent's CPU was system time spent inside the
// driver (docs/results/2026-11-26-h100-sxm5/, stage C), so the place to
// measure is the one every driver call passes through: the dlopen'd
// function tables of nvml/nvml_library.h and dcgm/dcgm_library.h hold
// AccountedFunction slots instead of bare pointers, and each call through a
// slot adds to its CallCounter. Call sites do not change and cannot forget.
//
// Per call, four figures (all summed, in nanoseconds):
//   wall    CLOCK_MONOTONIC across the call;
//   cpu     CLOCK_THREAD_CPUTIME_ID across the call: this thread's CPU,
//           user + system, the kernel's exact runtime;
//   user,   getrusage(RUSAGE_THREAD) across the call (Linux). The kernel
//   system  splits the thread's CPU between user and system mode by tick
//           sampling and re-splits past time as ticks arrive, so across one
//           short call they are coarse (microseconds) and may even exceed
//           `cpu` (seen on the NVML double); over many calls their ratio says
//           where the time goes (on the H100 94 % of the agent's CPU was
//           system time, stage C). Absent (not 0)
//           where the platform has no per-thread rusage.
// Overhead per accounted call: two reads of each of the three clocks, that
// is 2 vDSO clock reads and 4 system calls. On the CPU-only development VM,
// where CLOCK_THREAD_CPUTIME_ID took 1.4 us and getrusage 1.1 us a read,
// that was 4.9-5.3 us a call, and an empty function was recorded as 2.7 us
// wall and 1.3 us CPU: the part of the measurement inside the spans, which
// every recorded call overstates by (CallAccountingTest.EveryCallOfAManyCallLoopIsCounted
// prints both). System calls are cheaper outside a VM, but this was not
// measured on the H100. Beside the H100's calls (probe-cost.json, p50: GPM
// metrics get 1,420 us, GPM sample get 45 us, SM clock read 0.39 us) that is
// small for the expensive ones and larger than the cheapest.
// CallClockKind::kWallAndCpu drops getrusage, about half of it.
//
// Names are the library's own symbol names as resolved ("nvmlGpmMetricsGet",
// "nvmlDeviceGetCount_v2"), so they match the driver's documentation and
// differ between driver versions only where the symbol does.
//
// Thread-safety: Counter() and Snapshot() take a mutex; calls through
// AccountedFunction touch only their counter's atomics (relaxed), so the
// sampling thread and the clock oversampler may call concurrently and the
// HTTP thread may read a Snapshot meanwhile. A snapshot's figures for one
// call may be mutually a call apart (counted but not yet timed); each is
// monotonic.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ofu::sources {

// One reading of the clocks a call is measured by, nanoseconds.
struct CallClockReading {
  std::int64_t wall_ns = 0;
  std::int64_t cpu_ns = 0;
  std::optional<std::int64_t> user_ns, system_ns;  // absent where not measured
};

// The clocks, injectable so tests can make every call cost a known amount.
class CallClock {
 public:
  virtual ~CallClock() = default;
  // The reading before a call.
  virtual CallClockReading Read() const = 0;
  // The reading after it; the same clocks, possibly read in reverse order
  // so that the spans nest around the call (the system clocks put the
  // thread-CPU clock innermost: see SystemCallClock).
  virtual CallClockReading ReadAfter() const { return Read(); }
};

enum class CallClockKind {
  kWallCpuUserSystem,  // CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, getrusage(RUSAGE_THREAD)
  kWallAndCpu,         // the first two only: user and system are absent
};
// The real clocks of this thread. Points to static storage (stateless).
// Before a call: getrusage, CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID; after
// it the reverse. So the cpu span holds the call and about one thread-CPU
// clock read, the wall span also the two CPU clock reads, and the user and
// system spans everything: what a call costs is overstated by that much
// (CallAccountingTest.EveryCallOfAManyCallLoopIsCounted prints it for an empty function).
const CallClock& SystemCallClock(CallClockKind kind = CallClockKind::kWallCpuUserSystem);

// The sums for one library function. Updated lock-free by the calling thread.
class CallCounter {
 public:
  void Add(const CallClockReading& before, const CallClockReading& after);

  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::int64_t> wall_ns{0}, cpu_ns{0}, user_ns{0}, system_ns{0};
};

// One function's totals at the time of a Snapshot; seconds.
struct CallTotals {
  std::string call;  // the library's symbol name
  std::uint64_t calls = 0;
  double wall_s = 0, cpu_s = 0;
  std::optional<double> user_s, system_s;  // absent where the clock does not give them
};

class CallAccounting {
 public:
  // `clock` must outlive the accounting.
  explicit CallAccounting(const CallClock& clock = SystemCallClock())
      : clock_(clock), user_system_(clock.Read().user_ns.has_value()) {}
  CallAccounting(const CallAccounting&) = delete;
  CallAccounting& operator=(const CallAccounting&) = delete;

  // The counter of `call`, created at 0 on first use; the same one every
  // time for the same name (a reloaded library carries on counting), valid
  // while the accounting lives.
  CallCounter& Counter(std::string_view call);

  // Every counter created so far, sorted by name, 0-call ones included (a
  // Prometheus counter that appears only with its first increment hides it).
  std::vector<CallTotals> Snapshot() const;

  const CallClock& clock() const { return clock_; }

 private:
  const CallClock& clock_;
  const bool user_system_;  // whether the clock gives user and system time
  mutable std::mutex mutex_;
  std::deque<std::pair<std::string, CallCounter>> counters_;  // deque: stable addresses
};

// A slot of a function table: calls the library function and, when it has
// a counter, accounts for the call. Compares with nullptr like the pointer
// it replaces (an optional symbol the library lacks is null).
template <typename Signature>
class AccountedFunction;

template <typename R, typename... Args>
class AccountedFunction<R(Args...)> {
 public:
  using Pointer = R (*)(Args...);

  AccountedFunction() = default;
  // `counter` null: the calls are not accounted.
  AccountedFunction(Pointer function, CallCounter* counter, const CallClock* clock)
      : function_(function), counter_(counter), clock_(clock) {}

  R operator()(Args... args) const {
    if (counter_ == nullptr) return function_(args...);
    const CallClockReading before = clock_->Read();
    // The reading after the call is taken on every return path, void included.
    struct After {
      const AccountedFunction& self;
      const CallClockReading& before;
      ~After() { self.counter_->Add(before, self.clock_->ReadAfter()); }
    } after{*this, before};
    return function_(args...);
  }

  friend bool operator==(const AccountedFunction& f, std::nullptr_t) { return f.function_ == nullptr; }

 private:
  Pointer function_ = nullptr;
  CallCounter* counter_ = nullptr;
  const CallClock* clock_ = nullptr;
};

// The slot for a symbol found at `address` (null: absent) under `name`,
// counted in `accounting` when it is not null. How both function tables
// fill their slots.
template <typename Signature>
AccountedFunction<Signature> BindAccounted(void* address, std::string_view name, CallAccounting* accounting) {
  using Pointer = typename AccountedFunction<Signature>::Pointer;
  const auto function = reinterpret_cast<Pointer>(address);
  if (address == nullptr || accounting == nullptr) return AccountedFunction<Signature>(function, nullptr, nullptr);
  return AccountedFunction<Signature>(function, &accounting->Counter(name), &accounting->clock());
}

}  // namespace ofu::sources
