// From a counter source's reading to the GpuRef attribution asks about.
//
// uuid from identity.uuid; index from identity.gpu_index (text in the
// reading, -1 when empty or not a number); pids from processes, in order.
// The NVML source gives a MIG instance its parent GPU's gpu_index, which is
// what the Slurm mapping directory is keyed by.
//
// Pure; thread-safe.
#pragma once

#include "ofu/attribution/attributor.h"
#include "ofu/sources/source.h"

namespace ofu::attribution {

GpuRef ToGpuRef(const sources::GpuReading& reading);

}  // namespace ofu::attribution
