// How much of a physical GPU one device of a fleet stands for.
//
// Fleet and job figures weigh each device by its share of a GPU times its
// seconds, so that a MIG slice counts as the part of the chip it is, not as a
// whole GPU:
//
//   whole GPU          share 1
//   MIG GPU instance   share = SMs of its profile / SMs of the SKU
//                      (A100: 3g.40gb = 42 / 108 = 0.389; 1g.10gb = 14 / 108)
//
// A MIG instance's own OFU needs no share: its tensor activity is a ratio over
// its own SMs, so OFU = activity x clock / f_spec is already relative to its
// slice. The share only weighs it among others. Within one GPU this is
// weighting by SMs x seconds; across GPUs every whole GPU-second weighs the
// same, as before MIG.
//
// Absent: a MIG instance whose profile the spec database does not list for
// the SKU, or that names no profile. Such a device keeps its own OFU and is
// left out of fleet and job figures, with a note (never weighed as 1).
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "ofu/core/gpu_spec.h"
#include "ofu/core/ofu_math.h"
#include "ofu/core/sample.h"

namespace ofu {

// True when `identity` is a MIG GPU instance rather than a whole GPU.
bool IsMigInstance(const GpuIdentity& identity);

std::optional<double> GpuShare(const GpuSpec& spec, const GpuIdentity& identity);

// The scale OFU and the non-tensor bound of a device of `spec` need: f_spec,
// k_arch, and the CUDA-core pipes over the device's SMs (a MIG instance's
// SMs are its share of the SKU's; no pipes when that share is unknown).
OfuScale OfuScaleOf(const GpuSpec& spec, const GpuIdentity& identity);

// Why GpuShare is absent, for a person; empty when it is present.
std::string WhyNoGpuShare(const GpuSpec& spec, const GpuIdentity& identity);

}  // namespace ofu
