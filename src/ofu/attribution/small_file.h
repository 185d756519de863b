// Reading the small text files attribution looks at (/proc/PID/*, mapping
// files, the password file) with the reason for a failure kept apart: a
// process that exits between listing and reading is normal and silent, a
// permission problem is worth a note, anything else is an error.
//
// Thread-safe; no state.
#pragma once

#include <string>

namespace ofu::attribution {

enum class FileStatus {
  kOk,
  kMissing,  // ENOENT or ESRCH: the file, or the process behind it, is gone
  kDenied,   // EACCES or EPERM
  kFailed,   // anything else; `error` says what
};

struct FileRead {
  FileStatus status = FileStatus::kFailed;
  std::string content;  // the whole file when ok
  std::string error;    // strerror text when not ok
};

// Reads at most `limit` bytes (default 1 MiB: /proc/PID/environ is bounded
// by ARG_MAX, the others are tiny); what lies beyond is dropped.
FileRead ReadSmallFile(const std::string& path, std::size_t limit = 1 << 20);

}  // namespace ofu::attribution
