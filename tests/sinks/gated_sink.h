// A sink for the queue tests (async_sink_test, queued_sink_test) that blocks
// in Consume until the test opens its gate, so a test decides exactly when
// the worker thread gets on: no sleeps, no timing.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <set>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/sinks/sink.h"

namespace ofu::testing {

class GatedSink : public sinks::Sink {
 public:
  // `open`: whether Consume goes through from the start.
  explicit GatedSink(bool open = false) : open_(open) {}

  std::string_view name() const override { return "gated"; }

  // Records the batch's end, then waits for the gate; fails the batches
  // whose end is in `failing`.
  Status Consume(const sinks::WindowBatch& batch) override {
    std::unique_lock lock(mutex_);
    ++entered_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return open_; });
    written_.push_back(batch.end_s);
    if (failing_.count(batch.end_s) != 0) return Error::Io("cannot write the window at {}", batch.end_s);
    return OkStatus();
  }

  // Waits until `calls` calls of Consume have started (the worker holds a batch).
  void WaitEntered(int calls) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return entered_ >= calls; });
  }

  void Open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

  void Fail(double end_s) {
    std::lock_guard lock(mutex_);
    failing_.insert(end_s);
  }

  // The ends of the batches Consume has let through, in order.
  std::vector<double> written() const {
    std::lock_guard lock(mutex_);
    return written_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool open_;
  int entered_ = 0;
  std::set<double> failing_;
  std::vector<double> written_;
};

}  // namespace ofu::testing
