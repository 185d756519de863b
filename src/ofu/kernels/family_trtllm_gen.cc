// trtllm_gen (TensorRT-LLM's and FlashInfer's generated Blackwell GEMMs;
// the generator is not public: inferred from the names and the options
// TensorRT-LLM lists beside them in trtllmGen_bmm_export/KernelMetaInfo.h)
//   <bmm|gemm|gemmGatedAct>_<D>_<A><B>[_cast<T>]_<acc>[_...]_t<TM>x<TN>x<TK>[u2]
//     _s<S>_et<EM>x<EN>_m<MM>x<MN>x<MK>_<cga|c><CM>x<CN>x<CK>_..._sm<arch><a|f>
//   types Bfloat16, Fp16, Fp32, E4m3, E5m2, E2m3, E3m2, E2m1, each with an
//   optional Mx (MX block scale): `bmm_MxE4m3_MxE2m1MxE4m3_...` is an MX-FP4
//   weight (A) times MX-FP8 activation (B) batched GEMM with MX-FP8 output.
//   precision: fp4 when both inputs are fp4 (the mxf4nvf4 MMA kind), else
//   fp8 when both are 4-, 6- or 8-bit floats (f8f6f4 kinds run at the fp8
//   rate), after a `cast<T>` that converts one to T; bf16/fp16 as named.
//   block_scaled for Mx types, E2m1 (NVFP4 carries a scale per 16
//   elements), `dsFp8` (DeepSeek-style block-scaled fp8) and `sfBlk<n>`.
//   The tile is one CTA's; an MMA M twice the tile's with a 2-wide cluster
//   spans a CTA pair: two_cta. `s<S>` with more than one number gives no
//   stage count (absent). `splitK<n>` sets split_k. `transOut`: the kernel
//   computes the transposed product, so its M runs over the weights' rows.
//   tensor_core true (tcgen05).
#include "ofu/kernels/family_table.h"

#include <fmt/format.h>

