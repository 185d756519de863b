#include "ofu/sources/dcgm_source.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ofu/core/gpu_spec.h"
#include "ofu/sources/backoff.h"
#include "ofu/sources/dcgm_api.h"
#include "ofu/sources/dcgm_library.h"
#include "ofu/sources/exact_cycles.h"

namespace ofu::sources {
namespace {

// Every device field the source can read (CounterField order is not DCGM's).
const std::vector<unsigned short>& DeviceFields() {
  static const std::vector<unsigned short> kFields = {100, 112, 113, 155, 156};
  return kFields;
}

bool IsProfilingField(unsigned short id) { return id >= 1001 && id <= 1015; }

// The fields watched, in three field groups so that a refusal of the
// profiling fields (or an older DCGM that lacks the cycle counters) leaves
// the others flowing. Only the fields SourceOptions::fields asks for are
// watched: every watched profiling field is sampled by the hostengine's
// profiling module and every field is copied into each window's read, so a
// field no output carries costs the node for nothing (issue 29). Of the
// cycle counters 1084-1090 only the two DeriveExactCycles uses are watched,
// and only when the tensor activity or the clock is wanted.
struct WatchPlan {
  std::vector<unsigned short> device;     // from 100, 112, 113, 155, 156; never empty
  std::vector<unsigned short> profiling;  // from 1001-1015
  std::vector<unsigned short> cycles;     // 1084 and 1086, or none
};

WatchPlan PlanWatches(const SourceOptions& options) {
  WatchPlan plan;
  for (const CounterFieldInfo& info : AllCounterFields()) {
    if (!options.Wants(info.field) || info.dcgm_field_id == 0) continue;
    const auto id = static_cast<unsigned short>(info.dcgm_field_id);
    if (IsProfilingField(id)) plan.profiling.push_back(id);
    if (std::find(DeviceFields().begin(), DeviceFields().end(), id) != DeviceFields().end()) {
      plan.device.push_back(id);
    }
  }
  // The SM clock always: it is what tells a GPU that answers from one that
  // does not, and the instances' device values come from it.
  if (std::find(plan.device.begin(), plan.device.end(), dcgm::kFieldSmClock) == plan.device.end()) {
    plan.device.insert(plan.device.begin(), dcgm::kFieldSmClock);
  }
  std::sort(plan.device.begin(), plan.device.end());
  std::sort(plan.profiling.begin(), plan.profiling.end());
  if (options.Wants(CounterField::kTensorActive) || options.Wants(CounterField::kSmClockMhz)) {
    plan.cycles = {dcgm::kFieldSmCyclesElapsedTotal, dcgm::kFieldMmaCyclesActiveTotal};
  }
  return plan;
}

// The fields a MIG instance takes from its parent GPU: the SM clock and its
// limits are the chip's. Power and energy are not lent: they are the board's,
// and NVML's instances do not carry them either.
bool IsLentToInstances(unsigned short id) { return id == 100 || id == 112 || id == 113; }

bool IsDeviceField(unsigned short id) {
  const auto& fields = DeviceFields();
  return std::find(fields.begin(), fields.end(), id) != fields.end();
}

// Samples kept by the hostengine, in windows: enough to ride out one late read.
constexpr double kKeepWindows = 4;

// A field value as a number, or nullopt when DCGM gave none: an error status,
// a blank sentinel (no data, not supported, profiling paused), or a type that
// is not numeric.
std::optional<double> NumberOf(const dcgm::FieldValueV2& v) {
  if (v.status != dcgm::kOk) return std::nullopt;
  if (v.fieldType == dcgm::kFieldTypeDouble) {
    if (std::isnan(v.value.dbl) || v.value.dbl >= dcgm::kFp64Blank) return std::nullopt;
    return v.value.dbl;
  }
  if (v.fieldType == dcgm::kFieldTypeInt64) {
    if (v.value.i64 >= dcgm::kInt64Blank) return std::nullopt;
    return static_cast<double>(v.value.i64);
  }
  return std::nullopt;
}

// A string field, or "" when blank ("<<<NULL>>>" and friends) or not a string.
std::string TextOf(const dcgm::FieldValueV2& v) {
  if (v.status != dcgm::kOk || v.fieldType != dcgm::kFieldTypeString) return "";
  const std::string text(v.value.str, strnlen(v.value.str, sizeof v.value.str));
  return text.starts_with("<<<") ? "" : text;
}

const CounterFieldInfo* InfoForDcgmField(unsigned short id) {
  for (const auto& info : AllCounterFields()) {
    if (info.dcgm_field_id == id) return &info;
  }
  return nullptr;
}

enum class AddressKind { kLocalOrEmbedded, kUnixSocket, kTcp };

struct Address {
  AddressKind kind = AddressKind::kLocalOrEmbedded;
  std::string target;   // what dcgmConnect_v2 gets
  std::string display;  // what messages say
};

Address ParseAddress(std::string_view text) {
  if (text.empty()) {
    const std::string local = fmt::format("127.0.0.1:{}", dcgm::kDefaultPort);
    return {AddressKind::kLocalOrEmbedded, local, local};
  }
  if (text.starts_with("unix:")) return {AddressKind::kUnixSocket, std::string(text.substr(5)), std::string(text)};
  return {AddressKind::kTcp, std::string(text), std::string(text)};
}

// Why a step of setting up a session failed, with DCGM's code so that a lost
// connection can be told from a refusal.
struct Failure {
  dcgm::Return code;
  std::string message;
};

// One device ofu reports: a whole GPU, or one MIG GPU instance of a GPU.
struct Gpu {
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

class DcgmSource final : public Source {
 public:
  DcgmSource(std::unique_ptr<DcgmLibrary> lib, Address address, const SourceOptions& options, Clock& clock)
      : lib_(std::move(lib)),
        address_(std::move(address)),
        options_(options),
        plan_(PlanWatches(options)),
        clock_(clock) {
    if (auto specs = GpuSpecDatabase::Embedded(); specs.ok()) specs_ = std::move(*specs);
  }

