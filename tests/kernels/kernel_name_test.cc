// The kernel-name parser against every public name in tests/data/kernel-names.tsv
// (each field exactly; an empty cell means the field must be absent), and
// hand-written cases for what the reference file does not cover.
#include "ofu/kernels/kernel_name.h"

#include <fstream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ofu::kernels {
namespace {

// One row of kernel-names.tsv: name, family, tile_m, tile_n, tile_k, stages,
// cluster_m, cluster_n, precision, tensor_core, seen_on, source.
struct Row {
  int line = 0;
  std::vector<std::string> cells;
};

// So that gtest names a failing row by its line and kernel name.
void PrintTo(const Row& row, std::ostream* os) {
  *os << "line " << row.line << ": " << (row.cells.empty() ? "" : row.cells[0]);
}

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> cells;
  std::size_t start = 0;
  while (true) {
    const std::size_t tab = line.find('\t', start);
    cells.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return cells;
    start = tab + 1;
  }
}

std::vector<Row> LoadRows() {
  std::ifstream in(std::string(OFU_TEST_DATA_DIR) + "/kernel-names.tsv");
  std::vector<Row> rows;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    rows.push_back(Row{number, SplitTabs(line)});
  }
  return rows;
}

std::optional<int> ExpectedInt(const std::string& cell) {
  if (cell.empty()) return std::nullopt;
  return std::stoi(cell);
}

std::optional<std::string> PrecisionOf(const KernelInfo& info) {
  if (!info.precision) return std::nullopt;
  return std::string(PrecisionName(*info.precision));
}

class ReferenceName : public ::testing::TestWithParam<Row> {};

TEST_P(ReferenceName, ParsesToEveryListedField) {
  const Row& row = GetParam();
  ASSERT_EQ(row.cells.size(), 12u) << "kernel-names.tsv line " << row.line << " needs 12 tab-separated cells";
  const auto& c = row.cells;
  SCOPED_TRACE("kernel-names.tsv line " + std::to_string(row.line) + ": " + c[0]);

  const auto result = ParseKernelName(c[0]);
  ASSERT_TRUE(result.ok()) << result.error().message;
  const KernelInfo& info = *result;
  EXPECT_EQ(FamilyName(info.family), c[1]);
  EXPECT_EQ(info.tile_m, ExpectedInt(c[2]));
  EXPECT_EQ(info.tile_n, ExpectedInt(c[3]));
  EXPECT_EQ(info.tile_k, ExpectedInt(c[4]));
  EXPECT_EQ(info.stages, ExpectedInt(c[5]));
  EXPECT_EQ(info.cluster_m, ExpectedInt(c[6]));
  EXPECT_EQ(info.cluster_n, ExpectedInt(c[7]));
  EXPECT_EQ(PrecisionOf(info), c[8].empty() ? std::nullopt : std::optional<std::string>(c[8]));
  const std::optional<bool> tensor = c[9].empty() ? std::nullopt : std::optional<bool>(c[9] == "true");
  EXPECT_EQ(info.tensor_core, tensor);
  // The file lists split-K only through the name itself.
  EXPECT_EQ(info.split_k, c[0].find("_splitK_") != std::string::npos);
  EXPECT_FALSE(info.two_cta);
}

INSTANTIATE_TEST_SUITE_P(KernelNamesTsv, ReferenceName, ::testing::ValuesIn(LoadRows()),
                         [](const ::testing::TestParamInfo<Row>& param_info) {
                           return "line" + std::to_string(param_info.param.line);
                         });

TEST(KernelNamesTsv, HasEveryReferenceRow) {
  // Guards against a missing or truncated file (which would leave no cases above).
  EXPECT_GE(LoadRows().size(), 17u);
}

// --- what the reference file does not cover ---------------------------------

