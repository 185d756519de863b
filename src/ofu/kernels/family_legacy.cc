// volta, turing, ampere (cuBLAS and cuDNN before Hopper; inferred)
//   [cudnn_[infer_|train_]]<arch>_[<type>_]<acc>[<mma>][tf32]<gemm|cudnn>[_<type>]
//     _<TM>x<TN>[_sliced1x<n>][_ldg<n>]..._[stages_<TK>x<S>]_..._<ops>
//   e.g. ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_32x3_nn,
//   volta_h884gemm_256x128_ldg8_nn, volta_sgemm_128x64_nn,
//   volta_scudnn_128x64_relu_interior_nn_v1 (a cuDNN implicit-GEMM
//   convolution). tensor_core: true when the MMA shape digits are present
//   (884, 1688, 16816, ...), false otherwise (sgemm, hgemm, cgemm, gcgemm,
//   scudnn). precision: a `tf32` in the MMA token, else the type after the
//   token (A's), else the type before it, else the kind letter: h is fp16; s
//   is fp32 on CUDA cores and, on tensor cores, only with the 1688 shape (the
//   one that takes 32-bit operands, as TF32); complex (c, gc, z) and double
//   kernels have none.
//   tile_k and stages only from `stages_<TK>x<S>`; `sliced1x<n>` splits K
//   across warps inside the CTA and does not change the tile. A `splitK`
//   token sets split_k. A cuDNN `winograd` kernel is not a GEMM.
//
// cutlass2 (CUTLASS 2.x; named by python/cutlass_library/gemm_operation.py)
//   cutlass[_<arch>]_<tensorop|wmma_tensorop|simt>[_<C type>]_<acc><mma>[<math type>]
//     <gemm|fprop|dgrad|wgrad>[_<words>][_<A type>]_<TM>x<TN>[_<TK>x<S>][_<warps>]_<layouts>_align<a>
//   tensor_core: true for tensorop/wmma_tensorop, false for simt. CUTLASS
//   writes A's element type after the core name only when it differs from
//   the accumulator type, and C's before it: precision is the math type in
//   the core name (s1688tf32gemm), else A's type, else the accumulator's by
//   the same kind-letter rule as above (an s16816 kernel without A's type
//   runs on 16-bit inputs it does not spell: absent); fp32 on tensor cores
//   is tf32. Without a `<TK>x<S>` token, K and stages are absent.
#include "ofu/kernels/family_table.h"

#include <fmt/format.h>

