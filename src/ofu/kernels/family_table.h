// The kernel families ofu reads, one row each, and their parsers.
//
// Internal to kernels/ (kernel_name.cc dispatches through the rows; the
// tests check them). A new family is an enum value in kernel_name.h, one row
// in family_table.cc and its parser in a family_*.cc file of its own; every
// list of families (FamilyName, FamilyHasTile, FamilyHasClusters, the
// prefixes a name is matched against, the families a reason lists) is read
// from the rows. KernelFamilyTable in tests/kernels/kernel_name_real_test.cc checks that every family
// has one row and that the row's example, a real name from
// tests/data/kernel-names-real.tsv, reads as that family.
//
// How a name finds its family, in this order (kernel_name.cc):
//  1. a kernel function in the signature's head that a row's `is_kernel`
//     accepts (DeepGEMM, the untiled SIMT kernels): `parse_function`;
//  2. the one identifier that a row's prefixes (and `claims`, where set)
//     accept: `parse_tokens` on its '_'-separated tokens.
// All rows are immutable and the functions pure: safe from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ofu/kernels/kernel_name.h"
#include "ofu/kernels/name_tokens.h"

namespace ofu::kernels::detail {

// Reads an identifier of the family, split at '_'. Sets every field the
// name gives, target_sm included where the name spells it.
using TokenParser = Result<KernelInfo> (*)(const Tokens& tokens);
// Whether ids[at], a name in a signature's head, is a kernel function of the family.
using FunctionMatcher = bool (*)(const std::vector<Identifier>& ids, std::size_t at);
// Reads that kernel; `signature` is the demangled text the ids point into
// (empty for a mangled or bare name, which carry no template arguments).
using FunctionParser = Result<KernelInfo> (*)(std::string_view signature, const std::vector<Identifier>& ids,
                                              std::size_t at, KernelFamily family);

struct FamilyRow {
  KernelFamily family{};
  std::string_view name{};   // in output and reasons: "nvjet", "sm90_xmma", ...
  std::string_view shown{};  // how a reason lists what ofu reads of it: "nvjet_", "DeepGEMM's deep_gemm:: kernels"
  // Identifier prefixes that name the family ("" pads the list). Empty for
  // families found by `claims` alone or by their kernel function.
  std::array<std::string_view, 4> prefixes{};
  // A check beyond the prefix (cutlass_ is also a namespace prefix), or, for
  // a family with no prefix, how its identifiers look (trtllm-gen's types).
  bool (*claims)(std::string_view identifier) = nullptr;
  // The architecture (compute capability × 10) every kernel of the family
  // targets; absent where the name says it (the parser reads it) or nothing does.
  std::optional<int> target_sm{};
  bool has_tile = true;       // false: an untiled SIMT family, whose names give no tile
  bool has_clusters = false;  // Hopper and later: kernels may run in thread-block clusters
  // An identifier with the prefix names a GEMM even where it does not read
  // in full (no other kernel of the library shares the prefix).
  bool prefix_means_gemm = false;
  // A real name that reads as this family: a `gemm` row of
  // tests/data/kernel-names-real.tsv, which gives its source and fields.
  std::string_view example{};
  // The example is SYNTHETIC (no public name of the family was found): the
  // test then only checks that it reads, and tests/data/README.md says so.
  bool example_is_synthetic = false;
  // False for a family whose names give no field ofu can use (CuTe DSL): its
  // parser always says why, so a reason names the family; its example is a
  // GEMM that ClassifyKernelName() finds by its words.
  bool reads_fields = true;
  // Who makes the GPUs the family's kernels run on. OFU as ofu computes it is
  // defined for NVIDIA tensor cores only.
  std::string_view vendor = "NVIDIA";
  TokenParser parse_tokens = nullptr;
  FunctionMatcher is_kernel = nullptr;
  FunctionParser parse_function = nullptr;
};

// Every row, in the order names are matched.
std::span<const FamilyRow> FamilyRows();
// The row of `family`; every enum value has one (tested).
const FamilyRow* FindRow(KernelFamily family);

// --- the parsers, one file each -------------------------------------------------

// family_nvjet.cc
Result<KernelInfo> ParseNvjet(const Tokens& tokens);
// family_xmma.cc
Result<KernelInfo> ParseSm90Xmma(const Tokens& tokens);
Result<KernelInfo> ParseSm100(const Tokens& tokens);
Result<KernelInfo> ParseSm80Xmma(const Tokens& tokens);
// family_legacy.cc: cuBLAS/cuDNN before Hopper (volta_, turing_, ampere_) and CUTLASS 2
Result<KernelInfo> ParseLegacy(const Tokens& tokens);
Result<KernelInfo> ParseCutlass2(const Tokens& tokens);
bool IsCutlass2Name(std::string_view identifier);
// family_cutlass3.cc
Result<KernelInfo> ParseCutlass3(const Tokens& tokens);
// family_trtllm_gen.cc
Result<KernelInfo> ParseTrtllmGen(const Tokens& tokens);
bool IsTrtllmGenName(std::string_view identifier);
// family_deepgemm.cc
bool IsDeepGemmKernel(const std::vector<Identifier>& ids, std::size_t at);
Result<KernelInfo> ParseDeepGemm(std::string_view signature, const std::vector<Identifier>& ids, std::size_t at,
                                 KernelFamily family);
// family_marlin.cc
bool IsMarlinKernel(const std::vector<Identifier>& ids, std::size_t at);
Result<KernelInfo> ParseMarlin(std::string_view signature, const std::vector<Identifier>& ids, std::size_t at,
                               KernelFamily family);
// family_cute_dsl.cc
Result<KernelInfo> ParseCuteDsl(const Tokens& tokens);
// family_tensile.cc
bool IsTensileName(std::string_view identifier);
Result<KernelInfo> ParseTensile(const Tokens& tokens);
// family_xmma_new.cc
bool IsXmmaNewKernel(const std::vector<Identifier>& ids, std::size_t at);
Result<KernelInfo> ParseXmmaNew(std::string_view signature, const std::vector<Identifier>& ids, std::size_t at,
                                KernelFamily family);
// family_untiled.cc: the untiled SIMT kernels of cuBLAS, MAGMA and cuDNN
bool IsGemvKernel(const std::vector<Identifier>& ids, std::size_t at);
bool IsGemmk1Kernel(const std::vector<Identifier>& ids, std::size_t at);
bool IsGemmSmallNKernel(const std::vector<Identifier>& ids, std::size_t at);
bool IsSgemmLargeKKernel(const std::vector<Identifier>& ids, std::size_t at);
bool IsMagmaKernel(const std::vector<Identifier>& ids, std::size_t at);
bool IsCudnnSgemmKernel(const std::vector<Identifier>& ids, std::size_t at);
bool IsFermiKernel(const std::vector<Identifier>& ids, std::size_t at);
Result<KernelInfo> ParseUntiled(std::string_view signature, const std::vector<Identifier>& ids, std::size_t at,
                                KernelFamily family);

}  // namespace ofu::kernels::detail