namespace ofu::kernels::detail {
namespace {

// A trtllm-gen element type ("E4m3", "MxE2m1", "Bfloat16") at the start of
// `text`: its lower-case code, whether it is MX-scaled, and its length.
struct GenType {
  std::string_view code;  // as in kTypeCodes: e4m3, e2m1, bf16, ...
  bool mx = false;
  std::size_t length = 0;
};
std::optional<GenType> LeadingGenType(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kGenTypes = {{
      {"Bfloat16", "bf16"},
      {"Fp16", "f16"},
      {"Fp32", "f32"},
      {"E4m3", "e4m3"},
      {"E5m2", "e5m2"},
      {"E2m3", "e2m3"},
      {"E3m2", "e3m2"},
      {"E2m1", "e2m1"},
      {"Int8", "s8"},
  }};
  GenType type;
  if (StartsWith(text, "Mx")) {
    type.mx = true;
    text.remove_prefix(2);
  }
  for (const auto& [spelling, code] : kGenTypes) {
    if (!StartsWith(text, spelling)) continue;
    type.code = code;
    type.length = spelling.size() + (type.mx ? 2 : 0);
    return type;
  }
  return std::nullopt;
}

// `count` types making up all of `token` ("MxE2m1MxE4m3": two).
std::optional<std::vector<GenType>> GenTypes(std::string_view token, std::size_t count) {
  std::vector<GenType> types;
  while (!token.empty()) {
    const auto type = LeadingGenType(token);
    if (!type) return std::nullopt;
    types.push_back(*type);
    token.remove_prefix(type->length);
  }
  if (types.size() != count) return std::nullopt;
  return types;
}

// Whether an identifier starts like a trtllm-gen GEMM: bmm_/gemm_/
// gemmGatedAct_, then the output type, then A and B. Also true for a name
// cut after that.
bool IsTrtllmGenTokens(const Tokens& t) {
  if (t.size() < 3 || (t[0] != "bmm" && t[0] != "gemm" && t[0] != "gemmGatedAct")) return false;
  return GenTypes(t[1], 1).has_value() && GenTypes(t[2], 2).has_value();
}

// The architecture token that ends a whole trtllm-gen name: sm100a, sm100f, sm103a.
std::optional<int> GenArch(std::string_view token) {
  if (!StartsWith(token, "sm") || token.size() < 4) return std::nullopt;
  const char variant = token.back();
  if (variant != 'a' && variant != 'f') return std::nullopt;
  return ParseNumber(token.substr(2, token.size() - 3));
}

}  // namespace

bool IsTrtllmGenName(std::string_view identifier) { return IsTrtllmGenTokens(Split(identifier, '_')); }

// <bmm|gemm|gemmGatedAct>_<D>_<A><B>[_cast<T>]_<acc>_..._t<TM>x<TN>x<TK>[u2]_s<S>_..._m<MM>x<MN>x<MK>_<cga|c><CM>x<CN>x<CK>_..._sm<arch><a|f>

Result<KernelInfo> ParseTrtllmGen(const Tokens& t) {
  KernelInfo info;
  if (!IsTrtllmGenTokens(t)) return Unparsed("trtllm_gen: expected <bmm|gemm>_<output type>_<A type><B type>");
  if (!GenArch(t.back())) {
    return Unparsed(fmt::format("trtllm_gen: expected the architecture (sm100a, sm100f, ...) last, found {}",
                                Quote(t.back())));
  }
  const std::vector<GenType> ab = *GenTypes(t[2], 2);
  std::optional<GenType> cast;  // the type one operand is converted to before the MMA
  std::optional<std::array<int, 3>> mma;
  for (std::size_t i = 3; i + 1 < t.size(); ++i) {
    const std::string_view token = t[i];
    if (StartsWith(token, "cast")) {
      const auto types = GenTypes(token.substr(4), 1);
      if (!types) return Unparsed(fmt::format("trtllm_gen: cast type {} not recognised", Quote(token)));
      cast = (*types)[0];
    } else if (token.size() > 1 && token[0] == 't' && IsDigit(token[1])) {
      std::string_view dims = token.substr(1);
      if (EndsWith(dims, "u2")) dims.remove_suffix(2);  // the mainloop unrolled twice
      const auto tile = ParseDims<3>(dims);
      if (!tile) return Unparsed(fmt::format("trtllm_gen: {} is not t<TM>x<TN>x<TK>", Quote(token)));
      info.tile_m = (*tile)[0];
      info.tile_n = (*tile)[1];
      info.tile_k = (*tile)[2];
    } else if (token.size() > 1 && token[0] == 's' && IsDigit(token[1])) {
      info.stages = ParseNumber(token.substr(1));  // s4x4x4x4x1x4 (per-stage counts): absent
    } else if (token.size() > 1 && token[0] == 'm' && IsDigit(token[1])) {
      mma = ParseDims<3>(token.substr(1));
    } else if (StartsWith(token, "cga") || (token.size() > 1 && token[0] == 'c' && IsDigit(token[1]))) {
      const auto cluster = ParseDims<3>(token.substr(token[1] == 'g' ? 3 : 1));
      if (!cluster) return Unparsed(fmt::format("trtllm_gen: {} is not a cluster <CM>x<CN>x<CK>", Quote(token)));
      info.cluster_m = (*cluster)[0];
      info.cluster_n = (*cluster)[1];
    } else if (StartsWith(token, "splitK")) {
      info.split_k = true;
    } else if (token == "dsFp8" || StartsWith(token, "sfBlk")) {
      info.block_scaled = true;
    }
  }
  if (!info.tile_m) return Unparsed("trtllm_gen: no t<TM>x<TN>x<TK> tile field");
  info.family = KernelFamily::kTrtllmGen;
  info.tensor_core = true;
  for (const GenType& type : ab) info.block_scaled = info.block_scaled || type.mx || type.code == "e2m1";
  if (mma && info.cluster_m == 2 && (*mma)[0] == 2 * *info.tile_m) info.two_cta = true;
  const int a_bits = NarrowFloatBits(ab[0].code);
  const int b_bits = NarrowFloatBits(ab[1].code);
  const int cast_bits = cast ? NarrowFloatBits(cast->code) : 0;
  if (cast && cast_bits == 0) {
    info.precision = Resolve(WholeType(cast->code)->precision, info.tensor_core);  // e.g. fp4 weights cast to bf16
  } else if (a_bits != 0 && b_bits != 0) {
    // fp4 x fp4 runs in the fp4 kind unless one side is cast to a wider type.
    info.precision = NarrowMmaPrecision(a_bits, b_bits, /*fp4_kind=*/cast_bits == 0 || cast_bits == 4);
  } else if (ab[0].code == ab[1].code) {
    info.precision = Resolve(WholeType(ab[0].code)->precision, info.tensor_core);
  }
  info.target_sm = GenArch(t.back());
  return info;
}

}  // namespace ofu::kernels::detail
