// End-to-end tests of `ofu kernels parse`: the JSON contract and exit status.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace {

class KernelsCli : public ofu::testing::CliTest {};

constexpr const char* kKeys[] = {"family",    "tile_m",    "tile_n",      "tile_k",  "stages", "cluster_m",
                                 "cluster_n", "precision", "tensor_core", "split_k", "two_cta"};

TEST_F(KernelsCli, JsonHasEveryKeyWithNullsAndExitsTwoOnUnparsed) {
  auto result = Ofu("kernels parse --format json ampere_sgemm_128x64_nn flash_fwd_kernel");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  ASSERT_EQ(json.size(), 2u);

  const auto& parsed = json[0];
  EXPECT_EQ(parsed["name"], "ampere_sgemm_128x64_nn");
  EXPECT_EQ(parsed["parsed"], true);
  EXPECT_FALSE(parsed.contains("reason"));
  for (const char* key : kKeys) EXPECT_TRUE(parsed.contains(key)) << key;
  EXPECT_EQ(parsed["family"], "ampere");
  EXPECT_EQ(parsed["tile_m"], 128);
  EXPECT_EQ(parsed["tile_n"], 64);
  EXPECT_TRUE(parsed["tile_k"].is_null());
  EXPECT_TRUE(parsed["stages"].is_null());
  EXPECT_TRUE(parsed["cluster_m"].is_null());
  EXPECT_TRUE(parsed["cluster_n"].is_null());
  EXPECT_EQ(parsed["precision"], "fp32");
  EXPECT_EQ(parsed["tensor_core"], false);
  EXPECT_EQ(parsed["split_k"], false);
  EXPECT_EQ(parsed["two_cta"], false);

  const auto& unparsed = json[1];
  EXPECT_EQ(unparsed["name"], "flash_fwd_kernel");
  EXPECT_EQ(unparsed["parsed"], false);
  EXPECT_FALSE(unparsed["reason"].get<std::string>().empty());
  for (const char* key : kKeys) {
    ASSERT_TRUE(unparsed.contains(key)) << key;
    EXPECT_TRUE(unparsed[key].is_null()) << key;
  }
}

TEST_F(KernelsCli, AllParsedExitsZero) {
  auto result =
      Ofu("kernels parse --format json nvjet_tst_64x8_64x16_4x1_v_bz_splitK_TNT "
          "cutlass3x_sm90_tensorop_gemm_f16_f16_f32_f16_f32_128x128x64_0x0x1_0_ntn_align8");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0]["split_k"], true);
  EXPECT_EQ(json[0]["cluster_m"], 4);
  EXPECT_TRUE(json[1]["cluster_m"].is_null());  // 0x0x1: chosen at run time
}

