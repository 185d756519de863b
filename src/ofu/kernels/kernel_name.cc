#include "ofu/kernels/kernel_name.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ofu/kernels/family_table.h"

namespace ofu::kernels {
namespace {

using detail::Contains;
using detail::EndsWith;
using detail::FamilyRow;
using detail::FamilyRows;
using detail::Identifier;
using detail::IsDigit;
using detail::Quote;
using detail::Split;
using detail::StartsWith;
using detail::Tokens;
using detail::Unparsed;
using detail::Words;

// --- which row a name belongs to -------------------------------------------------

// The row whose prefix (and check) accepts `identifier`, or nullptr.
const FamilyRow* FindFamily(std::string_view identifier) {
  for (const FamilyRow& row : FamilyRows()) {
    if (row.parse_tokens == nullptr) continue;
    bool prefixed = false;
    bool any_prefix = false;
    for (const std::string_view prefix : row.prefixes) {
      if (prefix.empty()) continue;
      any_prefix = true;
      prefixed = prefixed || StartsWith(identifier, prefix);
    }
    if (any_prefix && !prefixed) continue;
    if (row.claims != nullptr && !row.claims(identifier)) continue;
    if (!any_prefix && row.claims == nullptr) continue;
    return &row;
  }
  return nullptr;
}

// The families whose names ofu reads, for the reason of a name it cannot.
const std::string& FamiliesRead() {
  static const std::string kRead = [] {
    std::string read;
    for (const FamilyRow& row : FamilyRows()) {
      if (!read.empty()) read += ", ";
      read += row.shown;
    }
    return read;
  }();
  return kRead;
}

// The GEMM identifier among `ids`: the one that a row's prefix accepts
// (repeats, as in `X<K>(K::Params)`, count once).
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
                                FamiliesRead()));
  }
  return found;
}

// --- classifying names that do not parse ---------------------------------------------

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