namespace ofu::kernels::detail {
namespace {

// The MMA token of pre-Hopper cuBLAS, cuDNN and CUTLASS 2 names:
// <kind letters>[<mma shape>][<math type>]<operation>, e.g. s16816gemm,
// h884gemm, sgemm, gcgemm, s1688tf32gemm, scudnn, s1688cudnn, s1688dgrad.
struct MmaToken {
  std::string_view kind;           // accumulator (s, h, i, d) or complex kind (c, gc, z)
  std::string_view shape;          // digits after the kind: a tensor-core MMA shape (1688, 16816, ...)
  bool has_mma_shape = false;      // !shape.empty()
  const TypeCode* math = nullptr;  // the type the MMA runs in, when it differs from A's (tf32)
};
std::optional<MmaToken> ParseMmaToken(std::string_view token, std::initializer_list<std::string_view> operations) {
  bool known = false;
  for (const std::string_view operation : operations) {
    if (token.size() > operation.size() && EndsWith(token, operation)) {
      token.remove_suffix(operation.size());
      known = true;
      break;
    }
  }
  if (!known) return std::nullopt;
  MmaToken mma;
  std::size_t i = 0;
  while (i < token.size() && IsLower(token[i])) ++i;
  mma.kind = token.substr(0, i);
  if (mma.kind.empty()) return std::nullopt;
  const std::size_t digits = i;
  while (i < token.size() && IsDigit(token[i])) ++i;
  mma.shape = token.substr(digits, i - digits);
  mma.has_mma_shape = !mma.shape.empty();
  if (i < token.size()) {
    mma.math = WholeType(token.substr(i));
    if (mma.math == nullptr) return std::nullopt;
  }
  return mma;
}

// The input precision of a pre-Hopper cuBLAS, cuDNN or CUTLASS 2 name: the
// math type in the MMA token (s1688tf32gemm), else the first of `named` (the
// element types the name spells, most trusted first) that is there, else what
// the kind letter implies. Before Resolve(): fp32 is still fp32.
std::optional<Precision> MmaInputPrecision(const MmaToken& mma, std::initializer_list<const TypeCode*> named) {
  if (mma.math != nullptr) return mma.math->precision;
  for (const TypeCode* type : named) {
    if (type != nullptr) return type->precision;
  }
  return KindPrecision(mma.kind, mma.shape);
}

// From t[from] on, the first <TM>x<TN> token sets info's tile; `type` is
// the first element type met before it (nullptr if none). Returns the
// tile's index, or t.size() when there is no tile.
std::size_t ReadTileAfter(const Tokens& t, std::size_t from, KernelInfo& info, const TypeCode*& type) {
  for (std::size_t i = from; i < t.size(); ++i) {
    if (const auto tile = ParseDims<2>(t[i])) {
      info.tile_m = (*tile)[0];
      info.tile_n = (*tile)[1];
      return i;
    }
    if (type == nullptr) type = WholeType(t[i]);
  }
  return t.size();
}

// The architecture family of a cuBLAS/cuDNN name, after an optional cuDNN
// library prefix (cudnn_infer_, cudnn_train_, cudnn_); the index of the
// architecture token in `t`.
struct ArchPrefix {
  KernelFamily family;
  std::size_t index;
};
std::optional<ArchPrefix> FindArch(const Tokens& t) {
  std::size_t i = 0;
  if (i < t.size() && t[i] == "cudnn") {
    ++i;
    if (i < t.size() && (t[i] == "infer" || t[i] == "train")) ++i;
  }
  if (i >= t.size()) return std::nullopt;
  if (t[i] == "volta") return ArchPrefix{KernelFamily::kVolta, i};
  if (t[i] == "turing") return ArchPrefix{KernelFamily::kTuring, i};
  if (t[i] == "ampere") return ArchPrefix{KernelFamily::kAmpere, i};
  return std::nullopt;
}

}  // namespace

// [cudnn_[infer_|train_]]<arch>_[<type>_]<mma token>[_<type>]_<TM>x<TN>_..._[stages_<TK>x<S>]_<ops>

Result<KernelInfo> ParseLegacy(const Tokens& t) {
  KernelInfo info;
  const auto arch = FindArch(t);
  if (!arch) return Unparsed("expected volta_, turing_ or ampere_ after an optional cudnn_ prefix");
  const std::string_view fname = FamilyName(arch->family);
  std::size_t i = arch->index + 1;
  const TypeCode* before = i < t.size() ? WholeType(t[i]) : nullptr;
  if (before != nullptr) ++i;
  const auto mma = i < t.size() ? ParseMmaToken(t[i], {"gemm", "cudnn"}) : std::nullopt;
  if (!mma) {
    return Unparsed(fmt::format("{}: expected a GEMM field like s16816gemm, sgemm or scudnn, found {}", fname,
                                Quote(i < t.size() ? t[i] : "")));
  }
  const TypeCode* after = nullptr;
  const std::size_t first_after = i + 1;
  i = ReadTileAfter(t, first_after, info, after);
  for (std::size_t j = first_after; j < i; ++j) {
    if (t[j] == "winograd") {
      return Unparsed(fmt::format("{}: a Winograd convolution; its tile is not a GEMM tile", fname));
    }
  }
  if (!info.tile_m) return Unparsed(fmt::format("{}: no <TM>x<TN> tile field", fname));
  for (++i; i < t.size(); ++i) {
    if (t[i] == "splitK") info.split_k = true;
    if (t[i] != "stages" || i + 1 >= t.size()) continue;
    const auto k_stages = ParseDims<2>(t[i + 1]);
    if (!k_stages)
      return Unparsed(fmt::format("{}: expected <TK>x<stages> after 'stages', found {}", fname, Quote(t[i + 1])));
    info.tile_k = (*k_stages)[0];
    info.stages = (*k_stages)[1];
  }
  info.family = arch->family;
  info.tensor_core = mma->has_mma_shape;
  info.mma_shape = std::string(mma->shape);
  // The type after the MMA token is A's (ampere_int32_i16832gemm_int8_...
  // writes the int32 output first), so it comes before the one in front.
  info.precision = Resolve(MmaInputPrecision(*mma, {after, before}), info.tensor_core);
  return info;
}

// cutlass[_<arch>]_<opclass>[_<C type>]_<acc><mma>[<math>]<op>[_<words>][_<A type>]_<TM>x<TN>[_<TK>x<S>]_..._align<a>
Result<KernelInfo> ParseCutlass2(const Tokens& t) {
  KernelInfo info;
  std::size_t i = 1;
  if (i < t.size() && ParseNumber(t[i])) ++i;  // the architecture, e.g. 80
  if (i < t.size() && t[i] == "tensorop") {
    info.tensor_core = true;
    ++i;
  } else if (i + 1 < t.size() && t[i] == "wmma" && t[i + 1] == "tensorop") {
    info.tensor_core = true;
    i += 2;
  } else if (i < t.size() && t[i] == "simt") {
    info.tensor_core = false;
    ++i;
  } else {
    return Unparsed(fmt::format("cutlass2: expected op class tensorop, wmma_tensorop or simt, found {}",
                                Quote(i < t.size() ? t[i] : "")));
  }
  if (i < t.size() && WholeType(t[i]) != nullptr) ++i;  // C's element type: not an input
  const auto mma = i < t.size() ? ParseMmaToken(t[i], {"spgemm", "gemm", "fprop", "dgrad", "wgrad"}) : std::nullopt;
  if (!mma) {
    return Unparsed(
        fmt::format("cutlass2: expected a GEMM or convolution field like s16816gemm or s1688fprop, "
                    "found {}",
                    Quote(i < t.size() ? t[i] : "")));
  }
  info.sparse = EndsWith(t[i], "spgemm");
  // Between the MMA field and the tile: epilogue or iterator words (relu,
  // optimized, ...) and A's element type.
  const TypeCode* a = nullptr;
  i = ReadTileAfter(t, i + 1, info, a);
  if (!info.tile_m) return Unparsed("cutlass2: no <TM>x<TN> tile field");
  if (i + 1 < t.size()) {
    if (const auto k_stages = ParseDims<2>(t[i + 1])) {
      info.tile_k = (*k_stages)[0];
      info.stages = (*k_stages)[1];
    }
  }
  info.family = KernelFamily::kCutlass2;
  info.mma_shape = std::string(mma->shape);
  // CUTLASS writes A's type only when it differs from the accumulator's.
  info.precision = Resolve(MmaInputPrecision(*mma, {a}), info.tensor_core);
  info.target_sm = ParseNumber(t[1]);  // cutlass_80_...: absent for a bare cutlass_tensorop_...
  info.alignment = AlignmentToken(t);
  return info;
}

// CUTLASS 2 names go on with an architecture number or an op class; other
// identifiers that start with "cutlass_" are namespaces (cutlass_cudnn_train).
bool IsCutlass2Name(std::string_view identifier) {
  const Tokens t = Split(identifier, '_');
  if (t.size() < 2) return false;
  return ParseNumber(t[1]).has_value() || t[1] == "tensorop" || t[1] == "simt" || t[1] == "wmma";
}

}  // namespace ofu::kernels::detail
