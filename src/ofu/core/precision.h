// The input (A/B operand) precision of tensor-pipe work, and its names in
// output and input ("bf16", "fp8", ...). It is core's because more than one
// layer reads or writes it: kernel names (kernels/), the MFU and training
// logs that name the precision their MFU divides by (formats/), corrections
// and reconciliation (analysis/). kernels/kernel_name.h re-exports it as
// kernels::Precision.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

namespace ofu {

enum class Precision { kFp16, kBf16, kTf32, kFp8, kFp4, kFp32, kInt8 };

// Lower-case names used in output: "fp16", "bf16", "tf32", "fp8", "fp4",
// "fp32", "int8".
constexpr std::string_view PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kFp16: return "fp16";
    case Precision::kBf16: return "bf16";
    case Precision::kTf32: return "tf32";
    case Precision::kFp8: return "fp8";
    case Precision::kFp4: return "fp4";
    case Precision::kFp32: return "fp32";
    case Precision::kInt8: return "int8";
  }
  return "unknown";
}

// The inverse of PrecisionName; absent for any other text (case matters).
constexpr std::optional<Precision> PrecisionFromName(std::string_view name) {
  for (Precision p : {Precision::kFp16, Precision::kBf16, Precision::kTf32, Precision::kFp8, Precision::kFp4,
                      Precision::kFp32, Precision::kInt8}) {
    if (PrecisionName(p) == name) return p;
  }
  return std::nullopt;
}

}  // namespace ofu
