// Opens a kernel trace of either kind by what its bytes say: an SQLite
// database ("SQLite format 3\0" header) is an Nsight Systems export, anything
// else (plain JSON or gzip) is read as a PyTorch profiler trace. The file name
// does not matter.
//
// Thread-safety: reentrant; each call reads only its own file and keeps no
// state, so calls on different files may run at once.
#pragma once

#include <string>

#include "ofu/core/result.h"
#include "ofu/formats/kernel_trace.h"

namespace ofu::formats {

// Errors: kIo when the file cannot be opened; otherwise those of
// ReadNsysSqlite or ReadKinetoTrace.
Result<KernelTrace> ReadKernelTrace(const std::string& path, const TraceReadOptions& options = {});

}  // namespace ofu::formats