  ~DcgmSource() override {
    if (connected_) {
      // Our watches go with the connection (persistAfterDisconnect = 0);
      // the groups are destroyed explicitly for an embedded engine's sake.
      for (dcgm::FieldGroup fg : field_groups_) lib_->field_group_destroy(handle_, fg);
      if (have_group_) lib_->group_destroy(handle_, group_);
      if (have_instance_group_) lib_->group_destroy(handle_, instance_group_);
      Disconnect();
    }
    lib_->shutdown();
  }

  DcgmSource(const DcgmSource&) = delete;
  DcgmSource& operator=(const DcgmSource&) = delete;

  Status Start() {
    if (dcgm::Return rc = lib_->init(); rc != dcgm::kOk) {
      return Error::Unavailable(
          "dcgmInit failed in {}: {}; reinstall DCGM (datacenter-gpu-manager) or pass "
          "--dcgm-library PATH",
          lib_->path(), lib_->ErrorText(rc));
    }
    if (auto failure = Connect(address_.kind == AddressKind::kLocalOrEmbedded)) {
      return Error::Unavailable("{}", failure->message);
    }
    if (auto failure = SetUp()) {
      Disconnect();
      return Error::Unavailable("{}", failure->message);
    }
    window_end_s_ = clock_.NowS();
    return OkStatus();
  }

  std::string_view kind() const override { return "dcgm"; }

  std::string Describe() const override {
    return fmt::format("dcgm ({}, {}{})", lib_->path(),
                       embedded_ ? std::string("embedded hostengine") : "hostengine at " + address_.display,
                       lib_->is_test_double() ? ", TEST DOUBLE: synthetic data" : "");
  }

  bool live() const override { return true; }

  Result<std::optional<Snapshot>> Next() override {
    const double start_s = window_end_s_;
    double end_s = start_s + options_.window_s;
    const double now_s = clock_.NowS();
    if (now_s < end_s) {
      clock_.SleepS(end_s - now_s);
    } else {
      end_s = now_s;  // late: this window is longer, the next starts now
    }
    window_end_s_ = end_s;

    Snapshot snapshot;
    snapshot.time_s = end_s;
    snapshot.window_s = end_s - start_s;
    snapshot.synthetic = lib_->is_test_double();

    if (!connected_) {
      if (!backoff_.ReadyToRetry(clock_.NowS())) return Unavailable(std::move(snapshot));
      if (auto failure = Reconnect()) {
        LoseConnection(fmt::format("cannot reconnect to the DCGM hostengine at {}: {}", address_.display,
                                   failure->message));
        return Unavailable(std::move(snapshot));
      }
      backoff_.Succeeded();
      snapshot.notes.push_back(fmt::format("reconnected to the DCGM hostengine at {}", address_.display));
    }

    if (embedded_) {
      // An embedded engine runs in manual mode: nothing is sampled unless
      // we ask, and waiting makes the values belong to this window's end.
      if (dcgm::Return rc = lib_->update_all_fields(handle_, 1); rc == dcgm::kConnectionNotValid) {
        LoseConnection(fmt::format("DCGM stopped answering: {}", lib_->ErrorText(rc)));
        return Unavailable(std::move(snapshot));
      }
    }

    // The GPUs first (every field watched on them), then the MIG instances
    // (only what is watched on them), so no unwatched value is asked for.
    std::vector<dcgm::GroupEntityPair> entities;
    for (unsigned int id : gpu_ids_) entities.push_back({dcgm::kEntityGpu, id});
    const dcgm::Return rc = ReadLatest(entities, read_fields_, values_);
    if (rc == dcgm::kConnectionNotValid) {
      LoseConnection(fmt::format("lost the connection to the DCGM hostengine at {}: {}", address_.display,
                                 lib_->ErrorText(rc)));
      return Unavailable(std::move(snapshot));
    }
    if (rc != dcgm::kOk) {
      std::string reason = fmt::format("DCGM could not read this window's values: {}", lib_->ErrorText(rc));
      for (Gpu& gpu : gpus_) snapshot.gpus.push_back(UnavailableReading(gpu, end_s, reason));
      return std::optional<Snapshot>(std::move(snapshot));
    }

    std::string instance_reason;  // why the instances' values could not be read this window
    instance_values_.clear();
    if (!instance_fields_.empty()) {
      std::vector<dcgm::GroupEntityPair> instances;
      for (const Gpu& gpu : gpus_) {
        if (gpu.instance_entity) instances.push_back({dcgm::kEntityGpuInstance, *gpu.instance_entity});
      }
      const dcgm::Return instance_rc = ReadLatest(instances, instance_fields_, instance_values_);
      if (instance_rc == dcgm::kConnectionNotValid) {
        LoseConnection(fmt::format("lost the connection to the DCGM hostengine at {}: {}", address_.display,
                                   lib_->ErrorText(instance_rc)));
        return Unavailable(std::move(snapshot));
      }
      if (instance_rc != dcgm::kOk) {
        instance_values_.clear();
        instance_reason = fmt::format("DCGM could not read this window's values of the MIG instances: {}",
                                      lib_->ErrorText(instance_rc));
      }
    }

    for (Gpu& gpu : gpus_) {
      snapshot.gpus.push_back(gpu.instance_entity && !instance_reason.empty()
                                  ? UnavailableReading(gpu, end_s, instance_reason)
                                  : ReadingFor(gpu, end_s, snapshot.notes));
    }
    return std::optional<Snapshot>(std::move(snapshot));
  }

