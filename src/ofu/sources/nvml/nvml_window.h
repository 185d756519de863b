// One window's readings of every device: the SM clock read evenly through
// the window, then at its end the GPM metrics (nvml_gpm.h), power, energy,
// clock event reasons and, when due, the process list. See nvml_source.h
// for the calls per window, the units and what a fault does.
// Internal to the NVML source (nvml_source.cc).
//
// Thread-safety: one thread at a time, like the source that owns it.
#pragma once

#include <optional>
#include <vector>

#include "ofu/sources/clock.h"
#include "ofu/sources/nvml/nvml_devices.h"
#include "ofu/sources/nvml/nvml_gpm.h"

namespace ofu::sources {

class NvmlWindow {
 public:
  // Every reference must outlive this object.
  NvmlWindow(const NvmlLibrary& nvml, const SourceOptions& options, const NvmlWanted& wanted, Clock& clock,
             NvmlFaults& faults, NvmlGpm& gpm)
      : nvml_(nvml), options_(options), wanted_(wanted), clock_(clock), faults_(faults), gpm_(gpm) {}

  // Reads the clocks through the window and everything else at its end,
  // sleeping on the Clock until `end`; snapshot.gpus gets one reading per
  // device. Returns false when the library went away (faults.LibraryGone
  // was called; snapshot left for the caller).
  bool Measure(std::vector<NvmlDevice>& devices, double end, Snapshot& snapshot);

 private:
  const NvmlFunctions& fn() const { return nvml_.fn(); }
  bool ReadClocks(std::vector<NvmlDevice>& devices);
  template <typename T, typename Call>
  bool Optional(NvmlDevice& device, Call call, std::optional<T>& out);
  bool ReadWindowEnd(NvmlDevice& device, double now, GpuReading& reading);
  bool ReadProcesses(NvmlDevice& device);

  const NvmlLibrary& nvml_;
  const SourceOptions& options_;
  const NvmlWanted& wanted_;
  Clock& clock_;
  NvmlFaults& faults_;
  NvmlGpm& gpm_;
};

}  // namespace ofu::sources
