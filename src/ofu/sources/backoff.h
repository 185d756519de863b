// When to try again after a library, driver or daemon went away.
//
// The first retry is allowed `initial_s` after the failure, then the delay
// doubles up to `max_s`. Success resets it. A source keeps one Backoff per
// thing it reconnects to and asks ReadyToRetry(now) before each attempt, so
// a missing driver costs one failed call per delay, not one per window.
//
// Thread-safety: none; owned by one source.
#pragma once

#include <algorithm>

namespace ofu::sources {

class Backoff {
 public:
  explicit Backoff(double initial_s = 1, double max_s = 60) : initial_s_(initial_s), max_s_(max_s) {}

  // Record a failed attempt at `now_s`.
  void Failed(double now_s) {
    delay_s_ = delay_s_ == 0 ? initial_s_ : std::min(delay_s_ * 2, max_s_);
    next_try_s_ = now_s + delay_s_;
    ++failures_;
  }
  void Succeeded() {
    delay_s_ = 0;
    next_try_s_ = 0;
    failures_ = 0;
  }
  bool ReadyToRetry(double now_s) const { return now_s >= next_try_s_; }
  double next_try_s() const { return next_try_s_; }
  int consecutive_failures() const { return failures_; }

 private:
  double initial_s_;
  double max_s_;
  double delay_s_ = 0;
  double next_try_s_ = 0;
  int failures_ = 0;
};

}  // namespace ofu::sources