 private:
  // The latest values of `fields` for each of `entities`, into `values`.
  dcgm::Return ReadLatest(std::vector<dcgm::GroupEntityPair>& entities, std::vector<unsigned short>& fields,
                          std::vector<dcgm::FieldValueV2>& values) {
    values.assign(entities.size() * fields.size(), dcgm::FieldValueV2{});
    for (auto& v : values) v.version = dcgm::kFieldValueVersion2;
    return lib_->entities_get_latest_values(handle_, entities.data(), static_cast<unsigned>(entities.size()),
                                            fields.data(), static_cast<unsigned>(fields.size()), 0, values.data());
  }

  unsigned ConnectTimeoutMs() const {
    // Never wait on a dead hostengine for longer than a fraction of a window.
    return static_cast<unsigned>(std::clamp(options_.window_s * 250.0, 100.0, 5000.0));
  }

  std::optional<Failure> Connect(bool allow_embedded) {
    dcgm::ConnectV2Params params{};
    params.version = dcgm::kConnectV2ParamsVersion2;
    params.persistAfterDisconnect = 0;
    params.timeoutMs = ConnectTimeoutMs();
    params.addressIsUnixSocket = address_.kind == AddressKind::kUnixSocket ? 1 : 0;
    dcgm::Handle handle = 0;
    const dcgm::Return rc = lib_->connect_v2(address_.target.c_str(), &params, &handle);
    if (rc == dcgm::kOk) {
      handle_ = handle;
      connected_ = true;
      embedded_ = false;
      return std::nullopt;
    }
    if (!allow_embedded) {
      return Failure{rc, fmt::format("cannot connect to the DCGM hostengine at {} with {}: {}; start nv-hostengine "
                                     "there (systemctl start nvidia-dcgm) or check the address",
                                     address_.display, lib_->path(), lib_->ErrorText(rc))};
    }
    const dcgm::Return embedded_rc = StartEmbedded();
    if (embedded_rc == dcgm::kOk) return std::nullopt;
    return Failure{embedded_rc,
                   fmt::format("no DCGM hostengine answers at {} ({}) and an embedded one did not start in {} ({}); "
                               "start nv-hostengine (systemctl start nvidia-dcgm) or run ofu with the privileges "
                               "DCGM needs",
                               address_.display, lib_->ErrorText(rc), lib_->path(), lib_->ErrorText(embedded_rc))};
  }

  dcgm::Return StartEmbedded() {
    dcgm::Handle handle = 0;
    dcgm::Return rc = dcgm::kVersionMismatch;
    if (lib_->start_embedded_v2 != nullptr) {
      dcgm::StartEmbeddedV2Params params{};
      params.version = dcgm::kStartEmbeddedV2ParamsVersion2;
      params.opMode = dcgm::kOperationModeManual;
      rc = lib_->start_embedded_v2(&params);
      handle = params.dcgmHandle;
    }
    // A library with more modules than our header has a larger struct and
    // answers VER_MISMATCH; the unversioned call has no struct at all.
    if (rc == dcgm::kVersionMismatch && lib_->start_embedded != nullptr) {
      rc = lib_->start_embedded(dcgm::kOperationModeManual, &handle);
    }
    if (rc == dcgm::kOk) {
      handle_ = handle;
      connected_ = true;
      embedded_ = true;
    }
    return rc;
  }

