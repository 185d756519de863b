// libFuzzer entry for the GEMM kernel-name parser.
//
// Every field of a parsed name, and every byte of the identifier and of the
// reason, is read so that AddressSanitizer sees a view that points outside
// the input. A parsed name must keep the contract: sizes positive or absent,
// and an unparsed one always has a reason.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ofu/kernels/kernel_name.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view name(reinterpret_cast<const char*>(data), size);
  const auto result = ofu::kernels::ParseKernelName(name);
  std::size_t checksum = 0;
  if (result.ok()) {
    const ofu::kernels::KernelInfo& info = *result;
    for (const char c : info.identifier) checksum += static_cast<unsigned char>(c);
    checksum += ofu::kernels::FamilyName(info.family).size();
    if (info.precision) checksum += ofu::kernels::PrecisionName(*info.precision).size();
    for (const auto& field : {info.tile_m, info.tile_n, info.tile_k, info.stages, info.cluster_m, info.cluster_n}) {
      if (field && *field <= 0) std::abort();  // sizes are positive or absent
      checksum += static_cast<std::size_t>(field.value_or(0));
    }
  } else {
    if (result.error().message.empty()) std::abort();  // unparsed always says why
    for (const char c : result.error().message) checksum += static_cast<unsigned char>(c);
  }
  volatile std::size_t sink = checksum;
  static_cast<void>(sink);
  return 0;
}
