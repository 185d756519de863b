// A sink that may block (a disk, a network) moved off the sampling thread:
// Consume queues a copy of the batch and returns at once; a worker thread of
// its own hands the queued batches to the wrapped sink, in order, one at a
// time. The agent puts its history store behind one (agent/queued_sink.h);
// the metrics sink stays synchronous, as it only updates memory.
//
// Bounded queue, newest wins. At most `capacity` batches wait (the one being
// written is not counted). When a batch arrives at a full queue the OLDEST
// waiting batch is dropped to make room, and counted (dropped_windows(),
// on_drop). Either policy loses the same number of windows; dropping the
// oldest keeps what is queued as recent as possible, which is what every
// consumer wants: a report of "the last hour" sees the present as soon as the
// sink catches up, and a remote-write receiver rejects samples older than
// its out-of-order window, so a stale queue would be dropped there anyway.
// The order of the batches the sink sees stays their time order.
//
// Errors. Consume cannot know how the batch it queues will fare, so it
// returns the status of the last batch the wrapped sink finished (OK before
// the first): a sink's error surfaces one window late, and the agent's
// logging of errors (once when they appear, once on recovery) works as for a
// synchronous sink. A Consume that had to drop a batch returns an error
// saying the queue is full instead; its text does not change while the
// queue stays full, so it is logged once.
//
// Flush() waits until every batch accepted before the call has been written
// (or dropped), and returns the status of the last one written. Close()
// stops accepting batches (a later Consume is an error), writes what is
// queued, and joins the worker; it is idempotent and the destructor calls
// it. A wrapped sink that blocks forever blocks Flush and Close: a sink must
// bound its own calls (timeouts), the queue only keeps the sampling thread
// from waiting for it.
//
// Ownership: owns the wrapped sink. Thread-safety: every method may be
// called from any thread. The wrapped sink is called from the worker thread
// only, never concurrently with itself; what it uses (its clock) must be safe
// to use from that thread (sources::SystemClock is).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include "ofu/core/result.h"
#include "ofu/sinks/sink.h"

namespace ofu::sinks {

struct AsyncSinkOptions {
  std::size_t capacity = 64;  // batches waiting at most; at least 1
  // Called once per dropped batch, on the thread that called Consume, without
  // the queue's lock held (e.g. to count it in the exposition).
  std::function<void()> on_drop;
};

class AsyncSink final : public Sink {
 public:
  // Starts the worker thread. `sink` must not be null.
  AsyncSink(std::unique_ptr<Sink> sink, AsyncSinkOptions options);
  ~AsyncSink() override;
  AsyncSink(const AsyncSink&) = delete;
  AsyncSink& operator=(const AsyncSink&) = delete;

  // The wrapped sink's name.
  std::string_view name() const override;
  // Queues a copy of `batch`; see "Errors" above for what it returns.
  Status Consume(const WindowBatch& batch) override;

  Status Flush();
  Status Close();

  // Batches dropped because the queue was full, since construction.
  std::uint64_t dropped_windows() const;

 private:
  void Work();

  const std::unique_ptr<Sink> sink_;
  const AsyncSinkOptions options_;
  const std::size_t capacity_;  // options_.capacity, at least 1

  mutable std::mutex mutex_;
  std::condition_variable queued_;   // the worker waits: a batch queued, or closing
  std::condition_variable written_;  // Flush waits: done_ advanced
  std::deque<WindowBatch> queue_;
  std::uint64_t accepted_ = 0;  // batches ever queued
  std::uint64_t done_ = 0;      // of those, written or dropped
  std::uint64_t dropped_ = 0;
  Status last_status_ = OkStatus();  // of the last batch written
  bool closing_ = false;

  std::once_flag close_once_;
  std::thread worker_;  // last: it starts when everything above is ready
};

}  // namespace ofu::sinks
