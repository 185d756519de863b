// Tile and cluster padding (gemm_padding.h), against counts worked out by hand.
#include "ofu/kernels/gemm_padding.h"

#include <gtest/gtest.h>

namespace ofu::kernels {
namespace {

PaddedGemm Must(const GemmProblem& problem, const TileShape& tile) {
  auto padded = PadGemm(problem, tile);
  EXPECT_TRUE(padded.ok()) << (padded.ok() ? "" : padded.error().message);
  return padded.ok() ? *padded : PaddedGemm{};
}

TEST(GemmPadding, SwappedOrientationPutsFrameworkNOnKernelM) {
  const GemmProblem framework{4096, 4097, 4096, 1};
  EXPECT_EQ(KernelOrientation(framework, TileOrientation::kSwapped), (GemmProblem{4097, 4096, 4096, 1}));
  EXPECT_EQ(KernelOrientation(framework, TileOrientation::kDirect), framework);
}

TEST(GemmPadding, TileAndClusterPadding) {
  // Kernel M 4097 with 256-wide tiles in clusters of 2: steps of 512, 9 of them = 4608.
  const PaddedGemm p = Must({4097, 4096, 4096, 1}, {256, 128, 64, 2, 1});
  EXPECT_EQ(p.m.padded, 4608);
  EXPECT_EQ(p.m.step, 512);
  EXPECT_EQ(p.n.padded, 4096);
  EXPECT_EQ(p.k.padded, 4096);
  EXPECT_DOUBLE_EQ(p.useful_flops, 2.0 * 4097 * 4096 * 4096);
  EXPECT_DOUBLE_EQ(p.executed_flops, 2.0 * 4608 * 4096 * 4096);
  EXPECT_DOUBLE_EQ(p.useful_flops / p.executed_flops, 4097.0 / 4608.0);
}

TEST(GemmPadding, KPaddedToTileK) {
  const PaddedGemm p = Must({1024, 1024, 1000, 1}, {128, 128, 64, 1, 1});
  EXPECT_EQ(p.k.padded, 1024);
  EXPECT_DOUBLE_EQ(p.useful_flops / p.executed_flops, 1000.0 / 1024.0);
}

TEST(GemmPadding, UnknownTileKLeavesKAlone) {
  const PaddedGemm p = Must({1024, 1024, 1000, 1}, {128, 128, 0, 1, 1});
  EXPECT_EQ(p.k.padded, 1000);
  EXPECT_DOUBLE_EQ(p.useful_flops, p.executed_flops);
}

TEST(GemmPadding, DecodeShapeAndBatch) {
  // M = 8 tokens on a 64-wide tile, 4 batches.
  const PaddedGemm p = Must({8, 4096, 4096, 4}, {64, 128, 64, 1, 1});
  EXPECT_EQ(p.m.padded, 64);
  EXPECT_DOUBLE_EQ(p.useful_flops, 2.0 * 4 * 8 * 4096 * 4096);
  EXPECT_DOUBLE_EQ(p.executed_flops, 2.0 * 4 * 64 * 4096 * 4096);
}

TEST(GemmPadding, EmptyProblemDoesNoWork) {
  const PaddedGemm p = Must({0, 4096, 4096, 1}, {128, 128, 64, 1, 1});
  EXPECT_EQ(p.useful_flops, 0);
  EXPECT_EQ(p.executed_flops, 0);
}

TEST(GemmPadding, UnusableTilesAreErrors) {
  EXPECT_FALSE(PadGemm({16, 16, 16, 1}, {0, 128, 64, 1, 1}).ok());
  EXPECT_FALSE(PadGemm({16, 16, 16, 1}, {128, 128, -1, 1, 1}).ok());
  EXPECT_FALSE(PadGemm({16, 16, 16, 1}, {128, 128, 64, 0, 1}).ok());
  EXPECT_FALSE(PadGemm({-1, 16, 16, 1}, {128, 128, 64, 1, 1}).ok());
}

}  // namespace
}  // namespace ofu::kernels
