// The kernel families ofu reads: one row each (family_table.h says what a
// row holds and how names are matched against the rows). Each family's name
// format is written at the top of its parser's file.
#include "ofu/kernels/family_table.h"

#include <algorithm>

namespace ofu::kernels::detail {
namespace {

// Matched in this order: a function row (is_kernel) before any prefix row,
// and among prefix rows the first whose prefix and `claims` accept the
// identifier. No prefix here starts another row's prefix.
constexpr std::array<FamilyRow, 22> kRows = {{
    // DeepGEMM first: its sm100_fp8_gemm_1d1d_impl kernel also starts with sm100_.
    {.family = KernelFamily::kDeepGemm,
     .name = "deepgemm",
     .shown = "DeepGEMM's deep_gemm:: and dpsk::gemm:: kernels",
     .has_clusters = true,
     .example = "void dpsk::gemm::fp8_gemm_kernel<4096u, 7168u, 128u, 128u, 128u, 5u, 128u, 128u, 2u, "
                "(dpsk::gemm::GemmType)1>(__nv_bfloat16*, float*, int*, unsigned int, unsigned int, "
                "CUtensorMap_st, CUtensorMap_st, CUtensorMap_st, CUtensorMap_st)",
     .is_kernel = IsDeepGemmKernel,
     .parse_function = ParseDeepGemm},
    {.family = KernelFamily::kMarlin,
     .name = "marlin",
     .shown = "vLLM's marlin::Marlin kernels",
     .example = "void marlin::Marlin<1125899906910725, 1125899906843648, 1125899906910725, 1125899906910725, 256, "
                "4, 16, 4, 0, 4, 8, 0>(const int4 *, const int4 *, int4 *, int4 *, const int4 *, const float *, "
                "const int4 *, const float *, const int4 *, int, int, int, int, int *, bool, bool, bool, int)",
     .is_kernel = IsMarlinKernel,
     .parse_function = ParseMarlin},
    {.family = KernelFamily::kXmmaNew,
     .name = "xmma_new",
     .shown = "cuDNN's xmma_new::gemm::kernel",
     .example = "void xmma_new::gemm::kernel<xmma_new::implicit_gemm::fprop::Kernel_traits<xmma_new::Ampere_hmma_tf32"
                "_traits<unsigned int, float>, xmma_new::Cta_tile<xmma_new::Ampere, 128, 128, 16, 2, 2, 1, 1, 1>, xmm"
                "a_new::implicit_gemm::fprop::Gmem_tile_a_t<xmma_new::Ampere_hmma_tf32_traits<unsigned int, float>, x"
                "mma_new::Cta_tile<xmma_new::Ampere, 128, 128, 16, 2, 2, 1, 1, 1>, xmma_new::implicit_gemm::Input_rel"
                "ated<1, 3, 3, false>, 16, false, xmma_new::implicit_gemm::fprop::Gmem_tile_base_a<xmma_new::Ampere_h"
                "mma_tf32_traits<unsigned int, float>, xmma_new::Cta_tile<xmma_new::Ampere, 128, 128, 16, 2, 2, 1, 1,"
                " 1>, xmma_new::implicit_gemm::Input_related<1, 3, 3, false>, 16, xmma_new::Row, 16, 128> >, xmma_new"
                "::implicit_gemm::fprop::Gmem_tile_c_n<xmma_new::Ampere_hmma_tf32_traits<unsigned int, float>, xmma_n"
                "ew::Cta_tile<xmma_new::Ampere, 128, 128, 16, 2, 2, 1, 1, 1>, 4, xmma_new::Fragment_c<xmma_new::Amper"
                "e_hmma_tf32_traits<unsigned int, float>, xmma_new::Cta_tile<xmma_new::Ampere, 128, 128, 16, 2, 2, 1,"
                " 1, 1>, false>, false>, xmma_new::implicit_gemm::Input_related<1, 3, 3, false>, 4> >(xmma_new::impli"
                "cit_gemm::fprop::Kernel_traits<xmma_new::Ampere_hmma_tf32_traits<unsigned int, float>, xmma_new::Cta"
                "_tile<xmma_new::Ampere, 128, 128, 16, 2, 2, 1, 1, 1>, xmma_new::implicit_gemm::fprop::Gmem_tile_a_t<"
                "xmma_new::Ampere_hmma_tf32_traits<unsigned int, float>, xmma_new::Cta_tile<xmma_new::Ampere, 128, 12"
                "8, 16, 2, 2, 1, 1, 1>, xmma_new::implicit_gemm::Input_related<1, 3, 3, false>, 16, false, xmma_new::"
                "implicit_gemm::fprop::Gmem_tile_base_a<xmma_new::Ampere_hmma_tf32_traits<unsigned int, float>, xmma_"
                "new::Cta_tile<xmma_new::Ampere, 128, 128, 16, 2, 2, 1, 1, 1>, xmma_new::implicit_gemm::Input_related"
                "<1, 3, 3, false>, 16, xmma_new::Row, 16, 128> >, xmma_new::implicit_gemm::fprop::Gmem_tile_c_n<xmma_"
                "new::Ampere_hmma_tf32_traits<unsigned int, float>, xmma_new::Cta_tile<xmma_new::Ampere, 128, 128, 16"
                ", 2, 2, 1, 1, 1>, 4, xmma_new::Fragment_c<xmma_new::Ampere_hmma_tf32_traits<unsigned int, float>, xm"
                "ma_new::Cta_tile<xmma_new::Ampere, 128, 128, 16, 2, 2, 1, 1, 1>, false>, false>, xmma_new::implicit_"
                "gemm::Input_related<1, 3, 3, false>, 4>::Params)",
     .is_kernel = IsXmmaNewKernel,
     .parse_function = ParseXmmaNew},
    {.family = KernelFamily::kGemv,
     .name = "gemv",
     .shown = "cuBLAS gemv2T_kernel/gemv2N_kernel/gemvNSP_kernel/gemvx::kernel",
     .has_tile = false,
     .example = "std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, __nv_bfloat"
                "16, __nv_bfloat16, float, (bool)0, (bool)1, (bool)1, (bool)0, (int)6, (bool)0, cublasGemvPar"
                "amsEx<int, cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatch"
                "ed<const __nv_bfloat16>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float>>(T13)",
     .is_kernel = IsGemvKernel,
     .parse_function = ParseUntiled},
    {.family = KernelFamily::kGemmk1,
     .name = "gemmk1",
     .shown = "cuBLAS gemmk1_kernel",
     .has_tile = false,
     .example = "void gemmk1_kernel<int, float, (int)256, (int)5, (bool)0, (bool)0, (bool)0, (bool)0, cublasG"
                "emvTensorStridedBatched<const float>, cublasGemvTensorStridedBatched<const float>, cublasGem"
                "vTensorStridedBatched<float>, float, (int)0>(cublasGemmk1Params<T2, T9, T10, T11, T12, biasT"
                "ype<T11::value_type, T12>::type>)",
     .is_kernel = IsGemmk1Kernel,
     .parse_function = ParseUntiled},
    {.family = KernelFamily::kGemmSmallN,
     .name = "gemm_small_n",
     .shown = "cuBLAS gemmSN_ kernels",
     .has_tile = false,
     .example = "void gemmSN_NN_kernel<float, 256, 4, 2, 8, 4, 4, false, cublasGemvTensorStridedBatched<float"
                " const>, cublasGemvTensorStridedBatched<float> >(cublasGemmSmallNParams<cublasGemvTensorStri"
                "dedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>)",
     .is_kernel = IsGemmSmallNKernel,
     .parse_function = ParseUntiled},
    {.family = KernelFamily::kSgemmLargeK,
     .name = "sgemm_largek",
     .shown = "cuBLAS sgemm_largek_lds64",
     .has_tile = false,
     .example = "void sgemm_largek_lds64<true, true, 6, 3, 4, 5, 2, 66>(float*, float const*, float const*, i"
                "nt, int, int, int, int, int, float const*, float const*, float, float, int, int, int*, int*)",
     .is_kernel = IsSgemmLargeKKernel,
     .parse_function = ParseUntiled},
    {.family = KernelFamily::kMagma,
     .name = "magma",
     .shown = "MAGMA magma_<t>gemm kernels",
     .has_tile = false,
     .example = "void magma_sgemmEx_kernel<float, float, float, true, false, 6, 4, 6, 3, 4>(int, int, int, Te"
                "nsor, int, Tensor, int, Tensor, int, Tensor, int, int, int, float const*, float const*, floa"
                "t, float, int, cublasLtEpilogue_t, int, void const*, long)",
     .is_kernel = IsMagmaKernel,
     .parse_function = ParseUntiled},
    {.family = KernelFamily::kCudnnSgemm,
     .name = "cudnn_sgemm",
     .shown = "cuDNN implicit/explicit/precomputed_convolve_sgemm",
     .has_tile = false,
     .example = "void explicit_convolve_sgemm<float, int, 128, 6, 7, 3, 3, 5, 0, false>(int, int, int, float "
                "const*, int, float const*, int, float*, kernel_conv_params, unsigned long long, int, unsigne"
                "d long long, int, float, float, int, float const*, float const*)",
     .is_kernel = IsCudnnSgemmKernel,
     .parse_function = ParseUntiled},
    {.family = KernelFamily::kFermi,
     .name = "fermi",
     .shown = "cuBLAS fermi<T>gemm kernels",
     .has_tile = false,
     .example = "void fermiCgemm_v3_kernel<bool=1, bool=0, bool=0, bool=0, int=5, int=5, int=3, int=8, int=8>"
                "(int, int, int, float2 const *, int, float2 const *, int, float2*, int, int, int, float2 con"
                "st *, float2 const *, float2, float2, int)",
     .is_kernel = IsFermiKernel,
     .parse_function = ParseUntiled},
    {.family = KernelFamily::kNvjet,
     .name = "nvjet",
     .shown = "nvjet_",
     .prefixes = {"nvjet_"},
     .has_clusters = true,
     .prefix_means_gemm = true,
     .example = "nvjet_tst_256x8_64x6_4x1_v_bz_TNT",
     .parse_tokens = ParseNvjet},
    {.family = KernelFamily::kSm90Xmma,
     .name = "sm90_xmma",
     .shown = "sm90_xmma_",
     .prefixes = {"sm90_xmma_"},
     .target_sm = 90,
     .has_clusters = true,
     .example = "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_"
                "k_off_kernel__5x_cublas",
     .parse_tokens = ParseSm90Xmma},
    {.family = KernelFamily::kSm100,
     .name = "sm100",
     .shown = "sm100_",
     .prefixes = {"sm100_"},
     .target_sm = 100,
     .has_clusters = true,
     // SYNTHETIC: no public trace found yet shows a real sm100_xmma name
     // (tests/data/README.md); built from the sm90_xmma grammar.
     .example = "sm100_xmma_gemm_e5m2bf16_e4m3f32_f32_tn_n_tilesize128x128x128_cgasize2x1x1",
     .example_is_synthetic = true,
     .parse_tokens = ParseSm100},
    {.family = KernelFamily::kSm80Xmma,
     .name = "sm80_xmma",
     .shown = "sm80_xmma_",
     .prefixes = {"sm80_xmma_"},
     .target_sm = 80,
     .example = "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma",
     .parse_tokens = ParseSm80Xmma},
    {.family = KernelFamily::kAmpere,
     .name = "ampere",
     .shown = "ampere_",
     .prefixes = {"ampere_", "cudnn_ampere_", "cudnn_infer_ampere_", "cudnn_train_ampere_"},
     .target_sm = 80,
     .example = "ampere_sgemm_64x64_nn",
     .parse_tokens = ParseLegacy},
    {.family = KernelFamily::kTuring,
     .name = "turing",
     .shown = "turing_",
     .prefixes = {"turing_", "cudnn_turing_", "cudnn_infer_turing_", "cudnn_train_turing_"},
     .target_sm = 75,
     .example = "turing_h1688gemm_256x64_sliced1x2_ldg8_tn",
     .parse_tokens = ParseLegacy},
    {.family = KernelFamily::kVolta,
     .name = "volta",
     .shown = "volta_",
     .prefixes = {"volta_", "cudnn_volta_", "cudnn_infer_volta_", "cudnn_train_volta_"},
     .target_sm = 70,
     .example = "volta_cgemm_32x32_tn",
     .parse_tokens = ParseLegacy},
    {.family = KernelFamily::kCutlass2,
     .name = "cutlass2",
     .shown = "cutlass_",
     .prefixes = {"cutlass_"},
     .claims = IsCutlass2Name,
     .prefix_means_gemm = true,
     .example = "cutlass_simt_sgemm_128x128_8x2_nn_align1",
     .parse_tokens = ParseCutlass2},
    {.family = KernelFamily::kCutlass3,
     .name = "cutlass3",
     .shown = "cutlass3x_",
     .prefixes = {"cutlass3x_"},
     .has_clusters = true,
     .prefix_means_gemm = true,
     .example = "cutlass3x_sm90_tensorop_tf32gemm_f32_f32_f32_f32_f32_128x128x32_2x1x1_0_tnn_align4",
     .parse_tokens = ParseCutlass3},
    {.family = KernelFamily::kTrtllmGen,
     .name = "trtllm_gen",
     .shown = "TensorRT-LLM's bmm_/gemm_",
     .claims = IsTrtllmGenName,
     .has_clusters = true,
     .prefix_means_gemm = true,
     .example = "bmm_Bfloat16_E2m1E2m1_Fp32_t128x64x256_s6_et128x64_m128x64x64_cga1x1x1_16dp256b_rM_TN_transO"
                "ut_schedS_bN_tmaOpt_clmp_dynBatch_sm100f",
     .parse_tokens = ParseTrtllmGen},
    {.family = KernelFamily::kCuteDsl,
     .name = "cute_dsl",
     .shown = "CuTe DSL's kernel_cutlass_ (named, no field read)",
     .prefixes = {"kernel_cutlass_"},
     .has_tile = false,
     .has_clusters = true,
     .example = "kernel_cutlass_repro",
     .reads_fields = false,
     .parse_tokens = ParseCuteDsl},
    {.family = KernelFamily::kTensile,
     .name = "tensile",
     .shown = "AMD Tensile/hipBLASLt Cijk_",
     .prefixes = {"Cijk_"},
     .claims = IsTensileName,
     .prefix_means_gemm = true,
     .example = "Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_"
                "CLR1_CADS0_EPS0_GRVWA1_GRVWB1_GSUAMB_ISA90a_IU1_K1_LBSPPA0_LBSPPB0_LBSPPM0_LPA0_LPB0_LPM0_LR"
                "VW1_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS2_NLCA1_NLCB1_ONLL1_PGR2_PL"
                "R1_PKA1_SIA3_SS1_SPO1_SRVW0_SSO0_SVW1_TLDS0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG64_"
                "4_1",
     .vendor = "AMD",
     .parse_tokens = ParseTensile},
}};

}  // namespace

std::span<const FamilyRow> FamilyRows() { return kRows; }

const FamilyRow* FindRow(KernelFamily family) {
  const auto* row = std::find_if(kRows.begin(), kRows.end(), [&](const FamilyRow& r) { return r.family == family; });
  return row == kRows.end() ? nullptr : row;
}

}  // namespace ofu::kernels::detail
