// Tile quantization: how many FLOPs a GEMM kernel executes for the problem it
// was given, against the 2·M·N·K the problem needs (DESIGN.md §2, property 1).
//
// A kernel covers its output with whole tiles TM×TN, and walks K in steps of
// TK. Thread-block clusters CM×CN group tiles, and a cluster is launched whole,
// so along M the work is padded to a multiple of TM·CM (likewise N):
//
//     E = 2 · batch · ⌈M/(TM·CM)⌉·TM·CM · ⌈N/(TN·CN)⌉·TN·CN · ⌈K/TK⌉·TK
//     U = 2 · batch · M · N · K
//
// Orientation. cuBLAS is column-major; PyTorch asks it for a row-major
// C[m,n] = A·B by computing Cᵀ = Bᵀ·Aᵀ, so the kernel's M is the framework's
// n and its N the framework's m (TileOrientation::kSwapped, the default).
// DESIGN.md §4 warns that which tile side maps to which dimension must still
// be confirmed on real runs; kDirect is the other reading, so a user (or a
// calibration) can choose.
//
// What this does not count: split-K (K cut into S slices, each padded to TK)
// when S is unknown — K is padded once, a lower bound on E; wave
// quantization (idle SMs in the last wave) — it lowers OFU and MFU alike and
// needs no correction.
//
// Pure; thread-safe.
#pragma once

#include <cstdint>

#include "ofu/core/result.h"
#include "ofu/kernels/gemm_problem.h"

namespace ofu::kernels {

enum class TileOrientation { kSwapped, kDirect };

// The padding granularity along each of the kernel's dimensions.
struct TileShape {
  int64_t tile_m = 0, tile_n = 0, tile_k = 0;  // tile_k 0: K is not padded (unknown)
  int64_t cluster_m = 1, cluster_n = 1;
};

// One dimension: the size asked for, what the kernel ran, and the step.
struct PaddedDim {
  int64_t size = 0;
  int64_t padded = 0;
  int64_t step = 0;  // tile × cluster (1 when not padded)
  int64_t tile = 0;  // the tile alone
  int64_t cluster = 1;
};

struct PaddedGemm {
  // In the kernel's orientation.
  PaddedDim m, n, k;
  int64_t batch = 1;
  double useful_flops = 0;    // U
  double executed_flops = 0;  // E ≥ U
};

// The problem as the kernel sees it.
GemmProblem KernelOrientation(const GemmProblem& framework, TileOrientation orientation);

// E and U for `problem` given in the kernel's orientation. Error
// (kInvalidArgument) when tile_m, tile_n or a cluster size is not positive,
// tile_k is negative, any of them passes 2^20, or a size is negative or
// passes 2^53.
Result<PaddedGemm> PadGemm(const GemmProblem& kernel_problem, const TileShape& tile);

}  // namespace ofu::kernels
