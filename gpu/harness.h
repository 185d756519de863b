// Runs one GEMM case on the GPU and turns what it measured into a result
// row (gemm/evaluate.h).
//
// Per case: check the GPU has a peak for the precision; open a fresh
// counter sampler; set a reduced power limit if the case asks; build the
// cuBLASLt GEMM; run warm-up iterations with CUPTI recording the kernel
// name; time a short calibration to size the steady loop to at least
// min_seconds; then run the steady loop between CUDA events while the
// sampler reads counters, and keep the counter windows that lie inside it.
// The loop is enqueued in chunks of about 0.1 s, each followed by a host
// timestamp on the sampler's clock: the checkpoints from which the MFU is
// taken over the windows' span rather than the whole loop. A clock probe
// (clock_probe.h) runs just before and just after the loop on the same
// stream: the SMs' own clock over the loop, beside NVML's.
//
// A case that cannot run (precision not on this GPU, no algorithm, no
// permission for the power limit, out of memory) gives a skipped row with
// the reason; it never stops the sweep.
//
// Thread-safety: one thread, the one that opened the CUDA device.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "clock_probe.h"
#include "counter_sampler.h"
#include "device.h"
#include "kernel_recorder.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/gemm/case_result.h"
#include "ofu/gemm/sweep.h"
#include "ofu/kernels/kernel_throughput.h"
#include "ofu/sources/clock.h"

namespace ofu::gpu {

struct HarnessOptions {
  SamplerOptions sampler;
  int warmup_iterations = 5;
  int calibration_iterations = 10;
};

class Harness {
 public:
  // `recorder` may be null (no CUPTI): rows then lack the kernel name.
  // Errors: kUnavailable when cuBLASLt or a CUDA stream cannot be created.
  static Result<std::unique_ptr<Harness>> Open(const CudaDevice& device, const GpuSpec& spec,
                                               const HarnessOptions& options, sources::Clock& clock,
                                               std::unique_ptr<KernelRecorder> recorder);
  ~Harness();
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  gemm::CaseResult Run(const gemm::GemmCase& c);

 private:
  Harness(const CudaDevice& device, const GpuSpec& spec, const HarnessOptions& options, sources::Clock& clock)
      : device_(device), spec_(spec), options_(options), clock_(clock) {}
  Result<gemm::CaseResult> TryRun(const gemm::GemmCase& c);

  CudaDevice device_;
  const GpuSpec& spec_;
  HarnessOptions options_;
  sources::Clock& clock_;
  std::unique_ptr<KernelRecorder> recorder_;
  // Kernel-family throughput for the corrected OFU (data/kernel_throughput.json).
  std::optional<kernels::KernelThroughputTable> throughput_;
  cublasLtHandle_t lt_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  // Two launches' records of the clock probe, probe_blocks_ each; null when
  // the buffer could not be had (rows then lack the SMs' clock).
  DeviceProbeRecord* probe_records_ = nullptr;
  int probe_blocks_ = 0;
  // The probe's records back on the host as the two launches, or a note.
  void CollectProbes(gemm::Measurement& measurement, std::string& note);
};

}  // namespace ofu::gpu
