// Sweep files: which GEMMs ofu-gemm runs, and how.
//
// A sweep is a TOML file (docs/gemm-harness.md has the full format):
//
//     name = "square"                  # names the rows this sweep produces
//     min_seconds = 10.0               # default steady-loop length of its groups
//
//     [[group]]
//     name = "square-fp16"
//     square = [512, 1000, 4096]       # M = N = K for each
//     shapes = [[4096, 16384, 4096]]   # and/or explicit [M, N, K]
//     precisions = ["fp16", "bf16"]    # fp16 bf16 tf32 fp8 fp4 fp32
//     layouts = ["tn"]                 # cuBLAS ops of A and B: nn nt tn tt
//     iterations = 0                   # a minimum; raised to fill min_seconds
//     min_seconds = 10.0               # 2 to 3600; default 10 (kDefaultSteadySeconds)
//     clock_study = false              # also record point vs oversampled clock
//     power_limit_fractions = [0.6]    # clock study: extra runs at these
//                                      # fractions of the default power limit
//
// Expansion: every group gives shapes × precisions × layouts cases, in that
// nesting order (shape outermost), plus for each power-limit fraction one
// more case per combination. Shapes are in cuBLAS's (column-major) terms:
// the kernel's M, N and K, so the tile orientation is direct.
//
// Precision constraints that hold for cuBLASLt on every GPU are checked here
// (fp8 and fp4 take only layout "tn"); which precisions a GPU has is decided
// at run time from the spec database, not here.
//
// Errors (kMalformedInput) name the file, the line and the field; unknown
// keys are errors, so that a typo does not silently run the default.
//
// Pure apart from ReadSweepFile; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/kernels/kernel_name.h"

namespace ofu::gemm {

// The steady loop's length: at least kMinSteadySeconds, so that the
// counters cover several 0.25 s windows; kDefaultSteadySeconds where a
// sweep file says nothing. The default is 10 s because that is the length
// measured to agree (H100 SXM5, docs/results/2026-11-26-h100-sxm5/,
// stage-B/all.csv): corrected OFU -0.6 and -0.1 pp from MFU on the 10 s
// bf16 8192³ and 16384³ loops, where the 2-2.4 s loops on aligned shapes
// read -5.2 to +0.7 pp, mostly negative (bf16 8192³: -3.8; docs/gemm-harness.md,
// "The steady loop's length").
inline constexpr double kMinSteadySeconds = 2.0;
inline constexpr double kDefaultSteadySeconds = 10.0;
inline constexpr int64_t kMaxDimension = int64_t{1} << 20;
inline constexpr std::size_t kMaxCases = 100000;

struct GemmCase {
  std::string sweep;  // the sweep's name
  std::string group;  // the group's name
  int64_t m = 0, n = 0, k = 0;
  kernels::Precision precision = kernels::Precision::kBf16;
  std::string layout = "tn";  // op(A) op(B): 't' transposed, 'n' not
  int64_t min_iterations = 0;
  double min_seconds = kDefaultSteadySeconds;
  bool clock_study = false;
  std::optional<double> power_limit_fraction;  // absent: the default limit
};

struct Sweep {
  std::string name;
  std::string source_name;
  std::vector<GemmCase> cases;
};

// Precisions a sweep may name: fp16 bf16 tf32 fp8 fp4 fp32 (fp32: CUDA-core
// SIMT GEMM; fp8: E4M3; fp4: NVFP4, Blackwell only).
bool IsSweepPrecision(kernels::Precision precision);

Result<Sweep> ParseSweep(std::string_view toml_text, std::string_view source_name);

// Errors: kIo when the file cannot be read; ParseSweep's otherwise.
Result<Sweep> ReadSweepFile(const std::string& path);

// "4096x4096x4096 bf16 tn" (plus " @60% power" for a reduced limit).
std::string DescribeCase(const GemmCase& c);

}  // namespace ofu::gemm