  void Disconnect() {
    if (!connected_) return;
    if (embedded_) {
      lib_->stop_embedded(handle_);
    } else {
      lib_->disconnect(handle_);
    }
    connected_ = false;
    field_groups_.clear();
    have_group_ = false;
    have_instance_group_ = false;
  }

  // Enumerates the GPUs and their MIG instances and creates the groups,
  // field groups and watches.
  std::optional<Failure> SetUp() {
    const std::string where = embedded_ ? std::string("the embedded DCGM hostengine")
                                        : "the DCGM hostengine at " + address_.display;
    unsigned int ids[dcgm::kMaxDevices] = {};
    int count = 0;
    if (dcgm::Return rc = lib_->get_all_supported_devices(handle_, ids, &count); rc != dcgm::kOk) {
      return Failure{rc, fmt::format("{} did not list its GPUs: {}", where, lib_->ErrorText(rc))};
    }
    if (count <= 0) {
      return Failure{dcgm::kNoData, fmt::format("{} sees no GPU it supports", where)};
    }
    std::vector<Gpu> whole;
    gpu_ids_.clear();
    for (int i = 0; i < std::min(count, dcgm::kMaxDevices); ++i) {
      Gpu gpu;
      gpu.id = ids[i];
      gpu.identity.gpu_index = std::to_string(ids[i]);
      gpu_ids_.push_back(ids[i]);
      whole.push_back(std::move(gpu));
    }
    ReadIdentities(whole);
    if (auto failure = AddMigInstances(where, whole)) return failure;

    const std::string prefix = fmt::format("ofu-{}-{}", getpid(), ++sessions_);
    if (dcgm::Return rc = lib_->group_create(handle_, dcgm::kGroupEmpty, prefix.c_str(), &group_); rc != dcgm::kOk) {
      return Failure{rc, fmt::format("{} did not create a GPU group: {}", where, lib_->ErrorText(rc))};
    }
    have_group_ = true;
    for (unsigned int id : gpu_ids_) {
      if (dcgm::Return rc = lib_->group_add_device(handle_, group_, id); rc != dcgm::kOk) {
        return Failure{rc, fmt::format("{} did not add GPU {} to a group: {}", where, id, lib_->ErrorText(rc))};
      }
    }

    read_fields_.clear();
    instance_fields_.clear();
    profiling_health_ = GpuHealth::kOk;
    profiling_problem_.clear();
    if (dcgm::Return rc = Watch(group_, plan_.device, prefix + "-device", read_fields_); rc != dcgm::kOk) {
      return Failure{rc, fmt::format("{} did not watch the clock and power fields: {}", where, lib_->ErrorText(rc))};
    }
    const dcgm::Return profiling_rc = Watch(group_, plan_.profiling, prefix + "-profiling", read_fields_);
    if (profiling_rc == dcgm::kConnectionNotValid) {
      return Failure{profiling_rc, fmt::format("{} went away: {}", where, lib_->ErrorText(profiling_rc))};
    }
    if (profiling_rc != dcgm::kOk) {
      std::tie(profiling_health_, profiling_problem_) = ProfilingRefused(profiling_rc);
    } else {
      // Cycle counters exist from DCGM 4.6; an older library refuses the
      // field ids, and the point clock serves instead.
      if (Watch(group_, plan_.cycles, prefix + "-cycles", read_fields_) == dcgm::kConnectionNotValid) {
        return Failure{dcgm::kConnectionNotValid, fmt::format("{} went away", where)};
      }
    }
    return WatchInstances(where, prefix);
  }

  // What to tell when DCGM refuses to watch the profiling fields.
  std::pair<GpuHealth, std::string> ProfilingRefused(dcgm::Return rc) const {
    if (rc == dcgm::kNoPermission || rc == dcgm::kRequiresRoot) {
      return {GpuHealth::kNoPermission,
              fmt::format("DCGM refused to watch the profiling fields ({}): tensor activity needs a hostengine "
                          "running as root; run nv-hostengine as root (systemctl start nvidia-dcgm) and connect to "
                          "it; clocks and power still flow",
                          lib_->ErrorText(rc))};
    }
    return {GpuHealth::kNotSupported,
            fmt::format("DCGM cannot watch the profiling fields ({}): they need DCGM 2 or newer and a data-center GPU "
                        "(V100, A100, H100 or newer), and no other DCGM profiling session; clocks and power still "
                        "flow",
                        lib_->ErrorText(rc))};
  }

