// `ofu run`'s loop: runs a command while a source records every GPU, window
// by window, until the command exits.
//
// What happens, in order:
//   1. the command starts (platform/child_process.h), with this process's
//      standard input; its standard output and error pass through unchanged
//      on a thread of their own, which also hands each line to the
//      training-log reader (formats/training_log.h, the same table as
//      `ofu reconcile`) through a bounded queue read on a third thread, so
//      matching lines never slows the output (lines that do not fit are
//      counted, not read). The relay thread blocks on the pipes and wakes
//      only for output: it never polls;
//   2. on this thread, the source's windows are written to a recording
//      (sources/recording_writer.h) as `ofu record` writes them; after each
//      window the job's process tree is read from /proc and each GPU's
//      process list (NVML) is kept, for the choice of the job's GPUs
//      (analysis/run_gpus.h). The clock's waits end early when the command
//      exits, so the last window is cut short, not waited out;
//   3. a signal another process sent ofu (SIGINT, SIGTERM) is passed to the
//      command (`take_signal`); the command decides when to end;
//   4. once it has exited, its output is read to the end (at most
//      `drain_s` more, so a grandchild that keeps the pipes open cannot hold
//      ofu), and the log's figures are taken.
// A source that fails mid-way ends the recording, not the command: the
// windows before it are kept and the error is returned beside them.
//
// Units: seconds; pids as the kernel numbers them. Thread-safety: one call
// at a time; the source and clock are used from the calling thread only.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/formats/training_log.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/recording_writer.h"
#include "ofu/sources/source.h"

namespace ofu::agent {

// A clock whose waits end early once `stop` says so (checked every slice).
class InterruptibleClock final : public sources::Clock {
 public:
  explicit InterruptibleClock(sources::Clock& inner, double slice_s = 0.05) : inner_(inner), slice_s_(slice_s) {}
  double NowS() override { return inner_.NowS(); }
  void SleepS(double seconds) override;
  void SetStop(std::function<bool()> stop) { stop_ = std::move(stop); }

 private:
  sources::Clock& inner_;
  double slice_s_;
  std::function<bool()> stop_;
};

// One GPU as the run saw it, for choosing the job's GPUs.
struct SeenGpu {
  GpuIdentity identity;
  std::set<int> pids;  // every process NVML listed on it during the run
};

struct JobRecording {
  int exit_status = 0;   // the command's, as a shell gives it (128 + N for signal N)
  double started_s = 0;  // the clock's time when the command started
  double ended_s = 0;    // and when it was seen to have exited
  // The start of the first window on the source's own clock (a replay's is
  // the recording's): where the job's timeline starts; absent without one.
  std::optional<double> first_window_start_s;
  sources::RecordingWriter writer;
  int windows = 0;
  std::vector<double> window_end_s;  // each window's end on the source's clock, in order
  std::vector<SeenGpu> gpus;         // in the order first seen
  std::set<int> job_pids;            // the command and every descendant seen at a window's end
  std::vector<int> forwarded;        // signals passed to the command, in order
  // What its output printed: the training log read from it, or why not.
  // Each step's printed_s is the end of the window during which its line
  // passed through (the last window's end for a line after it).
  std::optional<formats::TrainingLog> log;
  std::optional<Error> log_error;
  std::optional<Error> source_error;  // the source failed; windows before it are kept
  std::vector<std::string> notes;     // for people: lines not read, and the like
};

struct JobRecordingOptions {
  std::string proc_root = "/proc";
  double drain_s = 2;                         // at most this long for the output after the command exits
  std::function<int()> take_signal;           // a signal to pass on, 0 when none; may be empty
  int out_fd = 1, err_fd = 2;                 // where the command's output goes
  std::string log_name = "the job's output";  // names the log in the reader's messages
};

// Runs `command` while recording `source`. kInvalidArgument or kUnavailable
// when the command cannot start (nothing is recorded then). `clock` must be
// the clock the source was opened with.
Result<JobRecording> RecordJob(sources::Source& source, InterruptibleClock& clock,
                               const std::vector<std::string>& command, const formats::TrainingLogPatterns& patterns,
                               const JobRecordingOptions& options);

}  // namespace ofu::agent
