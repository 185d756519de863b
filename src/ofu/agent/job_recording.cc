#include "ofu/agent/job_recording.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <thread>
#include <utility>

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

  // The output passes through on its own thread; the log reader sees each line.
  formats::TrainingLogStream log(options.log_name, patterns);
  std::packaged_task<void()> relay([&] {
    child.Relay(options.out_fd, options.err_fd, [&](std::string_view line, bool) { log.Line(line); });
  });
  std::future<void> relayed = relay.get_future();
  std::thread relay_thread(std::move(relay));

  // A signal for the command is passed on between the clock's slices.
  const auto exited = [&] {
    if (options.take_signal) {
      if (const int signal = options.take_signal(); signal != 0) {
        child.Signal(signal);
        run.forwarded.push_back(signal);
      }
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
    ++run.windows;
    NoteGpus(snapshot, run.gpus);
    for (const int pid : platform::ProcessTree(child.pid(), options.proc_root)) run.job_pids.insert(pid);
  }
  clock.SetStop(nullptr);
  // Without a source the command still runs to its end, signals passed on.
  while (!child.TryWait()) {
    if (options.take_signal) {
      if (const int signal = options.take_signal(); signal != 0) {
        child.Signal(signal);
        run.forwarded.push_back(signal);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  run.exit_status = child.Wait();
  run.ended_s = clock.NowS();

  if (relayed.wait_for(std::chrono::duration<double>(options.drain_s)) != std::future_status::ready) {
    child.StopRelay();  // a process the command left behind keeps the pipes open
  }
  relay_thread.join();
  auto read = log.Finish();
  if (read.ok()) {
    run.log = std::move(*read);
  } else {
    run.log_error = read.error();
  }
  return run;
}

}  // namespace ofu::agent