  // Replaces each MIG-mode GPU of `whole` by its GPU instances, in gpus_,
  // the way dcgm-exporter reads them: the hierarchy gives each instance's
  // DCGM entity and its NVML GPU instance id (GPU_I_ID), field 50 read on
  // the instance gives its profile name (GPU_I_PROFILE). A MIG-mode GPU whose
  // instances cannot be listed stays whole, with a problem that says why.
  std::optional<Failure> AddMigInstances(const std::string& where, std::vector<Gpu>& whole) {
    std::vector<Gpu> instances;
    std::string cannot_list;  // why no MIG-mode GPU's instances could be listed
    GpuHealth cannot_list_health = GpuHealth::kNotSupported;
    if (!lib_->CanEnumerateMig()) {
      cannot_list = fmt::format(
          "MIG is on, and this DCGM library ({}) cannot enumerate its GPU instances (it does not "
          "export dcgmGetGpuInstanceHierarchy and dcgmGroupAddEntity); install DCGM 3 or 4 "
          "(datacenter-gpu-manager) to read them",
          lib_->path());
    } else {
      auto hierarchy = std::make_unique<dcgm::MigHierarchyV2>();
      hierarchy->version = dcgm::kMigHierarchyVersion2;
      const dcgm::Return rc = lib_->get_gpu_instance_hierarchy(handle_, hierarchy.get());
      if (rc == dcgm::kConnectionNotValid) {
        return Failure{rc, fmt::format("{} went away: {}", where, lib_->ErrorText(rc))};
      }
      if (rc != dcgm::kOk) {
        if (rc == dcgm::kNoPermission || rc == dcgm::kRequiresRoot) cannot_list_health = GpuHealth::kNoPermission;
        cannot_list = fmt::format(
            "MIG is on, and {} did not list its GPU instances ({}); DCGM reads MIG instances "
            "only when the hostengine runs as root",
            where, lib_->ErrorText(rc));
      } else {
        const unsigned listed = std::min<unsigned>(hierarchy->count, dcgm::kMaxHierarchyInfo);
        for (unsigned i = 0; i < listed; ++i) {
          const dcgm::MigHierarchyInfoV2& entry = hierarchy->entityList[i];
          // Compute instances (DCGM_FE_GPU_CI) share their GPU instance's
          // SMs' counters; a GPU instance is the unit NVML GPM and
          // dcgm-exporter's GPU_I_ID name.
          if (entry.entity.entityGroupId != dcgm::kEntityGpuInstance ||
              entry.parent.entityGroupId != dcgm::kEntityGpu) {
            continue;
          }
          auto parent = std::find_if(whole.begin(), whole.end(),
                                     [&](const Gpu& gpu) { return gpu.id == entry.parent.entityId; });
          if (parent == whole.end()) continue;
          Gpu instance;
          instance.id = parent->id;
          instance.instance_entity = entry.entity.entityId;
          instance.identity = parent->identity;
          instance.identity.key = fmt::format("{}/gi{}", parent->identity.key, entry.info.nvmlInstanceId);
          instance.identity.mig_instance = std::to_string(entry.info.nvmlInstanceId);
          instances.push_back(std::move(instance));
        }
      }
    }
    ReadInstanceProfiles(instances, whole);

    gpus_.clear();
    for (Gpu& gpu : whole) {
      const auto mine = [&](const Gpu& instance) { return instance.id == gpu.id; };
      if (std::any_of(instances.begin(), instances.end(), mine)) {
        std::copy_if(instances.begin(), instances.end(), std::back_inserter(gpus_), mine);
        continue;
      }
      if (gpu.mig_mode) {
        gpu.mig_health = cannot_list.empty() ? GpuHealth::kNotSupported : cannot_list_health;
        gpu.mig_problem = cannot_list.empty()
                              ? "MIG is on but no GPU instance exists: create one (nvidia-smi mig -cgi) to measure it"
                              : cannot_list;
      }
      gpus_.push_back(std::move(gpu));
    }
    return std::nullopt;
  }

  // Field 50 of a GPU instance is its profile name ("3g.40gb": DCGM makes it
  // from the profile's slices and memory), what dcgm-exporter labels
  // GPU_I_PROFILE. Its SM count comes from the spec database where the
  // profile is listed there.
  void ReadInstanceProfiles(std::vector<Gpu>& instances, const std::vector<Gpu>& whole) {
    if (instances.empty()) return;
    std::vector<dcgm::GroupEntityPair> entities;
    for (const Gpu& instance : instances) entities.push_back({dcgm::kEntityGpuInstance, *instance.instance_entity});
    unsigned short fields[] = {dcgm::kFieldName};
    std::vector<dcgm::FieldValueV2> values(entities.size(), dcgm::FieldValueV2{});
    for (auto& v : values) v.version = dcgm::kFieldValueVersion2;
    const dcgm::Return rc = lib_->entities_get_latest_values(handle_, entities.data(),
                                                             static_cast<unsigned>(entities.size()), fields, 1,
                                                             dcgm::kLiveData, values.data());
    for (Gpu& instance : instances) {
      if (rc == dcgm::kOk) {
        for (const auto& v : values) {
          if (v.entityGroupId == dcgm::kEntityGpuInstance && v.entityId == *instance.instance_entity &&
              v.fieldId == dcgm::kFieldName) {
            instance.identity.mig_profile = TextOf(v);
          }
        }
      }
      instance.sm_count.reset();
      if (!specs_ || instance.identity.mig_profile.empty()) continue;
      for (const Gpu& gpu : whole) {
        if (gpu.id != instance.id || gpu.identity.model.empty()) continue;
        if (auto spec = specs_->Lookup(gpu.identity.model); spec.ok()) {
          instance.sm_count = (*spec)->MigSmCount(instance.identity.mig_profile);
        }
      }
    }
  }

