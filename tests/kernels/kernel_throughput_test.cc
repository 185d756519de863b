// The kernel-family throughput table (kernel_throughput.h): what the names
// say about their target architecture, the table's rules, and its errors.
// Kernel names are real ones (tests/data/kernel-names-real.tsv and the H100
// and H200 runs' traces); tables other than the bundled one are SYNTHETIC.
#include "ofu/kernels/kernel_throughput.h"

#include <gtest/gtest.h>

namespace ofu::kernels {
namespace {

KernelInfo Parse(std::string_view name) {
  auto info = ParseKernelName(name);
  EXPECT_TRUE(info.ok()) << name << ": " << (info.ok() ? "" : info.error().message);
  return info.ok() ? *info : KernelInfo{};
}

TEST(KernelTarget, NamesGiveTheArchitectureTheyWereBuiltFor) {
  // Seen on the H100 (docs/results/2026-11-26-h100-sxm5/stage-B/all.csv).
  const KernelInfo sm75 = Parse(
      "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1>"
      "(cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1::Params)");
  EXPECT_EQ(sm75.target_sm, 75);
  EXPECT_EQ(sm75.mma_shape, "1688");
  EXPECT_EQ(sm75.alignment, 1);
  const KernelInfo tf32 = Parse("cutlass_80_tensorop_s1688gemm_256x128_32x3_tn_align1");
  EXPECT_EQ(tf32.target_sm, 80);
  EXPECT_EQ(tf32.mma_shape, "1688");
  EXPECT_EQ(tf32.precision, Precision::kTf32);
  EXPECT_EQ(Parse("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT").target_sm, 90);
  EXPECT_EQ(Parse("nvjet_tst_256x128_64x4_1x2_h_bz_coopA_TNT").target_sm, std::nullopt);  // bare nvjet
  EXPECT_EQ(Parse("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_"
                  "off_kernel__5x_cublas")
                .target_sm,
            90);
  const KernelInfo ampere = Parse("ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_32x3_nn");
  EXPECT_EQ(ampere.target_sm, 80);
  EXPECT_EQ(ampere.mma_shape, "16816");
  EXPECT_EQ(ampere.alignment, std::nullopt);  // cuBLAS's own names carry none
  EXPECT_EQ(Parse("volta_cgemm_32x64_tn").target_sm, 70);
  EXPECT_EQ(Parse("turing_h1688gemm_256x64_sliced1x2_ldg8_tn").target_sm, 75);
  EXPECT_EQ(Parse("cutlass3x_sm90_tensorop_s64x128x16gemm_bf16_bf16_f32_f32_f32_256x128x64_1x2x1_0_nnn_align8_"
                  "warpspecialized_epi_nosmem")
                .target_sm,
            90);
}

TEST(KernelThroughput, TheBundledTableKnowsTheH100Figures) {
  const auto table = KernelThroughputTable::Embedded();
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_EQ(table->NativeSm("hopper"), 90);
  EXPECT_EQ(table->NativeSm("ampere"), 80);
  EXPECT_EQ(table->NativeSm("no-such-arch"), std::nullopt);

  // bf16 and fp16 sm75 s1688 on Hopper: the fitted figure.
  const KernelInfo sm75 = Parse("cutlass_75_tensorop_f16_s1688gemm_f16_128x128_tn_align1");
  const KernelGeneration on_hopper = table->Classify(sm75, Precision::kFp16, "hopper");
  EXPECT_TRUE(on_hopper.pre_native);
  EXPECT_EQ(on_hopper.kernel_sm, 75);
  EXPECT_EQ(on_hopper.native_sm, 90);
  EXPECT_EQ(on_hopper.family, "sm75 s1688 fp16");
  ASSERT_NE(on_hopper.figure, nullptr);
  EXPECT_DOUBLE_EQ(on_hopper.RelativeThroughput(), 0.513);

  // The same kernel on a Turing GPU is that GPU's own.
  const KernelGeneration on_turing = table->Classify(sm75, Precision::kFp16, "turing");
  EXPECT_FALSE(on_turing.pre_native);
  EXPECT_DOUBLE_EQ(on_turing.RelativeThroughput(), 1.0);

  // tf32 on the sm80 s1688 kernel has its own figure.
  const KernelGeneration tf32 = table->Classify(Parse("cutlass_80_tensorop_s1688gemm_256x128_32x3_tn_align1"),
                                                Precision::kTf32, "hopper");
  ASSERT_NE(tf32.figure, nullptr);
  EXPECT_DOUBLE_EQ(tf32.RelativeThroughput(), 0.667);

  // sm80 s16816 (bf16, fp16) on Hopper: Nsight Compute's figure from the H200 run
  // (docs/results/2026-11-27-h200/stage-K/stage-k-kernels.csv, mean of 0.666829,
  // 0.666992, 0.666829, 0.666992). Before that run it had none.
  const KernelGeneration s16816 = table->Classify(
      Parse("cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_nn_align8"), Precision::kBf16, "hopper");
  EXPECT_TRUE(s16816.pre_native);
  ASSERT_NE(s16816.figure, nullptr);
  EXPECT_DOUBLE_EQ(s16816.RelativeThroughput(), 0.667);
  EXPECT_EQ(s16816.family, "sm80 s16816 bf16");
  // The fitted sm75 figure stays the one used: the table's first match, not its ncu measurement (0.496).
  EXPECT_DOUBLE_EQ(
      table->Classify(Parse("cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1"), Precision::kBf16, "hopper")
          .RelativeThroughput(),
      0.513);

  // A pre-native family nobody measured: flagged, but counted as native.
  const KernelGeneration unmeasured = table->Classify(Parse("volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_tn"),
                                                      Precision::kFp16, "hopper");
  EXPECT_TRUE(unmeasured.pre_native);
  EXPECT_EQ(unmeasured.figure, nullptr);
  EXPECT_DOUBLE_EQ(unmeasured.RelativeThroughput(), 1.0);
  EXPECT_EQ(unmeasured.family, "sm70 s884 fp16");

  // Native kernels, and names that do not say their target.
  EXPECT_FALSE(
      table->Classify(Parse("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"), Precision::kBf16, "hopper").pre_native);
  EXPECT_FALSE(
      table->Classify(Parse("nvjet_tst_256x128_64x4_1x2_h_bz_coopA_TNT"), Precision::kBf16, "hopper").pre_native);
  // Ada runs Ampere's kernels as its own.
  EXPECT_FALSE(
      table->Classify(Parse("ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_32x3_nn"), Precision::kBf16, "ada")
          .pre_native);
  // A SIMT kernel has no tensor throughput to correct.
  EXPECT_FALSE(
      table->Classify(Parse("cutlass_80_simt_sgemm_256x128_8x4_nn_align1"), Precision::kFp32, "hopper").pre_native);
}

TEST(KernelThroughput, ParseNamesTheBadField) {
  // SYNTHETIC tables.
  const std::string head = R"({"architectures": [{"architecture": "hopper", "native_sm": 90}], "figures": [)";
  const auto ok = KernelThroughputTable::Parse(head + R"({"architecture": "hopper", "kernel_sm": 75,
      "precisions": ["bf16"], "relative_throughput": 0.5, "source": "made up"}]})",
                                               "t.json");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->figures().size(), 1u);

  const auto no_source = KernelThroughputTable::Parse(
      head + R"({"architecture": "hopper", "kernel_sm": 75, "precisions": ["bf16"], "relative_throughput": 0.5}]})",
      "t.json");
  ASSERT_FALSE(no_source.ok());
  EXPECT_EQ(no_source.error().message, "t.json: figures[0]: missing field \"source\"");

  const auto above_one = KernelThroughputTable::Parse(head + R"({"architecture": "hopper", "kernel_sm": 75,
      "precisions": ["bf16"], "relative_throughput": 1.5, "source": "s"}]})",
                                                      "t.json");
  ASSERT_FALSE(above_one.ok());
  EXPECT_NE(above_one.error().message.find("relative_throughput"), std::string::npos);

  const auto native = KernelThroughputTable::Parse(head + R"({"architecture": "hopper", "kernel_sm": 90,
      "precisions": ["bf16"], "relative_throughput": 0.9, "source": "s"}]})",
                                                   "t.json");
  ASSERT_FALSE(native.ok());
  EXPECT_NE(native.error().message.find("native on hopper"), std::string::npos);

  const auto unknown_arch = KernelThroughputTable::Parse(head + R"({"architecture": "rubin", "kernel_sm": 90,
      "precisions": ["bf16"], "relative_throughput": 0.9, "source": "s"}]})",
                                                         "t.json");
  ASSERT_FALSE(unknown_arch.ok());
  EXPECT_NE(unknown_arch.error().message.find("\"rubin\" is not listed"), std::string::npos);

  const auto bad_precision = KernelThroughputTable::Parse(head + R"({"architecture": "hopper", "kernel_sm": 75,
      "precisions": ["bf17"], "relative_throughput": 0.5, "source": "s"}]})",
                                                          "t.json");
  ASSERT_FALSE(bad_precision.ok());
  EXPECT_NE(bad_precision.error().message.find("bf17"), std::string::npos);

  // Found by fuzz_kernel_throughput: a list that is not a list is an error, not an exception.
  const auto not_a_list = KernelThroughputTable::Parse(R"({"figures": "vt.py"})", "t.json");
  ASSERT_FALSE(not_a_list.ok());
  EXPECT_EQ(not_a_list.error().message, "t.json: \"figures\" is not a list");
  EXPECT_FALSE(KernelThroughputTable::Parse(R"({"architectures": {"hopper": 90}})", "t.json").ok());
  EXPECT_FALSE(KernelThroughputTable::Parse(R"({"figures": [7]})", "t.json").ok());
  EXPECT_FALSE(KernelThroughputTable::Parse("[1, 2]", "t.json").ok());
  EXPECT_FALSE(KernelThroughputTable::Parse("{not json", "t.json").ok());
}

