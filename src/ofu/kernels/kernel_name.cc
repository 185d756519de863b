#include "ofu/kernels/kernel_name.h"

#include <array>
#include <charconv>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace ofu::kernels {
namespace {

using Tokens = std::vector<std::string_view>;

Error Unparsed(std::string reason) { return Error{ErrorCode::kMalformedInput, std::move(reason)}; }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentifierChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
// Characters that separate names in a demangled signature.
bool IsSignatureDelimiter(char c) { return std::string_view(" <>,()&*:").find(c) != std::string_view::npos; }
bool StartsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }
bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

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
constexpr std::array<TypeCode, 21> kTypeCodes = {{
    {"bf16", Precision::kBf16}, {"tf32", Precision::kTf32}, {"fp16", Precision::kFp16},
    {"fp32", Precision::kFp32}, {"e4m3", Precision::kFp8},  {"e5m2", Precision::kFp8},
    {"e2m1", Precision::kFp4},  {"int8", Precision::kInt8}, {"void", std::nullopt},
    {"fp8", Precision::kFp8},   {"fp4", Precision::kFp4},   {"f16", Precision::kFp16},
    {"f32", Precision::kFp32},  {"f64", std::nullopt},      {"f8", Precision::kFp8},
    {"s8", Precision::kInt8},   {"u8", Precision::kInt8},   {"i8", Precision::kInt8},
    {"s32", std::nullopt},      {"e2m3", std::nullopt},     {"e3m2", std::nullopt},
}};

// The type code at the start of `token`, or nullptr.
const TypeCode* LeadingType(std::string_view token) {
  for (const TypeCode& type : kTypeCodes) {
    if (StartsWith(token, type.code)) return &type;
  }
  return nullptr;
}

