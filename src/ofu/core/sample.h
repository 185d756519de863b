// The one sample type every source produces.
//
// A CounterSample is what one GPU reported at one instant. Every field is
// optional: a counter the source did not deliver is absent, never 0, because
// "no tensor activity" and "no data about tensor activity" must stay apart.
//
// Units and meaning of each field:
//   time_s              seconds since the Unix epoch, when the reading was taken
//   tensor_active       0..1, fraction of SM cycles in which any tensor pipe was
//                       active, averaged over the SMs and over the interval that
//                       ends at time_s (DCGM field 1004)
//   gr_engine_active    0..1, fraction of time the graphics/compute engine was
//                       busy over the same interval (DCGM field 1001)
//   sm_clock_mhz        SM clock at time_s, a point reading (DCGM field 100)
//   power_w             board power at time_s (DCGM field 155)
//   clock_event_reasons bitmask of why clocks are held down (DCGM field 112)
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ofu {

struct CounterSample {
  double time_s = 0;
  std::optional<double> tensor_active;
  std::optional<double> gr_engine_active;
  std::optional<double> sm_clock_mhz;
  std::optional<double> power_w;
  std::optional<std::uint64_t> clock_event_reasons;
};

// Who a stream of samples belongs to. `key` is unique within a recording:
// the GPU UUID, plus "/gi<N>" for a MIG GPU instance.
struct GpuIdentity {
  std::string key;
  std::string uuid;        // may be empty when the source gives none
  std::string model;       // as the driver names it, e.g. "NVIDIA H100 80GB HBM3"
  std::string hostname;
  std::string gpu_index;   // the driver's index on its host, as text
  std::string pci_bus_id;
  std::string mig_profile;  // e.g. "1g.10gb"; empty for a whole GPU
  std::string mig_instance; // GPU instance id; empty for a whole GPU
};

}  // namespace ofu
