// The GPM side of a window (Hopper and later): one sample per device at each
// window end, and the metrics between it and the previous sample, including
// the exact-cycle pair (metrics 248 and 250) and what DeriveExactCycles makes
// of it. See nvml_source.h for the units and the exact-cycle assumption.
// Internal to the NVML source (nvml_source.cc, nvml_window.cc).
//
// Thread-safety: one thread at a time, like the source that owns it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ofu/sources/nvml/nvml_devices.h"

namespace ofu::sources {

class NvmlGpm {
 public:
  // Every reference must outlive this object.
  NvmlGpm(const NvmlLibrary& nvml, const NvmlWanted& wanted, NvmlFaults& faults, std::vector<std::string>& notes)
      : nvml_(nvml), wanted_(wanted), faults_(faults), notes_(notes) {}

  // A GPM sample into the device's spare buffer; on success it becomes the
  // latest. One GpmSampleGet (GpmMigSampleGet for a MIG instance). Returns
  // false only when the library went away (faults.LibraryGone was called).
  bool Sample(NvmlDevice& device, double now);

  // Takes this window's sample, then reads the wanted metrics between the
  // previous sample and it into `reading` (percent becomes 0..1): at most
  // one GpmMetricsGet, none when there is no previous sample or nothing is
  // asked. Returns false only when the library went away.
  bool Read(NvmlDevice& device, double now, GpuReading& reading);

 private:
  const NvmlFunctions& fn() const { return nvml_.fn(); }
  void ApplyExactCycles(NvmlDevice& device, double dt_s, double elapsed, double mma, GpuReading& reading);

  const NvmlLibrary& nvml_;
  const NvmlWanted& wanted_;
  NvmlFaults& faults_;
  std::vector<std::string>& notes_;  // the source's notes for this window
  std::unique_ptr<nvmlGpmMetricsGet_t> gpm_request_ = std::make_unique<nvmlGpmMetricsGet_t>();
};

}  // namespace ofu::sources
