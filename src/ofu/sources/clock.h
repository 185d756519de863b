// Time, injected: live sources sleep between readings, and tests must not.
//
// NowS() is wall-clock time in seconds since the Unix epoch, used to stamp
// samples. SleepS() waits; a live source calls it between clock readings.
// FakeClock (tests) advances NowS() by exactly the time slept, so a test of
// a 60 s window runs in microseconds and is exactly reproducible.
//
// Thread-safety: SystemClock is stateless; a FakeClock belongs to one thread.
#pragma once

namespace ofu::sources {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual double NowS() = 0;
  virtual void SleepS(double seconds) = 0;
};

class SystemClock final : public Clock {
 public:
  double NowS() override;
  void SleepS(double seconds) override;
};

class FakeClock final : public Clock {
 public:
  explicit FakeClock(double start_s) : now_s_(start_s) {}
  double NowS() override { return now_s_; }
  void SleepS(double seconds) override {
    if (seconds > 0) now_s_ += seconds;
  }

 private:
  double now_s_;
};

}  // namespace ofu::sources
