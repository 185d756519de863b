// sm90_xmma, sm80_xmma, sm100 (cuBLAS and cuDNN; inferred)
//   smNN_xmma_<gemm|fprop_implicit_gemm|dgrad_implicit_gemm|wgrad_implicit_gemm>[_indexed]
//     _<AB types>_<C/compute types>_<D type>_<layouts>_..._tilesize<M>x<N>x<K>
//     [_stage<S>][_cgasize<CM>x<CN>x<CK>]_..._[tensor<m>x<n>x<k>|ffma|hfma]...
//   precision from the first type token: `bf16bf16` → bf16, `f32f32` →
//   fp32 on CUDA cores or tf32 on tensor cores (tensor cores have no fp32
//   mode). Where its two codes differ and one is f32 (`tf32f32`, `bf16f32`:
//   fp32 data the MMA reads as tf32 or bf16, cuBLAS's fast-fp32 modes), the
//   other is the type the tensor pipes see. A narrow float first code is
//   A's and B's type (`e4m3bf16_e4m3f32_f32`, cuBLASLt's FP8 kernels: A and
//   B e4m3, C and D bf16, NVIDIA/TransformerEngine#1391): 8- and 6-bit →
//   fp8 (the f8f6f4 kinds' rate); 4-bit → absent (fp4 or fp8 rate by MMA
//   kind, which the name does not give). Other pairs leave it absent.
//   tensor_core: false for `ffma`/`hfma`; true for
//   `tensorMxNxK`, and for sm90/sm100 (warpgroup MMA kernels) unless
//   ffma/hfma; else absent. cluster from `cgasize`; sm90 names without
//   `cgasize` run 1x1 (inferred from the reference names); sm80 has no
//   clusters (absent); sm100 without `cgasize` is absent. two_cta: a `2sm` or
//   `2cta` token; split_k: a `splitK` token or `split_k` tokens.
//   `sm100_*` names are parsed by the same rules without a real reference
//   name to check them against.
#include "ofu/kernels/family_table.h"

#include <fmt/format.h>

namespace ofu::kernels::detail {
namespace {

// The input precision of an xmma name from its first type token: `a` and
// `b` are its two codes (`bf16bf16`, `tf32f32`, `e4m3bf16`).
std::optional<Precision> XmmaInputPrecision(const TypeCode& a, const TypeCode* b) {
  // A narrow float first code: the FP8 kernels (`e4m3bf16_e4m3f32_f32`: A
  // and B e4m3, C and D bf16, NVIDIA/TransformerEngine#1391). Every narrow
  // float runs at the fp8 rate, except fp4, whose MMA kind (fp4 or fp8 rate)
  // the name does not give.
  if (const int bits = NarrowFloatBits(a.code); bits > 0) {
    if (bits == 4) return std::nullopt;
    return Precision::kFp8;
  }
  // `tf32f32`, `bf16f32`: fp32 data that the MMA reads as the other type.
  std::optional<Precision> input = InputPrecision(a, b);
  if (b != nullptr && a.precision != b->precision) {
    if (b->precision == Precision::kFp32) input = a.precision;
    if (a.precision == Precision::kFp32) input = b->precision;
  }
  return input;
}

// smNN_xmma_[<conv>_implicit_]gemm[_indexed]_<AB>_<C/compute>_<D>_<layouts>_..._tilesize<M>x<N>x<K>_...
Result<KernelInfo> ParseXmma(const Tokens& t, KernelFamily family) {
  KernelInfo info;
  const std::string_view fname = FamilyName(family);
  std::size_t gemm = 1;
  while (gemm < t.size() && t[gemm] != "gemm") ++gemm;
  if (gemm + 1 >= t.size())
    return Unparsed(fmt::format("{}: no 'gemm' field followed by types: not a GEMM kernel", fname));
  // cuDNN's implicit-GEMM convolutions may name their indexing mode first.
  std::size_t first_type = gemm + 1;
  if (t[first_type] == "indexed" && first_type + 1 < t.size()) ++first_type;

  const TypeCode* a = LeadingType(t[first_type]);
  if (a == nullptr) return Unparsed(fmt::format("{}: operand types {} not recognised", fname, Quote(t[first_type])));
  const TypeCode* b = LeadingType(t[first_type].substr(a->code.size()));

  bool warpgroups = false;
  for (std::size_t i = first_type + 1; i < t.size(); ++i) {
    const std::string_view token = t[i];
    if (StartsWith(token, "tilesize")) {
      const auto dims = ParseDims<3>(token.substr(8));
      if (!dims) return Unparsed(fmt::format("{}: {} is not tilesize<M>x<N>x<K>", fname, Quote(token)));
      info.tile_m = (*dims)[0];
      info.tile_n = (*dims)[1];
      info.tile_k = (*dims)[2];
    } else if (StartsWith(token, "cgasize")) {
      const auto dims = ParseDims<3>(token.substr(7));
      if (!dims) return Unparsed(fmt::format("{}: {} is not cgasize<M>x<N>x<K>", fname, Quote(token)));
      info.cluster_m = (*dims)[0];
      info.cluster_n = (*dims)[1];
    } else if (StartsWith(token, "stage") && ParseNumber(token.substr(5))) {
      info.stages = ParseNumber(token.substr(5));
    } else if (StartsWith(token, "warpgroupsize")) {
      warpgroups = true;
    } else if (token == "ffma" || token == "hfma") {
      info.tensor_core = false;
    } else if (StartsWith(token, "tensor") && ParseDims<3>(token.substr(6))) {
      info.tensor_core = true;
    } else if (token == "2sm" || token == "2cta") {
      info.two_cta = true;
    } else if (token == "splitK" || token == "splitk" || (token == "split" && i + 1 < t.size() && t[i + 1] == "k")) {
      info.split_k = true;
    }
  }
  if (!info.tile_m) return Unparsed(fmt::format("{}: no tilesize<M>x<N>x<K> field", fname));
  // Warpgroup MMA (wgmma) is a tensor-core instruction (inferred).
  if (!info.tensor_core && warpgroups) info.tensor_core = true;
  // The sm90 reference names without cgasize run without clusters (1x1).
  if (family == KernelFamily::kSm90Xmma && !info.cluster_m) info.cluster_m = info.cluster_n = 1;
  // Ampere has no thread-block clusters; the field stays absent.
  if (family == KernelFamily::kSm80Xmma) info.cluster_m = info.cluster_n = std::nullopt;

  info.family = family;
  info.precision = Resolve(XmmaInputPrecision(*a, b), info.tensor_core);
  return info;
}

}  // namespace

Result<KernelInfo> ParseSm90Xmma(const Tokens& tokens) { return ParseXmma(tokens, KernelFamily::kSm90Xmma); }
Result<KernelInfo> ParseSm100(const Tokens& tokens) { return ParseXmma(tokens, KernelFamily::kSm100); }
Result<KernelInfo> ParseSm80Xmma(const Tokens& tokens) { return ParseXmma(tokens, KernelFamily::kSm80Xmma); }

}  // namespace ofu::kernels::detail
