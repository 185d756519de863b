// The correction factor, precision mix and advice (correction.h) on kernel
// traces built here (synthetic), against values worked out by hand.
#include "ofu/analysis/correction.h"

#include <gtest/gtest.h>

#include "ofu/core/gpu_spec.h"

namespace ofu::analysis {
namespace {

using formats::FrameworkOp;
using formats::KernelTrace;
using kernels::Precision;

// Builds a KernelTrace one kernel at a time.
class TraceBuilder {
 public:
  // A kernel launched by `op` (or by nothing when op_name is empty).
  TraceBuilder& Kernel(const std::string& name, double duration_us, const std::string& op_name = "",
                       std::vector<std::vector<int64_t>> dims = {}, std::vector<std::string> types = {}) {
    formats::TraceKernel kernel;
    kernel.name_id = static_cast<uint32_t>(trace_.kernel_names.size());
    trace_.kernel_names.push_back(name);
    kernel.start_us = next_start_;
    kernel.duration_us = duration_us;
    next_start_ += duration_us + 1;
    if (!op_name.empty()) {
      kernel.op = static_cast<uint32_t>(trace_.ops.size());
      kernel.link = formats::OpLink::kExternalId;
      trace_.ops.push_back(FrameworkOp{op_name, std::move(dims), std::move(types), kernel.start_us, duration_us});
    }
    trace_.kernels.push_back(kernel);
    return *this;
  }
  TraceBuilder& Launch(formats::LaunchKind launch) {
    trace_.kernels.back().launch = launch;
    return *this;
  }
  TraceBuilder& Cluster(int64_t x, int64_t y) {
    trace_.kernels.back().cluster = formats::Dim3{x, y, 1};
    return *this;
  }
  KernelTrace Build() const { return trace_; }

