#include "ofu/sources/call_accounting.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <tuple>

namespace ofu::sources {
namespace {

std::int64_t Nanoseconds(const timespec& t) { return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; }
std::int64_t Nanoseconds(const timeval& t) { return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_usec * 1'000; }

class SystemClock final : public CallClock {
 public:
  explicit SystemClock(bool user_system) : user_system_(user_system) {}

  CallClockReading Read() const override {
    CallClockReading reading;
    ReadUsage(reading);
    reading.wall_ns = Now(CLOCK_MONOTONIC);
    reading.cpu_ns = Now(CLOCK_THREAD_CPUTIME_ID);
    return reading;
  }
  CallClockReading ReadAfter() const override {
    CallClockReading reading;
    reading.cpu_ns = Now(CLOCK_THREAD_CPUTIME_ID);
    reading.wall_ns = Now(CLOCK_MONOTONIC);
    ReadUsage(reading);
    return reading;
  }

 private:
  static std::int64_t Now(clockid_t clock) {
    timespec t{};
    clock_gettime(clock, &t);
    return Nanoseconds(t);
  }
  void ReadUsage(CallClockReading& reading) const {
#ifdef RUSAGE_THREAD
    if (!user_system_) return;
    rusage usage{};
    if (getrusage(RUSAGE_THREAD, &usage) == 0) {
      reading.user_ns = Nanoseconds(usage.ru_utime);
      reading.system_ns = Nanoseconds(usage.ru_stime);
    }
#else
    (void)reading;
#endif
  }

  bool user_system_;
};

}  // namespace

const CallClock& SystemCallClock(CallClockKind kind) {
  static const SystemClock full(true);
  static const SystemClock wall_and_cpu(false);
  return kind == CallClockKind::kWallCpuUserSystem ? static_cast<const CallClock&>(full) : wall_and_cpu;
}

void CallCounter::Add(const CallClockReading& before, const CallClockReading& after) {
  calls.fetch_add(1, std::memory_order_relaxed);
  wall_ns.fetch_add(after.wall_ns - before.wall_ns, std::memory_order_relaxed);
  cpu_ns.fetch_add(after.cpu_ns - before.cpu_ns, std::memory_order_relaxed);
  if (before.user_ns && after.user_ns && before.system_ns && after.system_ns) {
    user_ns.fetch_add(*after.user_ns - *before.user_ns, std::memory_order_relaxed);
    system_ns.fetch_add(*after.system_ns - *before.system_ns, std::memory_order_relaxed);
  }
}

CallCounter& CallAccounting::Counter(std::string_view call) {
  std::lock_guard lock(mutex_);
  for (auto& [name, counter] : counters_) {
    if (name == call) return counter;
  }
  return counters_.emplace_back(std::piecewise_construct, std::forward_as_tuple(call), std::forward_as_tuple()).second;
}

std::vector<CallTotals> CallAccounting::Snapshot() const {
  std::vector<CallTotals> totals;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [name, counter] : counters_) {
      CallTotals t;
      t.call = name;
      t.calls = counter.calls.load(std::memory_order_relaxed);
      t.wall_s = static_cast<double>(counter.wall_ns.load(std::memory_order_relaxed)) * 1e-9;
      t.cpu_s = static_cast<double>(counter.cpu_ns.load(std::memory_order_relaxed)) * 1e-9;
      if (user_system_) {
        t.user_s = static_cast<double>(counter.user_ns.load(std::memory_order_relaxed)) * 1e-9;
        t.system_s = static_cast<double>(counter.system_ns.load(std::memory_order_relaxed)) * 1e-9;
      }
      totals.push_back(std::move(t));
    }
  }
  std::sort(totals.begin(), totals.end(), [](const CallTotals& a, const CallTotals& b) { return a.call < b.call; });
  return totals;
}

}  // namespace ofu::sources