void ExpectUnparsed(const std::string& name, const std::string& reason_part) {
  SCOPED_TRACE(name);
  const auto result = ParseKernelName(name);
  ASSERT_FALSE(result.ok()) << "parsed as " << FamilyName(result->family);
  EXPECT_EQ(result.error().code, ErrorCode::kMalformedInput);
  EXPECT_NE(result.error().message.find(reason_part), std::string::npos) << result.error().message;
}

TEST(KernelName, UnknownNamesAreUnparsedWithAReason) {
  ExpectUnparsed("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                 "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
                 "no GEMM kernel identifier");
  ExpectUnparsed("flash_fwd_kernel", "not a GEMM kernel family");
  ExpectUnparsed("", "empty kernel name");
  ExpectUnparsed("nvjet_", "at least 8");
  ExpectUnparsed("nvjet_tst_64x8_64x16_4x1_v_bz_@@@", "no GEMM kernel identifier");
  ExpectUnparsed("nvjet_tst_64xQ_64x16_4x1_v_bz_TNT", "tile <TM>x<TN>");
  ExpectUnparsed("nvjet_tzt_64x8_64x16_4x1_v_bz_TNT", "type letter 'z'");
  ExpectUnparsed("nvjet_tst_64x8_64x16_4x1_v_bz_splitK_XYZ", "operand layouts");
  ExpectUnparsed("nvjet_tst_64x8_64x16_4x1_v_bz_streamK_TNT", "unknown flag 'streamK'");  // never read as no split
  ExpectUnparsed("nvjet_tst_64x8_64x16_4x1_q_bz_TNT", "'v' or 'h'");
  ExpectUnparsed("nvjet_tst_99999999x8_64x16_4x1_v_bz_TNT", "tile <TM>x<TN>");
  ExpectUnparsed("sm90_xmma_conv_fprop_f16f16_tilesize64x64x64", "not a GEMM kernel");
  ExpectUnparsed("cutlass_80_foo_s16816gemm_bf16_64x64_32x6_nn_align8", "op class");
  ExpectUnparsed("cutlass3x_sm90_tensorop_gemm_f16_f16_f32_f16_f32_128x128x64", "expected <TM>x<TN>x<TK>");
  ExpectUnparsed("ampere_bf16_foo_bf16_256x128", "GEMM field");
  ExpectUnparsed("nvjet_tst_0x8_64x16_4x1_v_bz_TNT", "tile_m is 0");
  ExpectUnparsed("nvjet_tst_64x8_64x16_4x1_v_bz_TNT@", "no GEMM kernel identifier");
}

TEST(KernelName, Cutlass3RuntimeClusterIsAbsent) {
  const auto result = ParseKernelName("cutlass3x_sm90_tensorop_gemm_f16_f16_f32_f16_f32_128x128x64_0x0x1_0_ntn_align8");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->family, KernelFamily::kCutlass3);
  EXPECT_EQ(result->tile_m, 128);
  EXPECT_EQ(result->tile_k, 64);
  EXPECT_EQ(result->cluster_m, std::nullopt);
  EXPECT_EQ(result->cluster_n, std::nullopt);
  EXPECT_EQ(result->stages, std::nullopt);  // 0: chosen by the builder
}

TEST(KernelName, Cutlass3ExplicitStagesAnd2Sm) {
  const auto result = ParseKernelName(
      "cutlass3x_sm100_tensorop_gemm_e4m3_e4m3_f32_bf16_bf16_256x128x128_2x1x1_4_tnn_align16_2sm");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->stages, 4);
  EXPECT_EQ(result->cluster_m, 2);
  EXPECT_EQ(result->precision, Precision::kFp8);
  EXPECT_TRUE(result->two_cta);
}

TEST(KernelName, Cutlass3MixedInputHasNoPrecision) {
  const auto result = ParseKernelName("cutlass3x_sm90_tensorop_gemm_bf16_s8_f32_bf16_bf16_128x128x64_1x1x1_0_tnn_align8");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->precision, std::nullopt);
  EXPECT_EQ(result->tensor_core, true);
}

