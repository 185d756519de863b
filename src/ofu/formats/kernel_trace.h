// What the trace readers hand to the analysis: GPU kernels, each linked (when
// the trace allows) to the framework GEMM op that launched it, with that op's
// input shapes and types.
//
// Two readers fill it: the PyTorch-profiler (Kineto) Chrome trace reader
// (kineto_trace.h) and the Nsight Systems SQLite export reader
// (nsys_sqlite.h). Both keep every kernel (GEMM or not, so that coverage can
// be reported) but only the framework ops that IsGemmOpName() accepts.
//
// Units: times in microseconds since the trace's own origin (Kineto's `ts`;
// Nsight's nanoseconds divided by 1000). Dimensions are element counts as the
// framework reports them, in the framework's (row-major) orientation.
//
// Memory: a trace may hold millions of kernels, so a kernel is a small
// record and its name an index into `kernel_names` (each distinct name is
// stored once).
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ofu::formats {

struct Dim3 {
  int64_t x = 0, y = 0, z = 0;
  friend bool operator==(const Dim3&, const Dim3&) = default;
};

// How a kernel was tied to its framework op.
enum class OpLink : uint8_t {
  kNone,                // no GEMM op found for it
  kExternalId,          // Kineto: the kernel's "External id" names a GEMM cpu_op
  kCorrelationNesting,  // Kineto: launch found by "correlation", then the
                        // innermost GEMM cpu_op on the launching thread around it
  kNvtxNesting,         // Nsight: the innermost GEMM NVTX range around the launch
};

// How the trace says a kernel was launched. A kernel replayed from a CUDA
// graph has no op around its launch: the ops that put it into the graph ran
// once, at capture, and launched nothing that the trace records against it.
enum class LaunchKind : uint8_t {
  kUnknown,  // no launch call in the trace carries the kernel's correlation id
             // (it started before the profiler did, or the trace has no such calls)
  kKernel,   // a kernel launch call (cudaLaunchKernel, cuLaunchKernelEx, ...)
  kGraph,    // a CUDA graph launch (cudaGraphLaunch, cuGraphLaunch)
};

struct TraceKernel {
  uint32_t name_id = 0;  // index into KernelTrace::kernel_names
  double start_us = 0;
  double duration_us = 0;
  int32_t device = -1;  // -1: the trace does not say
  int64_t stream = -1;  // -1: the trace does not say
  std::optional<Dim3> grid;
  std::optional<Dim3> block;
  std::optional<Dim3> cluster;  // launch cluster; only Nsight exports carry it
  std::optional<uint32_t> op;   // index into KernelTrace::ops
  OpLink link = OpLink::kNone;
  LaunchKind launch = LaunchKind::kUnknown;
};

// A framework op that launches GEMM kernels, e.g. aten::addmm.
struct FrameworkOp {
  std::string name;                              // as the trace spells it
  std::vector<std::vector<int64_t>> input_dims;  // one list per input; {} for a
                                                 // scalar or a non-tensor input
  std::vector<std::string> input_types;          // e.g. "c10::BFloat16"; empty
                                                 // when the trace has no types
  double start_us = 0;
  double duration_us = 0;
};

struct TraceDevice {
  int id = -1;
  std::string name;  // e.g. "NVIDIA H100 80GB HBM3"
  std::optional<int> sm_count;
  std::optional<int> compute_major;
  std::optional<int> compute_minor;
};

// A trace recorded on a device that is not an NVIDIA GPU, as the file says.
struct TracePlatform {
  std::string vendor;    // "AMD" (ROCm/HIP), "Meta" (MTIA)
  std::string device;    // e.g. "AMD Instinct MI300X VF", "ARTEMIS"; empty when the file names none
  std::string evidence;  // what in the file says so, for a person: "hip_runtime_version 60443483"
};

struct KernelTrace {
  std::string format;  // "kineto" or "nsys-sqlite"
  std::vector<std::string> kernel_names;
  std::vector<TraceKernel> kernels;
  std::vector<FrameworkOp> ops;
  std::vector<TraceDevice> devices;
  // Set when the file says it was recorded on another vendor's device (ROCm's
  // top-level keys, an AMD or MTIA device, MTIA's event categories); absent
  // for an NVIDIA GPU or a trace that does not say.
  std::optional<TracePlatform> other_platform;
  // The kernel names of CUPTI range-profiler records ("cat":
  // "cuda_profiler_range"), one per record in file order. They are not
  // kernels: the profiler replays each kernel to count metrics, and its
  // records carry no real start or duration, so nothing is weighed by them.
  std::vector<std::string> range_profiler_kernels;
  uint64_t bytes_read = 0;         // uncompressed bytes of trace text (Kineto)
  std::vector<std::string> notes;  // what the reader could not do, for a person

  const std::string& NameOf(const TraceKernel& kernel) const { return kernel_names[kernel.name_id]; }
};

struct TraceReadOptions {
  // Called now and then during a long read (at most every few MB) with the
  // bytes of the file consumed so far, as stored (compressed or not), and
  // the file's size (0 if unknown). May be empty.
  std::function<void(uint64_t bytes_done, uint64_t bytes_total)> progress;
};

// True for the framework ops that run a GEMM and whose input shapes give its
// M, N, K: aten::mm, addmm, bmm, baddbmm, linear, _scaled_mm, matmul (with or
// without the "aten::" prefix).
bool IsGemmOpName(std::string_view op_name);

// True for the CUDA API calls that launch a whole graph: cudaGraphLaunch and
// cuGraphLaunch, with or without a version suffix (Nsight writes
// "cudaGraphLaunch_v10000"; Kineto writes "cudaGraphLaunch").
bool IsGraphLaunchName(std::string_view api_name);

}  // namespace ofu::formats