  // Watches the profiling fields on a second group holding the MIG
  // instances, when there are any, and when the GPUs' own watch was allowed.
  std::optional<Failure> WatchInstances(const std::string& where, const std::string& prefix) {
    instance_profiling_health_ = profiling_health_;
    instance_profiling_problem_ = profiling_problem_;
    const bool any = std::any_of(gpus_.begin(), gpus_.end(), [](const Gpu& gpu) { return gpu.instance_entity; });
    if (!any || profiling_health_ != GpuHealth::kOk) return std::nullopt;

    const std::string name = prefix + "-mig";
    dcgm::Return rc = lib_->group_create(handle_, dcgm::kGroupEmpty, name.c_str(), &instance_group_);
    if (rc == dcgm::kOk) {
      have_instance_group_ = true;
      for (const Gpu& gpu : gpus_) {
        if (!gpu.instance_entity) continue;
        rc = lib_->group_add_entity(handle_, instance_group_, dcgm::kEntityGpuInstance, *gpu.instance_entity);
        if (rc != dcgm::kOk) break;
      }
    }
    if (rc == dcgm::kConnectionNotValid) {
      return Failure{rc, fmt::format("{} went away: {}", where, lib_->ErrorText(rc))};
    }
    if (rc != dcgm::kOk) {
      instance_profiling_health_ = GpuHealth::kNotSupported;
      instance_profiling_problem_ = fmt::format(
          "DCGM did not make a group of the MIG instances ({}), so their tensor activity cannot be watched; the "
          "clock still flows",
          lib_->ErrorText(rc));
      return std::nullopt;
    }
    rc = Watch(instance_group_, plan_.profiling, prefix + "-mig-profiling", instance_fields_);
    if (rc == dcgm::kOk) {
      rc = Watch(instance_group_, plan_.cycles, prefix + "-mig-cycles", instance_fields_);
      if (rc != dcgm::kConnectionNotValid) rc = dcgm::kOk;  // as on the GPUs: the point clock serves instead
    }
    if (rc == dcgm::kConnectionNotValid) {
      return Failure{rc, fmt::format("{} went away: {}", where, lib_->ErrorText(rc))};
    }
    if (rc != dcgm::kOk) {
      instance_fields_.clear();
      std::tie(instance_profiling_health_, instance_profiling_problem_) = ProfilingRefused(rc);
      instance_profiling_problem_ = "on the MIG instances: " + instance_profiling_problem_;
    }
    return std::nullopt;
  }

  // Creates a field group and watches it on `group`; on success its fields
  // are added to `read`, to be read each window. No fields: nothing to do.
  dcgm::Return Watch(dcgm::GpuGroup group, const std::vector<unsigned short>& fields, const std::string& name,
                     std::vector<unsigned short>& read) {
    if (fields.empty()) return dcgm::kOk;
    std::vector<unsigned short> ids = fields;
    dcgm::FieldGroup fg = 0;
    dcgm::Return rc = lib_->field_group_create(handle_, static_cast<int>(ids.size()), ids.data(), name.c_str(), &fg);
    if (rc != dcgm::kOk) return rc;
    const auto update_us = static_cast<long long>(std::llround(options_.window_s * 1e6));
    rc = lib_->watch_fields(handle_, group, fg, update_us, options_.window_s * kKeepWindows, 0);
    if (rc != dcgm::kOk) {
      lib_->field_group_destroy(handle_, fg);
      return rc;
    }
    field_groups_.push_back(fg);
    read.insert(read.end(), fields.begin(), fields.end());
    return dcgm::kOk;
  }

