// Kernel traces as `ofu correct --trace` and `ofu report --html --trace` take
// them: the paths given (files, or directories of per-rank traces) read as
// one job, and the GPU whose per-precision rates weigh the correction.
// One implementation for both commands, so that a trace reads the same in
// the text and in the page.
#pragma once

#include <string>
#include <vector>

#include "ofu/core/gpu_spec.h"
#include "ofu/core/result.h"
#include "ofu/formats/kernel_trace.h"

namespace ofu::cli {

struct TraceInput {
  std::vector<std::string> files;  // every trace file read, directories expanded
  // For people: the one file, or "a, b (N traces)" for several.
  std::string name;
  formats::KernelTrace trace;
};

// Reads `paths` (formats::TraceFiles, then ReadKernelTraces). On a terminal
// it shows the read's progress on stderr and clears the line afterwards.
// Errors: those of TraceFiles and ReadKernelTraces (kIo, kMalformedInput).
Result<TraceInput> ReadTraceInput(const std::vector<std::string>& paths);

// The spec whose rates weigh the precisions: `from_flag` (--gpu-model) when
// not null, else the one model the trace's devices name, else none (generic
// rates); `note` says why the trace's devices gave none, when they name any.
struct ChosenGpu {
  const GpuSpec* spec = nullptr;  // points into `specs`
  std::string origin;             // "--gpu-model", "the trace", or empty
  std::string note;
};
ChosenGpu ChooseGpu(const GpuSpecDatabase& specs, const formats::KernelTrace& trace, const GpuSpec* from_flag);

}  // namespace ofu::cli