TEST(KernelThroughput, NativeAlignmentIsSixteenBytesOrEightElements) {
  EXPECT_EQ(NativeAlignment(Precision::kBf16), 8);
  EXPECT_EQ(NativeAlignment(Precision::kFp16), 8);
  EXPECT_EQ(NativeAlignment(Precision::kTf32), 8);
  EXPECT_EQ(NativeAlignment(Precision::kFp8), 16);
  EXPECT_EQ(NativeAlignment(Precision::kInt8), 16);
}

// The finding `ofu kernels parse` prints, whole: the figure and the
// measurement are data/kernel_throughput.json's hopper sm75 s1688 entry, and
// 1 / 0.513 = 1.949, printed 1.9 (before the refit on the SMs' clock: 1 / 0.473 = 2.11, 2.1).
TEST(KernelThroughput, APreNativeKernelsFindingGivesTheMeasuredCostAndTheFix) {
  const auto table = KernelThroughputTable::Embedded();
  ASSERT_TRUE(table.ok()) << table.error().message;
  const KernelInfo sm75 = Parse("cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1");
  EXPECT_EQ(PreNativeFinding(*table, sm75, "hopper", "H100 SXM5"),
            "on H100 SXM5 (hopper, own kernels sm90): built for sm75, it did 0.513 of the native FLOPs per "
            "tensor-active cycle (measured on NVIDIA H100 80GB HBM3 (SXM5), driver 580.159.04, CUDA 13.0, cuBLAS of "
            "PyTorch 2.11.0+cu130, 2026-11-26), so OFU reads 1.9x its MFU (align1: cuBLAS picks such kernels when a "
            "dimension is not a multiple of 8); make M, N and K multiples of 8");
  EXPECT_EQ(PreNativeFinding(*table, sm75, "turing", "a T4"), std::nullopt);  // native there
  EXPECT_EQ(PreNativeFinding(*table, sm75, "no-such-arch", "?"), std::nullopt);

  // Volta's m8n8k4 kernel on Hopper: pre-native, and nobody measured it.
  const KernelInfo sm70 = Parse("volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_tn");
  EXPECT_EQ(PreNativeFinding(*table, sm70, "hopper", "H100 SXM5"),
            "on H100 SXM5 (hopper, own kernels sm90): built for sm70, so it issues older MMA instructions (cuBLAS "
            "picks such kernels for unaligned or small shapes); its FLOPs per tensor-active cycle there are not "
            "measured");

  // With no GPU given: once per architecture that has a figure (hopper only).
  const std::vector<std::string> anywhere = PreNativeFindingsWhereMeasured(*table, sm75);
  ASSERT_EQ(anywhere.size(), 1u);
  EXPECT_EQ(anywhere[0].rfind("on a hopper GPU (hopper, own kernels sm90): built for sm75, it did 0.513", 0), 0u);
  EXPECT_TRUE(PreNativeFindingsWhereMeasured(*table, Parse("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT")).empty());
}

