// What a GEMM kernel's name says about how it runs: tile, stages, cluster,
// input precision, whether tensor cores execute it, split-K and 2-CTA.
//
// Contract: ParseKernelName() either returns every field the name encodes,
// or an Error (code kMalformedInput) whose message says why the name could
// not be read. It never guesses: a field that the name does not encode is
// absent (std::nullopt), never a default. Pure, no I/O, no shared state;
// safe to call from any thread.
//
// The name may be the bare kernel identifier (as Nsight Systems' shortName
// and most Kineto traces give it) or a demangled C++ signature that names it
// as a template argument, e.g.
//   void cutlass::Kernel2<cutlass_80_tensorop_..._align8>(cutlass_80_..._align8::Params)
// The identifier is taken from such a wrapper when exactly one identifier in
// it starts with a known family prefix; otherwise the name is unparsed.
//
// Families, and which '_'-separated token gives which field. "Inferred"
// marks meanings read off many names and not documented by NVIDIA; the
// cuBLAS-internal families (nvjet, *_xmma, ampere) are inferred throughout.
//
// nvjet (cuBLAS, Hopper/Blackwell; inferred)
//   nvjet_<types>_<TM>x<TN>_<TK>x<S>_<CM>x<CN>[_2cta]_<v|h>_<bz|badd>[_flags]_<ops>
//   types   3 letters AB,compute,D (tst) or 5 letters A,B,C,compute,D (qqtst);
//           h fp16, t bf16, s fp32, q fp8. precision is the A/B type
//           (absent when A and B differ; other lengths are unparsed). tensor_core true,
//           except for fp32 inputs ('s'), where the name does not say
//           whether TF32 tensor cores or CUDA cores run it (absent).
//   tile_m=TM tile_n=TN tile_k=TK stages=S cluster_m=CM cluster_n=CN
//   two_cta: a `2cta` token; split_k: a `splitK` token.
//   Which tile side is the kernel's M is itself inferred (DESIGN.md §4).
//
// sm90_xmma, sm80_xmma, sm100 (cuBLAS; inferred)
//   smNN_xmma_gemm_<AB types>_<C/compute types>_<D type>_<layouts>_..._tilesize<M>x<N>x<K>
//     [_stage<S>][_cgasize<CM>x<CN>x<CK>]_..._[tensor<m>x<n>x<k>|ffma|hfma]...
//   precision from the first type token, e.g. `bf16bf16` → bf16, `f32f32`
//   → fp32 on CUDA cores or tf32 on tensor cores (tensor cores have no fp32
//   mode). tensor_core: false for `ffma`/`hfma`; true for `tensorMxNxK`, and
//   for sm90/sm100 (warpgroup MMA kernels) unless ffma/hfma; else absent.
//   cluster from `cgasize`; sm90 names without `cgasize` run 1x1 (inferred
//   from the reference names); sm80 has no clusters (absent); sm100 without
//   `cgasize` is absent. two_cta: a `2sm` or `2cta` token.
//   `sm100_*` names are parsed by the same rules without a real reference
//   name to check them against.
//
// ampere (cuBLAS, Ampere; inferred)
//   ampere_<type>_<acc><mma>gemm_<type>_<TM>x<TN>_ldg8_..._stages_<TK>x<S>_<ops>
//   e.g. ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_32x3_nn:
//   tensor_core true, precision from the type token. `ampere_sgemm_<TM>x<TN>_<ops>`
//   is SIMT: tensor_core false, precision fp32, tile_k and stages absent.
//
// cutlass2 (CUTLASS 2.x, documented in CUTLASS's profiler docs)
//   cutlass[_<arch>]_<tensorop|wmma_tensorop|simt>[_<type>]_<acc><mma>gemm[_<epilogue>][_<type>]
//     _<TM>x<TN>[_<TK>x<S>]_<layouts>_align<a>
//   tensor_core: true for tensorop/wmma_tensorop, false for simt. precision
//   from the type token before the gemm token, else after it; `sgemm` on SIMT
//   is fp32; a `tf32` in the gemm token is tf32. Absent otherwise.
//
// cutlass3 (CUTLASS 3.x, documented in CUTLASS's profiler docs)
//   cutlass3x_sm<arch>_<opclass>_<mma>gemm_<A>_<B>_<acc>_<C>_<D>_<TM>x<TN>x<TK>
//     _<CM>x<CN>x<CK>_<S>_<layouts>_align<a>[_...][_1sm|_2sm]
//   precision from A (absent when A and B differ); tensor_core true for a
//   *tensorop opclass. Cluster `0x0x1` is chosen at run time: absent.
//   Stages `0` are chosen by the builder: absent. `_2sm` (SM100): two_cta,
//   and the tile spans the CTA pair.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ofu/core/result.h"

namespace ofu::kernels {

enum class KernelFamily { kNvjet, kSm90Xmma, kSm100, kSm80Xmma, kAmpere, kCutlass2, kCutlass3 };

// Input (A/B operand) precision, the one the tensor pipes see.
enum class Precision { kFp16, kBf16, kTf32, kFp8, kFp4, kFp32, kInt8 };

struct KernelInfo {
  KernelFamily family = KernelFamily::kNvjet;
  std::string identifier;  // the kernel identifier that was read (unwrapped)
  std::optional<int> tile_m, tile_n, tile_k;
  std::optional<int> stages;
  std::optional<int> cluster_m, cluster_n;
  std::optional<Precision> precision;
  std::optional<bool> tensor_core;
  bool split_k = false;  // the name carries a split-K flag
  bool two_cta = false;  // a 2-CTA (2SM) kernel: the tile spans a CTA pair
};

// Reads `name`. On failure the error's message is the reason, for a person.
Result<KernelInfo> ParseKernelName(std::string_view name);

// Lower-case names used in output: "nvjet", "sm90_xmma", ..., "bf16", ...
std::string_view FamilyName(KernelFamily family);
std::string_view PrecisionName(Precision precision);
// The inverse of PrecisionName; absent for any other text.
std::optional<Precision> PrecisionFromName(std::string_view name);

}  // namespace ofu::kernels
