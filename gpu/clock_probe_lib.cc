#include "clock_probe_lib.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "clock_probe.h"
#include "ofu/gemm/clock_probe.h"

namespace {

ofu::gemm::ProbeLaunch LaunchOf(const std::int64_t* records, int blocks) {
  ofu::gemm::ProbeLaunch launch;
  launch.reserve(static_cast<std::size_t>(std::max(blocks, 0)));
  for (int b = 0; b < blocks; ++b) {
    const std::int64_t* r = records + 3 * static_cast<std::ptrdiff_t>(b);
    launch.push_back({static_cast<int>(r[0]), r[1], r[2]});
  }
  return launch;
}

void WriteWhy(const std::string& text, char* why, int why_size) {
  if (why == nullptr || why_size <= 0) return;
  const auto n = std::min(text.size(), static_cast<std::size_t>(why_size - 1));
  std::memcpy(why, text.data(), n);
  why[n] = '\0';
}

}  // namespace

extern "C" {

int ofu_clock_probe_version() { return 1; }

int ofu_clock_probe_launch(void* records, int blocks, void* stream) {
  return static_cast<int>(ofu::gpu::LaunchClockProbe(static_cast<ofu::gpu::DeviceProbeRecord*>(records), blocks,
                                                     static_cast<cudaStream_t>(stream)));
}

int ofu_clock_probe_span(const std::int64_t* before, const std::int64_t* after, int blocks, double* out, char* why,
                         int why_size) {
  if (before == nullptr || after == nullptr || out == nullptr || blocks <= 0) {
    WriteWhy("no records", why, why_size);
    return 1;
  }
  const auto span = ofu::gemm::ClockBetween(LaunchOf(before, blocks), LaunchOf(after, blocks));
  if (!span) {
    WriteWhy(span.error().message, why, why_size);
    return 1;
  }
  out[0] = span->start_ns;
  out[1] = span->end_ns;
  out[2] = span->sms;
  out[3] = span->median_mhz;
  out[4] = span->min_mhz;
  out[5] = span->max_mhz;
  return 0;
}

}  // extern "C"
