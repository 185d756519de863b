// Reads a PyTorch profiler (Kineto) Chrome trace into a KernelTrace.
//
// What is read
//   The top level must be a JSON object. Of its keys only two are read:
//     * "traceEvents": the array of events (required; more than one such key
//       is read as one longer array);
//     * "deviceProperties" (older traces: "computeProperties"): one object per
//       GPU with "id", "name", "numSms", "computeMajor", "computeMinor" (older:
//       "multiProcessorCount", "major", "minor"), into KernelTrace::devices
//       (one that is not an array is noted and skipped).
//   Other keys are skipped; their values are checked only for balanced
//   brackets and terminated strings.
//   Of the events, only complete events ("ph": "X") of three kinds are kept:
//     * GPU kernels, "cat" "kernel" (old traces "Kernel"): every one becomes a
//       TraceKernel. "ts" and "dur" are required (µs, integer or fractional);
//       from "args": "device", "stream", "grid" and "block" ([x, y, z]),
//       "External id" and "correlation" (both used only for linking).
//     * CPU ops, "cat" "cpu_op" (old traces "operator"/"Operator"), only when
//       IsGemmOpName(name): "ts", "dur" (required), "pid", "tid" (integers or
//       strings; "24572" and 24572 name the same thread), "External id",
//       "Input Dims" (one list per input; an input that is not a list of
//       integers, such as a scalar or a tensor list, is kept as {}) and
//       "Input type" (kept as written; a non-string entry as "").
//     * CUDA launches, "cat" "cuda_runtime"/"cuda_driver" (old traces
//       "Runtime"): "name", "pid", "tid", "ts" and "args"."correlation".
//   Everything else (python_function, user_annotation, gpu_memcpy, flow and
//   metadata events, ...) and every unknown field is ignored. Old traces
//   spell the id "external id"; both spellings are read.
//
// How kernels are linked to ops (after the whole file is read, since Kineto
// does not write events in time order)
//   0. the launch event with the kernel's correlation sets TraceKernel::launch:
//      kGraph when it is a graph launch (IsGraphLaunchName), kKernel for any
//      other call, kUnknown when no launch event has that correlation. A
//      kGraph kernel is linked to no op: the op around the graph launch
//      replays the graph and did not shape the kernel;
//   1. the kernel's External id is that of a kept GEMM op -> kExternalId;
//   2. else its correlation finds the launch event; the innermost GEMM op on
//      the launching thread (same pid and tid) whose [ts, ts + dur] holds the
//      launch's ts, i.e. the latest-starting such op -> kCorrelationNesting;
//   3. else kNone.
//   KernelTrace::ops holds only the GEMM ops that some kernel links to, in
//   file order. Kernels keep file order.
//
// Notes (KernelTrace::notes): a few aggregated lines for a person, e.g. when
// the trace has no kernels, no CPU ops, or GEMM ops without "Input Dims".
//
// Errors
//   kIo: the file cannot be opened or read (the message names the path and
//   the system's or zlib's reason).
//   kMalformedInput: "<path>: byte <offset>: <what>", the offset counted in
//   the uncompressed text: the text is not JSON where the reader looks
//   (truncated, unterminated string, top level not an object, "traceEvents"
//   not an array, an event that is not a valid JSON object), the top level
//   has no "traceEvents", a kernel or GEMM op lacks a numeric "ts" or "dur",
//   a launch call lacks a numeric "ts", a "dur" is negative, text follows the
//   top-level object, or a gzip stream is truncated or corrupt. The first
//   error ends the read; no partial result is returned.
//
// Memory and speed: the text is read in chunks (4 MiB by default) and each
// event is parsed on its own, so memory grows with what is kept (every
// kernel, about 170 bytes; every GEMM op until linking, with its shapes;
// every launch call, 24 bytes) and with the largest single event, not with
// the file's size. Figures in docs/BENCHMARKS.md.
//
// Thread-safety: the functions use no shared state; calls may run in
// parallel.
#pragma once

#include <cstddef>
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

// Knobs for tests and benchmarks. The result never depends on them.
struct KinetoReadTuning {
  std::size_t chunk_bytes = std::size_t{4} << 20;  // bytes asked of the source per read; >= 1
};

Result<KernelTrace> ReadKinetoTrace(const std::string& path, const TraceReadOptions& options,
                                    const KinetoReadTuning& tuning);
Result<KernelTrace> ParseKinetoTrace(std::string_view json_text, std::string_view source_name,
                                     const KinetoReadTuning& tuning);

}  // namespace ofu::formats
