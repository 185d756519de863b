// libFuzzer entry for the per-job correction inputs of `ofu reconcile`: the
// `ofu correct --format json` document and the CSV form (first byte picks).
// Parsed values keep the contract: factor and mfu_scale positive and finite
// or absent, shares in 0..1, rates positive.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ofu/formats/mfu_log.h"

namespace {

void Check(const ofu::formats::JobCorrection& c) {
  for (const auto& value : {c.factor, c.mfu_scale}) {
    if (value && (!std::isfinite(*value) || *value <= 0)) std::abort();
  }
  for (const auto& share : c.precision_mix) {
    if (!(share.share >= 0 && share.share <= 1) || !(share.relative_rate > 0)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 2 == 0) {
    const auto correction = ofu::formats::ParseCorrectionJson(text, "fuzz.json");
    if (correction.ok()) Check(*correction);
  } else {
    const auto corrections = ofu::formats::ParseCorrectionCsv(text, "fuzz.csv");
    if (corrections.ok()) {
      for (const auto& [job, c] : *corrections) {
        if (job.empty()) std::abort();
        Check(c);
      }
    }
  }
  return 0;
}
