// libFuzzer entry for the kernel-family throughput table parser
// (data/kernel_throughput.json's format): any text is an error or a table,
// and a parsed table classifies a real pre-Hopper kernel name without
// breaking its own rules.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ofu/kernels/kernel_name.h"
#include "ofu/kernels/kernel_throughput.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto table = ofu::kernels::KernelThroughputTable::Parse(input, "fuzz.json");
  if (!table.ok()) return 0;
  static const ofu::kernels::KernelInfo kSm75 =
      *ofu::kernels::ParseKernelName("cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1");
  for (const auto& figure : table->figures()) {
    // Parse refuses a figure outside (0, 1] or one for a native kernel.
    if (!(figure.relative_throughput > 0) || figure.relative_throughput > 1) __builtin_trap();
    const auto g = table->Classify(kSm75, ofu::kernels::Precision::kBf16, figure.architecture);
    if (g.pre_native && (g.RelativeThroughput() <= 0 || g.RelativeThroughput() > 1)) __builtin_trap();
    if (!g.pre_native && g.figure != nullptr) __builtin_trap();
  }
  return 0;
}
