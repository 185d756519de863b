// The agent's own process figures, read from /proc as Prometheus client
// libraries read them, under the same names (process_cpu_seconds_total,
// process_resident_memory_bytes, ...), so the dashboards and alerts people
// already have for any exporter work on ofu too.
//
// Read from <root>/self/stat (utime, stime, starttime, vsize, rss: proc(5)),
// <root>/stat (btime), <root>/self/fd (one entry per open descriptor) and
// <root>/self/limits ("Max open files", soft limit). The root is injected
// ("/proc" on a live system) so tests read synthetic files.
//
// Units: seconds, bytes, counts. Absent (not 0) what could not be read:
// the start time without <root>/stat's btime, the descriptors without
// <root>/self/fd, the limit when it is "unlimited" or <root>/self/limits is
// missing. <root>/self/stat is the one file required.
//
// Thread-safety: a pure function of the files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "ofu/core/result.h"

namespace ofu::sources {

struct ProcFiles {
  std::filesystem::path root = "/proc";
  // The kernel's units: clock ticks per second (USER_HZ) for the times in
  // stat, bytes per page for rss. SystemProcFiles() fills them from sysconf.
  long ticks_per_second = 100;
  long page_size = 4096;
};
// /proc with this machine's USER_HZ and page size.
ProcFiles SystemProcFiles();

struct ProcessFigures {
  double cpu_seconds = 0;  // user + system, all threads, since the process started
  double user_seconds = 0;
  double system_seconds = 0;
  double resident_memory_bytes = 0;
  double virtual_memory_bytes = 0;
  std::optional<double> start_time_seconds;  // Unix time the process started
  std::optional<double> open_fds;
  std::optional<double> max_fds;
};

// Errors: kIo when <root>/self/stat cannot be read, kMalformedInput when
// it is malformed (the message names the file).
Result<ProcessFigures> ReadProcessFigures(const ProcFiles& files);

}  // namespace ofu::sources
