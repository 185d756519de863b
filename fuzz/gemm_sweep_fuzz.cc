// Fuzzes ofu-gemm's sweep-file parser: any input is parsed or rejected
// with a message; an accepted sweep expands within its limits.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ofu/gemm/sweep.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto sweep = ofu::gemm::ParseSweep(text, "fuzz.toml");
  if (!sweep.ok()) {
    if (sweep.error().message.empty()) std::abort();
    return 0;
  }
  if (sweep->cases.empty() || sweep->cases.size() > ofu::gemm::kMaxCases) std::abort();
  for (const auto& c : sweep->cases) {
    if (c.m < 1 || c.n < 1 || c.k < 1 || c.m > ofu::gemm::kMaxDimension ||
        c.min_seconds < ofu::gemm::kMinSteadySeconds) {
      std::abort();
    }
    (void)ofu::gemm::DescribeCase(c);
  }
  return 0;
}
