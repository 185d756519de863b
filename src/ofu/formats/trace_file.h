// Opens a kernel trace of either kind by what its bytes say: an SQLite
// database ("SQLite format 3\0" header) is an Nsight Systems export, anything
// else (plain JSON or gzip) is read as a PyTorch profiler trace. The file name
// does not matter.
//
// Thread-safety: reentrant; each call reads only its own file and keeps no
// state, so calls on different files may run at once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/formats/kernel_trace.h"

namespace ofu::formats {

// Errors: kIo when the file cannot be opened; otherwise those of
// ReadNsysSqlite or ReadKinetoTrace.
Result<KernelTrace> ReadKernelTrace(const std::string& path, const TraceReadOptions& options = {});

// The trace files `path` names: the file itself, or for a directory (one
// trace per rank, as torch.profiler.tensorboard_trace_handler writes them)
// its files ending in .json, .json.gz or .sqlite, in name order, not
// recursing. kIo when the path cannot be read or a directory holds no
// such files.
Result<std::vector<std::string>> TraceFiles(const std::string& path);

// Reads every file (ReadKernelTrace) into one trace, as if the ranks' events
// had been recorded together: kernels in file order, each distinct kernel
// name once, ops renumbered, devices listed once per (id, name), bytes_read
// summed, format the files' common one (or "mixed"), and with more than one
// file each note prefixed with its file's name. `options.progress` is called
// per file. The first file that fails ends the read with its error.
Result<KernelTrace> ReadKernelTraces(const std::vector<std::string>& paths, const TraceReadOptions& options = {});

// Appends `from` to `into` as ReadKernelTraces does; `source` prefixes its
// notes when not empty.
void AppendKernelTrace(KernelTrace& into, KernelTrace&& from, std::string_view source);

}  // namespace ofu::formats
