// libFuzzer entry for the GPU spec database parser (--spec-db files), the
// clock models it accepts (core/clock_model.h), and
// the MIG profile names GpuSpec::MigSmCount reads (dcgm-exporter's
// GPU_I_PROFILE label, nvidia-smi's "MIG 1g.10gb+me").
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ofu/core/clock_model.h"
#include "ofu/core/gpu_spec.h"

namespace {

// One SKU with MIG profiles, to read the input as a profile name.
const ofu::GpuSpec& MigSku() {
  static const ofu::GpuSpecDatabase db = *ofu::GpuSpecDatabase::Parse(R"({
    "architectures": {"ampere": {"k_arch": 1.0, "k_arch_source": "fuzz"}},
    "skus": [{"id": "m", "name": "M", "architecture": "ampere", "sm_count": 108, "basis_precision": "bf16",
              "precisions": {"bf16": {"flops_per_clock_per_sm": 2048, "peak_tflops": 312}},
              "aliases": ["M"], "source": "fuzz",
              "mig_profiles": {"1g.10gb": 14, "3g.40gb": 42, "7g.80gb": 98}, "mig_source": "fuzz"}]})",
                                                                      "fuzz-mig.json");
  return db.skus().front();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (auto sms = MigSku().MigSmCount(input); sms && *sms <= 0) __builtin_trap();

  auto db = ofu::GpuSpecDatabase::Parse(input, "fuzz.json");
  if (!db.ok()) return 0;
  for (const auto& spec : db->skus()) {
    volatile double clock = spec.SpecClockMhz();
    (void)clock;
    (void)db->Lookup(spec.id);
    for (const auto& [profile, sms] : spec.mig_profile_sms) {
      // A listed profile finds itself, also in nvidia-smi's spelling with a suffix.
      if (spec.MigSmCount(profile) != sms || spec.MigSmCount("MIG " + profile + "+me") != sms) __builtin_trap();
    }
    // A clock model the parser accepted estimates a positive clock inside its
    // own range, at every tensor activity and power state.
    if (spec.clock_model) {
      for (double a : {0.0, 0.005, 0.2, 0.45, 0.6, 0.75, 1.0}) {
        for (std::optional<std::uint64_t> reasons :
             {std::optional<std::uint64_t>(), std::optional<std::uint64_t>(0), std::optional<std::uint64_t>(4)}) {
          const ofu::RunClock f = ofu::EstimateRunClock(*spec.clock_model, a, 1500, reasons);
          if (!(f.mhz > 0 && f.low_mhz <= f.mhz + 1e-9 && f.mhz <= f.high_mhz + 1e-9)) __builtin_trap();
        }
      }
    }
  }
  return 0;
}
