// marlin (vLLM's Marlin mixed-input GEMMs: 4- or 8-bit weights, 16-bit or
// 8-bit activations; the weights are converted in registers and the MMA runs
// on the activations' type)
//   void marlin::Marlin<A, B, C, S, threads, m_blocks, n_blocks, k_blocks, m_block_size_8, stages, group_blocks,
//   zp_float>(...) void marlin_moe_wna16::Marlin<...the same...>(...)
// Demangled signatures only. The template parameter order is vLLM's
// csrc/quantization/marlin/kernel.h (vllm-project/vllm@bc390b91, 12
// arguments: A, B, C and scale vllm::ScalarType ids first); older builds
// have 11 (kernel.h@181b452c: <scalar_t, w_type, s_type, threads, ...>) or
// 10 (marlin_template.h@1e7d9384: <scalar_t, w_type, threads, m, n, k,
// m_block_size_8, stages, group_blocks, zp_float>; 2024's gptq_marlin:
// <scalar_t, w_type, threads, m, n, k, stages, act_order, has_zp,
// group_blocks>, told apart by whether the argument after k is a bool).
// The tile is 16·m_blocks × 16·n_blocks × 16·k_blocks, except that
// m_block_size_8 makes M 8 (marlin_template.h: `m_block_size =
// m_block_size_8 ? 8 : 16 * thread_m_blocks`). precision: A's type, the
// one the MMA runs on (a ScalarType id decoded by vLLM's
// csrc/core/scalar_type.hpp packing, or the C++ type of scalar_t); the
// weights' narrower type is not what the tensor pipes execute. tensor_core
// true (mma.sync); no clusters; the target architecture is not in the name.
#include "ofu/kernels/family_table.h"

#include <cstdint>

#include <fmt/format.h>

namespace ofu::kernels::detail {
namespace {

// A template argument as a demangler prints it: "1125899906910725l",
// "(long)1125899906910725", "256", "false", "0".
std::optional<int64_t> LongArgument(std::string_view value) {
  if (EndsWith(value, "l") || EndsWith(value, "L")) value.remove_suffix(1);
  if (value.empty() || value.size() > 18) return std::nullopt;
  int64_t out = 0;
  for (const char c : value) {
    if (!IsDigit(c)) return std::nullopt;
    out = out * 10 + (c - '0');
  }
  return out;
}
std::optional<bool> BoolArgument(std::string_view value) {
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  return std::nullopt;
}

// vllm::ScalarType ids of the activation types Marlin takes (scalar_type.hpp's
// packing of exponent, mantissa, sign and bias; the ids real profiles print).
std::optional<Precision> ScalarTypePrecision(int64_t id) {
  switch (id) {
    case 1125899906910725: return Precision::kFp16;  // kFloat16 (e5m10)
    case 1125899906909960: return Precision::kBf16;  // kBFloat16 (e8m7)
    case 2814749767172868: return Precision::kFp8;   // kFE4M3fn
    case 1125899906908677: return Precision::kFp8;   // kFE5M2
    case 1125899906909952: return Precision::kInt8;  // kS8 (W4A8)
    default: return std::nullopt;
  }
}

// Where the fields stand in one version's argument list.
struct MarlinLayout {
  std::size_t a_type = 0;    // a ScalarType id, or scalar_t's C++ type when `typed`
  bool typed = false;        // the first argument is a C++ type
  std::size_t m_blocks = 0;  // then n_blocks, k_blocks
  std::optional<std::size_t> m_block_size_8;
  std::size_t stages = 0;
};

std::optional<MarlinLayout> LayoutOf(const std::vector<TemplateArgument>& args) {
  const bool typed = CppTypePrecision(args.empty() ? std::string_view() : args[0].value).has_value();
  if (args.size() == 12 && !typed) return MarlinLayout{0, false, 5, 8, 9};
  if (args.size() == 11 && typed) return MarlinLayout{0, true, 4, 7, 8};
  if (args.size() == 10 && typed) {
    // Marlin has two or more stages, so a 0/1/true/false after k is m_block_size_8.
    if (BoolArgument(args[6].value)) return MarlinLayout{0, true, 3, 6, 7};  // 1e7d9384
    return MarlinLayout{0, true, 3, std::nullopt, 6};                        // 2024: stages after k
  }
  return std::nullopt;
}

}  // namespace

bool IsMarlinKernel(const std::vector<Identifier>& ids, std::size_t at) {
  if (at == 0 || ids[at].qualifier || ids[at].text != "Marlin" || !ids[at - 1].qualifier) return false;
  return ids[at - 1].text == "marlin" || ids[at - 1].text == "marlin_moe_wna16";
}

Result<KernelInfo> ParseMarlin(std::string_view signature, const std::vector<Identifier>& ids, std::size_t at,
                               KernelFamily family) {
  const std::vector<TemplateArgument> args = SplitArguments(TemplateArguments(signature, ids[at].end));
  const auto layout = LayoutOf(args);
  if (!layout) {
    return Unparsed(
        fmt::format("marlin: {} template arguments (first {}): no Marlin version ofu knows takes that list, so where "
                    "the tile stands is not known",
                    args.size(), Quote(args.empty() ? std::string_view() : args[0].raw)));
  }
  KernelInfo info;
  info.family = family;
  info.identifier = fmt::format("{}::Marlin", ids[at - 1].text);
  const std::array<std::optional<int>*, 3> tile = {&info.tile_m, &info.tile_n, &info.tile_k};
  for (std::size_t i = 0; i < tile.size(); ++i) {
    const TemplateArgument& blocks = args[layout->m_blocks + i];
    const auto count = TemplateNumber(blocks.value);
    if (!count) {
      return Unparsed(fmt::format("marlin: thread_{}_blocks argument {} is not a number", "mnk"[i], Quote(blocks.raw)));
    }
    *tile[i] = 16 * *count;
  }
  if (layout->m_block_size_8) {
    const auto small_m = BoolArgument(args[*layout->m_block_size_8].value);
    if (!small_m) {
      return Unparsed(fmt::format("marlin: m_block_size_8 argument {} is not a bool",
                                  Quote(args[*layout->m_block_size_8].raw)));
    }
    if (*small_m) info.tile_m = 8;
  }
  info.stages = TemplateNumber(args[layout->stages].value);
  const std::string_view a = args[layout->a_type].value;
  if (layout->typed) {
    info.precision = CppTypePrecision(a);
  } else if (const auto id = LongArgument(a)) {
    info.precision = ScalarTypePrecision(*id);
  }
  info.tensor_core = true;
  return info;
}

}  // namespace ofu::kernels::detail