 private:
  KernelTrace trace_;
  double next_start_ = 0;
};

const GpuSpec& H100() {
  static const GpuSpecDatabase db = *GpuSpecDatabase::Embedded();
  return **db.Lookup("h100-sxm5");
}

TEST(Correction, OneRaggedBf16GemmMatchesTheHandFactor) {
  // torch.mm(A[4096,4096], B[4096,4097]) in bf16. cuBLAS sees M = 4097 (the
  // framework's N): 256-wide tiles in clusters of 2 pad it to 4608.
  const KernelTrace trace = TraceBuilder()
                                .Kernel("nvjet_tst_256x128_64x4_2x1_v_bz_TNT", 900, "aten::mm",
                                        {{4096, 4096}, {4096, 4097}}, {"c10::BFloat16", "c10::BFloat16"})
                                .Build();
  CorrectionOptions options;
  options.gpu = &H100();
  const CorrectionReport report = ComputeCorrection(trace, options);
  ASSERT_TRUE(report.factor);
  EXPECT_DOUBLE_EQ(*report.factor, 4097.0 / 4608.0);
  ASSERT_EQ(report.precision_mix.size(), 1u);
  EXPECT_EQ(report.precision_mix[0].precision, Precision::kBf16);
  EXPECT_DOUBLE_EQ(report.precision_mix[0].tensor_time_share, 1.0);
  EXPECT_DOUBLE_EQ(*report.mfu_scale, 1.0);
  EXPECT_EQ(report.coverage.corrected_kernels, 1);
  ASSERT_EQ(report.wasteful.size(), 1u);
  EXPECT_DOUBLE_EQ(report.wasteful[0].wasted_share, (4608.0 - 4097.0) / 4608.0);
  EXPECT_EQ(report.wasteful[0].advice,
            "N = 4097 pads to 4608 with 256-wide tiles in clusters of 2; make N a multiple of 512");
}

TEST(Correction, DirectOrientationPadsTheOtherSide) {
  const KernelTrace trace = TraceBuilder()
                                .Kernel("nvjet_tst_256x128_64x4_2x1_v_bz_TNT", 900, "aten::mm",
                                        {{4096, 4096}, {4096, 4097}})
                                .Build();
  CorrectionOptions options;
  options.orientation = kernels::TileOrientation::kDirect;
  const CorrectionReport report = ComputeCorrection(trace, options);
  // Kernel M = 4096 (steps of 512: no padding), N = 4097 on 128-wide tiles: 4224.
  EXPECT_DOUBLE_EQ(*report.factor, 4097.0 / 4224.0);
  EXPECT_EQ(report.wasteful[0].advice, "N = 4097 pads to 4224 with 128-wide tiles; make N a multiple of 128");
}

TEST(Correction, MixedPrecisionWeighsKernelsAsThePipesSeeThem) {
  // bf16 4096^3 with 128x128x64 tiles: no padding, pipe time X·4096 (X = 2·4096·4096).
  // fp8 _scaled_mm 4096x4097x4096 on 128x256x128 tiles: kernel M 4097 -> 4224,
  // executed X·4224 at twice the rate, so pipe time X·2112 (useful X·2048.5).
  const KernelTrace trace = TraceBuilder()
                                .Kernel("nvjet_tst_128x128_64x4_1x1_v_bz_TNT", 800, "aten::mm",
                                        {{4096, 4096}, {4096, 4096}})
                                .Kernel("nvjet_qqtst_128x256_128x4_1x1_v_bz_TNN", 450, "aten::_scaled_mm",
                                        {{4096, 4096}, {4096, 4097}, {}, {}})
                                .Build();
  CorrectionOptions options;
  options.gpu = &H100();
  const CorrectionReport report = ComputeCorrection(trace, options);
  EXPECT_DOUBLE_EQ(*report.factor, (4096.0 + 2048.5) / (4096.0 + 2112.0));
  ASSERT_EQ(report.precision_mix.size(), 2u);
  EXPECT_EQ(report.precision_mix[0].precision, Precision::kBf16);
  EXPECT_DOUBLE_EQ(report.precision_mix[0].tensor_time_share, 4096.0 / 6208.0);
  EXPECT_EQ(report.precision_mix[1].precision, Precision::kFp8);
  EXPECT_DOUBLE_EQ(report.precision_mix[1].tensor_time_share, 2112.0 / 6208.0);
  EXPECT_DOUBLE_EQ(report.precision_mix[1].relative_rate, 2.0);
  // Against bf16 the fp8 share counts double: (4096 + 2·2112) / 6208.
  EXPECT_DOUBLE_EQ(*report.mfu_scale, 8320.0 / 6208.0);
  ASSERT_EQ(report.wasteful.size(), 1u);
  EXPECT_EQ(report.wasteful[0].precision, Precision::kFp8);
  EXPECT_DOUBLE_EQ(report.wasteful[0].wasted_share, (2112.0 - 2048.5) / 6208.0);

  options.reference_precision = Precision::kFp8;
  EXPECT_DOUBLE_EQ(*ComputeCorrection(trace, options).mfu_scale, 8320.0 / 6208.0 / 2.0);
}

TEST(Correction, PrecisionFromTheOpWhenTheNameHasNone) {
  // A CUTLASS 2 name with no type token: the op's input types say fp16.
  // 1000x1000x1000 on 128x128x32 tiles: 1024 on both sides, K 1000 -> 1024.
  const KernelTrace trace = TraceBuilder()
                                .Kernel("cutlass_80_tensorop_s16816gemm_128x128_32x3_nn_align8", 50, "aten::mm",
                                        {{1000, 1000}, {1000, 1000}}, {"c10::Half", "c10::Half"})
                                .Build();
  const CorrectionReport report = ComputeCorrection(trace, CorrectionOptions{});
  EXPECT_DOUBLE_EQ(*report.factor, 1e9 / (1024.0 * 1024.0 * 1024.0));
  EXPECT_EQ(report.precision_mix[0].precision, Precision::kFp16);
  // Without a GPU spec, rates are the generic ones and the report says so.
  bool noted = false;
  for (const std::string& note : report.notes) noted = noted || note.find("generic") != std::string::npos;
  EXPECT_TRUE(noted);
  // Every side pads by 1024/1000; the advice names all three.
  EXPECT_NE(report.wasteful[0].advice.find("K = 1000 pads to 1024 with 32-deep tiles; make K a multiple of 32"),
            std::string::npos);
}

TEST(Correction, ClusterChosenAtRunTimeComesFromTheLaunchOrIsAssumed) {
  const std::string name =
      "cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_0x0x1_0_tnn_align8_warpspecialized_cooperative_"
      "epi_tma";
  // Kernel M 4097 (framework N) on 128-wide tiles: 4224 without a cluster;
  // with a launch cluster 2x1 the step is 256: 4352.
  const KernelTrace assumed = TraceBuilder().Kernel(name, 100, "aten::mm", {{4096, 4096}, {4096, 4097}}).Build();
  const CorrectionReport a = ComputeCorrection(assumed, CorrectionOptions{});
  EXPECT_DOUBLE_EQ(*a.factor, 4097.0 / 4224.0);
  bool noted = false;
  for (const std::string& note : a.notes) noted = noted || note.find("assumed 1x1") != std::string::npos;
  EXPECT_TRUE(noted);

  const KernelTrace launched =
      TraceBuilder().Kernel(name, 100, "aten::mm", {{4096, 4096}, {4096, 4097}}).Cluster(2, 1).Build();
  EXPECT_DOUBLE_EQ(*ComputeCorrection(launched, CorrectionOptions{}).factor, 4097.0 / 4352.0);
}

TEST(Correction, CoverageCountsWhatIsLeftOutAndSimtShare) {
  const KernelTrace trace =
      TraceBuilder()
          .Kernel("nvjet_tst_128x128_64x4_1x1_v_bz_TNT", 100, "aten::mm", {{128, 128}, {128, 128}})         // corrected
          .Kernel("ampere_sgemm_128x64_nn", 300, "aten::mm", {{512, 512}, {512, 512}}, {"float", "float"})  // SIMT
          .Kernel("void at::native::vectorized_elementwise_kernel<4>(int)", 20, "aten::addmm",
                  {{128}, {128, 128}, {128, 128}})          // launched by a GEMM op, not a GEMM by name
          .Kernel("nvjet_tst_64x8_64x16_4x1_v_bz_TNT", 30)  // GEMM name, no launch, no op
          .Kernel("nvjet_sss_128x64_64x4_1x1_v_bz_NNT", 40, "aten::mm", {{64, 64}, {64, 64}})  // engine unknown
          .Kernel("void at::native::softmax_kernel(float*)", 500)                              // not a GEMM at all
          .Build();
  const CorrectionReport report = ComputeCorrection(trace, CorrectionOptions{});
  const Coverage& c = report.coverage;
  EXPECT_EQ(c.kernels, 6);
  EXPECT_DOUBLE_EQ(c.kernel_time_us, 990);
  EXPECT_EQ(c.gemm_kernels, 5);
  EXPECT_DOUBLE_EQ(c.gemm_time_us, 490);
  EXPECT_EQ(c.corrected_kernels, 1);
  EXPECT_EQ(c.simt_kernels, 1);
  EXPECT_DOUBLE_EQ(*report.non_tensor_gemm_share, 300.0 / 490.0);
  ASSERT_EQ(c.left_out.size(), 3u);
  // Largest time first.
  EXPECT_EQ(c.left_out[0].reason, "the name does not say whether tensor cores run it");
  EXPECT_EQ(c.left_out[1].reason, "its launch is not in the trace, so no op or shape");
  EXPECT_EQ(c.left_out[2].reason, "launched by a GEMM op, but not named as a GEMM");
  EXPECT_EQ(c.left_out[2].example, "void at::native::vectorized_elementwise_kernel<4>(int)");
  // 128^3 on 128x128x64 tiles: nothing wasted, nothing to advise.
  EXPECT_DOUBLE_EQ(*report.factor, 1.0);
  EXPECT_TRUE(report.wasteful.empty());
}

// A kernel a GEMM op launched is a GEMM whatever its name, unless the name
// marks a helper (elementwise, copy, reduction, epilogue): counted as a GEMM,
// kept out of the factor, and its share of GEMM time said. SYNTHETIC trace;
// `triton_tem_fused_mm_0` is the form of torch.compile's mm templates.
TEST(Correction, AKernelAGemmOpLaunchedIsAGemmWhateverItsName) {
  const KernelTrace trace =
      TraceBuilder()
          .Kernel("nvjet_tst_128x128_64x4_1x1_v_bz_TNT", 300, "aten::mm", {{128, 128}, {128, 128}})  // corrected
          .Kernel("triton_tem_fused_mm_0", 100, "aten::mm", {{128, 128}, {128, 128}})                // a GEMM by its op
          .Kernel("void at::native::vectorized_elementwise_kernel<4>(int)", 100, "aten::addmm",
                  {{128}, {128, 128}, {128, 128}})  // a helper inside the op
          .Build();
  const CorrectionReport report = ComputeCorrection(trace, CorrectionOptions{});
  const Coverage& c = report.coverage;
  EXPECT_EQ(c.gemm_kernels, 3);
  EXPECT_DOUBLE_EQ(c.gemm_time_us, 500);
  EXPECT_EQ(c.corrected_kernels, 1);
  EXPECT_EQ(c.gemm_by_op_kernels, 1);
  EXPECT_DOUBLE_EQ(c.gemm_by_op_time_us, 100);
  ASSERT_EQ(c.left_out.size(), 2u);
  EXPECT_EQ(c.left_out[0].reason, kGemmByOpReason);
  EXPECT_EQ(c.left_out[0].example, "triton_tem_fused_mm_0 (aten::mm)");
  EXPECT_EQ(c.left_out[1].reason, "launched by a GEMM op, but not named as a GEMM");
  bool said = false;
  for (const std::string& note : report.notes) {
    said = said || (note.find("1 kernel(s) (0.1 ms, 20.0 % of GEMM time) are GEMMs because a GEMM op launched "
                              "them") != std::string::npos &&
                    note.find("cover the 60.0 % of GEMM time that was corrected") != std::string::npos);
  }
  EXPECT_TRUE(said) << ::testing::PrintToString(report.notes);
}

// A trace with no kernel events but CUPTI range-profiler records never says
// "no GEMM kernels" while GEMM names are there (SYNTHETIC records, real names).
TEST(Correction, RangeProfilerRecordsWithGemmNamesAreNotCalledNoGemm) {
  formats::KernelTrace trace;
  trace.range_profiler_kernels = {"ampere_sgemm_32x32_sliced1x4_tn",
                                  "void at::native::vectorized_elementwise_kernel<4>(int)",
                                  "ampere_sgemm_32x32_sliced1x4_tn"};
  const CorrectionReport report = ComputeCorrection(trace, CorrectionOptions{});
  ASSERT_FALSE(report.notes.empty());
  EXPECT_EQ(report.notes.back(),
            "no kernel events in the trace, but 2 of its 3 CUPTI range-profiler records name GEMM kernels (e.g. "
            "ampere_sgemm_32x32_sliced1x4_tn): GEMMs ofu cannot weigh or correct without kernel records");
  for (const std::string& note : report.notes) EXPECT_EQ(note.find("no GEMM kernels"), std::string::npos) << note;
}

// A trace of another vendor's device is refused, with or without --gpu-model.
TEST(Correction, AnotherVendorsTraceIsRefusedWithItsReason) {
  formats::KernelTrace trace;
  EXPECT_TRUE(RequireNvidiaTrace(trace, "t.json", "").ok());
  trace.other_platform = formats::TracePlatform{"AMD", "AMD Instinct MI300X VF", "hip_runtime_version 60443483"};
  const Status plain = RequireNvidiaTrace(trace, "t.json", "");
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.error().code, ErrorCode::kNoData);
  EXPECT_EQ(plain.error().message.rfind("t.json: recorded on AMD Instinct MI300X VF (AMD, not NVIDIA: "
                                        "hip_runtime_version 60443483): OFU as ofu computes it is defined for NVIDIA "
                                        "tensor cores",
                                        0),
            0u)
      << plain.error().message;
  const Status flagged = RequireNvidiaTrace(trace, "t.json", "h100-sxm5");
  ASSERT_FALSE(flagged.ok());
  EXPECT_EQ(flagged.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(flagged.error().message.rfind("--gpu-model h100-sxm5: t.json was recorded on AMD Instinct MI300X VF", 0),
            0u)
      << flagged.error().message;
}

TEST(Correction, AGemmWithoutAnOpSaysHowItWasLaunched) {
  using formats::LaunchKind;
  const std::string nvjet = "nvjet_tst_64x8_64x16_4x1_v_bz_TNT";
  const KernelTrace trace = TraceBuilder()
                                .Kernel(nvjet, 400)
                                .Launch(LaunchKind::kGraph)
                                .Kernel(nvjet, 200)
                                .Launch(LaunchKind::kGraph)
                                .Kernel(nvjet, 300)
                                .Launch(LaunchKind::kKernel)
                                .Kernel(nvjet, 100)  // kUnknown
                                .Kernel("ampere_sgemm_128x64_nn", 50)
                                .Launch(LaunchKind::kGraph)  // SIMT: counted as such, not left out
                                .Build();
  const CorrectionReport report = ComputeCorrection(trace, CorrectionOptions{});
  const Coverage& c = report.coverage;
  EXPECT_EQ(c.gemm_kernels, 5);
  EXPECT_EQ(c.simt_kernels, 1);
  ASSERT_EQ(c.left_out.size(), 3u);
  EXPECT_EQ(c.left_out[0].reason, "replayed from a CUDA graph, so no op or shape");
  EXPECT_EQ(c.left_out[0].kernels, 2);
  EXPECT_DOUBLE_EQ(c.left_out[0].time_us, 600);
  EXPECT_EQ(c.left_out[1].reason, "no GEMM op around its launch, so no shape");
  EXPECT_DOUBLE_EQ(c.left_out[1].time_us, 300);
  EXPECT_EQ(c.left_out[2].reason, "its launch is not in the trace, so no op or shape");
  EXPECT_DOUBLE_EQ(c.left_out[2].time_us, 100);
  bool advised = false;
  for (const std::string& note : report.notes) {
    advised = advised || note.rfind("2 tensor-core GEMM kernel(s) (0.6 ms) were replayed from CUDA graphs", 0) == 0;
  }
  EXPECT_TRUE(advised);
  EXPECT_FALSE(report.factor);
}

TEST(Correction, KernelsFromBeforeClustersRunOneByOneWithoutANote) {
  // An Ampere CUTLASS 2.x kernel names no cluster because it has none: the
  // same padding as an explicit 1x1, and no "assumed" note.
  const KernelTrace trace = TraceBuilder()
                                .Kernel(
                                    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>"
                                    "(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)",
                                    100, "aten::mm", {{1000, 300}, {300, 200}}, {"float", "float"})
                                .Build();
  const CorrectionReport report = ComputeCorrection(trace, CorrectionOptions{});
  // Kernel M = 200 (framework N) -> 256, kernel N = 1000 -> 1024, K = 300 -> 320.
  ASSERT_TRUE(report.factor);
  EXPECT_DOUBLE_EQ(*report.factor, (200.0 * 1000 * 300) / (256.0 * 1024 * 320));
  for (const std::string& note : report.notes) EXPECT_EQ(note.find("cluster"), std::string::npos) << note;
}

TEST(Correction, SimtGemmsWithoutATileCountAsSimtShare) {
  // cuBLAS's GEMV and the other untiled SIMT kernels name no tile, and often
  // no op is linked (traces without record_shapes): they are CUDA-core GEMM
  // time all the same. A GEMM whose name is not read in full counts by what
  // the name still says.
  const std::string gemv =
      "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, "
      "cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, "
      "cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, "
      "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>)";
  const KernelTrace trace = TraceBuilder()
                                .Kernel(gemv, 30)  // parsed: SIMT, no tile, no op
                                .Kernel("void mylib::xsgemm_batched_kernel<float>(float*)",
                                        70)  // not read; the name says SIMT
                                .Kernel(
                                    "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>"
                                    "(dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel::Params)",
                                    50)  // not read; a GEMM, unit unknown
                                .Kernel("void at::native::softmax_kernel(float*)", 500)  // not a GEMM at all
                                .Build();
  const CorrectionReport report = ComputeCorrection(trace, CorrectionOptions{});
  const Coverage& c = report.coverage;
  EXPECT_EQ(c.kernels, 4);
  EXPECT_EQ(c.gemm_kernels, 3);
  EXPECT_DOUBLE_EQ(c.gemm_time_us, 150);
  EXPECT_EQ(c.simt_kernels, 2);
  EXPECT_DOUBLE_EQ(c.simt_time_us, 100);
  ASSERT_TRUE(report.non_tensor_gemm_share);
  EXPECT_DOUBLE_EQ(*report.non_tensor_gemm_share, 100.0 / 150.0);
  ASSERT_EQ(c.left_out.size(), 1u);
  EXPECT_EQ(c.left_out[0].reason, "kernel name not read");
  EXPECT_EQ(c.left_out[0].kernels, 1);
  EXPECT_FALSE(report.factor);  // nothing on tensor cores was corrected
}

TEST(Correction, NothingToCorrectIsAbsentNotOne) {
  const KernelTrace trace = TraceBuilder().Kernel("void at::native::softmax_kernel(float*)", 500).Build();
  const CorrectionReport report = ComputeCorrection(trace, CorrectionOptions{});
  EXPECT_FALSE(report.factor);
  EXPECT_FALSE(report.mfu_scale);
  EXPECT_FALSE(report.non_tensor_gemm_share);
  ASSERT_FALSE(report.notes.empty());
  EXPECT_NE(report.notes[0].find("no GEMM kernels"), std::string::npos);
}

TEST(Correction, AdviceSuggestsBatchingForDecodeShapes) {
  // Decode: 8 tokens x 4096 -> 4096. Swapped, the tokens are the kernel's N
  // (framework M): 8 rows on a 64-wide tile.
  const KernelTrace trace = TraceBuilder()
                                .Kernel("nvjet_tst_128x64_64x4_1x1_v_bz_TNT", 10, "aten::linear",
                                        {{1, 8, 4096}, {4096, 4096}})
                                .Build();
  const CorrectionReport report = ComputeCorrection(trace, CorrectionOptions{});
  EXPECT_DOUBLE_EQ(*report.factor, 8.0 / 64.0);
  EXPECT_EQ(report.wasteful[0].advice,
            "M = 8 pads to 64 with 64-wide tiles; make M a multiple of 64 or batch more rows per GEMM");
}

TEST(Correction, BlockScaledGemmsWithoutShapesAreCountedAndNamed) {
  // Synthetic trace (no public B200 trace with these kernels was found) with
  // real names: TensorRT-LLM's MX-FP4 x MX-FP8 MoE GEMM (KernelMetaInfo.h at
  // 7b437aa, tests/data/kernel-names-real.tsv) launched by a custom op with no
  // aten GEMM op, and a bf16 nvjet GEMM with its shape. As issue 30 saw on a
  // B200: 87 % of GEMM time in the block-scaled kernel.
  const KernelTrace trace =
      TraceBuilder()
          .Kernel("nvjet_tst_256x128_64x4_2x1_v_bz_TNT", 130, "aten::mm", {{4096, 4096}, {4096, 4096}},
                  {"c10::BFloat16", "c10::BFloat16"})
          .Kernel(
              "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x32x256_s5_et128x32_m256x32x32_cga2x1x1_16dp256b_rM_TN_transOut_"
              "schedP2x1x2x3_biasM_bN_tma_tmaOpt_clmp_swiGlu_dynBatch_sm100f",
              870)
          .Launch(formats::LaunchKind::kKernel)
          .Build();
  const CorrectionReport report = ComputeCorrection(trace, CorrectionOptions{});
  const Coverage& c = report.coverage;
  EXPECT_EQ(c.gemm_kernels, 2);
  EXPECT_DOUBLE_EQ(c.gemm_time_us, 1000);
  EXPECT_DOUBLE_EQ(c.corrected_time_us, 130);
  EXPECT_EQ(c.block_scaled_without_shape_kernels, 1);
  EXPECT_DOUBLE_EQ(c.block_scaled_without_shape_time_us, 870);
  // Every GEMM kernel, by the precision its name gives, largest first.
  ASSERT_EQ(c.gemm_time_by_precision.size(), 2u);
  EXPECT_EQ(c.gemm_time_by_precision[0].precision, Precision::kFp8);
  EXPECT_DOUBLE_EQ(c.gemm_time_by_precision[0].gemm_time_share, 0.87);
  EXPECT_EQ(c.gemm_time_by_precision[1].precision, Precision::kBf16);
  EXPECT_DOUBLE_EQ(c.gemm_time_by_precision[1].gemm_time_share, 0.13);
  // The factor and precision mix cover only the corrected kernel, and a note says so.
  ASSERT_EQ(report.precision_mix.size(), 1u);
  EXPECT_EQ(report.precision_mix[0].precision, Precision::kBf16);
  bool noted = false;
  for (const std::string& note : report.notes) {
    noted = noted || (note.find("1 block-scaled GEMM kernel(s)") != std::string::npos &&
                      note.find("0.9 ms, 87.0 % of GEMM time") != std::string::npos &&
                      note.find("cover the 13.0 % of GEMM time that was corrected") != std::string::npos);
  }
  EXPECT_TRUE(noted) << ::testing::PrintToString(report.notes);
}

}  // namespace
}  // namespace ofu::analysis
