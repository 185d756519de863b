#include "clock_probe.h"

namespace ofu::gpu {
namespace {

__global__ void ClockProbeKernel(DeviceProbeRecord* out) {
  if (threadIdx.x != 0) return;
  unsigned int sm = 0;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  unsigned long long global_ns = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(global_ns));
  const long long cycles = clock64();
  out[blockIdx.x] = DeviceProbeRecord{static_cast<std::int64_t>(sm), static_cast<std::int64_t>(cycles),
                                      static_cast<std::int64_t>(global_ns)};
}

}  // namespace

cudaError_t LaunchClockProbe(DeviceProbeRecord* out, int blocks, cudaStream_t stream) {
  ClockProbeKernel<<<blocks, 32, 0, stream>>>(out);
  return cudaGetLastError();
}

}  // namespace ofu::gpu
