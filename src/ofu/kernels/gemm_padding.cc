#include "ofu/kernels/gemm_padding.h"

#include <fmt/format.h>

namespace ofu::kernels {
namespace {

PaddedDim Pad(int64_t size, int64_t tile, int64_t cluster) {
  PaddedDim dim;
  dim.size = size;
  dim.tile = tile;
  dim.cluster = cluster;
  dim.step = tile == 0 ? 1 : tile * cluster;
  dim.padded = (size + dim.step - 1) / dim.step * dim.step;
  return dim;
}

}  // namespace

GemmProblem KernelOrientation(const GemmProblem& framework, TileOrientation orientation) {
  if (orientation == TileOrientation::kDirect) return framework;
  return GemmProblem{framework.n, framework.m, framework.k, framework.batch};
}

Result<PaddedGemm> PadGemm(const GemmProblem& problem, const TileShape& tile) {
  constexpr int64_t kMaxStep = int64_t{1} << 20;  // far above any real tile or cluster
  if (tile.tile_m <= 0 || tile.tile_n <= 0 || tile.tile_k < 0 || tile.cluster_m <= 0 || tile.cluster_n <= 0 ||
      tile.tile_m > kMaxStep || tile.tile_n > kMaxStep || tile.tile_k > kMaxStep || tile.cluster_m > kMaxStep ||
      tile.cluster_n > kMaxStep) {
    return Error::InvalidArgument("tile {}x{}x{} with cluster {}x{} is not a usable tile", tile.tile_m, tile.tile_n,
                                  tile.tile_k, tile.cluster_m, tile.cluster_n);
  }
  for (int64_t size : {problem.m, problem.n, problem.k, problem.batch}) {
    if (size < 0 || size > (int64_t{1} << 53)) {
      return Error::InvalidArgument("GEMM size {} is out of range", size);
    }
  }
  PaddedGemm padded;
  padded.m = Pad(problem.m, tile.tile_m, tile.cluster_m);
  padded.n = Pad(problem.n, tile.tile_n, tile.cluster_n);
  padded.k = Pad(problem.k, tile.tile_k, 1);
  padded.batch = problem.batch;
  const double batch = static_cast<double>(problem.batch);
  padded.useful_flops = 2.0 * batch * static_cast<double>(problem.m) * static_cast<double>(problem.n) *
                        static_cast<double>(problem.k);
  padded.executed_flops = 2.0 * batch * static_cast<double>(padded.m.padded) * static_cast<double>(padded.n.padded) *
                          static_cast<double>(padded.k.padded);
  return padded;
}

}  // namespace ofu::kernels
