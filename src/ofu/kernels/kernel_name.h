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
// Families. Each family is one row of family_table.cc (its name, prefixes,
// architecture, whether its names give a tile and whether its kernels run
// in clusters, and a real example name) and one parser, whose file
// (family_<name>.cc) states at its top which '_'-separated token or template
// argument gives which field. "Inferred" there marks meanings read off many
// names and not documented by NVIDIA; the cuBLAS-internal families (nvjet,
// *_xmma, volta/turing/ampere) are inferred throughout.
//   nvjet                          family_nvjet.cc (cuBLAS, Hopper/Blackwell)
//   sm90_xmma, sm80_xmma, sm100    family_xmma.cc (cuBLAS and cuDNN)
//   volta, turing, ampere, cutlass2 family_legacy.cc (before Hopper; CUTLASS 2.x)
//   cutlass3                       family_cutlass3.cc (CUTLASS 3.x)
//   trtllm_gen                     family_trtllm_gen.cc (TensorRT-LLM/FlashInfer)
//   deepgemm                       family_deepgemm.cc (DeepSeek's DeepGEMM)
//   marlin                         family_marlin.cc (vLLM's mixed-input GEMMs)
//   cute_dsl                       family_cute_dsl.cc (CUTLASS's Python DSL; no field read)
//   tensile                        family_tensile.cc (AMD's Tensile/hipBLASLt: not an NVIDIA GPU)
//   xmma_new                       family_xmma_new.cc (cuDNN's implicit GEMMs, demangled)
//   gemv, gemmk1, gemm_small_n, sgemm_largek, magma, cudnn_sgemm, fermi
//                                  family_untiled.cc (untiled SIMT kernels)
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
  kMarlin,
  kCuteDsl,
  kTensile,
  kXmmaNew,
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
  // Not a GEMM, and the name marks a kernel that serves another: an
  // elementwise, copy, fill, cast, (de)quantize, gather/scatter, split-K
  // reduction, scaling or epilogue kernel. A GEMM op that launches one did
  // not run its product in it; any other kernel a GEMM op launches is a GEMM
  // whose name ofu cannot read (analysis/correction.h).
  bool helper = false;
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

// Who makes the GPUs the family's kernels run on: "NVIDIA", or "AMD" for
// Tensile/hipBLASLt. OFU as ofu computes it is defined for NVIDIA tensor
// cores only.
std::string_view FamilyVendor(KernelFamily family);
// PrecisionName ("bf16", ...) and its inverse PrecisionFromName: core/precision.h.
using ofu::PrecisionFromName;
using ofu::PrecisionName;

}  // namespace ofu::kernels
