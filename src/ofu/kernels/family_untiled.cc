// The untiled SIMT GEMM and GEMV kernels of cuBLAS, MAGMA and cuDNN, found
// by their function name (kernel_name.h lists the spellings). Their names
// give no tile, stage count or cluster (absent) and they run on CUDA cores
// (tensor_core false). precision: the element type of the first
// cublasGemvTensorStridedBatched<T> template argument (A), else the first
// floating-point template argument, else the letter in the name (s fp32).
#include "ofu/kernels/family_table.h"

#include <fmt/format.h>

namespace ofu::kernels::detail {
namespace {

// The function name of ids[at] when it is a plain kernel name (not a qualifier).
std::string_view Function(const std::vector<Identifier>& ids, std::size_t at) {
  return ids[at].qualifier ? std::string_view() : ids[at].text;
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

}  // namespace

// gemv2T_kernel_val<...>, gemv2N_kernel<...>, gemvNSP_kernel<...>, internal::gemvx::kernel<...>
bool IsGemvKernel(const std::vector<Identifier>& ids, std::size_t at) {
  if (ids[at].qualifier) return ids[at].text == "gemvx" && at + 1 < ids.size() && ids[at + 1].text == "kernel";
  const std::string_view s = ids[at].text;
  return StartsWith(s, "gemv2T_kernel") || StartsWith(s, "gemv2N_kernel") || StartsWith(s, "gemvNSP_kernel");
}

// gemmk1_kernel<...> (K = 1)
bool IsGemmk1Kernel(const std::vector<Identifier>& ids, std::size_t at) { return Function(ids, at) == "gemmk1_kernel"; }

// cuBLAS's small-N GEMMs: gemmSN_TN_kernel_64addr<float, ...>, gemmSN_NN_kernel<...>
bool IsGemmSmallNKernel(const std::vector<Identifier>& ids, std::size_t at) {
  return StartsWith(Function(ids, at), "gemmSN_");
}

bool IsSgemmLargeKKernel(const std::vector<Identifier>& ids, std::size_t at) {
  return Function(ids, at) == "sgemm_largek_lds64";
}

// magma_<s|d|c|z|h>gemm*<...>
bool IsMagmaKernel(const std::vector<Identifier>& ids, std::size_t at) {
  const std::string_view s = Function(ids, at);
  return StartsWith(s, "magma_") && s.size() > 6 && Contains(s.substr(7), "gemm");
}

bool IsCudnnSgemmKernel(const std::vector<Identifier>& ids, std::size_t at) {
  const std::string_view s = Function(ids, at);
  return s == "implicit_convolve_sgemm" || s == "explicit_convolve_sgemm" || s == "precomputed_convolve_sgemm";
}

// fermi<S|D|C|Z|H>gemm*<...> (complex and double: no precision)
bool IsFermiKernel(const std::vector<Identifier>& ids, std::size_t at) {
  const std::string_view s = Function(ids, at);
  return StartsWith(s, "fermi") && s.size() > 5 && StartsWith(s.substr(6), "gemm");
}

Result<KernelInfo> ParseUntiled(std::string_view signature, const std::vector<Identifier>& ids, std::size_t at,
                                KernelFamily family) {
  const Identifier& function = ids[at];
  KernelInfo info;
  info.family = family;
  info.identifier = function.qualifier ? fmt::format("{}::kernel", function.text) : std::string(function.text);
  info.tensor_core = false;
  // internal::gemvx::kernel<...>: the arguments follow the function name.
  std::size_t after = function.end;
  if (function.qualifier) after = signature.find('<', after);
  const std::string_view arguments = after == std::string_view::npos ? std::string_view()
                                                                     : TemplateArguments(signature, after);
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

}  // namespace ofu::kernels::detail
