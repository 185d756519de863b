// deepgemm (DeepSeek's DeepGEMM and its internal dpsk::gemm build; the
// template parameters are read in the order of DeepGEMM's kernel templates,
// deep_gemm/include/deep_gemm/{fp8_gemm.cuh, impls/sm90_fp8_gemm_1d2d.cuh,
// impls/sm90_fp8_gemm_1d1d.cuh, impls/sm100_fp8_gemm_1d1d.cuh}, at the
// commits listed in docs/kernels.md)
//   void deep_gemm::fp8_gemm_kernel<N, K, BLOCK_M, BLOCK_N, BLOCK_K, ..., (deep_gemm::GemmType)T>(...)
//   void dpsk::gemm::fp8_gemm_kernel<N, K, BLOCK_M, BLOCK_N, BLOCK_K, S, ..., (dpsk::gemm::GemmType)T>(...)
//   void deep_gemm::sm90_fp8_gemm_1d2d_impl<[(cute::UMMA::Major)X,] M, N, K, G, BLOCK_M, ...>(...)
//   void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)A, (cute::UMMA::Major)B, ...>(...)
//   Demangled signatures only. Each DeepGEMM version has its own argument
//   list; it is recognised by the number of template arguments (and, where
//   two versions have the same number, by where a bool argument stands),
//   which gives where BLOCK_M (then BLOCK_N, BLOCK_K) and kNumStages stand.
//   A list no known version has is unparsed. tile_m/n/k = BLOCK_M/N/K,
//   stages = kNumStages; precision fp8 (the kernels take e4m3 A and B),
//   tensor_core true (wgmma, tcgen05); the cluster (TMA multicast) is
//   absent. grouping names the GemmType argument: normal, m_grouped_contiguous
//   (MoE, experts' rows back to back), m_grouped_masked (MoE, a padded
//   block per expert), k_grouped_contiguous, batched, and the *_psum
//   variants. dpsk::gemm's 10-argument list is DeepGEMM's first public one
//   without kNumGroups, and its GemmType values DeepGEMM's (inferred).
//   Kernels with no tile in the name (dpsk::grouped_gemm::...::GemmKernel)
//   stay unparsed.
#include "ofu/kernels/family_table.h"

#include <fmt/format.h>

