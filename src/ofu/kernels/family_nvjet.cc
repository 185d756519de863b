// nvjet (cuBLAS, Hopper/Blackwell; inferred)
//   nvjet_[sm<arch>_]<types>_<TM>x<TN>_<TK>x<S>_<CM>x<CN>[_2cta]_<v|h>_<bz|badd>[_flags]_<ops>
//   types   3 letters AB,compute,D (tst) or 5 letters A,B,C,compute,D (qqtst);
//           h fp16, t bf16, s fp32, q fp8, o fp4 (e2m1). precision is the A/B
//           type (absent when A and B differ, except fp4 with fp8: fp8, the
//           f8f6f4 kind's rate; other lengths are unparsed). tensor_core true,
//           except for fp32 inputs ('s'), where the name does not say
//           whether TF32 tensor cores or CUDA cores run it (absent).
//   tile_m=TM tile_n=TN tile_k=TK stages=S cluster_m=CM cluster_n=CN
//   flags   splitK sets split_k; 2cta sets two_cta; coopA, coopB, bias,
//           ovscale and algo<N> name a schedule or an epilogue, not the tile
//           or the K split; Avec<n>UE4M3/Bvec<n>UE4M3 (NVFP4) and
//           Avec<n>UE8M0/Bvec<n>UE8M0 (MX) name block scales: block_scaled
//           or the K split, and are read as such (inferred); streamK changes
//           how K is split and makes the name unparsed; any other flag is
//           kept in unknown_flags and the tile is read as named.
//   Which tile side is the kernel's M is itself inferred (DESIGN.md §4).
#include "ofu/kernels/family_table.h"

#include <fmt/format.h>

namespace ofu::kernels::detail {
namespace {

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

}  // namespace

// nvjet_[sm<arch>_]<types>_<TM>x<TN>_<TK>x<S>_<CM>x<CN>[_2cta]_<v|h>_<bz|badd>[_flags]_<ops>

Result<KernelInfo> ParseNvjet(const Tokens& tokens) {
  Tokens t = tokens;
  KernelInfo info;
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
  info.target_sm = SmToken(tokens[1]);
  return info;
}

}  // namespace ofu::kernels::detail