  // Names, UUIDs, PCI bus ids and MIG mode, read live (no watch needed). A
  // GPU whose names cannot be read is still counted, keyed by its DCGM id.
  void ReadIdentities(std::vector<Gpu>& gpus) {
    std::vector<dcgm::GroupEntityPair> entities;
    for (const Gpu& gpu : gpus) entities.push_back({dcgm::kEntityGpu, gpu.id});
    unsigned short fields[] = {dcgm::kFieldName, dcgm::kFieldUuid, dcgm::kFieldPciBusId, dcgm::kFieldMigMode};
    std::vector<dcgm::FieldValueV2> values(entities.size() * std::size(fields), dcgm::FieldValueV2{});
    for (auto& v : values) v.version = dcgm::kFieldValueVersion2;
    const dcgm::Return rc = lib_->entities_get_latest_values(handle_, entities.data(),
                                                             static_cast<unsigned>(entities.size()), fields,
                                                             static_cast<unsigned>(std::size(fields)), dcgm::kLiveData,
                                                             values.data());
    for (Gpu& gpu : gpus) {
      if (rc == dcgm::kOk) {
        for (const auto& v : values) {
          if (v.entityGroupId != dcgm::kEntityGpu || v.entityId != gpu.id) continue;
          if (v.fieldId == dcgm::kFieldName) gpu.identity.model = TextOf(v);
          if (v.fieldId == dcgm::kFieldUuid) gpu.identity.uuid = TextOf(v);
          if (v.fieldId == dcgm::kFieldPciBusId) gpu.identity.pci_bus_id = TextOf(v);
          if (v.fieldId == dcgm::kFieldMigMode) gpu.mig_mode = NumberOf(v) == 1.0;
        }
      }
      gpu.identity.key = gpu.identity.uuid.empty() ? fmt::format("dcgm-gpu{}", gpu.id) : gpu.identity.uuid;
      if (specs_ && !gpu.identity.model.empty()) {
        if (auto spec = specs_->Lookup(gpu.identity.model); spec.ok()) gpu.sm_count = (*spec)->sm_count;
      }
    }
  }

  std::optional<Failure> Reconnect() {
    if (auto failure = embedded_mode_ ? EmbeddedAgain() : Connect(false)) return failure;
    if (auto failure = SetUp()) {
      Disconnect();
      return failure;
    }
    return std::nullopt;
  }

  std::optional<Failure> EmbeddedAgain() {
    if (dcgm::Return rc = StartEmbedded(); rc != dcgm::kOk) {
      return Failure{rc, fmt::format("the embedded DCGM hostengine did not restart: {}", lib_->ErrorText(rc))};
    }
    return std::nullopt;
  }

  // The hostengine went away: release the handle, schedule the next attempt
  // and forget what spanned the gap.
  void LoseConnection(std::string reason) {
    if (connected_) embedded_mode_ = embedded_;
    Disconnect();
    backoff_.Failed(clock_.NowS());
    unavailable_reason_ = fmt::format(
        "{}; retrying with back-off (next attempt in {:.0f} s); if it persists, start "
        "nv-hostengine (systemctl start nvidia-dcgm)",
        reason, backoff_.next_try_s() - clock_.NowS());
    for (Gpu& gpu : gpus_) {
      gpu.paused = false;
      gpu.last_cycles.reset();
    }
  }

  GpuReading UnavailableReading(const Gpu& gpu, double end_s, const std::string& reason) const {
    GpuReading reading;
    reading.identity = gpu.identity;
    reading.health = GpuHealth::kUnavailable;
    reading.problem = reason;
    reading.sample.time_s = end_s;
    reading.sm_count = gpu.sm_count;
    return reading;
  }

  std::optional<Snapshot> Unavailable(Snapshot snapshot) const {
    for (const Gpu& gpu : gpus_) snapshot.gpus.push_back(UnavailableReading(gpu, snapshot.time_s, unavailable_reason_));
    return snapshot;
  }

  GpuReading ReadingFor(Gpu& gpu, double end_s, std::vector<std::string>& notes) {
    GpuReading reading;
    reading.identity = gpu.identity;
    reading.sm_count = gpu.sm_count;
    reading.sample.time_s = end_s;

    // A whole GPU takes every field of its GPU entity; a MIG instance takes
    // its activity from its GPU_I entity and the clock fields from its
    // parent's GPU entity; a MIG-mode GPU that stayed whole takes only its
    // device fields.
    const bool instance = gpu.instance_entity.has_value();
    const bool whole_mig = gpu.mig_health != GpuHealth::kOk;
    bool lost = false;
    bool any_profiling = false;
    std::optional<double> cycles_elapsed;
    std::optional<double> cycles_tensor;
    auto take = [&](const dcgm::FieldValueV2& v) {
      if (v.status == dcgm::kGpuIsLost) lost = true;
      const std::optional<double> number = NumberOf(v);
      if (IsProfilingField(v.fieldId) && number) any_profiling = true;
      if (v.fieldId == dcgm::kFieldSmCyclesElapsedTotal) cycles_elapsed = number;
      if (v.fieldId == dcgm::kFieldMmaCyclesActiveTotal) cycles_tensor = number;
      if (const CounterFieldInfo* info = InfoForDcgmField(v.fieldId)) SetField(reading.sample, info->field, number);
    };
    for (const auto& v : values_) {
      if (v.entityGroupId != dcgm::kEntityGpu || v.entityId != gpu.id) continue;
      if (instance && !IsLentToInstances(v.fieldId)) {
        if (v.status == dcgm::kGpuIsLost) lost = true;
        continue;
      }
      if (whole_mig && !IsDeviceField(v.fieldId)) continue;
      take(v);
    }
    if (instance) {
      for (const auto& v : instance_values_) {
        if (v.entityGroupId == dcgm::kEntityGpuInstance && v.entityId == *gpu.instance_entity) take(v);
      }
    }

    if (lost) {
      reading.sample = CounterSample{};
      reading.sample.time_s = end_s;
      reading.health = GpuHealth::kLost;
      reading.problem =
          "DCGM reports the GPU lost (GPU_IS_LOST: it fell off the bus); check dmesg for Xid errors, "
          "then reset or reseat it";
      gpu.paused = false;
      gpu.last_cycles.reset();
      return reading;
    }
    const GpuHealth profiling_health = instance ? instance_profiling_health_ : profiling_health_;
    if (whole_mig) {
      reading.health = gpu.mig_health;
      reading.problem = gpu.mig_problem;
    } else if (profiling_health != GpuHealth::kOk) {
      reading.health = profiling_health;
      reading.problem = instance ? instance_profiling_problem_ : profiling_problem_;
    }

    const bool profiling_watched = !whole_mig && profiling_health == GpuHealth::kOk;
    if (profiling_watched && !any_profiling && reading.sample.sm_clock_mhz) {
      // The device answers but every profiling counter is blank: another
      // profiler holds them. A gap, not idle tensor cores.
      if (!gpu.paused) {
        notes.push_back(
            fmt::format("profiling paused on GPU {}: another profiler (such as Nsight) holds the "
                        "counters; tensor activity is absent until it lets go",
                        gpu.identity.key));
      }
      gpu.paused = true;
      gpu.last_cycles.reset();
    } else if (gpu.paused && any_profiling) {
      notes.push_back(fmt::format("profiling resumed on GPU {}", gpu.identity.key));
      gpu.paused = false;
    }

    if (reading.sample.sm_clock_mhz) {
      reading.clock_basis = ClockBasis::kPointReading;
      reading.clock_readings = 1;
    }
    ApplyExactCycles(gpu, reading, cycles_elapsed, cycles_tensor, end_s, notes);
    return reading;
  }

