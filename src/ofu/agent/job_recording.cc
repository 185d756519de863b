#include "ofu/agent/job_recording.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "ofu/platform/child_process.h"
#include "ofu/platform/process_tree.h"

namespace ofu::agent {
namespace {

// Keeps what the run learns of each GPU from a window.
void NoteGpus(const sources::Snapshot& snapshot, std::vector<SeenGpu>& gpus) {
  for (const sources::GpuReading& reading : snapshot.gpus) {
    auto seen = std::find_if(gpus.begin(), gpus.end(),
                             [&](const SeenGpu& g) { return g.identity.key == reading.identity.key; });
    if (seen == gpus.end()) {
      gpus.push_back(SeenGpu{reading.identity, {}});
      seen = gpus.end() - 1;
    }
    for (const sources::GpuProcess& process : reading.processes) seen->pids.insert(static_cast<int>(process.pid));
  }
}

// From line `first_line` of the job's output on (1-based, in the order the
// log reader read the lines), the lines passed through after `windows`
// windows had been recorded.
struct LineMark {
  int first_line = 1;
  int windows = 0;
};

// The job's output on its way from the relay thread to the log reader's.
// Bounded: when the reader falls behind (a job that prints faster than its
// lines are matched), chunks are dropped and counted, so reading never slows
// the job's output; the relay thread only copies.
class ChunkQueue {
 public:
  static constexpr std::size_t kMaxBytes = 8u << 20;  // read after the job ends: about 0.2 s

  struct Chunk {
    std::string bytes;
    bool from_stderr = false;
    bool after_gap = false;  // chunks of its stream were dropped just before it
    int windows = 0;         // windows recorded when it passed through
  };

  void Push(std::string_view bytes, bool from_stderr, int windows) {
    std::lock_guard lock(mutex_);
    bool& gap = gap_[from_stderr ? 1 : 0];
    if (bytes_ + bytes.size() > kMaxBytes) {
      dropped_bytes_ += bytes.size();
      gap = true;
      return;
    }
    bytes_ += bytes.size();
    const bool was_empty = chunks_.empty();
    chunks_.push_back(Chunk{std::string(bytes), from_stderr, gap, windows});
    gap = false;
    if (was_empty) ready_.notify_one();
  }
  // Everything queued, once there is something or the queue is closed;
  // false when it is closed and empty.
  bool Take(std::deque<Chunk>& out) {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return !chunks_.empty() || closed_; });
    if (chunks_.empty()) return false;
    out.swap(chunks_);
    chunks_.clear();
    bytes_ = 0;
    return true;
  }
  void Close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    ready_.notify_one();
  }
  std::uint64_t dropped_bytes() {
    std::lock_guard lock(mutex_);
    return dropped_bytes_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Chunk> chunks_;
  std::size_t bytes_ = 0;
  bool closed_ = false;
  std::array<bool, 2> gap_ = {false, false};
  std::uint64_t dropped_bytes_ = 0;
};

// Each step's printed_s: the end of the window its line passed through in
// (marks say how many windows were done when it did); a line after the last
// window is given that window's end. Without windows, none is set.
void TimeSteps(const std::vector<LineMark>& marks, const std::vector<double>& window_end_s,
               std::vector<formats::TrainingLogStep>& steps) {
  if (window_end_s.empty() || marks.empty()) return;
  for (formats::TrainingLogStep& step : steps) {
    // The last mark at or before the step's line.
    const auto after = std::upper_bound(marks.begin(), marks.end(), step.line,
                                        [](int line, const LineMark& mark) { return line < mark.first_line; });
    if (after == marks.begin()) continue;
    const int done = std::prev(after)->windows;
    step.printed_s = window_end_s[std::min<std::size_t>(done, window_end_s.size() - 1)];
  }
}

}  // namespace

void InterruptibleClock::SleepS(double seconds) {
  while (seconds > 0 && !(stop_ && stop_())) {
    const double slice = std::min(seconds, slice_s_);
    inner_.SleepS(slice);
    seconds -= slice;
  }
}

