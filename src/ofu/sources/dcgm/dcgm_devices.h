// The devices the DCGM source reports and how they are found: the GPUs the
// hostengine supports, their identities (fields 50/54/57, MIG mode 67) and,
// for a GPU in MIG mode, its GPU instances from dcgmGetGpuInstanceHierarchy.
// See dcgm_source.h for what a MIG instance is reported as.
// Internal to the DCGM source (dcgm_source.cc, dcgm_watches.cc,
// dcgm_values.cc); the contract users see is dcgm_source.h.
//
// Thread-safety: none; the source uses all of it from one thread at a time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ofu/core/gpu_spec.h"
#include "ofu/sources/dcgm/dcgm_api.h"
#include "ofu/sources/dcgm/dcgm_library.h"
#include "ofu/sources/exact_cycles.h"
#include "ofu/sources/source.h"

namespace ofu::sources {

// Why a step of setting up a session failed, with DCGM's code so that a lost
// connection can be told from a refusal.
struct DcgmFailure {
  dcgm::Return code;
  std::string message;
};

// One device ofu reports: a whole GPU, or one MIG GPU instance of a GPU.
struct DcgmGpu {
  unsigned int id = 0;                          // DCGM's gpuId (the parent GPU's, for a MIG instance)
  std::optional<unsigned int> instance_entity;  // DCGM's DCGM_FE_GPU_I entity id, for a MIG instance
  GpuIdentity identity;
  std::optional<int> sm_count;
  bool mig_mode = false;  // field 67 said MIG is on (read at setup)
  // A whole MIG-mode GPU whose instances cannot be read: why, and its health.
  // It reports its device fields only: the whole GPU's profiling values
  // cannot be told apart by instance.
  GpuHealth mig_health = GpuHealth::kOk;
  std::string mig_problem;
  bool paused = false;  // profiling paused last window
  std::optional<CycleCounters> last_cycles;
  double last_cycles_time_s = 0;
  bool cycle_problem_noted = false;  // one note per run of failures
};

// Lists the GPUs the hostengine on `handle` supports into `gpu_ids` and the
// devices to report into `gpus` (a MIG-mode GPU as its GPU instances, or
// whole with a problem that says why not). `where` names the hostengine in
// messages; `specs`, when present, gives SM counts by model and MIG profile.
// Failure: the GPUs cannot be listed or there is none, or the connection
// went away; `gpu_ids` and `gpus` are then left as they were, except that
// `gpu_ids` is already new when only the MIG hierarchy's read lost the
// connection.
std::optional<DcgmFailure> DiscoverDcgmDevices(DcgmLibrary& lib, dcgm::Handle handle,
                                               const std::optional<GpuSpecDatabase>& specs, const std::string& where,
                                               std::vector<unsigned int>& gpu_ids, std::vector<DcgmGpu>& gpus);

}  // namespace ofu::sources
