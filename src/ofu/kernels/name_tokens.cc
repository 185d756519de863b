#include "ofu/kernels/name_tokens.h"

#include <charconv>
#include <system_error>
#include <utility>

#include <fmt/format.h>

namespace ofu::kernels::detail {
namespace {

// Characters that separate names in a demangled signature.
bool IsSignatureDelimiter(char c) { return std::string_view(" <>,()&*:").find(c) != std::string_view::npos; }

// Element type spellings used by CUTLASS and cuBLAS. A code comes before any
// shorter code that starts it, so that a prefix match on a concatenated token
// ("bf16bf16") takes the whole code.
constexpr std::array<TypeCode, 24> kTypeCodes = {{
    {"bf16", Precision::kBf16}, {"tf32", Precision::kTf32}, {"fp16", Precision::kFp16}, {"fp32", Precision::kFp32},
    {"e4m3", Precision::kFp8},  {"e5m2", Precision::kFp8},  {"e2m1", Precision::kFp4},  {"int8", Precision::kInt8},
    {"void", std::nullopt},     {"fp8", Precision::kFp8},   {"fp4", Precision::kFp4},   {"f16", Precision::kFp16},
    {"f32", Precision::kFp32},  {"f64", std::nullopt},      {"f8", Precision::kFp8},    {"s8", Precision::kInt8},
    {"u8", Precision::kInt8},   {"i8", Precision::kInt8},   {"s32", std::nullopt},      {"e2m3", std::nullopt},
    {"e3m2", std::nullopt},     {"int32", std::nullopt},    {"f4", Precision::kFp4},    {"f6", std::nullopt},
}};

}  // namespace

Error Unparsed(std::string reason) { return Error::MalformedInput("{}", std::move(reason)); }

std::string Quote(std::string_view text) { return fmt::format("'{}'", text); }

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

std::optional<int> SmToken(std::string_view token) {
  if (!StartsWith(token, "sm")) return std::nullopt;
  return ParseNumber(token.substr(2));
}

std::optional<int> AlignmentToken(const Tokens& tokens) {
  std::optional<int> alignment;
  for (const std::string_view token : tokens) {
    if (StartsWith(token, "align") && ParseNumber(token.substr(5))) alignment = ParseNumber(token.substr(5));
  }
  return alignment;
}

const TypeCode* LeadingType(std::string_view token) {
  for (const TypeCode& type : kTypeCodes) {
    if (StartsWith(token, type.code)) return &type;
  }
  return nullptr;
}

const TypeCode* WholeType(std::string_view token) {
  const std::size_t x = token.rfind('x');
  if (x != std::string_view::npos && (StartsWith(token, "ue") || (!token.empty() && IsDigit(token[0])))) {
    token = token.substr(x + 1);
  }
  const TypeCode* type = LeadingType(token);
  return type != nullptr && type->code.size() == token.size() ? type : nullptr;
}

std::optional<Precision> Resolve(std::optional<Precision> input, std::optional<bool> tensor_core) {
  if (input != Precision::kFp32) return input;
  if (!tensor_core) return std::nullopt;
  return *tensor_core ? Precision::kTf32 : Precision::kFp32;
}

std::optional<Precision> InputPrecision(const TypeCode& a, const TypeCode* b) {
  if (b != nullptr && b->precision != a.precision) return std::nullopt;
  return a.precision;
}

int NarrowFloatBits(std::string_view code) {
  if (code == "e2m1" || code == "fp4" || code == "f4") return 4;
  if (code == "e2m3" || code == "e3m2" || code == "f6") return 6;
  if (code == "e4m3" || code == "e5m2" || code == "fp8" || code == "f8") return 8;
  return 0;
}

Precision NarrowMmaPrecision(int a_bits, int b_bits, bool fp4_kind) {
  return a_bits == 4 && b_bits == 4 && fp4_kind ? Precision::kFp4 : Precision::kFp8;
}

std::optional<Precision> KindPrecision(std::string_view kind, std::string_view shape) {
  if (kind == "s" && (shape.empty() || shape == "1688")) return Precision::kFp32;
  if (kind == "h") return Precision::kFp16;
  return std::nullopt;
}

std::optional<Precision> CppTypePrecision(std::string_view type) {
  type = Trim(type);
  if (StartsWith(type, "const ")) type = Trim(type.substr(6));
  if (EndsWith(type, " const")) type = Trim(type.substr(0, type.size() - 6));
  if (type == "float") return Precision::kFp32;
  if (type == "__half" || type == "half" || type == "c10::Half") return Precision::kFp16;
  if (type == "__nv_bfloat16" || type == "nv_bfloat16" || type == "c10::BFloat16") return Precision::kBf16;
  return std::nullopt;
}

bool IsMangled(std::string_view name) {
  if (!StartsWith(name, "_Z")) return false;
  for (const char c : name) {
    if (!IsIdentifierChar(c)) return false;
  }
  return true;
}

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

std::string_view SignatureHead(std::string_view name) {
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>') --depth;
    if (name[i] == '(' && depth == 0) return name.substr(0, i);
  }
  return name;
}

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

std::optional<int> TemplateNumber(std::string_view argument) {
  if (EndsWith(argument, "u")) argument.remove_suffix(1);
  return ParseNumber(argument);
}

}  // namespace ofu::kernels::detail
