// The queue in front of a sink that may block (async_sink.h): a full queue
// drops the oldest batch and counts it exactly, Flush waits for what was
// queued, Close writes what is queued, joins its thread and is idempotent,
// errors surface a window late under the wrapped sink's name. The wrapped
// sink is a GatedSink that the test releases: no sleeps, no timing.
#include "ofu/sinks/async_sink.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "sinks/gated_sink.h"

namespace ofu::sinks {
namespace {

using testing::GatedSink;

WindowBatch BatchEnding(double end_s) {
  WindowBatch batch;
  batch.end_s = end_s;
  batch.window_s = 1;
  return batch;
}

// Threads of this process now (Linux).
std::ptrdiff_t Threads() {
  return std::distance(std::filesystem::directory_iterator("/proc/self/task"), std::filesystem::directory_iterator());
}

// The count before a test makes its sink. The process's first thread may
// start a helper thread of a sanitizer's runtime (TSan's does), so one thread
// is started and joined first, and that helper is counted in both.
std::ptrdiff_t ThreadsBefore() {
  std::thread([] {}).join();
  return Threads();
}

struct Queued {
  GatedSink* gate;  // owned by `sink`
  std::unique_ptr<AsyncSink> sink;
};

Queued MakeQueued(std::size_t capacity, bool open, int* drops = nullptr) {
  auto gated = std::make_unique<GatedSink>(open);
  GatedSink* gate = gated.get();
  AsyncSinkOptions options;
  options.capacity = capacity;
  if (drops != nullptr) options.on_drop = [drops] { ++*drops; };
  return {gate, std::make_unique<AsyncSink>(std::move(gated), std::move(options))};
}

// The NOLINTs: clang 14's analyzer does not follow a unique_ptr through a
// structured binding and calls it a leak; LeakSanitizer runs these tests.
TEST(AsyncSink, AFullQueueDropsTheOldestAndCountsEveryDrop) {
  int drops = 0;
  auto [gate, sink] = MakeQueued(2, false, &drops);  // NOLINT(clang-analyzer-cplusplus.NewDeleteLeaks)
  ASSERT_TRUE(sink->Consume(BatchEnding(1)).ok());
  gate->WaitEntered(1);  // the worker holds window 1: the queue is empty
  ASSERT_TRUE(sink->Consume(BatchEnding(2)).ok());
  ASSERT_TRUE(sink->Consume(BatchEnding(3)).ok());  // queue: 2 3 (full)
  EXPECT_EQ(sink->dropped_windows(), 0u);
  const Status full = sink->Consume(BatchEnding(4));  // drops 2: queue 3 4
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().message, "queue full (2 windows): dropping the oldest; the sink is slower than the sampling");
  EXPECT_FALSE(sink->Consume(BatchEnding(5)).ok());  // drops 3: queue 4 5
  EXPECT_EQ(sink->dropped_windows(), 2u);
  EXPECT_EQ(drops, 2);

