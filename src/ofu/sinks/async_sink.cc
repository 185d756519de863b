#include "ofu/sinks/async_sink.h"

#include <algorithm>
#include <string>
#include <utility>

#include "ofu/platform/thread_name.h"

namespace ofu::sinks {

AsyncSink::AsyncSink(std::unique_ptr<Sink> sink, AsyncSinkOptions options)
    : sink_(std::move(sink)),
      options_(std::move(options)),
      capacity_(std::max<std::size_t>(options_.capacity, 1)),
      worker_([this] { Work(); }) {}

AsyncSink::~AsyncSink() { (void)Close(); }

std::string_view AsyncSink::name() const { return sink_->name(); }

Status AsyncSink::Consume(const WindowBatch& batch) {
  bool dropped = false;
  Status status = OkStatus();
  {
    std::lock_guard lock(mutex_);
    if (closing_) return Error::Unavailable("closed: a window arrived after Close and was not written");
    if (queue_.size() >= capacity_) {
      queue_.pop_front();
      ++dropped_;
      ++done_;
      dropped = true;
    }
    queue_.push_back(batch);
    ++accepted_;
    status = last_status_;
  }
  queued_.notify_one();
  if (!dropped) return status;
  written_.notify_all();  // a Flush may have waited for the batch just dropped
  if (options_.on_drop) options_.on_drop();
  return Error::Unavailable("queue full ({} windows): dropping the oldest; the sink is slower than the sampling",
                            capacity_);
}

Status AsyncSink::Flush() {
  std::unique_lock lock(mutex_);
  const std::uint64_t target = accepted_;
  written_.wait(lock, [&] { return done_ >= target; });
  return last_status_;
}

Status AsyncSink::Close() {
  std::call_once(close_once_, [this] {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    queued_.notify_one();
    worker_.join();
  });
  std::lock_guard lock(mutex_);
  return last_status_;
}

std::uint64_t AsyncSink::dropped_windows() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

void AsyncSink::Work() {
  platform::NameThisThread("ofu-" + std::string(sink_->name()));  // "ofu-store"
  std::unique_lock lock(mutex_);
  while (true) {
    queued_.wait(lock, [&] { return closing_ || !queue_.empty(); });
    if (queue_.empty()) return;  // closing, and everything queued is written
    const WindowBatch batch = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    Status status = sink_->Consume(batch);
    lock.lock();
    last_status_ = std::move(status);
    ++done_;
    written_.notify_all();
  }
}

}  // namespace ofu::sinks
