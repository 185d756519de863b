// libFuzzer entry for the training-log reader (training_log.h): any text.
// A parsed log keeps the contract: at least one step, each step once, MFU
// finite and not negative, lines increasing, the median among the values; an
// error always names the file first.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "ofu/analysis/training_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string name = "fuzz.log";
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto log = ofu::analysis::ParseTrainingLog(text, name);
  if (!log.ok()) {
    if (log.error().message.rfind(name, 0) != 0) std::abort();
    return 0;
  }
  if (log->steps.empty()) std::abort();
  std::set<std::int64_t> steps;
  int previous_line = 0;
  double low = INFINITY, high = -INFINITY;
  for (const auto& step : log->steps) {
    if (!steps.insert(step.step).second) std::abort();
    if (!std::isfinite(step.mfu) || step.mfu < 0) std::abort();
    if (step.line <= previous_line) std::abort();
    previous_line = step.line;
    low = std::min(low, step.mfu);
    high = std::max(high, step.mfu);
  }
  if (log->median_mfu < low || log->median_mfu > high) std::abort();
  if (log->peak_flops && !(*log->peak_flops > 0 && std::isfinite(*log->peak_flops))) std::abort();
  return 0;
}
