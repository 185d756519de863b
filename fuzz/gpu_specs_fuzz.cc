// libFuzzer entry for the GPU spec database parser (--spec-db files).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ofu/core/gpu_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto db = ofu::GpuSpecDatabase::Parse(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  if (!db.ok()) return 0;
  for (const auto& spec : db->skus()) {
    volatile double clock = spec.SpecClockMhz();
    (void)clock;
    (void)db->Lookup(spec.id);
  }
  return 0;
}
