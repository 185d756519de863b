// What flows from the agent's sampling loop to its sinks: one window of every
// GPU the source knows, evaluated (OFU, busy) and labelled with its job.
//
// Units: seconds since the epoch, MHz, ratios in 0..1 (OFU may pass 1).
// Thread-safety: plain values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ofu/attribution/attributor.h"
#include "ofu/core/gpu_key.h"
#include "ofu/core/output_counters.h"  // TensorPipes
#include "ofu/core/sample.h"
#include "ofu/core/windows.h"
#include "ofu/sources/source.h"

namespace ofu::sinks {

struct GpuWindow {
  GpuIdentity identity;
  std::string sku;           // spec-database id; empty when the model is unknown
  std::string architecture;  // empty when the model is unknown
  std::optional<double> spec_clock_mhz;
  sources::GpuHealth health = sources::GpuHealth::kOk;
  std::string problem;  // why health is not ok, for people
  OfuWindow window;     // window.ofu is set only when the window is valid
  TensorPipes pipes;

  // The GPU answered (valid data or not); false when lost or unreachable.
  bool up() const { return health == sources::GpuHealth::kOk; }
  // The key GPUs are known by in every sink: GpuKey (core/gpu_key.h), the
  // source's key, unique per device ("GPU-<uuid>", "GPU-<uuid>/gi<N>" for a
  // MIG instance), else the UUID, never the UUID first.
  const std::string& key() const { return GpuKey(identity); }
};

struct WindowBatch {
  double end_s = 0;     // the window's end
  double window_s = 0;  // its length
  std::vector<GpuWindow> gpus;
  std::map<std::string, attribution::JobInfo> jobs;  // GpuWindow::key() -> job now running
  std::vector<std::string> notes;                    // source and attribution events
};

}  // namespace ofu::sinks
