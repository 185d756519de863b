// What a GEMM kernel's name says about how it runs: tile, stages, cluster,
// input precision, whether tensor cores execute it, split-K and 2-CTA.
//
// Contract: ParseKernelName() either returns every field the name encodes,
// or an Error (code kMalformedInput) whose message says why the name could
// not be read. It never guesses: a field that the name does not encode is
// absent (std::nullopt), never a default. ClassifyKernelName() says, for any
// name, whether it names a GEMM kernel at all and, when the name tells,
// whether tensor cores run it, so that a GEMM whose name is not read in full
// still counts as tensor-core or SIMT work. Both are pure, no I/O, no shared
// state; safe to call from any thread.
//
// "GEMM kernel" here means a kernel that computes a matrix product by name:
// cuBLAS/cuBLASLt GEMMs and GEMVs, CUTLASS GEMMs, MAGMA kernels inside cuBLAS,
// and implicit-GEMM convolutions whose name carries the GEMM tile (xmma
// fprop/dgrad/wgrad, CUTLASS fprop/dgrad/wgrad, cuDNN's *_scudnn_<TM>x<TN>).
// Attention, elementwise, reduction, Winograd/FFT and direct convolution
// kernels, split-K reductions and Triton kernels are not.
//
// The name may be the bare kernel identifier (as Nsight Systems' shortName
// and most Kineto traces give it), a demangled C++ signature that names it
// as a template argument, e.g.
//   void cutlass::Kernel2<cutlass_80_tensorop_..._align8>(cutlass_80_..._align8::Params)
// or an Itanium-mangled symbol (_ZN7cutlass13device_kernelI117cutlass3x_...EEvNT_6ParamsE).
// The identifier is taken from such a signature when exactly one identifier
// in it (not counting namespace or class qualifiers, `x::`) starts with a
// known family prefix; otherwise the name is unparsed. The untiled cuBLAS and
// cuDNN kernels below are found by their function name instead.
//
// Families, and which '_'-separated token gives which field. "Inferred"
// marks meanings read off many names and not documented by NVIDIA; the
// cuBLAS-internal families (nvjet, *_xmma, volta/turing/ampere) are
// inferred throughout.
//
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
//
// sm90_xmma, sm80_xmma, sm100 (cuBLAS and cuDNN; inferred)
//   smNN_xmma_<gemm|fprop_implicit_gemm|dgrad_implicit_gemm|wgrad_implicit_gemm>[_indexed]
//     _<AB types>_<C/compute types>_<D type>_<layouts>_..._tilesize<M>x<N>x<K>
//     [_stage<S>][_cgasize<CM>x<CN>x<CK>]_..._[tensor<m>x<n>x<k>|ffma|hfma]...
//   precision from the first type token: `bf16bf16` → bf16, `f32f32` →
//   fp32 on CUDA cores or tf32 on tensor cores (tensor cores have no fp32
//   mode). Where its two codes differ and one is f32 (`tf32f32`, `bf16f32`:
//   fp32 data the MMA reads as tf32 or bf16, cuBLAS's fast-fp32 modes), the
//   other is the type the tensor pipes see. A narrow float first code is
//   A's and B's type (`e4m3bf16_e4m3f32_f32`, cuBLASLt's FP8 kernels: A and
//   B e4m3, C and D bf16, NVIDIA/TransformerEngine#1391): 8- and 6-bit →
//   fp8 (the f8f6f4 kinds' rate); 4-bit → absent (fp4 or fp8 rate by MMA
//   kind, which the name does not give). Other pairs leave it absent.
//   tensor_core: false for `ffma`/`hfma`; true for
//   `tensorMxNxK`, and for sm90/sm100 (warpgroup MMA kernels) unless
//   ffma/hfma; else absent. cluster from `cgasize`; sm90 names without
//   `cgasize` run 1x1 (inferred from the reference names); sm80 has no
//   clusters (absent); sm100 without `cgasize` is absent. two_cta: a `2sm` or
//   `2cta` token; split_k: a `splitK` token or `split_k` tokens.
//   `sm100_*` names are parsed by the same rules without a real reference
//   name to check them against.
//
// volta, turing, ampere (cuBLAS and cuDNN before Hopper; inferred)
//   [cudnn_[infer_|train_]]<arch>_[<type>_]<acc>[<mma>][tf32]<gemm|cudnn>[_<type>]
//     _<TM>x<TN>[_sliced1x<n>][_ldg<n>]..._[stages_<TK>x<S>]_..._<ops>
//   e.g. ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_32x3_nn,
//   volta_h884gemm_256x128_ldg8_nn, volta_sgemm_128x64_nn,
//   volta_scudnn_128x64_relu_interior_nn_v1 (a cuDNN implicit-GEMM
//   convolution). tensor_core: true when the MMA shape digits are present
//   (884, 1688, 16816, ...), false otherwise (sgemm, hgemm, cgemm, gcgemm,
//   scudnn). precision: a `tf32` in the MMA token, else the type after the
//   token (A's), else the type before it, else the kind letter: h is fp16; s
//   is fp32 on CUDA cores and, on tensor cores, only with the 1688 shape (the
//   one that takes 32-bit operands, as TF32); complex (c, gc, z) and double
//   kernels have none.
//   tile_k and stages only from `stages_<TK>x<S>`; `sliced1x<n>` splits K
//   across warps inside the CTA and does not change the tile. A `splitK`
//   token sets split_k. A cuDNN `winograd` kernel is not a GEMM.
//
// cutlass2 (CUTLASS 2.x; named by python/cutlass_library/gemm_operation.py)
//   cutlass[_<arch>]_<tensorop|wmma_tensorop|simt>[_<C type>]_<acc><mma>[<math type>]
//     <gemm|fprop|dgrad|wgrad>[_<words>][_<A type>]_<TM>x<TN>[_<TK>x<S>][_<warps>]_<layouts>_align<a>
//   tensor_core: true for tensorop/wmma_tensorop, false for simt. CUTLASS
//   writes A's element type after the core name only when it differs from
//   the accumulator type, and C's before it: precision is the math type in
//   the core name (s1688tf32gemm), else A's type, else the accumulator's by
//   the same kind-letter rule as above (an s16816 kernel without A's type
//   runs on 16-bit inputs it does not spell: absent); fp32 on tensor cores
//   is tf32. Without a `<TK>x<S>` token, K and stages are absent.
//
// cutlass3 (CUTLASS 3.x; same generator)
//   cutlass3x_sm<arch>_<opclass>_<mma>gemm_<A>_<B>_<acc>_<C>_<D>_<TM>x<TN>x<TK>
//     [_<CM>x<CN>x<CK>]_<S>_<layouts>_align<a>[_q|_o_vs<n>][_1sm|_2sm][_epi...][_stage<N>]
//   opclass tensorop, bstensorop (block-scaled), sptensorop (sparse) or
//   bssptensorop (both); simt. gemm field gemm, spgemm or bsspgemm. Scaled
//   types (`ue8m0xe2m1`: an MX/NV block scale and its element type;
//   `64x128f32xe4m3`: a blockwise scale) read as their element type and make
//   the kernel block_scaled. precision from A and B: the same type, that
//   type; on Blackwell (sm100 and later) 4-, 6- and 8-bit float inputs run
//   in the f8f6f4/mxf8f6f4 MMA kinds at the fp8 rate whatever their mix
//   (CUTLASS media/docs/cpp/blackwell_functionality.md), so they read as
//   fp8, except that fp4 on both sides with `_o_` (the mxf4/nvf4 kinds,
//   KernelScheduleSuffixes in python/cutlass_library/library.py) reads as
//   fp4; `_q_` names the f8f6f4 kind. Block-scaled fp4 on both sides with
//   neither letter leaves the kind to the builder: absent. Other mixed
//   inputs are absent.
//   tensor_core true for a *tensorop opclass. Cluster `0x0x1` is chosen at
//   run time: absent; a name with no cluster field (CUTLASS's SM100 unit
//   tests: `..._128x128x256_0_vs64_tnt_...`) does not give it: absent.
//   Stages `0` are chosen by the builder: absent, unless a `_stage<N>`
//   suffix fixes them. `_2sm` (SM100): two_cta, and the tile spans the CTA
//   pair.
//
// trtllm_gen (TensorRT-LLM's and FlashInfer's generated Blackwell GEMMs;
// the generator is not public: inferred from the names and the options
// TensorRT-LLM lists beside them in trtllmGen_bmm_export/KernelMetaInfo.h)
//   <bmm|gemm|gemmGatedAct>_<D>_<A><B>[_cast<T>]_<acc>[_...]_t<TM>x<TN>x<TK>[u2]
//     _s<S>_et<EM>x<EN>_m<MM>x<MN>x<MK>_<cga|c><CM>x<CN>x<CK>_..._sm<arch><a|f>
//   types Bfloat16, Fp16, Fp32, E4m3, E5m2, E2m3, E3m2, E2m1, each with an
//   optional Mx (MX block scale): `bmm_MxE4m3_MxE2m1MxE4m3_...` is an MX-FP4
//   weight (A) times MX-FP8 activation (B) batched GEMM with MX-FP8 output.
//   precision: fp4 when both inputs are fp4 (the mxf4nvf4 MMA kind), else
//   fp8 when both are 4-, 6- or 8-bit floats (f8f6f4 kinds run at the fp8
//   rate), after a `cast<T>` that converts one to T; bf16/fp16 as named.
//   block_scaled for Mx types, E2m1 (NVFP4 carries a scale per 16
//   elements), `dsFp8` (DeepSeek-style block-scaled fp8) and `sfBlk<n>`.
//   The tile is one CTA's; an MMA M twice the tile's with a 2-wide cluster
//   spans a CTA pair: two_cta. `s<S>` with more than one number gives no
//   stage count (absent). `splitK<n>` sets split_k. `transOut`: the kernel
//   computes the transposed product, so its M runs over the weights' rows.
//   tensor_core true (tcgen05).
//
// deepgemm (DeepSeek's DeepGEMM and its internal dpsk::gemm build; the
// template parameters are read in the order of DeepGEMM's kernel templates,
// deep_gemm/include/deep_gemm/{fp8_gemm.cuh, impls/sm90_fp8_gemm_1d2d.cuh,
// impls/sm90_fp8_gemm_1d1d.cuh, impls/sm100_fp8_gemm_1d1d.cuh}, at the
// commits listed in docs/kernels.md)
//   void deep_gemm::fp8_gemm_kernel<N, K, BLOCK_M, BLOCK_N, BLOCK_K, ..., (deep_gemm::GemmType)T>(...)
//   void dpsk::gemm::fp8_gemm_kernel<N, K, BLOCK_M, BLOCK_N, BLOCK_K, S, ..., (dpsk::gemm::GemmType)T>(...)
//   void deep_gemm::sm90_fp8_gemm_1d2d_impl<[(cute::UMMA::Major)X,] M, N, K, G, BLOCK_M, ...>(...)
//   void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)A, (cute::UMMA::Major)B, ...>(...)
//   Demangled signatures only. Each DeepGEMM version has its own argument
//   list; it is recognised by the number of template arguments (and, where
//   two versions have the same number, by where a bool argument stands),
//   which gives where BLOCK_M (then BLOCK_N, BLOCK_K) and kNumStages stand.
//   A list no known version has is unparsed. tile_m/n/k = BLOCK_M/N/K,
//   stages = kNumStages; precision fp8 (the kernels take e4m3 A and B),
//   tensor_core true (wgmma, tcgen05); the cluster (TMA multicast) is
//   absent. grouping names the GemmType argument: normal, m_grouped_contiguous
//   (MoE, experts' rows back to back), m_grouped_masked (MoE, a padded
//   block per expert), k_grouped_contiguous, batched, and the *_psum
//   variants. dpsk::gemm's 10-argument list is DeepGEMM's first public one
//   without kNumGroups, and its GemmType values DeepGEMM's (inferred).
//   Kernels with no tile in the name (dpsk::grouped_gemm::...::GemmKernel)
//   stay unparsed.
//
// Sparse kernels (`sptensorop`, `spgemm`; CUTLASS 2.x `..._s16832spgemm_...`)
// run 2:4 structured-sparse MMAs (1:2 for tf32): the tile and a problem's
// M, N, K are the dense ones, but the tensor pipes execute half of the
// 2·M·N·K multiply-adds, at twice the dense rate (docs/kernels.md).
//
// Untiled SIMT kernels (cuBLAS, MAGMA, cuDNN): tile, stages and cluster are
// absent, tensor_core false. precision from the element type of the first
// cublasGemvTensorStridedBatched<T> template argument (A), else the first
// floating-point template argument, else the letter in the name (s fp32).
//   gemv          gemv2T_kernel_val<...>, gemv2N_kernel<...>, gemvNSP_kernel<...>, internal::gemvx::kernel<...>
//   gemmk1        gemmk1_kernel<...> (K = 1)
//   gemm_small_n  gemmSN_NN_kernel<...>, gemmSN_TN_kernel_64addr<...> (cuBLAS's small-N GEMMs)
//   sgemm_largek  sgemm_largek_lds64<...>
//   magma         magma_<s|d|c|z|h>gemm*<...>
//   cudnn_sgemm   implicit_convolve_sgemm, explicit_convolve_sgemm, precomputed_convolve_sgemm
//   fermi         fermi<S|D|C|Z|H>gemm*<...> (complex and double: no precision)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/precision.h"
#include "ofu/core/result.h"

