// Reads a PyTorch profiler (Kineto) Chrome trace into a KernelTrace.
//
// (Contract to be completed by the implementation: what is read, how kernels
// are linked to ops, what is an error.)
#pragma once

#include <string>
#include <string_view>

#include "ofu/core/result.h"
#include "ofu/formats/kernel_trace.h"

namespace ofu::formats {

// Reads the trace at `path`, plain JSON or gzip (detected from the bytes, not
// the name), streaming: memory grows with the number of kernels, not with
// the file's size. Errors: kIo when the file cannot be read, kMalformedInput
// "<path>: byte <offset>: <what>" with the offset in the uncompressed text.
Result<KernelTrace> ReadKinetoTrace(const std::string& path, const TraceReadOptions& options = {});

// The same for plain JSON text in memory; `source_name` names it in errors.
Result<KernelTrace> ParseKinetoTrace(std::string_view json_text, std::string_view source_name);

}  // namespace ofu::formats
