#include "ofu/kernels/kernel_name.h"

#include <array>
#include <charconv>
#include <initializer_list>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace ofu::kernels {
namespace {

using Tokens = std::vector<std::string_view>;

Error Unparsed(std::string reason) { return Error::MalformedInput("{}", std::move(reason)); }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsIdentifierChar(char c) { return IsDigit(c) || IsLower(c) || IsUpper(c) || c == '_'; }
// Characters that separate names in a demangled signature.
bool IsSignatureDelimiter(char c) { return std::string_view(" <>,()&*:").find(c) != std::string_view::npos; }
bool StartsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }
bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}
bool Contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }
char Lower(char c) { return IsUpper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

Tokens Split(std::string_view text, char separator) {
  Tokens tokens;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    tokens.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return tokens;
    start = end + 1;
  }
}

// A plain decimal number of at most six digits (no tile, stage or cluster
// count comes near that, and it keeps the conversion free of overflow).
std::optional<int> ParseNumber(std::string_view text) {
  if (text.empty() || text.size() > 6) return std::nullopt;
  for (const char c : text) {
    if (!IsDigit(c)) return std::nullopt;
  }
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "64x16" (count 2) or "128x128x64" (count 3): exactly `count` numbers.
template <std::size_t count>
std::optional<std::array<int, count>> ParseDims(std::string_view text) {
  const Tokens parts = Split(text, 'x');
  if (parts.size() != count) return std::nullopt;
  std::array<int, count> dims{};
  for (std::size_t i = 0; i < count; ++i) {
    const auto number = ParseNumber(parts[i]);
    if (!number) return std::nullopt;
    dims[i] = *number;
  }
  return dims;
}

// Element type spellings used by CUTLASS and cuBLAS. A code comes before any
// shorter code that starts it, so that a prefix match on a concatenated token
// ("bf16bf16") takes the whole code.
struct TypeCode {
  std::string_view code;
  std::optional<Precision> precision;  // nullopt: a real type with no OFU precision (void, f64)
};
constexpr std::array<TypeCode, 24> kTypeCodes = {{
    {"bf16", Precision::kBf16}, {"tf32", Precision::kTf32}, {"fp16", Precision::kFp16}, {"fp32", Precision::kFp32},
    {"e4m3", Precision::kFp8},  {"e5m2", Precision::kFp8},  {"e2m1", Precision::kFp4},  {"int8", Precision::kInt8},
    {"void", std::nullopt},     {"fp8", Precision::kFp8},   {"fp4", Precision::kFp4},   {"f16", Precision::kFp16},
    {"f32", Precision::kFp32},  {"f64", std::nullopt},      {"f8", Precision::kFp8},    {"s8", Precision::kInt8},
    {"u8", Precision::kInt8},   {"i8", Precision::kInt8},   {"s32", std::nullopt},      {"e2m3", std::nullopt},
    {"e3m2", std::nullopt},     {"int32", std::nullopt},    {"f4", Precision::kFp4},    {"f6", std::nullopt},
}};

// The type code at the start of `token`, or nullptr.
const TypeCode* LeadingType(std::string_view token) {
  for (const TypeCode& type : kTypeCodes) {
    if (StartsWith(token, type.code)) return &type;
  }
  return nullptr;
}

// A whole token that is one type. Scaled CUTLASS types name the scale first
// and the element type after the last 'x': block-scaled "ue8m0xe2m1" and
// blockwise "64x128f32xe4m3" (a 64x128 block of e4m3 per f32 scale).
const TypeCode* WholeType(std::string_view token) {
  const std::size_t x = token.rfind('x');
  if (x != std::string_view::npos && (StartsWith(token, "ue") || (!token.empty() && IsDigit(token[0])))) {
    token = token.substr(x + 1);
  }
  const TypeCode* type = LeadingType(token);
  return type != nullptr && type->code.size() == token.size() ? type : nullptr;
}

// Tensor cores have no fp32 mode: fp32 inputs on them run as TF32. Where the
// name does not say which unit runs an fp32 kernel, the precision is unknown.
std::optional<Precision> Resolve(std::optional<Precision> input, std::optional<bool> tensor_core) {
  if (input != Precision::kFp32) return input;
  if (!tensor_core) return std::nullopt;
  return *tensor_core ? Precision::kTf32 : Precision::kFp32;
}

// The precision of operands A and B: absent when they differ (mixed input).
std::optional<Precision> InputPrecision(const TypeCode& a, const TypeCode* b) {
  if (b != nullptr && b->precision != a.precision) return std::nullopt;
  return a.precision;
}

// The width of a 4-, 6- or 8-bit float type code; 0 for any other type.
int NarrowFloatBits(std::string_view code) {
  if (code == "e2m1" || code == "fp4" || code == "f4") return 4;
  if (code == "e2m3" || code == "e3m2" || code == "f6") return 6;
  if (code == "e4m3" || code == "e5m2" || code == "fp8" || code == "f8") return 8;
  return 0;
}

// The rate class of a Blackwell MMA on 4-, 6- and 8-bit float inputs: the
// f8f6f4 and mxf8f6f4 kinds run every mix of them at the fp8 rate; only
// fp4 on both sides in the mxf4/nvf4 kinds (`fp4_kind`) runs at the fp4
// rate (CUTLASS media/docs/cpp/blackwell_functionality.md).
Precision NarrowMmaPrecision(int a_bits, int b_bits, bool fp4_kind) {
  return a_bits == 4 && b_bits == 4 && fp4_kind ? Precision::kFp4 : Precision::kFp8;
}

std::string Quote(std::string_view text) { return fmt::format("'{}'", text); }

// --- nvjet ------------------------------------------------------------------

// Flags that name a schedule or an epilogue, not the tile or how K is split
// (inferred from public names): coopA/coopB (which operand the cooperating
// CTAs share), bias and ovscale (epilogues), algo<N> (a variant number).
bool IsScheduleOrEpilogueFlag(std::string_view flag) {
  if (flag == "coopA" || flag == "coopB" || flag == "bias" || flag == "ovscale") return true;
  return StartsWith(flag, "algo") && ParseNumber(flag.substr(4)).has_value();
}

// cuBLASLt's block-scale flags: Avec16UE4M3/Bvec16UE4M3 (NVFP4: an e4m3 scale
// per 16 elements), Avec32UE8M0/Bvec32UE8M0 (MX: an e8m0 scale per 32).
bool IsBlockScaleFlag(std::string_view flag) {
  if (!StartsWith(flag, "Avec") && !StartsWith(flag, "Bvec")) return false;
  std::size_t i = 4;
  while (i < flag.size() && IsDigit(flag[i])) ++i;
  return i > 4 && (flag.substr(i) == "UE4M3" || flag.substr(i) == "UE8M0");
}

// nvjet_[sm<arch>_]<types>_<TM>x<TN>_<TK>x<S>_<CM>x<CN>[_2cta]_<v|h>_<bz|badd>[_flags]_<ops>
Result<KernelInfo> ParseNvjet(Tokens t, KernelInfo info) {
  // Newer cuBLAS names carry the target architecture after the prefix.
  if (t.size() > 1 && StartsWith(t[1], "sm") && ParseNumber(t[1].substr(2))) t.erase(t.begin() + 1);
  if (t.size() < 8) {
    return Unparsed(
        fmt::format("nvjet: expected at least 8 '_'-separated fields "
                    "(nvjet_<types>_<TM>x<TN>_<TK>x<stages>_<CM>x<CN>_<v|h>_<bz|badd>_<ops>), found {}",
                    t.size()));
  }
  // Three letters read as AB, compute, D (tst: bf16 in, fp32 compute, bf16
  // out); five as A, B, C, compute, D (qqtst: fp8 in, bf16 out). Inferred.
  const std::string_view types = t[1];
  if (types.size() != 3 && types.size() != 5) {
    return Unparsed(
        fmt::format("nvjet: type field {} has {} letters; known layouts have 3 (AB, compute, D) "
                    "or 5 (A, B, C, compute, D)",
                    Quote(types), types.size()));
  }
  std::vector<Precision> letters;
  for (const char c : types) {
    switch (c) {
      case 'h': letters.emplace_back(Precision::kFp16); break;
      case 't': letters.emplace_back(Precision::kBf16); break;
      case 's': letters.emplace_back(Precision::kFp32); break;
      case 'q': letters.emplace_back(Precision::kFp8); break;
      case 'o': letters.emplace_back(Precision::kFp4); break;  // e2m1 (NVFP4/MXFP4 with Avec/Bvec scales)
      default:
        return Unparsed(
            fmt::format("nvjet: type letter '{}' in {} is not one of h (fp16), t (bf16), s (fp32), q (fp8), o (fp4)", c,
                        Quote(types)));
    }
  }
  const auto tile = ParseDims<2>(t[2]);
  const auto k_stages = ParseDims<2>(t[3]);
  const auto cluster = ParseDims<2>(t[4]);
  if (!tile) return Unparsed(fmt::format("nvjet: expected tile <TM>x<TN> in field 3, found {}", Quote(t[2])));
  if (!k_stages) return Unparsed(fmt::format("nvjet: expected <TK>x<stages> in field 4, found {}", Quote(t[3])));
  if (!cluster) return Unparsed(fmt::format("nvjet: expected cluster <CM>x<CN> in field 5, found {}", Quote(t[4])));

  std::size_t i = 5;
  if (t[i] == "2cta") {
    info.two_cta = true;
    ++i;
  }
  if (t[i] != "v" && t[i] != "h")
    return Unparsed(fmt::format("nvjet: expected 'v' or 'h' after the cluster, found {}", Quote(t[i])));
  ++i;
  if (i >= t.size() || (t[i] != "bz" && t[i] != "badd")) {
    return Unparsed(fmt::format("nvjet: expected 'bz' or 'badd' after '{}', found {}", t[i - 1],
                                Quote(i < t.size() ? t[i] : "")));
  }
  ++i;
  const std::string_view ops = t.back();
  if (i >= t.size() || ops.size() < 2 || ops.find_first_not_of("TN") != std::string_view::npos) {
    return Unparsed(fmt::format("nvjet: expected the operand layouts (like TNT) last, found {}", Quote(ops)));
  }
  // Flags between beta and the layouts. Stream-K splits K in a way the name
  // does not size, so it is never read as "no split"; a flag ofu does not
  // know is kept for the caller to report.
  for (; i + 1 < t.size(); ++i) {
    if (t[i] == "splitK") {
      info.split_k = true;
    } else if (t[i] == "2cta") {
      info.two_cta = true;
    } else if (t[i] == "streamK" || t[i] == "streamk") {
      return Unparsed(
          fmt::format("nvjet: unknown flag {}: a stream-K kernel splits K in a way the name does not "
                      "give (known: splitK, 2cta, coopA, coopB, bias, ovscale, algo<N>)",
                      Quote(t[i])));
    } else if (t[i].empty()) {
      return Unparsed("nvjet: an empty flag ('__') between beta and the operand layouts");
    } else if (IsBlockScaleFlag(t[i])) {
      info.block_scaled = true;
    } else if (!IsScheduleOrEpilogueFlag(t[i])) {
      info.unknown_flags.emplace_back(t[i]);
    }
  }

  info.family = KernelFamily::kNvjet;
  info.tile_m = (*tile)[0];
  info.tile_n = (*tile)[1];
  info.tile_k = (*k_stages)[0];
  info.stages = (*k_stages)[1];
  info.cluster_m = (*cluster)[0];
  info.cluster_n = (*cluster)[1];
  // A and B (one letter for both in the 3-letter form): absent for mixed inputs.
  const Precision a = letters[0];
  const Precision b = types.size() == 5 ? letters[1] : letters[0];
  std::optional<Precision> input = a == b ? std::optional<Precision>(a) : std::nullopt;
  // fp4 with fp8 runs in Blackwell's f8f6f4 kinds, at the fp8 rate.
  const auto narrow = [](Precision p) { return p == Precision::kFp8 || p == Precision::kFp4; };
  if (!input && narrow(a) && narrow(b)) input = Precision::kFp8;
  // Every nvjet kernel seen with 16-bit, fp8 or fp4 inputs is a tensor-core
  // kernel; for fp32 inputs the name does not say whether TF32 or CUDA cores run it.
  if (input && *input != Precision::kFp32) info.tensor_core = true;
  info.precision = Resolve(input, info.tensor_core);
  return info;
}

// --- xmma -------------------------------------------------------------------

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
Result<KernelInfo> ParseXmma(const Tokens& t, KernelFamily family, KernelInfo info) {
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

// --- volta, turing, ampere and CUTLASS 2 --------------------------------------

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

// The precision the kind letter implies when the name gives no type, A's
// type being then the accumulator's. h is fp16 (hgemm, h884gemm: half in,
// half accumulate). s is fp32 on CUDA cores (sgemm), and on tensor cores only
// with the 1688 shape, the one MMA shape of these names that takes 32-bit
// operands (as TF32); an s16816 kernel runs on 16-bit inputs the name does not
// spell, so its precision is absent. Complex (c, gc, z), double and integer
// kinds: none.
std::optional<Precision> KindPrecision(std::string_view kind, std::string_view shape = {}) {
  if (kind == "s" && (shape.empty() || shape == "1688")) return Precision::kFp32;
  if (kind == "h") return Precision::kFp16;
  return std::nullopt;
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

// [cudnn_[infer_|train_]]<arch>_[<type>_]<mma token>[_<type>]_<TM>x<TN>_..._[stages_<TK>x<S>]_<ops>
Result<KernelInfo> ParseLegacy(const Tokens& t, KernelInfo info) {
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
Result<KernelInfo> ParseCutlass2(const Tokens& t, KernelInfo info) {
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
  return info;
}

// --- CUTLASS 3 ----------------------------------------------------------------

// cutlass3x_sm<arch>_<opclass>_<mma>gemm_<A>_<B>_<acc>_<C>_<D>_<TM>x<TN>x<TK>[_<CM>x<CN>x<CK>]_<S>_<layouts>_align<a>...
Result<KernelInfo> ParseCutlass3(const Tokens& t, KernelInfo info) {
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
  return info;
}

// --- trtllm-gen ------------------------------------------------------------------

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
bool IsTrtllmGenName(const Tokens& t) {
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

// <bmm|gemm|gemmGatedAct>_<D>_<A><B>[_cast<T>]_<acc>_..._t<TM>x<TN>x<TK>[u2]_s<S>_..._m<MM>x<MN>x<MK>_<cga|c><CM>x<CN>x<CK>_..._sm<arch><a|f>
Result<KernelInfo> ParseTrtllmGen(const Tokens& t, KernelInfo info) {
  if (!IsTrtllmGenName(t)) return Unparsed("trtllm_gen: expected <bmm|gemm>_<output type>_<A type><B type>");
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
  return info;
}

// --- families by prefix --------------------------------------------------------

struct FamilyPrefix {
  std::string_view prefix;
  KernelFamily family;
};
constexpr std::array<FamilyPrefix, 10> kPrefixes = {{
    {"nvjet_", KernelFamily::kNvjet},
    {"sm90_xmma_", KernelFamily::kSm90Xmma},
    {"sm100_", KernelFamily::kSm100},
    {"sm80_xmma_", KernelFamily::kSm80Xmma},
    {"ampere_", KernelFamily::kAmpere},
    {"turing_", KernelFamily::kTuring},
    {"volta_", KernelFamily::kVolta},
    {"cudnn_", KernelFamily::kVolta},  // cudnn_[infer_|train_]<arch>_...: the arch decides
    {"cutlass_", KernelFamily::kCutlass2},
    {"cutlass3x_", KernelFamily::kCutlass3},
}};

// CUTLASS 2 names go on with an architecture number or an op class; other
// identifiers that start with "cutlass_" are namespaces (cutlass_cudnn_train).
bool IsCutlass2Name(std::string_view identifier) {
  const Tokens t = Split(identifier, '_');
  if (t.size() < 2) return false;
  return ParseNumber(t[1]).has_value() || t[1] == "tensorop" || t[1] == "simt" || t[1] == "wmma";
}

const FamilyPrefix* FindFamily(std::string_view identifier) {
  // trtllm-gen's names start with bmm_/gemm_ and are known by their types.
  static constexpr FamilyPrefix kTrtllmGenFamily{"", KernelFamily::kTrtllmGen};
  if (IsTrtllmGenName(Split(identifier, '_'))) return &kTrtllmGenFamily;
  for (const FamilyPrefix& entry : kPrefixes) {
    if (!StartsWith(identifier, entry.prefix)) continue;
    if (entry.family == KernelFamily::kCutlass2 && !IsCutlass2Name(identifier)) continue;
    if (entry.prefix == "cudnn_" && !FindArch(Split(identifier, '_'))) continue;
    return &entry;
  }
  return nullptr;
}

// --- identifiers in a signature -----------------------------------------------

// One name in a demangled or mangled kernel signature.
struct Identifier {
  std::string_view text;
  bool qualifier = false;  // followed by "::": a namespace or class, not a kernel or type
  std::size_t end = 0;     // index just past it in the name
};

// The length-prefixed identifiers of an Itanium-mangled name (_ZN7cutlass13device_kernelI...E).
// Numbers that are not lengths (template values such as Li128E) yield a
// few meaningless pieces; callers only look for names they know.
std::vector<Identifier> MangledIdentifiers(std::string_view name) {
  std::vector<Identifier> out;
  std::size_t i = 2;  // past "_Z"
  while (i < name.size()) {
    if (!IsDigit(name[i]) || IsDigit(name[i - 1])) {
      ++i;
      continue;
    }
    std::size_t digits = i;
    while (digits < name.size() && IsDigit(name[digits])) ++digits;
    const auto length = ParseNumber(name.substr(i, digits - i));
    if (!length || *length == 0 || digits + static_cast<std::size_t>(*length) > name.size()) {
      i = digits;
      continue;
    }
    const std::string_view text = name.substr(digits, static_cast<std::size_t>(*length));
    out.push_back(Identifier{text, false, digits + text.size()});
    i = digits + text.size();
  }
  return out;
}

// The whole C++ names of a demangled signature, each marked when it is a
// qualifier. Only whole names count: "nvjet_..._TNT@x" is not a signature.
std::vector<Identifier> DemangledIdentifiers(std::string_view name) {
  std::vector<Identifier> out;
  for (std::size_t i = 0; i < name.size();) {
    if (!IsIdentifierChar(name[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < name.size() && IsIdentifierChar(name[end])) ++end;
    const bool whole = (i == 0 || IsSignatureDelimiter(name[i - 1])) &&
                       (end == name.size() || IsSignatureDelimiter(name[end]));
    if (whole) out.push_back(Identifier{name.substr(i, end - i), name.substr(end, 2) == "::", end});
    i = end;
  }
  return out;
}

bool IsMangled(std::string_view name) {
  if (!StartsWith(name, "_Z")) return false;
  for (const char c : name) {
    if (!IsIdentifierChar(c)) return false;
  }
  return true;
}

// --- untiled SIMT kernels ---------------------------------------------------------

// The family of an untiled cuBLAS, MAGMA or cuDNN SIMT kernel function, or
// nothing. `next` is the identifier after it (for internal::gemvx::kernel).
std::optional<KernelFamily> UntiledFamily(const Identifier& id, const Identifier* next) {
  const std::string_view s = id.text;
  if (id.qualifier) {
    if (s == "gemvx" && next != nullptr && next->text == "kernel") return KernelFamily::kGemv;
    return std::nullopt;
  }
  if (s == "gemmk1_kernel") return KernelFamily::kGemmk1;
  // cuBLAS's small-N GEMMs: gemmSN_TN_kernel_64addr<float, ...>, gemmSN_NN_kernel<...>
  if (StartsWith(s, "gemmSN_")) return KernelFamily::kGemmSmallN;
  if (StartsWith(s, "gemv2T_kernel") || StartsWith(s, "gemv2N_kernel") || StartsWith(s, "gemvNSP_kernel")) {
    return KernelFamily::kGemv;
  }
  if (s == "sgemm_largek_lds64") return KernelFamily::kSgemmLargeK;
  if (StartsWith(s, "magma_") && s.size() > 6 && Contains(s.substr(7), "gemm")) return KernelFamily::kMagma;
  if (s == "implicit_convolve_sgemm" || s == "explicit_convolve_sgemm" || s == "precomputed_convolve_sgemm") {
    return KernelFamily::kCudnnSgemm;
  }
  if (StartsWith(s, "fermi") && s.size() > 5 && StartsWith(s.substr(6), "gemm")) return KernelFamily::kFermi;
  return std::nullopt;
}

// The template arguments right after name[at] ('<'), without the brackets;
// empty when there are none.
std::string_view TemplateArguments(std::string_view name, std::size_t at) {
  if (at >= name.size() || name[at] != '<') return {};
  int depth = 0;
  for (std::size_t i = at; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>' && --depth == 0) return name.substr(at + 1, i - at - 1);
  }
  return {};
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

// A C++ element type as demangled names spell it ("float", "const __half",
// "__nv_bfloat16 const"); absent for any other text.
std::optional<Precision> CppTypePrecision(std::string_view type) {
  type = Trim(type);
  if (StartsWith(type, "const ")) type = Trim(type.substr(6));
  if (EndsWith(type, " const")) type = Trim(type.substr(0, type.size() - 6));
  if (type == "float") return Precision::kFp32;
  if (type == "__half" || type == "half" || type == "c10::Half") return Precision::kFp16;
  if (type == "__nv_bfloat16" || type == "c10::BFloat16") return Precision::kBf16;
  return std::nullopt;
}

// A template argument of a demangled name: as written, and its value
// without a leading C-style cast ("(unsigned int)128" → "128",
// "(deep_gemm::GemmType)1" → "1"; "128u" stays "128u").
struct TemplateArgument {
  std::string_view raw;
  std::string_view value;
};
std::vector<TemplateArgument> SplitArguments(std::string_view arguments) {
  std::vector<TemplateArgument> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= arguments.size(); ++i) {
    const char c = i < arguments.size() ? arguments[i] : ',';
    if (c == '<' || c == '(') ++depth;
    if (c == '>' || c == ')') --depth;
    if (c != ',' || depth != 0) continue;
    const std::string_view raw = Trim(arguments.substr(start, i - start));
    std::string_view value = raw;
    if (!value.empty() && value.front() == '(') {
      if (const std::size_t close = value.find(')'); close != std::string_view::npos) {
        value = Trim(value.substr(close + 1));
      }
    }
    out.push_back({raw, value});
    start = i + 1;
  }
  return out;
}

// A's element type: from cublasGemvTensorStridedBatched<T> when the kernel
// takes one, else the first floating-point template argument.
std::optional<Precision> TemplatePrecision(std::string_view arguments) {
  constexpr std::string_view kTensor = "cublasGemvTensorStridedBatched<";
  if (const std::size_t at = arguments.find(kTensor); at != std::string_view::npos) {
    return CppTypePrecision(TemplateArguments(arguments, at + kTensor.size() - 1));
  }
  for (const TemplateArgument& argument : SplitArguments(arguments)) {
    if (const auto precision = CppTypePrecision(argument.raw)) return precision;
  }
  return std::nullopt;
}

Result<KernelInfo> ParseUntiled(std::string_view name, const Identifier& function, KernelFamily family) {
  KernelInfo info;
  info.family = family;
  info.identifier = function.qualifier ? fmt::format("{}::kernel", function.text) : std::string(function.text);
  info.tensor_core = false;
  // internal::gemvx::kernel<...>: the arguments follow the function name.
  std::size_t after = function.end;
  if (function.qualifier) after = name.find('<', after);
  const std::string_view arguments = after == std::string_view::npos ? std::string_view()
                                                                     : TemplateArguments(name, after);
  info.precision = TemplatePrecision(arguments);
  if (!info.precision) {
    // The letter the name gives: sgemm_largek, magma_sgemm..., fermiSgemm...
    const std::string_view s = function.text;
    if (family == KernelFamily::kSgemmLargeK || family == KernelFamily::kCudnnSgemm) info.precision = Precision::kFp32;
    if (family == KernelFamily::kMagma && s.size() > 6) info.precision = KindPrecision(s.substr(6, 1));
    if (family == KernelFamily::kFermi && s.size() > 5) info.precision = KindPrecision(std::string(1, Lower(s[5])));
  }
  return info;
}

// --- DeepGEMM ---------------------------------------------------------------------

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

// An unsigned template value as demangled names print it: "128u" or "128".
std::optional<int> TemplateNumber(std::string_view argument) {
  if (EndsWith(argument, "u")) argument.remove_suffix(1);
  return ParseNumber(argument);
}

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

const DeepGemmVersion* FindDeepGemmVersion(std::string_view function, const std::vector<TemplateArgument>& args) {
  for (const DeepGemmVersion& version : kDeepGemmVersions) {
    if (version.function != function || version.arguments != args.size()) continue;
    if (version.bool_at < 0) return &version;
    const std::string_view flag = args[static_cast<std::size_t>(version.bool_at)].value;
    if (flag == "true" || flag == "false") return &version;
  }
  return nullptr;
}

// deep_gemm::<kernel><args>(...) or dpsk::gemm::fp8_gemm_kernel<args>(...), ids[at] the kernel.
Result<KernelInfo> ParseDeepGemm(std::string_view name, const std::vector<Identifier>& ids, std::size_t at) {
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
  info.family = KernelFamily::kDeepGemm;
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

// --- choosing the identifier -----------------------------------------------------

// The families whose names ofu reads, for the reason of a name it cannot.
constexpr std::string_view kFamiliesRead =
    "nvjet_, sm90_xmma_, sm100_, sm80_xmma_, ampere_, turing_, volta_, cutlass_, cutlass3x_, TensorRT-LLM's "
    "bmm_/gemm_, DeepGEMM's deep_gemm:: and dpsk::gemm:: kernels, and the cuBLAS, MAGMA and cuDNN SIMT kernels";

// The GEMM identifier among `ids`: the one that starts with a family
// prefix (repeats, as in `X<K>(K::Params)`, count once).
Result<std::string_view> FindGemmIdentifier(const std::vector<Identifier>& ids, std::string_view what) {
  std::string_view found;
  for (const Identifier& id : ids) {
    if (id.qualifier || FindFamily(id.text) == nullptr) continue;
    if (!found.empty() && found != id.text) {
      return Unparsed(fmt::format("two different GEMM kernel identifiers in one name ({} and {})", Quote(found),
                                  Quote(id.text)));
    }
    found = id.text;
  }
  if (found.empty()) {
    return Unparsed(fmt::format("no identifier of a kernel family ofu reads in this {} name ({})", what,
                                kFamiliesRead));
  }
  return found;
}

// The architecture a name targets (KernelInfo::target_sm): fixed by the
// family's prefix, or the number in the name (nvjet_sm90_, cutlass_75_,
// cutlass3x_sm100_).
std::optional<int> TargetSm(const Tokens& t, KernelFamily family) {
  const auto sm_token = [](std::string_view token) -> std::optional<int> {
    if (!StartsWith(token, "sm")) return std::nullopt;
    return ParseNumber(token.substr(2));
  };
  switch (family) {
    case KernelFamily::kVolta: return 70;
    case KernelFamily::kTuring: return 75;
    case KernelFamily::kAmpere:
    case KernelFamily::kSm80Xmma: return 80;
    case KernelFamily::kSm90Xmma: return 90;
    case KernelFamily::kSm100: return 100;
    case KernelFamily::kNvjet:
    case KernelFamily::kCutlass3: return t.size() > 1 ? sm_token(t[1]) : std::nullopt;
    case KernelFamily::kCutlass2: return t.size() > 1 ? ParseNumber(t[1]) : std::nullopt;
    case KernelFamily::kTrtllmGen: return t.empty() ? std::nullopt : GenArch(t.back());
    case KernelFamily::kDeepGemm:  // set by ParseDeepGemm
    case KernelFamily::kGemv:
    case KernelFamily::kGemmk1:
    case KernelFamily::kGemmSmallN:
    case KernelFamily::kSgemmLargeK:
    case KernelFamily::kMagma:
    case KernelFamily::kCudnnSgemm:
    case KernelFamily::kFermi: return std::nullopt;
  }
  return std::nullopt;
}

Result<KernelInfo> ParseFamily(const Tokens& tokens, KernelFamily family, KernelInfo info) {
  switch (family) {
    case KernelFamily::kNvjet: return ParseNvjet(tokens, std::move(info));
    case KernelFamily::kSm90Xmma:
    case KernelFamily::kSm100:
    case KernelFamily::kSm80Xmma: return ParseXmma(tokens, family, std::move(info));
    case KernelFamily::kAmpere:
    case KernelFamily::kTuring:
    case KernelFamily::kVolta: return ParseLegacy(tokens, std::move(info));
    case KernelFamily::kCutlass2: return ParseCutlass2(tokens, std::move(info));
    case KernelFamily::kCutlass3: return ParseCutlass3(tokens, std::move(info));
    case KernelFamily::kTrtllmGen: return ParseTrtllmGen(tokens, std::move(info));
    case KernelFamily::kGemv:
    case KernelFamily::kGemmk1:
    case KernelFamily::kGemmSmallN:
    case KernelFamily::kSgemmLargeK:
    case KernelFamily::kMagma:
    case KernelFamily::kCudnnSgemm:
    case KernelFamily::kFermi:
    case KernelFamily::kDeepGemm: break;  // found by function name, never by prefix
  }
  return Unparsed("unknown family");
}

// --- classifying names that do not parse ---------------------------------------------

// The lower-case words of an identifier, split at '_' and where a lower-case
// letter or digit meets an upper-case one: "ImplicitGemmConvolution" →
// implicit, gemm, convolution; "fermiCgemm_v3_kernel" → fermi, cgemm, v3, kernel.
std::vector<std::string> Words(std::string_view identifier) {
  std::vector<std::string> words;
  std::string word;
  for (std::size_t i = 0; i < identifier.size(); ++i) {
    const char c = identifier[i];
    const bool boundary = c == '_' ||
                          (IsUpper(c) && i > 0 && (IsLower(identifier[i - 1]) || IsDigit(identifier[i - 1])));
    if (boundary && !word.empty()) {
      words.push_back(word);
      word.clear();
    }
    if (c != '_') word.push_back(Lower(c));
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

// Whether an identifier names a GEMM or GEMV kernel or kernel type: a word
// ending in gemm or gemv, and no word of a helper around one (the data
// preparation, shapes, swizzles and copies that CUTLASS and its users name
// after the GEMM they serve).
bool NamesAGemm(std::string_view identifier) {
  static constexpr std::array<std::string_view, 13> kHelperWords = {"prepare", "data",      "shape",  "coord",
                                                                    "swizzle", "transpose", "fill",   "tensormaps",
                                                                    "offsets", "indices",   "reduce", "copy",
                                                                    "params"};
  bool gemm = false;
  for (const std::string& word : Words(identifier)) {
    for (const std::string_view helper : kHelperWords) {
      if (word == helper) return false;
    }
    gemm = gemm || EndsWith(word, "gemm") || EndsWith(word, "gemv");
  }
  return gemm;
}

// A hand-written matmul kernel: matmul_kernel, matmul_kernel_tma_persistent,
// matmul_<words>_kernel... (Triton's tutorial and persistent matmuls).
bool IsHandWrittenMatmul(std::string_view identifier) {
  const Tokens t = Split(identifier, '_');
  if (t.size() < 2 || t[0] != "matmul") return false;
  for (const std::string_view token : t) {
    if (StartsWith(token, "kernel")) return true;
  }
  return false;
}

// Whether tensor cores run a GEMM, as far as its name tells.
std::optional<bool> TensorCoreFromName(std::string_view name, const std::vector<Identifier>& ids) {
  bool tensor = false;
  for (const std::string_view mark :
       {"TensorOp", "tensorop", "Umma", "UMMA", "Gmma", "GMMA", "wgmma", "_MMA_", "HMMA"}) {
    tensor = tensor || Contains(name, mark);
  }
  bool simt = Contains(name, "simt") || Contains(name, "Simt");
  for (const Identifier& id : ids) {
    for (const std::string& word : Words(id.text)) {
      if (!EndsWith(word, "gemm") || word.size() == 4) continue;
      if (word == "spgemm" || word == "bsspgemm") continue;  // CUTLASS 3's sparse GEMM kinds, not SIMT letters
      // <kind><mma shape>gemm: digits are an MMA shape (tensor cores); letters alone are a SIMT kernel.
      const std::string_view kind = std::string_view(word).substr(0, word.size() - 4);
      bool digits = false;
      for (const char c : kind) digits = digits || IsDigit(c);
      (digits ? tensor : simt) = true;
    }
  }
  if (tensor == simt) return std::nullopt;  // neither, or both: the name does not tell
  return tensor;
}

// The part of a demangled signature before its parameter list: the kernel
// function and its template arguments (where a wrapper names its kernel).
std::string_view SignatureHead(std::string_view name) {
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>') --depth;
    if (name[i] == '(' && depth == 0) return name.substr(0, i);
  }
  return name;
}

// A name as a profiler table cut it: the part kept, and how it was cut.
constexpr std::size_t kCutWidth = 64;  // the width the names of issue 30 were cut to
struct CutName {
  std::string_view kept;
  bool ellipsis = false;  // it ended in "..." or "…"
};
CutName StripEllipsis(std::string_view name) {
  for (const std::string_view mark : {std::string_view("..."), std::string_view("\xE2\x80\xA6")}) {
    if (EndsWith(name, mark) && name.size() > mark.size()) return {name.substr(0, name.size() - mark.size()), true};
  }
  return {name, false};
}

// A zero that survived the family rules (which turn the documented
// run-time zeros into absent fields) is not a size ofu can compute with.
Result<KernelInfo> WithoutZeros(KernelInfo info) {
  for (const auto& [field, value] : {std::pair{"tile_m", info.tile_m}, std::pair{"tile_n", info.tile_n},
                                     std::pair{"tile_k", info.tile_k}, std::pair{"stages", info.stages},
                                     std::pair{"cluster_m", info.cluster_m}, std::pair{"cluster_n", info.cluster_n}}) {
    if (value == 0) return Unparsed(fmt::format("{}: {} is 0 in the name", FamilyName(info.family), field));
  }
  return info;
}

Result<KernelInfo> ParseWholeName(std::string_view name) {
  if (name.empty()) return Unparsed("empty kernel name");
  std::string_view identifier = name;
  bool plain = true;
  for (const char c : name) plain = plain && IsIdentifierChar(c);
  if (!plain || IsMangled(name)) {
    const bool mangled = IsMangled(name);
    const std::vector<Identifier> ids = mangled ? MangledIdentifiers(name) : DemangledIdentifiers(name);
    // The untiled SIMT kernels are found by their function name, before the
    // parameter list (whose types could name anything).
    const std::vector<Identifier> head = mangled ? ids : DemangledIdentifiers(SignatureHead(name));
    for (std::size_t i = 0; !mangled && i < head.size(); ++i) {
      if (!IsDeepGemmKernel(head, i)) continue;
      OFU_ASSIGN_OR_RETURN(auto deep_gemm, ParseDeepGemm(name, head, i));
      return WithoutZeros(std::move(deep_gemm));
    }
    for (std::size_t i = 0; i < head.size(); ++i) {
      if (const auto family = UntiledFamily(head[i], i + 1 < head.size() ? &head[i + 1] : nullptr)) {
        return ParseUntiled(mangled ? std::string_view() : name, head[i], *family);
      }
    }
    OFU_ASSIGN_OR_RETURN(auto found, FindGemmIdentifier(ids, mangled ? "mangled" : "demangled"));
    identifier = found;
  } else if (const auto family = UntiledFamily(Identifier{name, false, name.size()}, nullptr)) {
    return ParseUntiled(std::string_view(), Identifier{name, false, name.size()}, *family);
  }
  const FamilyPrefix* family = FindFamily(identifier);
  if (family == nullptr) {
    return Unparsed(fmt::format("not a kernel family ofu reads ({})", kFamiliesRead));
  }
  KernelInfo info;
  info.identifier = std::string(identifier);
  const Tokens tokens = Split(identifier, '_');
  OFU_ASSIGN_OR_RETURN(auto result, ParseFamily(tokens, family->family, std::move(info)));
  result.target_sm = TargetSm(tokens, result.family);
  if (result.family == KernelFamily::kCutlass2 || result.family == KernelFamily::kCutlass3) {
    for (const std::string_view token : tokens) {
      if (StartsWith(token, "align") && ParseNumber(token.substr(5))) result.alignment = ParseNumber(token.substr(5));
    }
  }
  return WithoutZeros(std::move(result));
}

}  // namespace

Result<KernelInfo> ParseKernelName(std::string_view name) {
  const CutName cut = StripEllipsis(name);
  if (cut.ellipsis) {
    return Unparsed(
        "truncated: the name ends in an ellipsis, so the fields after the cut (schedule, flags, "
        "architecture) are not known");
  }
  auto result = ParseWholeName(name);
  // Only a name that starts like a GEMM family's is taken as cut: a
  // 64-character Triton or elementwise name is just not a GEMM.
  if (!result.ok() && name.size() == kCutWidth && FindFamily(name) != nullptr) {
    return Unparsed(
        fmt::format("truncated: the name is exactly {} characters, as profiler tables cut long names, "
                    "and does not read in full ({})",
                    kCutWidth, result.error().message));
  }
  return result;
}

KernelClass ClassifyKernelName(std::string_view name) {
  KernelClass out;
  const auto parsed = ParseKernelName(name);
  if (parsed.ok()) {
    out.gemm = true;
    out.tensor_core = parsed->tensor_core;
    return out;
  }
  out.reason = parsed.error().message;
  out.truncated = StartsWith(out.reason, "truncated:");
  name = StripEllipsis(name).kept;  // a cut name is classified by what it kept
  const bool mangled = IsMangled(name);
  const std::vector<Identifier> ids = mangled ? MangledIdentifiers(name) : DemangledIdentifiers(SignatureHead(name));
  bool trtllm_gen = false;
  for (const Identifier& id : ids) {
    // Qualifiers (cutlass::gemm::, dpsk::grouped_gemm::) name where a kernel
    // lives, not what it does; mangled names do not mark them, but their
    // bare "gemm" namespace is not read as a kernel.
    if (id.qualifier || (mangled && (id.text == "gemm" || id.text == "gemv"))) continue;
    const FamilyPrefix* family = FindFamily(id.text);
    const bool gemm_only_family =
        family != nullptr && (family->family == KernelFamily::kNvjet || family->family == KernelFamily::kCutlass2 ||
                              family->family == KernelFamily::kCutlass3 || family->family == KernelFamily::kTrtllmGen);
    trtllm_gen = trtllm_gen || (family != nullptr && family->family == KernelFamily::kTrtllmGen);
    out.gemm = out.gemm || gemm_only_family || NamesAGemm(id.text) || IsHandWrittenMatmul(id.text);
  }
  if (out.gemm) out.tensor_core = trtllm_gen ? std::optional<bool>(true) : TensorCoreFromName(name, ids);
  // One reason for every GEMM not read, whatever its name looks like.
  if (out.gemm && !out.truncated) out.reason = fmt::format("{}: {}", kGemmUnreadReason, out.reason);
  return out;
}

bool FamilyHasTile(KernelFamily family) {
  switch (family) {
    case KernelFamily::kGemv:
    case KernelFamily::kGemmk1:
    case KernelFamily::kGemmSmallN:
    case KernelFamily::kSgemmLargeK:
    case KernelFamily::kMagma:
    case KernelFamily::kCudnnSgemm:
    case KernelFamily::kFermi: return false;
    case KernelFamily::kNvjet:
    case KernelFamily::kSm90Xmma:
    case KernelFamily::kSm100:
    case KernelFamily::kSm80Xmma:
    case KernelFamily::kAmpere:
    case KernelFamily::kCutlass2:
    case KernelFamily::kCutlass3:
    case KernelFamily::kVolta:
    case KernelFamily::kTuring:
    case KernelFamily::kTrtllmGen:
    case KernelFamily::kDeepGemm: return true;
  }
  return true;
}

bool FamilyHasClusters(KernelFamily family) {
  switch (family) {
    case KernelFamily::kNvjet:
    case KernelFamily::kSm90Xmma:
    case KernelFamily::kSm100:
    case KernelFamily::kCutlass3:
    case KernelFamily::kTrtllmGen:
    case KernelFamily::kDeepGemm: return true;
    case KernelFamily::kSm80Xmma:
    case KernelFamily::kAmpere:
    case KernelFamily::kCutlass2:
    case KernelFamily::kVolta:
    case KernelFamily::kTuring:
    case KernelFamily::kGemv:
    case KernelFamily::kGemmk1:
    case KernelFamily::kGemmSmallN:
    case KernelFamily::kSgemmLargeK:
    case KernelFamily::kMagma:
    case KernelFamily::kCudnnSgemm:
    case KernelFamily::kFermi: return false;
  }
  return true;  // an unknown family: do not claim it has none
}

std::string_view FamilyName(KernelFamily family) {
  switch (family) {
    case KernelFamily::kNvjet: return "nvjet";
    case KernelFamily::kSm90Xmma: return "sm90_xmma";
    case KernelFamily::kSm100: return "sm100";
    case KernelFamily::kSm80Xmma: return "sm80_xmma";
    case KernelFamily::kAmpere: return "ampere";
    case KernelFamily::kCutlass2: return "cutlass2";
    case KernelFamily::kCutlass3: return "cutlass3";
    case KernelFamily::kVolta: return "volta";
    case KernelFamily::kTuring: return "turing";
    case KernelFamily::kGemv: return "gemv";
    case KernelFamily::kGemmk1: return "gemmk1";
    case KernelFamily::kGemmSmallN: return "gemm_small_n";
    case KernelFamily::kSgemmLargeK: return "sgemm_largek";
    case KernelFamily::kMagma: return "magma";
    case KernelFamily::kCudnnSgemm: return "cudnn_sgemm";
    case KernelFamily::kFermi: return "fermi";
    case KernelFamily::kTrtllmGen: return "trtllm_gen";
    case KernelFamily::kDeepGemm: return "deepgemm";
  }
  return "unknown";
}

}  // namespace ofu::kernels
