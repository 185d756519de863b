// cutlass3 (CUTLASS 3.x; same generator)
//   cutlass3x_sm<arch>_<opclass>_<mma>gemm_<A>_<B>_<acc>_<C>_<D>_<TM>x<TN>x<TK>
//     [_<CM>x<CN>x<CK>]_<S>_<layouts>_align<a>[_q|_o_vs<n>][_1sm|_2sm][_epi...][_stage<N>]
//   opclass tensorop, bstensorop (block-scaled), sptensorop (sparse) or
//   bssptensorop (both); simt. gemm field gemm, spgemm or bsspgemm. Scaled
//   types (`ue8m0xe2m1`: an MX/NV block scale and its element type;
//   `64x128f32xe4m3`: a blockwise scale) read as their element type and make
//   the kernel block_scaled. precision from A and B: the same type, that
//   type; on Blackwell (sm100 and later) 4-, 6- and 8-bit float inputs run
//   in the f8f6f4/mxf8f6f4 MMA kinds at the fp8 rate whatever their mix
//   (CUTLASS media/docs/cpp/blackwell_functionality.md), so they read as
//   fp8, except that fp4 on both sides with `_o_` (the mxf4/nvf4 kinds,
//   KernelScheduleSuffixes in python/cutlass_library/library.py) reads as
//   fp4; `_q_` names the f8f6f4 kind. Block-scaled fp4 on both sides with
//   neither letter leaves the kind to the builder: absent. Other mixed
//   inputs are absent.
//   tensor_core true for a *tensorop opclass. Cluster `0x0x1` is chosen at
//   run time: absent; a name with no cluster field (CUTLASS's SM100 unit
//   tests: `..._128x128x256_0_vs64_tnt_...`) does not give it: absent.
//   Stages `0` are chosen by the builder: absent, unless a `_stage<N>`
//   suffix fixes them. `_2sm` (SM100): two_cta, and the tile spans the CTA
//   pair.
#include "ofu/kernels/family_table.h"

#include <fmt/format.h>

namespace ofu::kernels::detail {
// cutlass3x_sm<arch>_<opclass>_<mma>gemm_<A>_<B>_<acc>_<C>_<D>_<TM>x<TN>x<TK>[_<CM>x<CN>x<CK>]_<S>_<layouts>_align<a>...
Result<KernelInfo> ParseCutlass3(const Tokens& t) {
  KernelInfo info;
  if (t.size() < 5 || !StartsWith(t[1], "sm") || !ParseNumber(t[1].substr(2))) {
    return Unparsed(fmt::format("cutlass3: expected sm<arch> as field 2, found {}", Quote(t.size() > 1 ? t[1] : "")));
  }
  const int arch = *ParseNumber(t[1].substr(2));
  if (t[2].find("tensorop") != std::string_view::npos) {
    info.tensor_core = true;
  } else if (t[2] == "simt") {
    info.tensor_core = false;
  } else {
    return Unparsed(fmt::format("cutlass3: op class {} is not a tensorop or simt class", Quote(t[2])));
  }
  if (!EndsWith(t[3], "gemm")) return Unparsed(fmt::format("cutlass3: expected a gemm field, found {}", Quote(t[3])));
  // bstensorop/bssptensorop: block-scaled; sptensorop, spgemm, bsspgemm: sparse.
  info.sparse = StartsWith(t[2], "sp") || StartsWith(t[2], "bssp") || StartsWith(t[3], "sp") ||
                StartsWith(t[3], "bssp");
  info.block_scaled = StartsWith(t[2], "bs");

  std::size_t i = 4;
  // cuBLASLt's own CUTLASS kernels name the kind: ..._s256x192x64gemm_block_scaled_ue4m3xf4_...
  if (i + 1 < t.size() && t[i] == "block" && t[i + 1] == "scaled") {
    info.block_scaled = true;
    i += 2;
  }
  std::vector<const TypeCode*> types;
  for (; i < t.size() && !ParseDims<3>(t[i]); ++i) {
    const TypeCode* type = WholeType(t[i]);
    if (type == nullptr) return Unparsed(fmt::format("cutlass3: element type {} not recognised", Quote(t[i])));
    // A scale before the element type: ue8m0x/ue4m3x (MX, NVFP4), 64x128f32x (blockwise).
    if (type->code.size() != t[i].size()) info.block_scaled = true;
    types.push_back(type);
  }
  if (types.size() < 2) return Unparsed("cutlass3: expected the A and B element types before the tile");
  if (i + 1 >= t.size()) return Unparsed("cutlass3: expected <TM>x<TN>x<TK>[_<CM>x<CN>x<CK>]_<stages>");
  const auto tile = ParseDims<3>(t[i]);
  // The cluster field is left out where the cluster is a run-time argument
  // (CUTLASS's SM100 sparse and block-scaled unit-test names).
  const auto cluster = ParseDims<3>(t[i + 1]);
  const std::size_t stage_at = cluster ? i + 2 : i + 1;
  const auto stages = stage_at < t.size() ? ParseNumber(t[stage_at]) : std::nullopt;
  if (!stages) {
    return Unparsed(fmt::format("cutlass3: expected a cluster <CM>x<CN>x<CK> or a stage count after the tile, found {}",
                                Quote(stage_at < t.size() ? t[stage_at] : t[i + 1])));
  }
  bool fp4_kind = false, f8f6f4_kind = false;
  std::optional<int> fixed_stages;
  for (std::size_t j = stage_at + 1; j < t.size(); ++j) {
    if (t[j] == "2sm") info.two_cta = true;
    if (t[j] == "splitk" || t[j] == "splitK") info.split_k = true;
    if (t[j] == "o") fp4_kind = true;     // the mxf4/nvf4 MMA kinds (`_o_vs32_`, `_o_vs16_`)
    if (t[j] == "q") f8f6f4_kind = true;  // the mxf8f6f4 kind
    if (StartsWith(t[j], "stage") && ParseNumber(t[j].substr(5))) fixed_stages = ParseNumber(t[j].substr(5));
  }

  info.family = KernelFamily::kCutlass3;
  info.tile_m = (*tile)[0];
  info.tile_n = (*tile)[1];
  info.tile_k = (*tile)[2];
  // 0x0x1: the cluster shape is a run-time argument, not in the name.
  if (cluster && (*cluster)[0] != 0 && (*cluster)[1] != 0) {
    info.cluster_m = (*cluster)[0];
    info.cluster_n = (*cluster)[1];
  }
  // 0 stages: the collective builder picks the count to fill shared memory,
  // unless a _stage<N> suffix fixes it.
  if (*stages != 0) info.stages = *stages;
  if (fixed_stages) info.stages = fixed_stages;
  const int a_bits = NarrowFloatBits(types[0]->code);
  const int b_bits = NarrowFloatBits(types[1]->code);
  if (arch >= 100 && a_bits == 4 && b_bits == 4 && info.block_scaled && !fp4_kind && !f8f6f4_kind) {
    // Block-scaled fp4 on both sides with no kind in the name: the builder
    // picks mxf4 (fp4 rate) or mxf8f6f4 (fp8 rate); the name does not say.
  } else if (arch >= 100 && a_bits != 0 && b_bits != 0 && info.tensor_core == true) {
    info.precision = NarrowMmaPrecision(a_bits, b_bits, fp4_kind);
  } else {
    info.precision = Resolve(InputPrecision(*types[0], types[1]), info.tensor_core);
  }
  info.target_sm = arch;
  info.alignment = AlignmentToken(t);
  return info;
}

}  // namespace ofu::kernels::detail