// sm_120 (RTX PRO 6000 Blackwell, GeForce RTX 50) is not data-centre
// Blackwell: its tensor cores run mma.sync, so sm80 kernels are its own and
// no finding calls them older; data-centre Blackwell's own are sm100.
TEST(KernelThroughput, Sm120BlackwellIsItsOwnArchitecture) {
  const auto table = KernelThroughputTable::Embedded();
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_EQ(table->NativeSm("blackwell-rtx"), 80);
  EXPECT_EQ(table->NativeSm("blackwell"), 100);
  const KernelInfo sm80 = Parse("cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_nn_align8");
  EXPECT_EQ(PreNativeFinding(*table, sm80, "blackwell-rtx", "RTX PRO 6000 Blackwell"), std::nullopt);
  const auto on_b200 = PreNativeFinding(*table, sm80, "blackwell", "B200");
  ASSERT_TRUE(on_b200.has_value());
  EXPECT_EQ(on_b200->rfind("on B200 (blackwell, own kernels sm100): built for sm80", 0), 0u) << *on_b200;
  const KernelInfo sm75 = Parse("cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1");
  const auto on_rtx = PreNativeFinding(*table, sm75, "blackwell-rtx", "RTX PRO 6000 Blackwell");
  ASSERT_TRUE(on_rtx.has_value());
  EXPECT_EQ(on_rtx->rfind("on RTX PRO 6000 Blackwell (blackwell-rtx, own kernels sm80): built for sm75", 0), 0u)
      << *on_rtx;
}

}  // namespace
}  // namespace ofu::kernels