// A whole token that is one type. Block-scaled CUTLASS types name the scale
// factor first ("ue8m0xe2m1"): the element type is the part after the 'x'.
const TypeCode* WholeType(std::string_view token) {
  if (const std::size_t x = token.rfind('x'); x != std::string_view::npos && StartsWith(token, "ue")) {
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

std::string Quote(std::string_view text) { return fmt::format("'{}'", text); }

// nvjet_<types>_<TM>x<TN>_<TK>x<S>_<CM>x<CN>[_2cta]_<v|h>_<bz|badd>[_flags]_<ops>
Result<KernelInfo> ParseNvjet(const Tokens& t, KernelInfo info) {
  if (t.size() < 8) {
    return Unparsed(fmt::format("nvjet: expected at least 8 '_'-separated fields "
                                "(nvjet_<types>_<TM>x<TN>_<TK>x<stages>_<CM>x<CN>_<v|h>_<bz|badd>_<ops>), found {}",
                                t.size()));
  }
  // Three letters read as AB, compute, D (tst: bf16 in, fp32 compute, bf16
  // out); five as A, B, C, compute, D (qqtst: fp8 in, bf16 out). Inferred.
  const std::string_view types = t[1];
  if (types.size() != 3 && types.size() != 5) {
    return Unparsed(fmt::format("nvjet: type field {} has {} letters; known layouts have 3 (AB, compute, D) "
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
      default:
        return Unparsed(fmt::format("nvjet: type letter '{}' in {} is not one of h (fp16), t (bf16), s (fp32), q (fp8)",
                                    c, Quote(types)));
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
  if (t[i] != "v" && t[i] != "h") return Unparsed(fmt::format("nvjet: expected 'v' or 'h' after the cluster, found {}", Quote(t[i])));
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
  // Flags between beta and the layouts. An unknown flag might change how
  // the work is split (stream-K, say), so it makes the name unparsed rather
  // than silently read as "no split".
  for (; i + 1 < t.size(); ++i) {
    if (t[i] == "splitK") {
      info.split_k = true;
    } else if (t[i] == "2cta") {
      info.two_cta = true;
    } else {
      return Unparsed(fmt::format("nvjet: unknown flag {} (known: splitK, 2cta)", Quote(t[i])));
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
  const std::optional<Precision> input = a == b ? std::optional<Precision>(a) : std::nullopt;
  // Every nvjet kernel seen with 16-bit or fp8 inputs is a tensor-core kernel;
  // for fp32 inputs the name does not say whether TF32 or CUDA cores run it.
  if (input && *input != Precision::kFp32) info.tensor_core = true;
  info.precision = Resolve(input, info.tensor_core);
  return info;
}

// smNN_xmma_gemm_<AB>_<C/compute>_<D>_<layouts>_..._tilesize<M>x<N>x<K>_...
Result<KernelInfo> ParseXmma(const Tokens& t, KernelFamily family, KernelInfo info) {
  const std::string_view fname = FamilyName(family);
  std::size_t gemm = 1;
  while (gemm < t.size() && t[gemm] != "gemm") ++gemm;
  if (gemm + 1 >= t.size()) return Unparsed(fmt::format("{}: no 'gemm' field followed by types: not a GEMM kernel", fname));

  const TypeCode* a = LeadingType(t[gemm + 1]);
  if (a == nullptr) return Unparsed(fmt::format("{}: operand types {} not recognised", fname, Quote(t[gemm + 1])));
  const TypeCode* b = LeadingType(t[gemm + 1].substr(a->code.size()));

  bool warpgroups = false;
  for (std::size_t i = gemm + 2; i < t.size(); ++i) {
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
    } else if (token == "splitK" || token == "splitk") {
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
  info.precision = Resolve(InputPrecision(*a, b), info.tensor_core);
  return info;
}

// The MMA token of cuBLAS ampere and CUTLASS 2 names: <acc>[<mma shape>][tf32]gemm,
// e.g. s16816gemm, s1688tf32gemm, sgemm, h16816gemm, i16832gemm.
struct GemmToken {
  char accumulator = 's';
  bool has_mma_shape = false;  // digits after the accumulator: a tensor MMA shape
  bool tf32 = false;
};
std::optional<GemmToken> ParseGemmToken(std::string_view token) {
  if (token.size() < 5 || !EndsWith(token, "gemm")) return std::nullopt;
  GemmToken gemm;
  gemm.accumulator = token[0];
  std::string_view middle = token.substr(1, token.size() - 5);
  if (EndsWith(middle, "tf32")) {
    gemm.tf32 = true;
    middle.remove_suffix(4);
  }
  for (const char c : middle) {
    if (!IsDigit(c)) return std::nullopt;
  }
  gemm.has_mma_shape = !middle.empty();
  return gemm;
}

// The precision a plain SIMT kernel's accumulator letter implies (sgemm is
// fp32 throughout, hgemm fp16 throughout).
std::optional<Precision> SimtPrecision(const GemmToken& gemm) {
  if (gemm.has_mma_shape) return std::nullopt;
  if (gemm.accumulator == 's') return Precision::kFp32;
  if (gemm.accumulator == 'h') return Precision::kFp16;
  return std::nullopt;
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

// ampere_[<type>_]<acc><mma>gemm_[<type>_]<TM>x<TN>_..._stages_<TK>x<S>_<ops>
Result<KernelInfo> ParseAmpere(const Tokens& t, KernelInfo info) {
  std::size_t i = 1;
  const TypeCode* before = i < t.size() ? WholeType(t[i]) : nullptr;
  if (before != nullptr) ++i;
  const auto gemm = i < t.size() ? ParseGemmToken(t[i]) : std::nullopt;
  if (!gemm) {
    return Unparsed(fmt::format("ampere: expected a GEMM field like s16816gemm or sgemm, found {}",
                                Quote(i < t.size() ? t[i] : "")));
  }
  const TypeCode* after = nullptr;
  i = ReadTileAfter(t, i + 1, info, after);
  if (!info.tile_m) return Unparsed("ampere: no <TM>x<TN> tile field");
  for (++i; i + 1 < t.size(); ++i) {
    if (t[i] != "stages") continue;
    const auto k_stages = ParseDims<2>(t[i + 1]);
    if (!k_stages) return Unparsed(fmt::format("ampere: expected <TK>x<stages> after 'stages', found {}", Quote(t[i + 1])));
    info.tile_k = (*k_stages)[0];
    info.stages = (*k_stages)[1];
    break;
  }
  info.family = KernelFamily::kAmpere;
  info.tensor_core = gemm->has_mma_shape;
  const TypeCode* type = before != nullptr ? before : after;
  if (gemm->tf32) {
    info.precision = Precision::kTf32;
  } else if (type != nullptr) {
    info.precision = Resolve(type->precision, info.tensor_core);
  } else {
    info.precision = SimtPrecision(*gemm);
  }
  return info;
}

// cutlass[_<arch>]_<opclass>[_<type>]_<acc><mma>gemm[_<epilogue>][_<type>]_<TM>x<TN>[_<TK>x<S>]_<layouts>_align<a>
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
  const TypeCode* before = i < t.size() ? WholeType(t[i]) : nullptr;
  if (before != nullptr) ++i;
  const auto gemm = i < t.size() ? ParseGemmToken(t[i]) : std::nullopt;
  if (!gemm) {
    return Unparsed(fmt::format("cutlass2: expected a GEMM field like s16816gemm, found {}", Quote(i < t.size() ? t[i] : "")));
  }
  // Between the GEMM field and the tile: epilogue words (relu, ...) and the element type.
  const TypeCode* after = nullptr;
  i = ReadTileAfter(t, i + 1, info, after);
  if (!info.tile_m) return Unparsed("cutlass2: no <TM>x<TN> tile field");
  if (i + 1 < t.size()) {
    if (const auto k_stages = ParseDims<2>(t[i + 1])) {
      info.tile_k = (*k_stages)[0];
      info.stages = (*k_stages)[1];
    }
  }
  info.family = KernelFamily::kCutlass2;
  const TypeCode* type = before != nullptr ? before : after;
  if (gemm->tf32) {
    info.precision = Precision::kTf32;
  } else if (type != nullptr) {
    info.precision = Resolve(type->precision, info.tensor_core);
  } else if (!*info.tensor_core) {
    info.precision = SimtPrecision(*gemm);
  }
  return info;
}

// cutlass3x_sm<arch>_<opclass>_<mma>gemm_<A>_<B>_<acc>_<C>_<D>_<TM>x<TN>x<TK>_<CM>x<CN>x<CK>_<S>_<layouts>_align<a>...
Result<KernelInfo> ParseCutlass3(const Tokens& t, KernelInfo info) {
  if (t.size() < 5 || !StartsWith(t[1], "sm") || !ParseNumber(t[1].substr(2))) {
    return Unparsed(fmt::format("cutlass3: expected sm<arch> as field 2, found {}", Quote(t.size() > 1 ? t[1] : "")));
  }
  if (t[2].find("tensorop") != std::string_view::npos) {
    info.tensor_core = true;
  } else if (t[2] == "simt") {
    info.tensor_core = false;
  } else {
    return Unparsed(fmt::format("cutlass3: op class {} is not a tensorop or simt class", Quote(t[2])));
  }
  if (!EndsWith(t[3], "gemm")) return Unparsed(fmt::format("cutlass3: expected a gemm field, found {}", Quote(t[3])));

  std::size_t i = 4;
  std::vector<const TypeCode*> types;
  for (; i < t.size() && !ParseDims<3>(t[i]); ++i) {
    const TypeCode* type = WholeType(t[i]);
    if (type == nullptr) return Unparsed(fmt::format("cutlass3: element type {} not recognised", Quote(t[i])));
    types.push_back(type);
  }
  if (types.size() < 2) return Unparsed("cutlass3: expected the A and B element types before the tile");
  if (i + 2 >= t.size()) return Unparsed("cutlass3: expected <TM>x<TN>x<TK>_<CM>x<CN>x<CK>_<stages>");
  const auto tile = ParseDims<3>(t[i]);
  const auto cluster = ParseDims<3>(t[i + 1]);
  const auto stages = ParseNumber(t[i + 2]);
  if (!cluster) return Unparsed(fmt::format("cutlass3: expected cluster <CM>x<CN>x<CK> after the tile, found {}", Quote(t[i + 1])));
  if (!stages) return Unparsed(fmt::format("cutlass3: expected a stage count after the cluster, found {}", Quote(t[i + 2])));
  for (std::size_t j = i + 3; j < t.size(); ++j) {
    if (t[j] == "2sm") info.two_cta = true;
    if (t[j] == "splitk" || t[j] == "splitK") info.split_k = true;
  }

  info.family = KernelFamily::kCutlass3;
  info.tile_m = (*tile)[0];
  info.tile_n = (*tile)[1];
  info.tile_k = (*tile)[2];
  // 0x0x1: the cluster shape is a run-time argument, not in the name.
  if ((*cluster)[0] != 0 && (*cluster)[1] != 0) {
    info.cluster_m = (*cluster)[0];
    info.cluster_n = (*cluster)[1];
  }
  // 0 stages: the collective builder picks the count to fill shared memory.
  if (*stages != 0) info.stages = *stages;
  info.precision = Resolve(InputPrecision(*types[0], types[1]), info.tensor_core);
  return info;
}

struct FamilyPrefix {
  std::string_view prefix;
  KernelFamily family;
};
constexpr std::array<FamilyPrefix, 7> kPrefixes = {{
    {"nvjet_", KernelFamily::kNvjet},
    {"sm90_xmma_", KernelFamily::kSm90Xmma},
    {"sm100_", KernelFamily::kSm100},
    {"sm80_xmma_", KernelFamily::kSm80Xmma},
    {"ampere_", KernelFamily::kAmpere},
    {"cutlass_", KernelFamily::kCutlass2},
    {"cutlass3x_", KernelFamily::kCutlass3},
}};

const FamilyPrefix* FindFamily(std::string_view identifier) {
  for (const FamilyPrefix& entry : kPrefixes) {
    if (StartsWith(identifier, entry.prefix)) return &entry;
  }
  return nullptr;
}

// The GEMM identifier inside a demangled signature: the one identifier that
// starts with a family prefix (repeats, as in `X<K>(K::Params)`, count once).
Result<std::string_view> Unwrap(std::string_view name) {
  std::string_view found;
  for (std::size_t i = 0; i < name.size();) {
    if (!IsIdentifierChar(name[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < name.size() && IsIdentifierChar(name[end])) ++end;
    const std::string_view identifier = name.substr(i, end - i);
    // Only a whole C++ name counts: "nvjet_..._TNT@x" is not a signature.
    const bool whole = (i == 0 || IsSignatureDelimiter(name[i - 1])) &&
                       (end == name.size() || IsSignatureDelimiter(name[end]));
    if (whole && FindFamily(identifier) != nullptr) {
      if (!found.empty() && found != identifier) {
        return Unparsed(fmt::format("two different GEMM kernel identifiers in one name ({} and {})", Quote(found),
                                    Quote(identifier)));
      }
      found = identifier;
    }
    i = end;
  }
  if (found.empty()) {
    return Unparsed("no GEMM kernel identifier in this demangled name (looked for nvjet_, sm90_xmma_, sm100_, "
                    "sm80_xmma_, ampere_, cutlass_, cutlass3x_)");
  }
  return found;
}

Result<KernelInfo> ParseFamily(const Tokens& tokens, KernelFamily family, KernelInfo info) {
  switch (family) {
    case KernelFamily::kNvjet: return ParseNvjet(tokens, std::move(info));
    case KernelFamily::kSm90Xmma:
    case KernelFamily::kSm100:
    case KernelFamily::kSm80Xmma: return ParseXmma(tokens, family, std::move(info));
    case KernelFamily::kAmpere: return ParseAmpere(tokens, std::move(info));
    case KernelFamily::kCutlass2: return ParseCutlass2(tokens, std::move(info));
    case KernelFamily::kCutlass3: return ParseCutlass3(tokens, std::move(info));
  }
  return Unparsed("unknown family");
}

}  // namespace

Result<KernelInfo> ParseKernelName(std::string_view name) {
  if (name.empty()) return Unparsed("empty kernel name");
  std::string_view identifier = name;
  bool plain = true;
  for (const char c : name) plain = plain && IsIdentifierChar(c);
  if (!plain) {
    auto unwrapped = Unwrap(name);
    if (!unwrapped) return unwrapped.error();
    identifier = *unwrapped;
  }
  const FamilyPrefix* family = FindFamily(identifier);
  if (family == nullptr) {
    return Unparsed("not a GEMM kernel family ofu reads (nvjet_, sm90_xmma_, sm100_, sm80_xmma_, ampere_, "
                    "cutlass_, cutlass3x_)");
  }
  KernelInfo info;
  info.identifier = std::string(identifier);
  auto result = ParseFamily(Split(identifier, '_'), family->family, std::move(info));
  if (!result) return result;
  // A zero that survived the family rules (which turn the documented
  // run-time zeros into absent fields) is not a size ofu can compute with.
  for (const auto& [field, value] : {std::pair{"tile_m", result->tile_m}, std::pair{"tile_n", result->tile_n},
                                     std::pair{"tile_k", result->tile_k}, std::pair{"stages", result->stages},
                                     std::pair{"cluster_m", result->cluster_m},
                                     std::pair{"cluster_n", result->cluster_n}}) {
    if (value == 0) return Unparsed(fmt::format("{}: {} is 0 in the name", FamilyName(result->family), field));
  }
  return result;
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
  }
  return "unknown";
}

std::string_view PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kFp16: return "fp16";
    case Precision::kBf16: return "bf16";
    case Precision::kTf32: return "tf32";
    case Precision::kFp8: return "fp8";
    case Precision::kFp4: return "fp4";
    case Precision::kFp32: return "fp32";
    case Precision::kInt8: return "int8";
  }
  return "unknown";
}

std::optional<Precision> PrecisionFromName(std::string_view name) {
  for (Precision p : {Precision::kFp16, Precision::kBf16, Precision::kTf32, Precision::kFp8, Precision::kFp4,
                      Precision::kFp32, Precision::kInt8}) {
    if (PrecisionName(p) == name) return p;
  }
  return std::nullopt;
}

}  // namespace ofu::kernels
