// The pieces every kernel-family parser reads names with: '_'-separated
// tokens, numbers and dimension lists, element-type codes, and the C++ names
// inside a demangled or mangled signature.
//
// Internal to kernels/: only kernel_name.cc and the family parsers
// (family_*.cc) include it. Everything here is pure and thread-safe; views
// returned point into the caller's text.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/precision.h"
#include "ofu/core/result.h"

namespace ofu::kernels::detail {

using Tokens = std::vector<std::string_view>;

// A name that does not read: kMalformedInput with `reason` as the message.
Error Unparsed(std::string reason);
// `text` in single quotes, for reasons.
std::string Quote(std::string_view text);

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
inline bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
inline bool IsIdentifierChar(char c) { return IsDigit(c) || IsLower(c) || IsUpper(c) || c == '_'; }
inline char Lower(char c) { return IsUpper(c) ? static_cast<char>(c - 'A' + 'a') : c; }
inline bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}
inline bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}
inline bool Contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// `text` cut at every `separator` (empty pieces kept).
Tokens Split(std::string_view text, char separator);

// A plain decimal number of at most six digits (no tile, stage or cluster
// count comes near that, and it keeps the conversion free of overflow).
std::optional<int> ParseNumber(std::string_view text);

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

// The number of an architecture token: "sm90" → 90; absent for any other token.
std::optional<int> SmToken(std::string_view token);

// The operand alignment a CUTLASS name's `align<N>` token gives; absent without one.
std::optional<int> AlignmentToken(const Tokens& tokens);

// --- element types ---------------------------------------------------------

// An element type as CUTLASS and cuBLAS spell it ("bf16", "e4m3", "f32").
struct TypeCode {
  std::string_view code;
  std::optional<Precision> precision;  // nullopt: a real type with no OFU precision (void, f64)
};

// The type code at the start of `token` (the longest that fits), or nullptr.
const TypeCode* LeadingType(std::string_view token);

// A whole token that is one type. Scaled CUTLASS types name the scale first
// and the element type after the last 'x': block-scaled "ue8m0xe2m1" and
// blockwise "64x128f32xe4m3" (a 64x128 block of e4m3 per f32 scale).
const TypeCode* WholeType(std::string_view token);

// Tensor cores have no fp32 mode: fp32 inputs on them run as TF32. Where the
// name does not say which unit runs an fp32 kernel, the precision is unknown.
std::optional<Precision> Resolve(std::optional<Precision> input, std::optional<bool> tensor_core);

// The precision of operands A and B: absent when they differ (mixed input).
std::optional<Precision> InputPrecision(const TypeCode& a, const TypeCode* b);

// The width of a 4-, 6- or 8-bit float type code; 0 for any other type.
int NarrowFloatBits(std::string_view code);

// The rate class of a Blackwell MMA on 4-, 6- and 8-bit float inputs: the
// f8f6f4 and mxf8f6f4 kinds run every mix of them at the fp8 rate; only
// fp4 on both sides in the mxf4/nvf4 kinds (`fp4_kind`) runs at the fp4
// rate (CUTLASS media/docs/cpp/blackwell_functionality.md).
Precision NarrowMmaPrecision(int a_bits, int b_bits, bool fp4_kind);

// The precision the kind letter of a cuBLAS/MAGMA/CUTLASS 2 name implies when
// the name gives no type, A's type being then the accumulator's. h is fp16
// (hgemm, h884gemm: half in, half accumulate). s is fp32 on CUDA cores
// (sgemm), and on tensor cores only with the 1688 shape, the one MMA shape
// of these names that takes 32-bit operands (as TF32); an s16816 kernel runs
// on 16-bit inputs the name does not spell, so its precision is absent.
// Complex (c, gc, z), double and integer kinds: none.
std::optional<Precision> KindPrecision(std::string_view kind, std::string_view shape = {});

// A C++ element type as demangled names spell it ("float", "const __half",
// "__nv_bfloat16 const"); absent for any other text.
std::optional<Precision> CppTypePrecision(std::string_view type);

// --- names in a signature ----------------------------------------------------

// One name in a demangled or mangled kernel signature.
struct Identifier {
  std::string_view text;
  bool qualifier = false;  // followed by "::": a namespace or class, not a kernel or type
  std::size_t end = 0;     // index just past it in the name
};

// An Itanium-mangled symbol (_ZN7cutlass13device_kernelI...E): "_Z" and
// identifier characters only.
bool IsMangled(std::string_view name);

// The length-prefixed identifiers of a mangled name. Numbers that are not
// lengths (template values such as Li128E) yield a few meaningless pieces;
// callers only look for names they know.
std::vector<Identifier> MangledIdentifiers(std::string_view name);

// The whole C++ names of a demangled signature, each marked when it is a
// qualifier. Only whole names count: "nvjet_..._TNT@x" is not a signature.
std::vector<Identifier> DemangledIdentifiers(std::string_view name);

// The part of a demangled signature before its parameter list: the kernel
// function and its template arguments (where a wrapper names its kernel).
std::string_view SignatureHead(std::string_view name);

// The lower-case words of an identifier, split at '_' and where a lower-case
// letter or digit meets an upper-case one: "ImplicitGemmConvolution" →
// implicit, gemm, convolution; "fermiCgemm_v3_kernel" → fermi, cgemm, v3, kernel.
std::vector<std::string> Words(std::string_view identifier);

// The template arguments right after name[at] ('<'), without the brackets;
// empty when there are none.
std::string_view TemplateArguments(std::string_view name, std::size_t at);

// `text` without leading and trailing spaces.
std::string_view Trim(std::string_view text);

// A template argument of a demangled name: as written, and its value
// without a leading C-style cast ("(unsigned int)128" → "128",
// "(deep_gemm::GemmType)1" → "1"; "128u" stays "128u").
struct TemplateArgument {
  std::string_view raw;
  std::string_view value;
};
// The top-level arguments of a template argument list.
std::vector<TemplateArgument> SplitArguments(std::string_view arguments);

// An unsigned template value as demangled names print it: "128u" or "128".
std::optional<int> TemplateNumber(std::string_view argument);

}  // namespace ofu::kernels::detail
