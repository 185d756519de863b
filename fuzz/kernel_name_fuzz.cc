// libFuzzer entry for the GEMM kernel-name parser and classifier.
//
// Every field of a parsed name, and every byte of the identifier, of the
// unknown flags and of the reason, is read so that AddressSanitizer sees a
// view that points outside the input. A parsed name must keep the contract:
// sizes positive or absent, and an unparsed one always has a reason. The
// classifier must agree with the parser: a parsed name is a GEMM with the
// parser's tensor_core and no reason; any other name has the parser's reason,
// after kGemmUnreadReason where it still names a GEMM and is not cut. A
// DeepGEMM name that reads has its whole tile and names its grouping.
// A name is called truncated exactly when its reason starts "truncated:", and
// never when it reads; a trtllm-gen 2-CTA kernel has a 2-wide cluster.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ofu/kernels/kernel_name.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view name(reinterpret_cast<const char*>(data), size);
  const auto result = ofu::kernels::ParseKernelName(name);
  const ofu::kernels::KernelClass kind = ofu::kernels::ClassifyKernelName(name);
  std::size_t checksum = 0;
  if (result.ok()) {
    const ofu::kernels::KernelInfo& info = *result;
    for (const char c : info.identifier) checksum += static_cast<unsigned char>(c);
    for (const auto& flag : info.unknown_flags) {
      if (flag.empty()) std::abort();  // a kept flag is a token of the name
      for (const char c : flag) checksum += static_cast<unsigned char>(c);
    }
    checksum += ofu::kernels::FamilyName(info.family).size();
    if (info.precision) checksum += ofu::kernels::PrecisionName(*info.precision).size();
    for (const auto& field : {info.tile_m, info.tile_n, info.tile_k, info.stages, info.cluster_m, info.cluster_n}) {
      if (field && *field <= 0) std::abort();  // sizes are positive or absent
      checksum += static_cast<std::size_t>(field.value_or(0));
    }
    if (!kind.gemm || kind.tensor_core != info.tensor_core || !kind.reason.empty()) std::abort();
    if (kind.truncated) std::abort();  // a name that reads is never called cut
    checksum += static_cast<std::size_t>(info.sparse) + static_cast<std::size_t>(info.block_scaled);
    if (info.two_cta && info.family == ofu::kernels::KernelFamily::kTrtllmGen && info.cluster_m != 2) std::abort();
    for (const char c : info.grouping) checksum += static_cast<unsigned char>(c);
    if (info.family == ofu::kernels::KernelFamily::kDeepGemm && (!info.tile_m || !info.tile_n || !info.tile_k)) {
      std::abort();
    }
  } else {
    if (result.error().message.empty()) std::abort();  // unparsed always says why
    const std::string expected = kind.gemm && !kind.truncated
                                     ? std::string(ofu::kernels::kGemmUnreadReason) + ": " + result.error().message
                                     : result.error().message;
    if (kind.reason != expected) std::abort();
    for (const char c : result.error().message) checksum += static_cast<unsigned char>(c);
    if (!kind.gemm && kind.tensor_core) std::abort();  // a unit only for a GEMM
    // A cut name says so first, and only a cut name does.
    if (kind.truncated != (result.error().message.rfind("truncated:", 0) == 0)) std::abort();
  }
  volatile std::size_t sink = checksum;
  static_cast<void>(sink);
  return 0;
}