Result<JobRecording> RecordJob(sources::Source& source, InterruptibleClock& clock,
                               const std::vector<std::string>& command, const formats::TrainingLogPatterns& patterns,
                               const JobRecordingOptions& options) {
  OFU_ASSIGN_OR_RETURN(platform::ChildProcess child, platform::ChildProcess::Start(command));
  JobRecording run;
  run.started_s = clock.NowS();

  // The output passes through on its own thread, which queues each line for
  // the log reader on another: the pass-through never waits for the reading.
  formats::TrainingLogStream log(options.log_name, patterns);
  ChunkQueue chunks;
  // Windows recorded so far, read by the relay thread to tag each chunk: a
  // line's time is the end of the window it passed through in, so the MFU
  // lines can be placed in the job's phases without a clock on that thread.
  std::atomic<int> windows_done = 0;
  std::vector<LineMark> marks;  // the reader thread's until it is joined
  std::thread reader([&] {
    platform::LowerThisThreadsPriority();           // the job's output comes first
    std::array<platform::LineSplitter, 2> streams;  // stdout, stderr
    int lines = 0, windows = 0;
    const auto read_line = [&](std::string_view line) {
      if (++lines == 1 || marks.back().windows != windows) marks.push_back({lines, windows});
      log.Line(line);
    };
    std::deque<ChunkQueue::Chunk> batch;
    while (chunks.Take(batch)) {
      for (const ChunkQueue::Chunk& chunk : batch) {
        platform::LineSplitter& stream = streams[chunk.from_stderr ? 1 : 0];
        if (chunk.after_gap) stream.Resync();
        windows = chunk.windows;
        stream.Add(chunk.bytes, read_line);
      }
      batch.clear();
    }
    windows = windows_done.load();
    for (platform::LineSplitter& stream : streams) stream.Finish(read_line);
  });
  std::packaged_task<void()> relay([&] {
    child.Relay(options.out_fd, options.err_fd, [&](std::string_view bytes, bool from_stderr) {
      chunks.Push(bytes, from_stderr, windows_done.load(std::memory_order_relaxed));
    });
  });
  std::future<void> relayed = relay.get_future();
  std::thread relay_thread(std::move(relay));

  // A signal for the command is passed on whenever its exit is checked:
  // between the clock's slices while recording, and after.
  const auto exited = [&] {
    if (const int signal = options.take_signal ? options.take_signal() : 0; signal != 0) {
      child.Signal(signal);
      run.forwarded.push_back(signal);
    }
    return child.TryWait().has_value();
  };
  clock.SetStop(exited);
  while (!exited()) {
    auto next = source.Next();
    if (!next.ok()) {
      run.source_error = next.error();
      break;
    }
    if (!next->has_value()) break;  // a replay that ended
    const sources::Snapshot& snapshot = **next;
    run.writer.Add(snapshot);
    if (run.windows == 0) run.first_window_start_s = snapshot.time_s - snapshot.window_s;
    run.window_end_s.push_back(snapshot.time_s);
    ++run.windows;
    windows_done.store(run.windows, std::memory_order_relaxed);
    NoteGpus(snapshot, run.gpus);
    for (const int pid : platform::ProcessTree(child.pid(), options.proc_root)) run.job_pids.insert(pid);
  }
  clock.SetStop(nullptr);
  // Without a source (it failed, or a replay ended) the command still runs
  // to its end, signals passed on.
  while (!exited()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  run.exit_status = child.Wait();
  run.ended_s = clock.NowS();

  if (relayed.wait_for(std::chrono::duration<double>(options.drain_s)) != std::future_status::ready) {
    child.StopRelay();  // a process the command left behind keeps the pipes open
  }
  relay_thread.join();
  chunks.Close();
  reader.join();
  if (const std::uint64_t dropped = chunks.dropped_bytes(); dropped > 0) {
    run.notes.push_back(
        fmt::format("{:.1f} MiB of the job's output were not read for MFU: it printed faster than its "
                    "lines could be matched (the output itself passed through whole)",
                    static_cast<double>(dropped) / (1 << 20)));
  }
  auto read = log.Finish();
  if (read.ok()) {
    TimeSteps(marks, run.window_end_s, read->steps);
    run.log = std::move(*read);
  } else {
    run.log_error = read.error();
  }
  return run;
}

}  // namespace ofu::agent
