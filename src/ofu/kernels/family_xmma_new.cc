// xmma_new (cuDNN's implicit-GEMM convolutions before Hopper, demangled;
// inferred from the names)
//   void xmma_new::gemm::kernel<xmma_new::implicit_gemm::fprop::Kernel_traits<
//       xmma_new::Ampere_hmma_tf32_traits<unsigned int, float>,
//       xmma_new::Cta_tile<xmma_new::Ampere, 128, 128, 16, 2, 2, 1, 1, 1>, ...>>(...::Params)
// The first Cta_tile<Arch, M, N, K, ...> gives the CTA tile (tile_m, tile_n,
// tile_k) and the architecture (Volta 70, Turing 75, Ampere 80); the first
// <Arch>_<mma>_<type>_traits names the MMA: hmma and imma run on tensor
// cores, with the type as the input precision (fp16, bf16, tf32, int8); any
// other MMA or type leaves them absent. Stages and clusters are not read
// (pre-Hopper kernels run no clusters). Seen in HTA's CUPTI range-profiler
// trace of an A100 (tests/data/kineto/README.md).
#include "ofu/kernels/family_table.h"

#include <fmt/format.h>

namespace ofu::kernels::detail {
namespace {

std::optional<int> ArchSm(std::string_view arch) {
  if (arch == "Volta") return 70;
  if (arch == "Turing") return 75;
  if (arch == "Ampere") return 80;
  return std::nullopt;
}

}  // namespace

bool IsXmmaNewKernel(const std::vector<Identifier>& ids, std::size_t at) {
  if (at < 2 || ids[at].qualifier || ids[at].text != "kernel") return false;
  return ids[at - 1].qualifier && ids[at - 1].text == "gemm" && ids[at - 2].qualifier && ids[at - 2].text == "xmma_new";
}

Result<KernelInfo> ParseXmmaNew(std::string_view signature, const std::vector<Identifier>& ids, std::size_t at,
                                KernelFamily family) {
  const std::string_view rest = signature.substr(ids[at].end);
  constexpr std::string_view kCtaTile = "Cta_tile<";
  const std::size_t tile_at = rest.find(kCtaTile);
  if (tile_at == std::string_view::npos) return Unparsed("xmma_new: no Cta_tile<...> in the kernel's traits");
  const std::vector<TemplateArgument> tile = SplitArguments(TemplateArguments(rest, tile_at + kCtaTile.size() - 1));
  if (tile.size() < 4) return Unparsed("xmma_new: Cta_tile<...> has fewer than 4 arguments");
  KernelInfo info;
  info.family = family;
  info.identifier = "xmma_new::gemm::kernel";
  const std::array<std::optional<int>*, 3> dims = {&info.tile_m, &info.tile_n, &info.tile_k};
  for (std::size_t i = 0; i < dims.size(); ++i) {
    *dims[i] = TemplateNumber(tile[i + 1].value);
    if (!*dims[i])
      return Unparsed(fmt::format("xmma_new: Cta_tile argument {} is not a number", Quote(tile[i + 1].raw)));
  }
  const std::size_t colon = tile[0].value.rfind("::");
  info.target_sm = ArchSm(colon == std::string_view::npos ? tile[0].value : tile[0].value.substr(colon + 2));
  // The traits: <Arch>_<mma>_<type>_traits.
  for (const Identifier& id : DemangledIdentifiers(rest)) {
    if (!EndsWith(id.text, "_traits") || id.text == "Kernel_traits") continue;
    const Tokens t = Split(id.text, '_');
    if (t.size() != 4) break;
    if (t[1] == "hmma" || t[1] == "imma") {
      info.tensor_core = true;
      const TypeCode* type = WholeType(t[2]);
      if (type != nullptr && type->precision && *type->precision != Precision::kFp32) info.precision = type->precision;
    }
    break;
  }
  return info;
}

}  // namespace ofu::kernels::detail
