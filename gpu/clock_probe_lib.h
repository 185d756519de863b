// libofu-clock-probe.so: the clock probe (clock_probe.h, and
// src/ofu/gemm/clock_probe.h for the arithmetic) behind a C interface, for
// programs that are not ofu-gemm: the GPU validation's PyTorch workloads
// load it with ctypes and launch the probe on torch's own stream
// (scripts/gpu-validate/workload.py, docs/gpu-validation.md).
//
// Records are int64 triples (SM id, clock64 cycles, %globaltimer ns), one
// per block, in the layout of gpu::DeviceProbeRecord.
//
// Thread-safety: ofu_clock_probe_launch enqueues on the caller's stream;
// ofu_clock_probe_span is a pure function. The caller owns every buffer.
#pragma once

#include <cstdint>

extern "C" {

// The interface's version: 1. A caller checks it before the other calls.
int ofu_clock_probe_version();

// Enqueues one probe launch of `blocks` blocks on `stream` (a cudaStream_t;
// null: the legacy default stream) writing blocks x 3 int64 into `records`,
// device memory. Returns the cudaError_t of the launch (0: enqueued).
int ofu_clock_probe_launch(void* records, int blocks, void* stream);

// The SMs' clock between two launches, from host copies of their records
// (`blocks` triples each). On success returns 0 and writes out[0..5]: the
// span's start and end (global timer ns), the SMs seen in both, and the
// median, minimum and maximum clock over them in MHz. Otherwise returns 1
// and writes why (NUL-terminated, at most why_size bytes) into `why`.
int ofu_clock_probe_span(const std::int64_t* before, const std::int64_t* after, int blocks, double* out, char* why,
                         int why_size);

}  // extern "C"