  void ApplyExactCycles(Gpu& gpu, GpuReading& reading, std::optional<double> elapsed, std::optional<double> tensor,
                        double end_s, std::vector<std::string>& notes) {
    if (!elapsed || !tensor) {
      gpu.last_cycles.reset();  // a difference across a gap would not be this window's
      return;
    }
    const CycleCounters now{*elapsed, *tensor};
    if (gpu.last_cycles) {
      auto exact = DeriveExactCycles(*gpu.last_cycles, now, end_s - gpu.last_cycles_time_s, gpu.sm_count.value_or(0),
                                     reading.sample.sm_clock_mhz);
      if (exact.ok()) {
        reading.sample.tensor_active = exact->tensor_active;
        reading.sample.sm_clock_mhz = exact->sm_clock_mhz;
        reading.clock_basis = ClockBasis::kExactCycles;
        reading.clock_readings = 1;
        gpu.cycle_problem_noted = false;
      } else if (!gpu.cycle_problem_noted) {
        notes.push_back(fmt::format("GPU {}: exact-cycle mode off ({}); using the point SM clock", gpu.identity.key,
                                    exact.error().message));
        gpu.cycle_problem_noted = true;
      }
    }
    gpu.last_cycles = now;
    gpu.last_cycles_time_s = end_s;
  }

  std::unique_ptr<DcgmLibrary> lib_;
  Address address_;
  SourceOptions options_;
  WatchPlan plan_;  // what Connect() watches
  Clock& clock_;
  std::optional<GpuSpecDatabase> specs_;

  dcgm::Handle handle_ = 0;
  bool connected_ = false;
  bool embedded_ = false;
  bool embedded_mode_ = false;  // what to restart after a loss
  dcgm::GpuGroup group_ = 0;    // every GPU
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
  int sessions_ = 0;

  std::vector<unsigned int> gpu_ids_;                // DCGM's gpuIds, the GPU entities read each window
  std::vector<Gpu> gpus_;                            // the devices reported: whole GPUs and MIG instances
  std::vector<dcgm::FieldValueV2> values_;           // reused: one 4 KiB record per GPU and field
  std::vector<dcgm::FieldValueV2> instance_values_;  // likewise per MIG instance and field
  double window_end_s_ = 0;
  Backoff backoff_{1, 60};
  std::string unavailable_reason_;
};

}  // namespace

Result<std::unique_ptr<Source>> OpenDcgmSource(std::string_view address, const SourceOptions& options, Clock& clock) {
  Address parsed = ParseAddress(address);
  if (parsed.kind == AddressKind::kUnixSocket && parsed.target.empty()) {
    return Error::InvalidArgument("dcgm:unix: needs a socket path, e.g. dcgm:unix:/run/dcgm.sock");
  }
  OFU_ASSIGN_OR_RETURN(auto lib,
                       DcgmLibrary::Load(DcgmLibrary::Candidates(options.dcgm_library), options.call_accounting));
  auto source = std::make_unique<DcgmSource>(std::move(lib), std::move(parsed), options, clock);
  OFU_RETURN_IF_ERROR(source->Start());
  return std::unique_ptr<Source>(std::move(source));
}

}  // namespace ofu::sources