TEST_F(KernelsCli, TableReadsNamesFromStdinAndShowsTheReason) {
  const auto names = Write("names.txt", "ampere_sgemm_128x64_nn\n\nnvjet_garbage\r\n");
  auto result = Ofu("kernels parse - < '" + names.string() + "'");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.out.find("ampere "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("unparsed   nvjet_garbage\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("reason: a GEMM whose tile and precision ofu cannot read from the name: nvjet:"),
            std::string::npos)
      << result.out;
}

TEST_F(KernelsCli, DeepGemmReadsAndEveryUnreadGemmHasOneReason) {
  // deepseek-ai/profile-data prefill.json's MoE GEMM (tests/data/kernel-names-real.tsv), a
  // Triton matmul (triton-lang/triton#6401) and a DeepSeek grouped GEMM without a tile.
  auto result =
      Ofu("kernels parse --format json "
          "'void dpsk::gemm::fp8_gemm_kernel<4096u, 7168u, 128u, 128u, 128u, 5u, 128u, 128u, 2u, "
          "(dpsk::gemm::GemmType)1>(__nv_bfloat16*, float*, int*, unsigned int, unsigned int, CUtensorMap_st, "
          "CUtensorMap_st, CUtensorMap_st, CUtensorMap_st)' "
          "matmul_kernel_persistent "
          "'void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>(int)'");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  ASSERT_EQ(json.size(), 3u);
  EXPECT_EQ(json[0]["family"], "deepgemm");
  EXPECT_EQ(json[0]["tile_n"], 128);
  EXPECT_EQ(json[0]["stages"], 5);
  EXPECT_EQ(json[0]["precision"], "fp8");
  EXPECT_EQ(json[0]["grouping"], "m_grouped_contiguous");
  for (const std::size_t i : {1u, 2u}) {
    EXPECT_EQ(json[i]["gemm"], true);
    EXPECT_EQ(json[i]["reason"].get<std::string>().rfind(
                  "a GEMM whose tile and precision ofu cannot read from the name: no", 0),
              0u)
        << json[i]["reason"];
  }
  auto table = Ofu("kernels parse matmul_kernel");
  EXPECT_NE(table.out.find("reason: a GEMM whose tile and precision ofu cannot read from the name: not a kernel "
                           "family ofu reads"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("name says: a GEMM\n"), std::string::npos) << table.out;
}

TEST_F(KernelsCli, UnparsedGemmSaysWhatItsNameTellsAndUnknownFlagsAreKept) {
  auto result =
      Ofu("kernels parse --format json "
          "'void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>(int)' "
          "'void mylib::xsgemm_batched_kernel<float>(float*)' "
          "nvjet_tst_64x8_64x16_4x1_v_bz_fooBar_TNT flash_fwd_kernel");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  ASSERT_EQ(json.size(), 4u);
  EXPECT_EQ(json[0]["parsed"], false);
  EXPECT_EQ(json[0]["gemm"], true);
  EXPECT_TRUE(json[0]["tensor_core"].is_null());  // the name does not say
  EXPECT_EQ(json[1]["parsed"], false);
  EXPECT_EQ(json[1]["gemm"], true);
  EXPECT_EQ(json[1]["tensor_core"], false);  // an SIMT gemm word
  EXPECT_EQ(json[2]["parsed"], true);
  EXPECT_EQ(json[2]["gemm"], true);
  EXPECT_EQ(json[2]["tile_m"], 64);
  EXPECT_EQ(json[2]["unknown_flags"], nlohmann::json::array({"fooBar"}));
  EXPECT_EQ(json[3]["gemm"], false);

  auto table =
      Ofu("kernels parse 'void mylib::xsgemm_batched_kernel<float>(float*)' "
          "nvjet_tst_64x8_64x16_4x1_v_bz_fooBar_TNT");
  EXPECT_EQ(table.exit_code, 2) << table.err;
  EXPECT_NE(table.out.find("name says: a GEMM on CUDA cores (simt)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("fooBar?"), std::string::npos) << table.out;
}

TEST_F(KernelsCli, NamesThatAreNotUtf8StillGiveJson) {
  // Found by fuzz_kernel_name's input through the CLI: a byte that is not UTF-8
  // used to end the program (nlohmann::json's dump throws); it is replaced.
  const auto names = Write("names.txt", std::string("matmul_kernel_\xE1\n"));
  auto result = Ofu("kernels parse --format json - < '" + names.string() + "'");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  ASSERT_EQ(json.size(), 1u);
  EXPECT_EQ(json[0]["name"], "matmul_kernel_\xEF\xBF\xBD");  // U+FFFD
  EXPECT_EQ(json[0]["parsed"], false);
}

TEST_F(KernelsCli, NoNameIsAUsageError) {
  EXPECT_EQ(Ofu("kernels parse").exit_code, 1);
  EXPECT_EQ(Ofu("kernels parse --format xml nvjet_tst_64x8_64x16_4x1_v_bz_TNT").exit_code, 1);
}

}  // namespace

namespace {

TEST_F(KernelsCli, APreHopperKernelGetsAFindingOnAnH100) {
  // The kernel cuBLAS ran for bf16 4097^3 on the H100 (docs/results/2026-11-26-h100-sxm5).
  auto result = Ofu("kernels parse --gpu-model h100-sxm5 cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("finding: on H100 SXM5 (hopper, own kernels sm90): built for sm75, it did 0.513 of the "
                            "native FLOPs per tensor-active cycle"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("so OFU reads 1.9x its MFU (align1: cuBLAS picks such kernels when a dimension is not a "
                            "multiple of 8); make M, N and K multiples of 8"),
            std::string::npos)
      << result.out;

  auto json_result =
      Ofu("kernels parse --format json nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT "
          "cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1");
  ASSERT_EQ(json_result.exit_code, 0) << json_result.err;
  const auto json = nlohmann::json::parse(json_result.out);
  EXPECT_EQ(json[0]["target_sm"], 90);
  EXPECT_TRUE(json[0]["findings"].empty());  // Hopper's own
  EXPECT_EQ(json[1]["target_sm"], 75);
  EXPECT_EQ(json[1]["mma_shape"], "1688");
  EXPECT_EQ(json[1]["alignment"], 1);
  ASSERT_EQ(json[1]["findings"].size(), 1u);  // against hopper, the one architecture with a figure
  EXPECT_NE(json[1]["findings"][0].get<std::string>().find("on a hopper GPU"), std::string::npos);

  EXPECT_EQ(Ofu("kernels parse --gpu-model no-such-gpu nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT").exit_code, 3);
}

}  // namespace