// Whether an identifier names a kernel that serves another (KernelClass::helper).
bool NamesAHelper(std::string_view identifier) {
  static constexpr std::array<std::string_view, 12> kWords = {"elementwise", "scal",    "epilogue", "transpose",
                                                              "cast",        "convert", "memcpy",   "memset",
                                                              "gather",      "scatter", "fill",     "swizzle"};
  static constexpr std::array<std::string_view, 3> kEndings = {"reduce", "copy", "quantize"};
  for (const std::string& word : Words(identifier)) {
    for (const std::string_view helper : kWords) {
      if (word == helper) return true;
    }
    for (const std::string_view ending : kEndings) {
      if (EndsWith(word, ending)) return true;
    }
  }
  return false;
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
       {"TensorOp", "tensorop", "Umma", "UMMA", "Gmma", "GMMA", "wgmma", "_MMA_", "HMMA", "_hmma_"}) {
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

// A row's fixed architecture, and the fields every name of it shares.
KernelInfo WithRow(KernelInfo info, const FamilyRow& row) {
  if (row.target_sm) info.target_sm = row.target_sm;
  return info;
}

// A kernel function of a row found by function (DeepGEMM, the untiled SIMT
// kernels) in `head`; nullopt when there is none.
std::optional<Result<KernelInfo>> ParseByFunction(std::string_view signature, const std::vector<Identifier>& head) {
  for (const FamilyRow& row : FamilyRows()) {
    if (row.is_kernel == nullptr) continue;
    for (std::size_t i = 0; i < head.size(); ++i) {
      if (!row.is_kernel(head, i)) continue;
      auto parsed = row.parse_function(signature, head, i, row.family);
      if (!parsed.ok()) return parsed;
      return WithRow(std::move(*parsed), row);
    }
  }
  return std::nullopt;
}

Result<KernelInfo> ParseWholeName(std::string_view name) {
  if (name.empty()) return Unparsed("empty kernel name");
  std::string_view identifier = name;
  bool plain = true;
  for (const char c : name) plain = plain && detail::IsIdentifierChar(c);
  const bool mangled = detail::IsMangled(name);
  if (!plain || mangled) {
    const std::vector<Identifier> ids = mangled ? detail::MangledIdentifiers(name) : detail::DemangledIdentifiers(name);
    // Kernels found by their function name are looked for before the
    // parameter list (whose types could name anything).
    const std::vector<Identifier> head = mangled ? ids : detail::DemangledIdentifiers(detail::SignatureHead(name));
    if (auto by_function = ParseByFunction(mangled ? std::string_view() : name, head)) {
      if (!by_function->ok()) return *std::move(by_function);
      return WithoutZeros(**std::move(by_function));
    }
    OFU_ASSIGN_OR_RETURN(auto found, FindGemmIdentifier(ids, mangled ? "mangled" : "demangled"));
    identifier = found;
  } else if (auto by_function = ParseByFunction({}, {Identifier{name, false, name.size()}})) {
    return *std::move(by_function);
  }
  const FamilyRow* row = FindFamily(identifier);
  if (row == nullptr) return Unparsed(fmt::format("not a kernel family ofu reads ({})", FamiliesRead()));
  OFU_ASSIGN_OR_RETURN(auto result, row->parse_tokens(detail::Split(identifier, '_')));
  result.family = row->family;
  result.identifier = std::string(identifier);
  return WithoutZeros(WithRow(std::move(result), *row));
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
  const bool mangled = detail::IsMangled(name);
  const std::vector<Identifier> ids = mangled ? detail::MangledIdentifiers(name)
                                              : detail::DemangledIdentifiers(detail::SignatureHead(name));
  bool trtllm_gen = false;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Identifier& id = ids[i];
    // Qualifiers (cutlass::gemm::, dpsk::grouped_gemm::) name where a kernel
    // lives, not what it does; mangled names do not mark them, but their
    // bare "gemm" namespace is not read as a kernel.
    // A helper may be named by its namespace (epilogue::impl::globalKernel).
    out.helper = out.helper || NamesAHelper(id.text);
    if (id.qualifier || (mangled && (id.text == "gemm" || id.text == "gemv"))) continue;
    const FamilyRow* family = FindFamily(id.text);
    trtllm_gen = trtllm_gen || (family != nullptr && family->family == KernelFamily::kTrtllmGen);
    // cuDNN's xmma_new::gemm::kernel<...implicit_gemm::fprop::Kernel_traits...>:
    // a kernel function in a gemm namespace.
    const bool in_gemm_namespace = !mangled && id.text == "kernel" && i > 0 && ids[i - 1].qualifier &&
                                   EndsWith(ids[i - 1].text, "gemm");
    out.gemm = out.gemm || (family != nullptr && family->prefix_means_gemm) || NamesAGemm(id.text) ||
               IsHandWrittenMatmul(id.text) || in_gemm_namespace;
  }
  if (out.gemm) out.helper = false;
  if (out.gemm) out.tensor_core = trtllm_gen ? std::optional<bool>(true) : TensorCoreFromName(name, ids);
  // One reason for every GEMM not read, whatever its name looks like.
  if (out.gemm && !out.truncated) out.reason = fmt::format("{}: {}", kGemmUnreadReason, out.reason);
  return out;
}

bool FamilyHasTile(KernelFamily family) {
  const FamilyRow* row = detail::FindRow(family);
  return row == nullptr || row->has_tile;
}

bool FamilyHasClusters(KernelFamily family) {
  const FamilyRow* row = detail::FindRow(family);
  return row == nullptr || row->has_clusters;  // an unknown family: do not claim it has none
}

std::string_view FamilyVendor(KernelFamily family) {
  const FamilyRow* row = detail::FindRow(family);
  return row == nullptr ? "NVIDIA" : row->vendor;
}

std::string_view FamilyName(KernelFamily family) {
  const FamilyRow* row = detail::FindRow(family);
  return row == nullptr ? "unknown" : row->name;
}

}  // namespace ofu::kernels
