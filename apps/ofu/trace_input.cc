#include "trace_input.h"

#include <unistd.h>

#include <cstdio>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ofu/formats/trace_file.h"

namespace ofu::cli {
namespace {

// Progress on a terminal only: a long read should not look hung, and a pipe
// should not fill with carriage returns.
void ShowProgress(uint64_t done, uint64_t total) {
  if (total > 0) {
    fmt::print(stderr, "\rreading trace: {} of {} MiB ({:.0f} %)", done >> 20, total >> 20,
               100.0 * static_cast<double>(done) / static_cast<double>(total));
  } else {
    fmt::print(stderr, "\rreading trace: {} MiB", done >> 20);
  }
  std::fflush(stderr);
}

}  // namespace

Result<TraceInput> ReadTraceInput(const std::vector<std::string>& paths) {
  TraceInput input;
  for (const std::string& path : paths) {
    OFU_ASSIGN_OR_RETURN(auto in_path, formats::TraceFiles(path));
    input.files.insert(input.files.end(), in_path.begin(), in_path.end());
  }
  formats::TraceReadOptions options;
  const bool tty = isatty(STDERR_FILENO) == 1;
  if (tty) options.progress = ShowProgress;
  auto read = formats::ReadKernelTraces(input.files, options);
  if (tty) fmt::print(stderr, "\r\033[K");  // the progress line goes, whatever the outcome
  OFU_ASSIGN_OR_RETURN(input.trace, std::move(read));
  input.name = input.files.size() == 1 ? input.files.front()
                                       : fmt::format("{} ({} traces)", fmt::join(paths, ", "), input.files.size());
  return input;
}

ChosenGpu ChooseGpu(const GpuSpecDatabase& specs, const formats::KernelTrace& trace, const GpuSpec* from_flag) {
  if (from_flag != nullptr) return {from_flag, "--gpu-model", ""};
  std::set<std::string> names;
  for (const formats::TraceDevice& device : trace.devices) {
    if (!device.name.empty()) names.insert(device.name);
  }
  if (names.size() != 1) {
    return {nullptr, "", names.empty() ? "" : "the trace names several GPU models; pass --gpu-model"};
  }
  auto spec = specs.Lookup(*names.begin());
  if (!spec.ok()) return {nullptr, "", fmt::format("the trace's GPU: {}", spec.error().message)};
  return {*spec, "the trace", ""};
}

}  // namespace ofu::cli
