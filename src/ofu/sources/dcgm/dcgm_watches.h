// What the DCGM source watches and the hostengine objects that watch it: the
// watch plan from SourceOptions::fields, the GPU group, the group of MIG
// GPU instances, their field groups and watches, and what a refusal of the
// profiling fields means. See dcgm_source.h for the fields.
// Internal to the DCGM source (dcgm_source.cc, dcgm_values.cc).
//
// Thread-safety: one thread at a time, like the source that owns it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ofu/sources/dcgm/dcgm_api.h"
#include "ofu/sources/dcgm/dcgm_devices.h"
#include "ofu/sources/dcgm/dcgm_library.h"
#include "ofu/sources/source.h"

namespace ofu::sources {

// Whether a DCGM field id is a profiling field (1001-1015).
bool IsDcgmProfilingField(unsigned short id);
// Whether a DCGM field id is one of the device fields the source reads
// (100, 112, 113, 155, 156).
bool IsDcgmDeviceField(unsigned short id);
// The fields a MIG instance takes from its parent GPU: the SM clock and its
// limits are the chip's. Power and energy are not lent: they are the board's,
// and NVML's instances do not carry them either.
bool IsLentToDcgmInstances(unsigned short id);

// The fields watched, in three field groups so that a refusal of the
// profiling fields (or an older DCGM that lacks the cycle counters) leaves
// the others flowing. Only the fields SourceOptions::fields asks for are
// watched: every watched profiling field is sampled by the hostengine's
// profiling module and every field is copied into each window's read, so a
// field no output carries costs the node for nothing (issue 29). Of the
// cycle counters 1084-1090 only the two DeriveExactCycles uses are watched,
// and only when the tensor activity or the clock is wanted.
struct DcgmWatchPlan {
  std::vector<unsigned short> device;     // from 100, 112, 113, 155, 156; never empty
  std::vector<unsigned short> profiling;  // from 1001-1015
  std::vector<unsigned short> cycles;     // 1084 and 1086, or none
};

DcgmWatchPlan PlanDcgmWatches(const SourceOptions& options);

// The groups, field groups and watches of one connection, and the fields
// they make readable each window.
class DcgmWatches {
 public:
  // `lib`, `plan` and `options` must outlive this object.
  DcgmWatches(DcgmLibrary& lib, const DcgmWatchPlan& plan, const SourceOptions& options)
      : lib_(lib), plan_(plan), options_(options) {}

  // Creates the GPU group of `gpu_ids` and watches the plan's fields on it,
  // then, when `gpus` holds MIG instances and the profiling fields were
  // allowed, a second group of the instances watching the profiling and
  // cycle fields. `where` names the hostengine in messages and `prefix`
  // the objects created. A refusal of the profiling or cycle fields is not
  // a failure: it is kept as profiling_health/problem. Failure: the group
  // or the device fields' watch could not be made, or the connection went
  // away.
  std::optional<DcgmFailure> Create(dcgm::Handle handle, const std::string& where, const std::string& prefix,
                                    const std::vector<unsigned int>& gpu_ids, const std::vector<DcgmGpu>& gpus);

  // Destroys the field groups and groups on a live connection.
  void Destroy(dcgm::Handle handle);

  // The connection went: what it held is gone with it.
  void Forget();

  // The fields watched on the GPUs and on the MIG instances, to be read each
  // window (mutable because DCGM's read takes a non-const array).
  std::vector<unsigned short>& gpu_fields() { return read_fields_; }
  std::vector<unsigned short>& instance_fields() { return instance_fields_; }

  // Whether the profiling fields are watched on the GPUs (instance false) or
  // on the MIG instances (true), and when not, what to do.
  GpuHealth profiling_health(bool instance) const { return instance ? instance_profiling_health_ : profiling_health_; }
  const std::string& profiling_problem(bool instance) const {
    return instance ? instance_profiling_problem_ : profiling_problem_;
  }

 private:
  std::pair<GpuHealth, std::string> ProfilingRefused(dcgm::Return rc) const;
  std::optional<DcgmFailure> WatchInstances(const std::string& where, const std::string& prefix,
                                            const std::vector<DcgmGpu>& gpus);
  dcgm::Return Watch(dcgm::GpuGroup group, const std::vector<unsigned short>& fields, const std::string& name,
                     std::vector<unsigned short>& read);

  DcgmLibrary& lib_;
  const DcgmWatchPlan& plan_;
  const SourceOptions& options_;
  dcgm::Handle handle_ = 0;   // the connection Create() last ran on
  dcgm::GpuGroup group_ = 0;  // every GPU
  bool have_group_ = false;
  dcgm::GpuGroup instance_group_ = 0;  // the MIG GPU instances, when there are any
  bool have_instance_group_ = false;
  std::vector<dcgm::FieldGroup> field_groups_;
  std::vector<unsigned short> read_fields_;      // watched on group_
  std::vector<unsigned short> instance_fields_;  // watched on instance_group_
  GpuHealth profiling_health_ = GpuHealth::kOk;
  std::string profiling_problem_;
  GpuHealth instance_profiling_health_ = GpuHealth::kOk;
  std::string instance_profiling_problem_;
};

}  // namespace ofu::sources