  gate->Open();
  ASSERT_TRUE(sink->Flush().ok());
  EXPECT_EQ(gate->written(), (std::vector<double>{1, 4, 5}));  // in time order, newest kept
  EXPECT_EQ(sink->dropped_windows(), 2u);
  EXPECT_TRUE(sink->Consume(BatchEnding(6)).ok());  // room again: no drop, no error
  ASSERT_TRUE(sink->Flush().ok());
  EXPECT_EQ(drops, 2);
}

TEST(AsyncSink, FlushWaitsForEveryBatchQueuedBeforeIt) {
  auto [gate, sink] = MakeQueued(8, false);  // NOLINT(clang-analyzer-cplusplus.NewDeleteLeaks)
  for (double end : {1.0, 2.0, 3.0}) ASSERT_TRUE(sink->Consume(BatchEnding(end)).ok());
  EXPECT_TRUE(gate->written().empty());
  // Open the gate only once the worker is inside the wrapped sink, from
  // another thread, while this one waits in Flush.
  std::thread opener([gate = gate] {
    gate->WaitEntered(1);
    gate->Open();
  });
  const Status flushed = sink->Flush();
  opener.join();
  ASSERT_TRUE(flushed.ok());
  EXPECT_EQ(gate->written(), (std::vector<double>{1, 2, 3}));
}

TEST(AsyncSink, CloseWritesWhatIsQueuedJoinsItsThreadAndIsIdempotent) {
  const std::ptrdiff_t before = ThreadsBefore();
  auto [gate, sink] = MakeQueued(8, false);  // NOLINT(clang-analyzer-cplusplus.NewDeleteLeaks)
  EXPECT_EQ(Threads(), before + 1);
  ASSERT_TRUE(sink->Consume(BatchEnding(1)).ok());
  ASSERT_TRUE(sink->Consume(BatchEnding(2)).ok());
  std::thread opener([gate = gate] {
    gate->WaitEntered(1);
    gate->Open();
  });
  EXPECT_TRUE(sink->Close().ok());
  opener.join();
  EXPECT_EQ(gate->written(), (std::vector<double>{1, 2}));
  EXPECT_EQ(Threads(), before);
  EXPECT_TRUE(sink->Close().ok());  // again: nothing to do
  EXPECT_TRUE(sink->Flush().ok());  // nothing queued: returns at once
  // After Close a batch is refused, not queued, and not counted as dropped.
  EXPECT_FALSE(sink->Consume(BatchEnding(3)).ok());
  EXPECT_EQ(sink->dropped_windows(), 0u);
  EXPECT_EQ(gate->written(), (std::vector<double>{1, 2}));
  sink.reset();  // the destructor's Close is a third call
  EXPECT_EQ(Threads(), before);
}

// A sink whose record outlives it, to look at after the AsyncSink is gone.
class RecordingSink : public Sink {
 public:
  explicit RecordingSink(std::shared_ptr<std::vector<double>> written) : written_(std::move(written)) {}
  std::string_view name() const override { return "recording"; }
  Status Consume(const WindowBatch& batch) override {
    written_->push_back(batch.end_s);
    return OkStatus();
  }

 private:
  std::shared_ptr<std::vector<double>> written_;
};

TEST(AsyncSink, TheDestructorWritesWhatIsQueuedAndLeavesNoThread) {
  const std::ptrdiff_t before = ThreadsBefore();
  auto written = std::make_shared<std::vector<double>>();
  {
    AsyncSink sink(std::make_unique<RecordingSink>(written), {});
    EXPECT_EQ(Threads(), before + 1);
    for (double end : {1.0, 2.0, 3.0}) ASSERT_TRUE(sink.Consume(BatchEnding(end)).ok());
  }
  EXPECT_EQ(*written, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(Threads(), before);
}

TEST(AsyncSink, ErrorsSurfaceAWindowLateUnderTheWrappedSinksName) {
  auto [gate, sink] = MakeQueued(8, true);  // NOLINT(clang-analyzer-cplusplus.NewDeleteLeaks)
  EXPECT_EQ(sink->name(), "gated");
  gate->Fail(1);
  EXPECT_TRUE(sink->Consume(BatchEnding(1)).ok());  // nothing written yet
  const Status flushed = sink->Flush();
  ASSERT_FALSE(flushed.ok());
  EXPECT_EQ(flushed.error().message, "cannot write the window at 1");
  const Status late = sink->Consume(BatchEnding(2));  // the status of window 1
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().message, "cannot write the window at 1");
  EXPECT_TRUE(sink->Flush().ok());                  // window 2 was written
  EXPECT_TRUE(sink->Consume(BatchEnding(3)).ok());  // and that is what Consume says now
}

// The names of this process's threads (Linux: /proc/self/task/TID/comm).
std::vector<std::string> ThreadNames() {
  std::vector<std::string> names;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (std::getline(comm, name)) names.push_back(name);
  }
  return names;
}

// So that top -H and the GPU step's per-thread CPU table tell it apart.
TEST(AsyncSink, ItsThreadIsNamedAfterTheWrappedSink) {
  auto written = std::make_shared<std::vector<double>>();
  AsyncSink sink(std::make_unique<RecordingSink>(written), {});
  ASSERT_TRUE(sink.Consume(BatchEnding(1)).ok());
  ASSERT_TRUE(sink.Flush().ok());  // the worker has run, so it has named itself
  const auto names = ThreadNames();
  EXPECT_EQ(std::count(names.begin(), names.end(), "ofu-recording"), 1) << ::testing::PrintToString(names);
}

}  // namespace
}  // namespace ofu::sinks