TEST(KernelName, NvjetSplitKAnd2Cta) {
  const auto split = ParseKernelName("nvjet_tst_64x8_64x16_4x1_v_bz_splitK_TNT");
  ASSERT_TRUE(split.ok()) << split.error().message;
  EXPECT_TRUE(split->split_k);
  EXPECT_FALSE(split->two_cta);
  const auto plain = ParseKernelName("nvjet_tst_64x8_64x16_4x1_v_bz_TNT");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->split_k);

  const auto pair = ParseKernelName("nvjet_qqtst_256x128_64x4_2x1_2cta_v_bz_TNN");
  ASSERT_TRUE(pair.ok()) << pair.error().message;
  EXPECT_TRUE(pair->two_cta);
  EXPECT_EQ(pair->precision, Precision::kFp8);
  EXPECT_EQ(pair->tile_m, 256);
  EXPECT_EQ(pair->cluster_m, 2);
}

TEST(KernelName, NvjetFp32InputsLeaveTensorCoreAndPrecisionAbsent) {
  // An fp32 nvjet kernel could run on TF32 tensor cores or on CUDA cores.
  const auto result = ParseKernelName("nvjet_sss_64x8_64x16_4x1_v_bz_TNT");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->tensor_core, std::nullopt);
  EXPECT_EQ(result->precision, std::nullopt);
}

TEST(KernelName, SimtSgemmIsFp32WithoutTensorCores) {
  for (const char* name : {"ampere_sgemm_128x64_nn", "ampere_sgemm_64x32_sliced1x4_tn"}) {
    SCOPED_TRACE(name);
    const auto result = ParseKernelName(name);
    ASSERT_TRUE(result.ok()) << result.error().message;
    EXPECT_EQ(result->family, KernelFamily::kAmpere);
    EXPECT_EQ(result->tensor_core, false);
    EXPECT_EQ(result->precision, Precision::kFp32);
    EXPECT_EQ(result->tile_k, std::nullopt);
    EXPECT_EQ(result->stages, std::nullopt);
  }
  const auto cutlass = ParseKernelName("cutlass_simt_sgemm_128x128_8x2_nn_align1");
  ASSERT_TRUE(cutlass.ok()) << cutlass.error().message;
  EXPECT_EQ(cutlass->tensor_core, false);
  EXPECT_EQ(cutlass->precision, Precision::kFp32);
  EXPECT_EQ(cutlass->tile_k, 8);
  EXPECT_EQ(cutlass->stages, 2);
}

TEST(KernelName, Sm80XmmaTensorIsTf32ForFp32Inputs) {
  const auto result =
      ParseKernelName("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x16_stage4_warpsize2x2x1_tensor16x8x8");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->tensor_core, true);
  EXPECT_EQ(result->precision, Precision::kTf32);
  EXPECT_EQ(result->stages, 4);
}

TEST(KernelName, Sm90XmmaClusterFromCgasize) {
  const auto result = ParseKernelName(
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_cgasize1x2x1_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->cluster_m, 1);
  EXPECT_EQ(result->cluster_n, 2);
  EXPECT_EQ(result->precision, Precision::kBf16);
}

TEST(KernelName, DemangledCutlassWrapperIsUnwrapped) {
  const auto result = ParseKernelName(
      "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_nn_align8>"
      "(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_nn_align8::Params)");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->identifier, "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_nn_align8");
  EXPECT_EQ(result->family, KernelFamily::kCutlass2);
  EXPECT_EQ(result->tile_m, 64);
  EXPECT_EQ(result->stages, 6);
  EXPECT_EQ(result->precision, Precision::kBf16);
}

TEST(KernelName, WrapperWithTwoDifferentKernelsIsUnparsed) {
  ExpectUnparsed("void f<ampere_sgemm_128x64_nn, ampere_sgemm_64x64_nn>()", "two different");
}

}  // namespace
}  // namespace ofu::kernels
