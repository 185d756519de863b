// The GPUs as the NVML source sees them: what a call's return code means,
// which driver calls the consumer's fields need, one reported device (a GPU
// or a MIG GPU instance) and its enumeration.
// Internal to the NVML source (nvml_source.cc, nvml_gpm.cc, nvml_window.cc);
// the contract users see is nvml_source.h.
//
// Thread-safety: none; the source uses all of it from one thread at a time.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/sources/nvml/nvml_library.h"
#include "ofu/sources/source.h"

namespace ofu::sources {

// What a failed call means for the GPU it was about, or for all of them.
enum class NvmlOutcome {
  kOk,
  kAbsent,        // this value is not available (NOT_SUPPORTED, NO_DATA, ...)
  kLost,          // the GPU fell off the bus or needs a reset
  kNoPermission,  // profiling restricted to administrators
  kLibraryGone,   // driver unloaded or replaced: every GPU is unavailable
};

NvmlOutcome ClassifyNvml(nvmlReturn_t code);

// The driver calls the consumer's counters need (SourceOptions::fields),
// decided once. On the H100 one nvmlGpmMetricsGet of 14 metrics took 1,420 us
// (p50, docs/results/2026-11-26-h100-sxm5/stage-A/probe-cost.json), the
// largest cost per window by far, so nothing is asked that nobody reads.
// Whether fewer metrics make that call cheaper was not measured there.
struct NvmlWanted {
  std::vector<unsigned> gpm_metrics;  // GPM metric ids, in CounterField order
  bool cycles = false;                // the exact-cycle pair (248, 250): tensor_active and sm_clock_mhz
  bool power = false;
  bool energy = false;
  bool clock_event_reasons = false;
};

NvmlWanted ResolveNvmlWanted(const SourceOptions& options);

inline constexpr const char* kNvmlLostAdvice =
    "the GPU fell off the bus or needs a reset: look for Xid 79 (or 48, 74) in `dmesg`, drain the node's jobs "
    "from it and reset it (nvidia-smi -r) or reboot";
inline constexpr const char* kNvmlNoPermissionAdvice =
    "GPM profiling is restricted to administrators: run ofu as root, or load the nvidia module with "
    "NVreg_RestrictProfilingToAdminUsers=0";
inline constexpr const char* kNvmlNotSupportedAdvice =
    "this GPU has no NVML GPM (it needs Hopper or later): tensor activity is absent here; use --source dcgm "
    "for its profiling fields";

// One device the source reports: a whole GPU, or one GPU instance of a GPU
// in MIG mode. The GPM sample buffers are the library's (GpmSampleAlloc),
// released by FreeNvmlSamples.
struct NvmlDevice {
  nvmlDevice_t handle = nullptr;  // the physical GPU, also for a MIG instance
  std::optional<unsigned> gpu_instance;
  GpuIdentity identity;
  std::optional<int> sm_count;
  std::optional<double> max_sm_clock_mhz;
  GpuHealth health = GpuHealth::kOk;
  std::string problem;
  bool gpm = false;  // GPM may be sampled (supported, or permission unknown)

  std::array<nvmlGpmSample_t, 2> samples{};
  int latest = -1;  // index in samples of the newest sample; -1 when none
  double latest_time_s = 0;
  bool cycles_probed = false;
  bool has_cycles = false;
  bool cycles_note_given = false;

  // This window's clock readings.
  double clock_sum = 0;
  int clock_count = 0;
  double clock_min = 0;
  double clock_max = 0;

  // The last process list read, repeated until the next reading is due.
  std::vector<GpuProcess> processes;
  std::optional<double> processes_read_s;
};

// Whether a GPM sample may be taken on the device now.
bool NvmlSampleable(const NvmlDevice& device);

// Where the readers report an answer that concerns more than the value
// asked for; the source implements it.
class NvmlFaults {
 public:
  virtual ~NvmlFaults() = default;
  // The driver went away (code is the call's answer): NVML is shut down and
  // every GPU is unavailable until nvmlInit works again.
  virtual void LibraryGone(nvmlReturn_t code) = 0;
  // The GPU behind `handle`, and each of its MIG instances, is lost for good.
  virtual void MarkLost(nvmlDevice_t handle) = 0;
};

// Replaces `devices` with the GPUs the driver lists now (a MIG-mode GPU as
// its GPU instances), allocating their GPM sample buffers; a GPU that cannot
// be opened keeps the identity it had in `devices`. Errors: kUnavailable
// when the GPUs cannot be counted, there is none, or none supports GPM.
Status EnumerateNvmlDevices(const NvmlLibrary& nvml, const std::string& hostname, std::vector<NvmlDevice>& devices);

// Frees every device's GPM sample buffers; no sample is then the latest.
void FreeNvmlSamples(const NvmlLibrary& nvml, std::vector<NvmlDevice>& devices);

}  // namespace ofu::sources
