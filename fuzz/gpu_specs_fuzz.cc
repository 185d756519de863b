// libFuzzer entry for the GPU spec database parser (--spec-db files) and for
// the MIG profile names GpuSpec::MigSmCount reads (dcgm-exporter's
// GPU_I_PROFILE label, nvidia-smi's "MIG 1g.10gb+me").
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

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
  }
  return 0;
}