namespace ofu::kernels::detail {
namespace {

// One version of a DeepGEMM kernel template: its number of arguments, where
// a bool argument stands (-1: none is needed to tell it from another version
// with as many), and where BLOCK_M (BLOCK_N, BLOCK_K follow) and kNumStages
// stand. From deepseek-ai/DeepGEMM's deep_gemm/include/deep_gemm/ headers at
// the commit named (docs/kernels.md lists them).
struct DeepGemmVersion {
  std::string_view function;
  std::size_t arguments;
  int bool_at;
  std::size_t block_m_at;
  std::size_t stages_at;
};
constexpr std::array<DeepGemmVersion, 18> kDeepGemmVersions = {{
    // fp8_gemm.cuh: <SHAPE_N, SHAPE_K, BLOCK_M, BLOCK_N, BLOCK_K, ...>
    {"fp8_gemm_kernel", 10, -1, 2, 5},  // dpsk::gemm: a6d97a1's list without kNumGroups (inferred)
    {"fp8_gemm_kernel", 11, -1, 2, 6},  // a6d97a1
    {"fp8_gemm_kernel", 12, 10, 2, 6},  // 7ffb118: kIsTMAMulticastOnA
    {"fp8_gemm_kernel", 12, -1, 3, 7},  // 46eb0d0: SHAPE_M first
    {"fp8_gemm_kernel", 13, 11, 2, 7},  // 6db7e18: BLOCK_N_PADDING
    {"fp8_gemm_kernel", 14, 12, 2, 8},  // 37aa127 to 8dfa329: kSwizzleDMode
    // impls/sm90_fp8_gemm_1d2d.cuh: <[kMajorSFB,] SHAPE_M, SHAPE_N, SHAPE_K, kNumGroups, BLOCK_M, ...>
    {"sm90_fp8_gemm_1d2d_impl", 15, 13, 4, 8},   // 9da4a23
    {"sm90_fp8_gemm_1d2d_impl", 16, 13, 4, 8},   // d9c363f: kNumSMs
    {"sm90_fp8_gemm_1d2d_impl", 17, 13, 4, 8},   // 3f71de7: epilogue_type_t
    {"sm90_fp8_gemm_1d2d_impl", 19, 15, 5, 11},  // 7f2a703
    {"sm90_fp8_gemm_1d2d_impl", 20, 16, 5, 11},  // 38f8ef7: kMajorSFB, swizzles
    {"sm90_fp8_gemm_1d2d_impl", 20, 15, 5, 11},  // 88965b0: cd_dtype_t
    // impls/sm90_fp8_gemm_1d1d.cuh: <SHAPE_M, SHAPE_N, SHAPE_K, kNumGroups, BLOCK_M, ...>
    {"sm90_fp8_gemm_1d1d_impl", 15, 11, 4, 7},  // 3f71de7
    {"sm90_fp8_gemm_1d1d_impl", 17, 13, 4, 9},  // 38f8ef7
    // impls/sm100_fp8_gemm_1d1d.cuh: <kMajorA, kMajorB, [kGranKA, kGranKB,] SHAPE_M, SHAPE_N, SHAPE_K, BLOCK_M, ...>
    {"sm100_fp8_gemm_1d1d_impl", 21, 17, 5, 12},  // 9da4a23
    {"sm100_fp8_gemm_1d1d_impl", 22, 17, 5, 12},  // d9c363f: kNumSMs
    {"sm100_fp8_gemm_1d1d_impl", 22, 16, 5, 12},  // 3f71de7: epilogue_type_t, no kNumLastStages
    {"sm100_fp8_gemm_1d1d_impl", 26, 18, 7, 14},  // 0f5f266: kGranKA, kGranKB
}};

// DeepGEMM's GemmType values (deep_gemm/include/deep_gemm/common/types.hpp;
// scheduler.cuh before 9da4a23 had the first three, without the M).
constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kGemmTypes = {{
    {"Normal", "normal"},
    {"MGroupedContiguous", "m_grouped_contiguous"},
    {"MGroupedMasked", "m_grouped_masked"},
    {"KGroupedContiguous", "k_grouped_contiguous"},
    {"Batched", "batched"},
    {"MGroupedContiguousWithPsumLayout", "m_grouped_contiguous_psum"},
    {"KGroupedContiguousWithPsumLayout", "k_grouped_contiguous_psum"},
}};

// The grouping a GemmType argument names: by value ("1", after its cast) or
// by enumerator ("deep_gemm::GemmType::MGroupedMasked", "GemmType::GroupedMasked").
std::optional<std::string_view> GemmTypeName(std::string_view argument) {
  if (const auto value = TemplateNumber(argument)) {
    if (*value < 0 || static_cast<std::size_t>(*value) >= kGemmTypes.size()) return std::nullopt;
    return kGemmTypes[static_cast<std::size_t>(*value)].second;
  }
  const std::size_t colon = argument.rfind("::");
  std::string_view enumerator = colon == std::string_view::npos ? argument : argument.substr(colon + 2);
  if (StartsWith(enumerator, "Grouped")) {  // before 9da4a23: GroupedContiguous, GroupedMasked
    for (const auto& [spelled, grouping] : kGemmTypes) {
      if (spelled.substr(1) == enumerator && spelled.front() == 'M') return grouping;
    }
  }
  for (const auto& [spelled, grouping] : kGemmTypes) {
    if (spelled == enumerator) return grouping;
  }
  return std::nullopt;
}

const DeepGemmVersion* FindDeepGemmVersion(std::string_view function, const std::vector<TemplateArgument>& args) {
  for (const DeepGemmVersion& version : kDeepGemmVersions) {
    if (version.function != function || version.arguments != args.size()) continue;
    if (version.bool_at < 0) return &version;
    const std::string_view flag = args[static_cast<std::size_t>(version.bool_at)].value;
    if (flag == "true" || flag == "false") return &version;
  }
  return nullptr;
}

}  // namespace

// Whether `function` (ids[at]) is a DeepGEMM kernel: deep_gemm::<kernel> or
// DeepSeek's internal dpsk::gemm::fp8_gemm_kernel.
bool IsDeepGemmKernel(const std::vector<Identifier>& ids, std::size_t at) {
  if (at == 0 || ids[at].qualifier || !ids[at - 1].qualifier) return false;
  bool known = false;
  for (const DeepGemmVersion& version : kDeepGemmVersions) known = known || version.function == ids[at].text;
  if (!known) return false;
  if (ids[at - 1].text == "deep_gemm") return true;
  return ids[at - 1].text == "gemm" && at >= 2 && ids[at - 2].text == "dpsk" && ids[at].text == "fp8_gemm_kernel";
}

// deep_gemm::<kernel><args>(...) or dpsk::gemm::fp8_gemm_kernel<args>(...), ids[at] the kernel.
Result<KernelInfo> ParseDeepGemm(std::string_view name, const std::vector<Identifier>& ids, std::size_t at,
                                 KernelFamily family) {
  const std::string_view function = ids[at].text;
  const std::vector<TemplateArgument> args = SplitArguments(TemplateArguments(name, ids[at].end));
  const DeepGemmVersion* version = FindDeepGemmVersion(function, args);
  if (version == nullptr) {
    return Unparsed(
        fmt::format("deepgemm: {} with {} template arguments: no DeepGEMM version ofu knows takes that list, so where "
                    "BLOCK_M, BLOCK_N and BLOCK_K stand is not known",
                    function, args.size()));
  }
  KernelInfo info;
  info.family = family;
  info.identifier = fmt::format("{}::{}", ids[at - 1].text, function);
  const std::array<std::optional<int>*, 3> tile = {&info.tile_m, &info.tile_n, &info.tile_k};
  for (std::size_t i = 0; i < tile.size(); ++i) {
    const TemplateArgument& block = args[version->block_m_at + i];
    *tile[i] = TemplateNumber(block.value);
    if (!*tile[i]) {
      return Unparsed(fmt::format("deepgemm: {}'s BLOCK_{} argument {} is not a number", function, "MNK"[i],
                                  Quote(block.raw)));
    }
  }
  info.stages = TemplateNumber(args[version->stages_at].value);
  info.precision = Precision::kFp8;  // e4m3 A and B (the kernels' TMA descriptors and MMA atoms)
  info.tensor_core = true;           // wgmma (sm90), tcgen05 (sm100)
  info.target_sm = StartsWith(function, "sm100_") ? 100 : 90;
  for (const TemplateArgument& argument : args) {
    if (!Contains(argument.raw, "GemmType")) continue;
    const auto grouping = GemmTypeName(argument.value);
    if (!grouping) return Unparsed(fmt::format("deepgemm: GemmType {} is not one ofu knows", Quote(argument.raw)));
    info.grouping = std::string(*grouping);
  }
  return info;
}

}  // namespace ofu::kernels::detail
