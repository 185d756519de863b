// How many FLOPs per tensor-active cycle a GEMM kernel delivers on the GPU
// it runs on, relative to that GPU architecture's own kernels.
//
// Tensor activity counts cycles in which a tensor pipe is busy, not the
// FLOPs done in them. A kernel built for an older architecture (cuBLAS picks
// cutlass_75_tensorop_*_s1688gemm for a bf16 GEMM whose dimensions are not
// multiples of 8, even on an H100) issues that architecture's MMA
// instructions, which keep the pipe busy for fewer FLOPs: on one H100 such
// kernels delivered 0.47 (bf16/fp16, sm75 m16n8k8) and 0.67 (tf32, sm80
// m16n8k8) of what Hopper's warpgroup-MMA kernels do per tensor-active cycle
// (data/kernel_throughput.json, with its sources). Raw OFU then reads about
// twice the true MFU.
//
// The table (data/kernel_throughput.json, compiled in) holds, per GPU
// architecture, the lowest kernel target that is native there (hopper: 90),
// and measured figures for pre-native families, keyed by GPU architecture,
// the kernel's target SM, its MMA instruction shape and precision. A
// pre-native kernel with no figure gets none: Classify says so, and callers
// name the family in a note instead of guessing a factor.
//
// Thread-safety: immutable after Parse/Embedded; share freely.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/kernels/kernel_name.h"

namespace ofu::kernels {

// One measured figure of the table.
struct ThroughputFigure {
  std::string architecture;  // GPU architecture it was measured on, as data/gpu_specs.json names it ("hopper")
  int kernel_sm = 0;         // KernelInfo::target_sm of the family
  std::string mma_shape;     // KernelInfo::mma_shape ("1688"); empty matches any
  std::vector<Precision> precisions;
  double relative_throughput = 0;  // (0, 1]: FLOPs per tensor-active cycle / the native kernels'
  std::string label;               // the family, for a person
  std::string measured_on;         // GPU, driver, date
  std::string source;              // the files and cases it comes from
};

// What the table says about one kernel on one GPU architecture.
struct KernelGeneration {
  bool pre_native = false;                   // the kernel targets an older SM than the architecture's native kernels
  int kernel_sm = 0;                         // set when pre_native
  int native_sm = 0;                         // set when pre_native
  const ThroughputFigure* figure = nullptr;  // the measured figure, when there is one (owned by the table)
  // "sm75 s1688 bf16": the family as ofu names it in notes and JSON.
  std::string family;
  // The throughput to count its tensor time at: the figure's, else 1
  // (a native kernel, or a pre-native one nobody measured).
  double RelativeThroughput() const;
};

class KernelThroughputTable {
 public:
  // Parses the JSON text of a table file; `source_name` names it in errors
  // (kMalformedInput: a missing or out-of-range field, with its index).
  static Result<KernelThroughputTable> Parse(std::string_view json_text, std::string_view source_name);
  // data/kernel_throughput.json as compiled into the program.
  static Result<KernelThroughputTable> Embedded();

  // `info` is a parsed tensor-core GEMM kernel, `architecture` the GPU's
  // (GpuSpec::architecture). Not pre-native when the architecture is not in
  // the table, the kernel's target_sm is absent, or it is at least the
  // architecture's native SM.
  KernelGeneration Classify(const KernelInfo& info, Precision precision, std::string_view architecture) const;

  // The lowest kernel target native on `architecture`; absent when unknown.
  std::optional<int> NativeSm(std::string_view architecture) const;
  const std::vector<ThroughputFigure>& figures() const { return figures_; }

 private:
  struct Architecture {
    std::string name;
    int native_sm = 0;
  };
  std::vector<Architecture> architectures_;
  std::vector<ThroughputFigure> figures_;
};

// The multiple ofu advises for a GEMM dimension, in elements, so that every
// row starts 16-byte aligned and cuBLAS can choose the GPU's own kernels: 8
// for 16-bit types (on the H100, 4097, 8191 and 12289 fell back to sm75/sm80
// kernels and 4096, 8192, 12288 did not), also 8 for tf32 (4 would align
// 16 bytes; 8 is what was measured), 16 for fp8 and int8, 32 for fp4.
int NativeAlignment(Precision precision);

// What running `info` on `architecture` costs when the kernel is pre-native
// there, in words for a person: the architectures, the measured share of the
// native FLOPs per tensor-active cycle and how far OFU reads above MFU (or
// that nobody measured it), why cuBLAS picked it, and the alignment that
// avoids it. Absent for a native kernel, an architecture the table does not
// know, or a kernel whose precision the name does not give. `gpu_name`
// names the GPU in the text ("H100 SXM5", "a hopper GPU").
std::optional<std::string> PreNativeFinding(const KernelThroughputTable& table, const KernelInfo& info,
                                            std::string_view architecture, std::string_view gpu_name);

// PreNativeFinding on every architecture the table has a measured figure
// for, once each in the table's order, naming each "a <architecture> GPU":
// what a kernel costs when the GPU it runs on is not known.
std::vector<std::string> PreNativeFindingsWhereMeasured(const KernelThroughputTable& table, const KernelInfo& info);

}  // namespace ofu::kernels
