// The clock probe's device side: a kernel that records, for each of its
// blocks, the SM it ran on, that SM's cycle counter and the global timer.
// Launched on the workload's stream before and after the timed work, two
// launches give each SM's clock over the span (src/ofu/gemm/clock_probe.h
// turns the records into MHz; it is tested on the CPU).
//
// Thread-safety: enqueues on the given stream; the caller owns the memory.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace ofu::gpu {

// One block's record: %smid, clock64(), %globaltimer (ns).
struct DeviceProbeRecord {
  std::int64_t sm;
  std::int64_t cycles;
  std::int64_t global_ns;
};

// Enqueues `blocks` blocks of one warp; thread 0 of block b writes out[b].
// Launch more blocks than the GPU has SMs (twice as many) so that every SM
// runs at least one: the scheduler places them, the kernel cannot.
cudaError_t LaunchClockProbe(DeviceProbeRecord* out, int blocks, cudaStream_t stream);

}  // namespace ofu::gpu
