// `ofu sources --cost`: what a live source costs on this machine, per
// library call and per window, from its own call accounting
// (call_accounting.h) and the process's CPU (process_figures.h).
//
// MeasureSourceCost reads one window first and leaves it out (it holds the
// first GPM sample and one-time probes), then reads `windows` more and
// reports what the library calls of those took, and the whole process's
// CPU over them. The numbers of calls per window are exact; the times are
// measured (wall, and the calling thread's CPU) and vary run to run. The
// process CPU comes from `process_cpu_s` (injected; ProcessCpuSeconds()
// reads CLOCK_PROCESS_CPUTIME_ID, exact to the nanosecond, where /proc's
// figures have 10 ms ticks that a short run on the double stays under).
//
// Thread-safety: call from the thread that owns the source.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/sources/call_accounting.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/source.h"

namespace ofu::sources {

struct SourceCost {
  std::string source;  // Source::Describe()
  double window_s = 0;
  int windows = 0;       // measured windows (the first one read is not among them)
  int gpus = 0;          // GPUs in the last window
  double elapsed_s = 0;  // clock time of the measured windows
  // What each library function's calls took over the measured windows;
  // functions not called then are left out. Most CPU first.
  std::vector<CallTotals> calls;
  // The whole process's CPU over the measured windows (user + system, all
  // threads); absent when /proc could not be read.
  std::optional<double> process_cpu_s;
};

// Errors: the source's own (a failed Next()); kNoData when it ends before
// `windows` + 1 windows.
Result<SourceCost> MeasureSourceCost(Source& source, const CallAccounting& accounting, int windows,
                                     const std::function<std::optional<double>()>& process_cpu_s, Clock& clock);

// This process's CPU time so far, user + system, all threads, in seconds
// (CLOCK_PROCESS_CPUTIME_ID); absent if the clock cannot be read.
std::optional<double> ProcessCpuSeconds();

// Shown by render/sources_output.h.

}  // namespace ofu::sources
