// tensile (AMD's Tensile and hipBLASLt GEMMs, ROCm)
//   Cijk_<A layout>_<B layout>_<types>_..._MT<M>x<N>x<K>_[MI<m>x<n>x<b>_]..._ISA<gfx>_...
// e.g. Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1_SN_...
// (a PyTorch trace of an AMD Instinct MI300X). MT is the macro tile one
// workgroup computes: tile_m, tile_n, and the K step (DepthU) as tile_k; MI
// names the matrix-core (MFMA) instruction, so tensor_core is true with it and
// false without it (Tensile's naming, inferred from names). The type codes
// are not read (precision absent), nor are stages or clusters. These kernels
// run on AMD GPUs, where OFU as ofu defines it (NVIDIA tensor pipes, DCGM's
// counters) does not apply: the row's vendor says so, and the trace reader
// names the device.
#include "ofu/kernels/family_table.h"

#include <fmt/format.h>

namespace ofu::kernels::detail {

bool IsTensileName(std::string_view identifier) {
  const Tokens t = Split(identifier, '_');
  return t.size() > 3 && t[0] == "Cijk" && StartsWith(t[1], "A") && StartsWith(t[2], "B");
}

Result<KernelInfo> ParseTensile(const Tokens& tokens) {
  KernelInfo info;
  info.tensor_core = false;
  for (const std::string_view token : tokens) {
    if (StartsWith(token, "MT")) {
      const auto tile = ParseDims<3>(token.substr(2));
      if (!tile) return Unparsed(fmt::format("tensile: {} is not MT<M>x<N>x<K>", Quote(token)));
      info.tile_m = (*tile)[0];
      info.tile_n = (*tile)[1];
      info.tile_k = (*tile)[2];
    } else if (StartsWith(token, "MI") && token.size() > 2 && IsDigit(token[2])) {
      info.tensor_core = true;
    }
  }
  if (!info.tile_m) return Unparsed("tensile: no MT<M>x<N>x<K> macro-tile field");
  return info;
}

}  // namespace ofu::kernels::detail