namespace ofu::kernels {

enum class KernelFamily {
  kNvjet,
  kSm90Xmma,
  kSm100,
  kSm80Xmma,
  kAmpere,
  kCutlass2,
  kCutlass3,
  kVolta,
  kTuring,
  kGemv,
  kGemmk1,
  kGemmSmallN,
  kSgemmLargeK,
  kMagma,
  kCudnnSgemm,
  kFermi,
  kTrtllmGen,
  kDeepGemm,
};

// Input (A/B operand) precision, the one the tensor pipes see (core/precision.h).
using ofu::Precision;

struct KernelInfo {
  KernelFamily family = KernelFamily::kNvjet;
  std::string identifier;  // the kernel identifier that was read (unwrapped)
  std::optional<int> tile_m, tile_n, tile_k;
  std::optional<int> stages;
  std::optional<int> cluster_m, cluster_n;
  std::optional<Precision> precision;
  std::optional<bool> tensor_core;
  bool split_k = false;  // the name carries a split-K flag
  // The SM architecture the name says the kernel was built for, as a
  // compute capability times ten: 70 volta_, 75 turing_ and cutlass_75_,
  // 80 ampere_, sm80_xmma_ and cutlass_80_, 90 sm90_xmma_, nvjet_sm90_ and
  // cutlass3x_sm90_, 100 sm100_ and cutlass3x_sm100_; trtllm_gen's last
  // token (sm100a, sm100f: 100, sm103a: 103). Absent where the name
  // does not say (bare nvjet_, cutlass_ without a number). A kernel built
  // for an older architecture than the GPU it runs on uses that
  // architecture's MMA instructions (kernel_throughput.h).
  std::optional<int> target_sm;
  // The MMA instruction shape a pre-Hopper name spells ("1688", "16816",
  // "884", "8816"); empty where the name has none (Hopper and later, SIMT).
  std::string mma_shape;
  // The operand alignment, in elements, a CUTLASS name ends with (`align1`,
  // `align8`); absent in other families' names.
  std::optional<int> alignment;
  // A 2-CTA (2SM) kernel: one MMA spans a CTA pair (in cutlass3 and nvjet
  // names the tile is the pair's; in trtllm_gen names it is one CTA's).
  bool two_cta = false;
  // 2:4 structured sparsity (sptensorop/spgemm): the tensor pipes execute
  // half of the dense 2·M·N·K (docs/kernels.md, "Sparse kernels").
  bool sparse = false;
  // The operands carry per-block scale factors: MX and NVFP4 microscaling
  // (ue8m0x/ue4m3x types, bstensorop, Mx/E2m1 in trtllm_gen), CUTLASS
  // blockwise (64x128f32xe4m3) and DeepSeek-style fp8 (dsFp8).
  bool block_scaled = false;
  // Flags in the name that ofu does not know (nvjet). The tile is read as
  // named, but whether such a flag changes how the work is split or padded
  // is not known: a caller that pads should say so.
  std::vector<std::string> unknown_flags;
  // What a DeepGEMM kernel computes, from its GemmType argument: "normal",
  // "m_grouped_contiguous", "m_grouped_masked", "k_grouped_contiguous",
  // "batched", "m_grouped_contiguous_psum", "k_grouped_contiguous_psum".
  // Empty where the name does not say (every other family).
  std::string grouping;
};

// What a name says about its kernel even where ParseKernelName() cannot
// read it in full.
struct KernelClass {
  bool gemm = false;                // the name names a GEMM kernel (see above)
  std::optional<bool> tensor_core;  // whether tensor cores run it, when the name tells
  std::string reason;               // empty when ParseKernelName() reads the name, else its reason
  // The name is cut (profiler tables cut long names): it ends in "..." or
  // "…", or it is exactly 64 characters, starts with a GEMM family's prefix
  // and does not read in full. gemm then says whether the part kept starts
  // like a GEMM family's name.
  bool truncated = false;
};

// Reads `name`. On failure the error's message is the reason, for a person;
// for a cut name (KernelClass::truncated) it starts with "truncated:".
Result<KernelInfo> ParseKernelName(std::string_view name);

// For a name ParseKernelName() reads: gemm, and its tensor_core. For any
// other name: whether its kernel function (or the kernel type a wrapper
// such as cutlass::device_kernel<T> runs) is named as a GEMM or GEMV
// (GemmKernel, GemmUniversal, ImplicitGemmConvolution, fermiCgemm_...; not
// helpers such as prepare_grouped_gemm_data), and tensor_core only where
// the name says so (TensorOp, UMMA/GMMA, an MMA shape; simt, an SIMT gemm
// letter). A hand-written matmul kernel, `matmul_kernel*` or
// `matmul_<words>_kernel*` (Triton's tutorial and persistent matmuls), is a
// GEMM whose tile the name does not give, as the trace analysis counts a
// kernel that a GEMM op launches. A GEMM that ParseKernelName() cannot read
// gets one reason, the same whatever the name looks like: it starts with
// kGemmUnreadReason. This is a reading of names, not a guarantee: it is
// checked against the public names in tests/data/kernel-names-real.tsv.
KernelClass ClassifyKernelName(std::string_view name);

// The start of KernelClass::reason for a GEMM whose name ParseKernelName()
// cannot read in full (a cut name's reason starts with "truncated:").
inline constexpr std::string_view kGemmUnreadReason = "a GEMM whose tile and precision ofu cannot read from the name";

// False for the untiled SIMT families (gemv, gemmk1, gemm_small_n,
// sgemm_largek, magma, cudnn_sgemm, fermi), whose names give no tile.
bool FamilyHasTile(KernelFamily family);

// True for the families whose kernels can run in thread-block clusters
// (Hopper and later: nvjet, sm90_xmma, sm100, cutlass3, trtllm_gen, deepgemm). The others predate
// clusters (Volta to Ampere, CUTLASS 2.x) and always run 1x1, so an absent
// cluster_m/n there is not an unknown.
bool FamilyHasClusters(KernelFamily family);

// Lower-case names used in output: "nvjet", "sm90_xmma", ..., "bf16", ...
std::string_view FamilyName(KernelFamily family);
// PrecisionName ("bf16", ...) and its inverse PrecisionFromName: core/precision.h.
using ofu::PrecisionFromName;
using ofu::PrecisionName;

}  // namespace ofu::kernels
