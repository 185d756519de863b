// GEMM shapes from framework ops, checked against shapes worked out by hand
// from PyTorch's ATen signatures (gemm_problem.h).
#include "ofu/kernels/gemm_problem.h"

#include <gtest/gtest.h>

namespace ofu::kernels {
namespace {

using Dims = std::vector<std::vector<int64_t>>;

GemmProblem Must(std::string_view op, const Dims& dims) {
  auto problem = GemmProblemFromOp(op, dims);
  EXPECT_TRUE(problem.ok()) << (problem.ok() ? "" : problem.error().message);
  return problem.ok() ? *problem : GemmProblem{};
}

TEST(GemmProblem, MatrixOps) {
  EXPECT_EQ(Must("aten::mm", {{4096, 4097}, {4097, 1000}}), (GemmProblem{4096, 1000, 4097, 1}));
  EXPECT_EQ(Must("mm", {{8, 16}, {16, 32}}), (GemmProblem{8, 32, 16, 1}));
  // addmm(bias, mat1, mat2): the bias is not part of the product.
  EXPECT_EQ(Must("aten::addmm", {{1000}, {64, 4096}, {4096, 1000}}), (GemmProblem{64, 1000, 4096, 1}));
  // _scaled_mm(A, B, scale_a, scale_b, ...): scales are scalars.
  EXPECT_EQ(Must("aten::_scaled_mm", {{4096, 8192}, {8192, 1024}, {}, {}}), (GemmProblem{4096, 1024, 8192, 1}));
}

TEST(GemmProblem, BatchedOps) {
  EXPECT_EQ(Must("aten::bmm", {{8, 128, 64}, {8, 64, 256}}), (GemmProblem{128, 256, 64, 8}));
  EXPECT_EQ(Must("aten::baddbmm", {{8, 128, 256}, {8, 128, 64}, {8, 64, 256}}), (GemmProblem{128, 256, 64, 8}));
}

TEST(GemmProblem, LinearFoldsLeadingDimsIntoM) {
  // x [4, 512, 4096] · Wᵀ with W [11008, 4096]: 2048 rows.
  EXPECT_EQ(Must("aten::linear", {{4, 512, 4096}, {11008, 4096}, {11008}}), (GemmProblem{2048, 11008, 4096, 1}));
  EXPECT_EQ(Must("aten::linear", {{7, 64}, {32, 64}}), (GemmProblem{7, 32, 64, 1}));
}

TEST(GemmProblem, MatmulCases) {
  EXPECT_EQ(Must("aten::matmul", {{4, 512, 4096}, {4096, 1024}}), (GemmProblem{2048, 1024, 4096, 1}));
  // Batch dims [2, 1] and [3] broadcast to [2, 3].
  EXPECT_EQ(Must("aten::matmul", {{2, 1, 16, 32}, {3, 32, 8}}), (GemmProblem{16, 8, 32, 6}));
  EXPECT_EQ(Must("aten::matmul", {{32}, {32, 8}}), (GemmProblem{1, 8, 32, 1}));
  EXPECT_EQ(Must("aten::matmul", {{4, 16, 32}, {32}}), (GemmProblem{64, 1, 32, 1}));
  EXPECT_EQ(Must("aten::matmul", {{5, 16, 32}, {5, 32, 8}}), (GemmProblem{16, 8, 32, 5}));
}

TEST(GemmProblem, ZeroSizedIsValid) { EXPECT_EQ(Must("aten::mm", {{0, 16}, {16, 32}}), (GemmProblem{0, 32, 16, 1})); }

TEST(GemmProblem, BadShapesAreErrorsThatSayWhy) {
  const auto error = [](std::string_view op, const Dims& dims) {
    auto problem = GemmProblemFromOp(op, dims);
    EXPECT_FALSE(problem.ok());
    return problem.ok() ? std::string() : problem.error().message;
  };
  EXPECT_NE(error("aten::mm", {{4, 5}, {6, 7}}).find("inner dimensions differ"), std::string::npos);
  EXPECT_NE(error("aten::addmm", {{4, 5}, {5, 7}}).find("at least 3 inputs"), std::string::npos);
  EXPECT_NE(error("aten::bmm", {{2, 4, 5}, {3, 5, 7}}).find("batch sizes differ"), std::string::npos);
  EXPECT_NE(error("aten::mm", {{4, 5, 6}, {6, 7}}).find("2-D"), std::string::npos);
  EXPECT_NE(error("aten::conv2d", {{1}, {1}}).find("not a GEMM op"), std::string::npos);
  EXPECT_NE(error("aten::mm", {{-4, 5}, {5, 7}}).find("negative"), std::string::npos);
  EXPECT_NE(error("aten::mm", {{int64_t{1} << 30, int64_t{1} << 20}, {int64_t{1} << 20, 1 << 10}}).find("too large"),
            std::string::npos);
  EXPECT_NE(error("aten::matmul", {{2, 4, 5}, {3, 5, 7}}).find("do not broadcast"), std::string::npos);
  EXPECT_NE(error("aten::linear", {{4, 5}, {7, 6}}).find("differs"), std::string::npos);
}

TEST(GemmProblem, TorchTypes) {
  EXPECT_EQ(PrecisionFromTorchType("c10::BFloat16"), Precision::kBf16);
  EXPECT_EQ(PrecisionFromTorchType("c10::Half"), Precision::kFp16);
  EXPECT_EQ(PrecisionFromTorchType("float"), Precision::kFp32);
  EXPECT_EQ(PrecisionFromTorchType("c10::Float8_e4m3fn"), Precision::kFp8);
  EXPECT_EQ(PrecisionFromTorchType("signed char"), Precision::kInt8);
  EXPECT_EQ(PrecisionFromTorchType("double"), std::nullopt);
  EXPECT_EQ(PrecisionFromTorchType(""), std::nullopt);
}

}  // namespace
}  // namespace ofu::kernels
