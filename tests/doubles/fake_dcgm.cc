// A scripted stand-in for libdcgm, built as libdcgm.so.4 and loaded by the
// DCGM source through the same dlopen path as the real library.
//
// It exports the C functions the source calls (declared in
// src/ofu/sources/dcgm/dcgm_api.h) plus three control functions:
//   int  ofu_fake_dcgm_load_scenario(const char* json)  // 0, or -1 if the JSON is bad
//   const char* ofu_fake_dcgm_state()                   // JSON of what the source did
// In-process tests dlopen() the same path (so they share this file's state)
// and dlsym them. A subprocess (CLI test) sets OFU_FAKE_DCGM_SCENARIO=path
// instead; dcgmInit loads that file when no scenario was loaded.
//
// Scenario (JSON object; every member optional). Nothing depends on wall
// time: values are chosen by read index, the number of successful metric
// reads (dcgmEntitiesGetLatestValues without the live flag) so far, from 0.
// A read that asks only for GPU instances belongs to the GPU read before it
// (the source reads the GPUs, then their instances, each window): it takes
// that read's index and does not advance it.
//   "gpus":  [{"name": "...", "uuid": "GPU-...", "pci_bus_id": "...",
//              "mig": [{"gi": 2, "profile": "3g.40gb", "reads": [{"1004": 0.3}, ...]}, ...]}, ...]
//            default: one "NVIDIA H100 80GB HBM3", uuid "GPU-fake-0"
//            "mig" present: MIG is on (field 67 = 1; [] = on with no GPU
//            instance), and each entry is a GPU instance: "gi" its NVML GPU
//            instance id (info.nvmlInstanceId), "profile" what field 50 of
//            the instance says, "reads" its values per read (read i uses
//            reads[min(i, last)], as below). As in DCGM, the instance's entity
//            id is DCGM's own, gpu x 8 + its index in "mig", not "gi"; the
//            hierarchy lists each instance followed by one compute instance
//            (DCGM_FE_GPU_CI, same entity id) whose parent it is.
//   "reads": [[{"<field id>": number, ...}, ...per GPU], ...per read]
//            read i uses reads[min(i, last)]; a field not given, or given as
//            "blank", is blank (DCGM_FP64_BLANK or DCGM_INT64_BLANK by type)
//   "hierarchy_error": C       dcgmGetGpuInstanceHierarchy returns C
//   "hostengine": false        dcgmConnect_v2 always fails (CONNECTION_NOT_VALID)
//   "embedded": false          dcgmStartEmbedded* fail with INIT_ERROR
//   "drop_at_read": N          read N fails with CONNECTION_NOT_VALID, and so does
//                              every call until a connect succeeds
//   "failed_connects": K       after a drop, the first K connects fail
//   "paused_reads": [a, b]     reads a..b inclusive: profiling fields (1001-1015,
//                              1084-1090) are blank (another profiler holds them)
//   "lost_gpu": G, "lost_from_read": N
//                              from read N on, GPU G's values have status GPU_IS_LOST
//   "watch_profiling_error": C dcgmWatchFields on a field group holding 1001 returns C
//   "no_cycle_fields": true    dcgmFieldGroupCreate with 1084 returns UNKNOWN_FIELD
// Field types follow DCGM: 100, 112, 113, 156, 1009-1012 and 1084-1090 are
// int64; the rest double; 50/54/57 strings.
//
// State (ofu_fake_dcgm_state): connect_attempts, last_address, last_unix_socket,
// last_timeout_ms, embedded_starts, update_all_fields, reads, watch_update_us,
// watch_keep_age_s, watched_fields (all fields of successful watches, in order),
// watches ([{"group": G, "fields": [...]}] per successful watch), group_gpus
// (gpuIds added with dcgmGroupAddDevice since the last successful connect or
// embedded start), group_entities ([{"group": G, "entity_group": E, "id": I}]
// added with dcgmGroupAddEntity, likewise), hierarchy_calls, connected.
//
// Built a second time with OFU_FAKE_DCGM_NO_MIG_HIERARCHY defined, as a
// library that does not export dcgmGetGpuInstanceHierarchy (a DCGM too old
// to list MIG instances).
//
// State lives in this file's statics: this is a test double, not product code.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ofu/sources/dcgm/dcgm_api.h"

namespace {

namespace d = ofu::dcgm;
using nlohmann::json;

struct FakeInstance {
  unsigned gi = 0;  // NVML GPU instance id
  std::string profile;
  json reads = json::array();
};

struct FakeGpu {
  std::string name;
  std::string uuid;
  std::string pci_bus_id;
  bool mig = false;
  std::vector<FakeInstance> instances;
};

// DCGM numbers a GPU instance entity gpuId x (the GPU's maximum GPU
// instances) + index; 8 is DCGM_MAX_INSTANCES_PER_GPU, its fallback.
constexpr unsigned kInstancesPerGpu = 8;

struct State {
  bool scenario_loaded = false;
  json scenario = json::object();
  std::vector<FakeGpu> gpus;
  bool connected = false;
  bool dropped = false;
  int failed_connects_left = 0;
  int reads = 0;
  int next_id = 1;
  std::map<d::FieldGroup, std::vector<unsigned short>> field_groups;
  json record = json::object();
};

State& S() {
  static State state;
  return state;
}

int IntOr(const char* key, int fallback) {
  const json& sc = S().scenario;
  return sc.contains(key) && sc[key].is_number_integer() ? sc[key].get<int>() : fallback;
}

bool BoolOr(const char* key, bool fallback) {
  const json& sc = S().scenario;
  return sc.contains(key) && sc[key].is_boolean() ? sc[key].get<bool>() : fallback;
}

void Reset(json scenario) {
  State& s = S();
  s = State{};
  s.scenario_loaded = true;
  s.scenario = std::move(scenario);
  if (s.scenario.contains("gpus")) {
    for (const auto& g : s.scenario["gpus"]) {
      FakeGpu gpu{g.value("name", ""), g.value("uuid", ""), g.value("pci_bus_id", ""), g.contains("mig"), {}};
      if (gpu.mig) {
        for (const auto& m : g["mig"]) {
          gpu.instances.push_back({m.value("gi", 0u), m.value("profile", ""),
                                   m.contains("reads") ? m["reads"] : json::array()});
        }
      }
      s.gpus.push_back(std::move(gpu));
    }
  } else {
    s.gpus.push_back({"NVIDIA H100 80GB HBM3", "GPU-fake-0", "00000000:18:00.0", false, {}});
  }
  s.record = {{"connect_attempts", 0},
              {"last_address", ""},
              {"last_unix_socket", -1},
              {"last_timeout_ms", 0},
              {"embedded_starts", 0},
              {"update_all_fields", 0},
              {"reads", 0},
              {"watch_update_us", 0},
              {"watch_keep_age_s", 0.0},
              {"watched_fields", json::array()},
              {"watches", json::array()},
              {"group_gpus", json::array()},
              {"group_entities", json::array()},
              {"hierarchy_calls", 0},
              {"connected", false}};
}

void EnsureScenario() {
  if (S().scenario_loaded) return;
  json scenario = json::object();
  if (const char* path = std::getenv("OFU_FAKE_DCGM_SCENARIO")) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    scenario = json::parse(text.str(), nullptr, false);
    if (scenario.is_discarded()) scenario = json::object();
  }
  Reset(std::move(scenario));
}

bool IsInt64Field(unsigned short id) {
  return id == 100 || id == 112 || id == 113 || id == 156 || (id >= 1009 && id <= 1012) || (id >= 1084 && id <= 1090);
}

bool IsProfilingField(unsigned short id) { return (id >= 1001 && id <= 1015) || (id >= 1084 && id <= 1090); }

bool InRange(const char* key, int read) {
  const json& sc = S().scenario;
  if (!sc.contains(key) || !sc[key].is_array() || sc[key].size() != 2) return false;
  return read >= sc[key][0].get<int>() && read <= sc[key][1].get<int>();
}

// The scripted number for (read, gpu, field), or nullopt for blank.
std::optional<double> Scripted(int read, unsigned gpu, unsigned short field) {
  const json& sc = S().scenario;
  if (!sc.contains("reads") || sc["reads"].empty()) return std::nullopt;
  const json& reads = sc["reads"];
  const json& row = reads[std::min<std::size_t>(static_cast<std::size_t>(read), reads.size() - 1)];
  if (gpu >= row.size()) return std::nullopt;
  const std::string key = std::to_string(field);
  if (!row[gpu].contains(key) || !row[gpu][key].is_number()) return std::nullopt;
  return row[gpu][key].get<double>();
}

// The instance behind a DCGM_FE_GPU_I entity id, or null.
const FakeInstance* InstanceAt(unsigned entity) {
  const auto& gpus = S().gpus;
  const unsigned gpu = entity / kInstancesPerGpu;
  const unsigned index = entity % kInstancesPerGpu;
  if (gpu >= gpus.size() || index >= gpus[gpu].instances.size()) return nullptr;
  return &gpus[gpu].instances[index];
}

// The scripted number of a GPU instance for (read, field), or nullopt for blank.
std::optional<double> ScriptedInstance(int read, const FakeInstance& instance, unsigned short field) {
  const json& reads = instance.reads;
  if (reads.empty()) return std::nullopt;
  const json& row = reads[std::min<std::size_t>(static_cast<std::size_t>(read), reads.size() - 1)];
  const std::string key = std::to_string(field);
  if (!row.contains(key) || !row[key].is_number()) return std::nullopt;
  return row[key].get<double>();
}

// A session's groups start empty: forget what the last one added.
void NewSession() {
  S().record["group_gpus"] = json::array();
  S().record["group_entities"] = json::array();
}

void SetNumber(d::FieldValueV2& v, std::optional<double> number) {
  if (IsInt64Field(v.fieldId)) {
    v.fieldType = d::kFieldTypeInt64;
    v.value.i64 = number ? static_cast<std::int64_t>(std::llround(*number)) : d::kInt64Blank;
  } else {
    v.fieldType = d::kFieldTypeDouble;
    v.value.dbl = number ? *number : d::kFp64Blank;
  }
}

void SetText(d::FieldValueV2& v, const std::string& text) {
  v.fieldType = d::kFieldTypeString;
  std::snprintf(v.value.str, sizeof v.value.str, "%s", text.c_str());
}

d::Return IfDropped() { return S().dropped ? d::kConnectionNotValid : d::kOk; }

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int ofu_fake_dcgm_load_scenario(const char* text) {
  json scenario = json::parse(text != nullptr ? text : "", nullptr, false);
  if (scenario.is_discarded() || !scenario.is_object()) return -1;
  Reset(std::move(scenario));
  return 0;
}

__attribute__((visibility("default"))) const char* ofu_fake_dcgm_state() {
  static std::string text;
  EnsureScenario();
  S().record["reads"] = S().reads;
  S().record["connected"] = S().connected;
  text = S().record.dump();
  return text.c_str();
}

d::Return dcgmInit() {
  EnsureScenario();
  return d::kOk;
}

d::Return dcgmShutdown() {
  S().connected = false;
  return d::kOk;
}

d::Return dcgmConnect_v2(const char* address, d::ConnectV2Params* params, d::Handle* handle) {
  State& s = S();
  s.record["connect_attempts"] = s.record["connect_attempts"].get<int>() + 1;
  s.record["last_address"] = address != nullptr ? address : "";
  if (params == nullptr || params->version != d::kConnectV2ParamsVersion2) return d::kVersionMismatch;
  s.record["last_unix_socket"] = params->addressIsUnixSocket;
  s.record["last_timeout_ms"] = params->timeoutMs;
  if (!BoolOr("hostengine", true)) return d::kConnectionNotValid;
  if (s.dropped) {
    if (s.failed_connects_left > 0) {
      --s.failed_connects_left;
      return d::kConnectionNotValid;
    }
    s.dropped = false;
  }
  s.connected = true;
  NewSession();
  *handle = 1;
  return d::kOk;
}

d::Return dcgmDisconnect(d::Handle) {
  S().connected = false;
  return d::kOk;
}

d::Return dcgmStartEmbedded_v2(d::StartEmbeddedV2Params* params) {
  if (params == nullptr || params->version != d::kStartEmbeddedV2ParamsVersion2) return d::kVersionMismatch;
  if (!BoolOr("embedded", true)) return d::kInitError;
  S().record["embedded_starts"] = S().record["embedded_starts"].get<int>() + 1;
  S().connected = true;
  NewSession();
  params->dcgmHandle = 2;
  return d::kOk;
}

d::Return dcgmStartEmbedded(int, d::Handle* handle) {
  if (!BoolOr("embedded", true)) return d::kInitError;
  S().record["embedded_starts"] = S().record["embedded_starts"].get<int>() + 1;
  S().connected = true;
  NewSession();
  *handle = 2;
  return d::kOk;
}

d::Return dcgmStopEmbedded(d::Handle) {
  S().connected = false;
  return d::kOk;
}

d::Return dcgmGetAllSupportedDevices(d::Handle, unsigned int* ids, int* count) {
  if (d::Return rc = IfDropped(); rc != d::kOk) return rc;
  const auto n = static_cast<int>(std::min<std::size_t>(S().gpus.size(), d::kMaxDevices));
  for (int i = 0; i < n; ++i) ids[i] = static_cast<unsigned>(i);
  *count = n;
  return d::kOk;
}

d::Return dcgmGroupCreate(d::Handle, int, const char*, d::GpuGroup* group) {
  if (d::Return rc = IfDropped(); rc != d::kOk) return rc;
  *group = static_cast<d::GpuGroup>(S().next_id++);
  return d::kOk;
}

d::Return dcgmGroupAddDevice(d::Handle, d::GpuGroup, unsigned int gpu) {
  if (d::Return rc = IfDropped(); rc != d::kOk) return rc;
  S().record["group_gpus"].push_back(gpu);
  return d::kOk;
}

d::Return dcgmGroupAddEntity(d::Handle, d::GpuGroup group, int entity_group, unsigned int id) {
  if (d::Return rc = IfDropped(); rc != d::kOk) return rc;
  if (entity_group == d::kEntityGpuInstance && InstanceAt(id) == nullptr) return d::kBadParam;
  S().record["group_entities"].push_back({{"group", group}, {"entity_group", entity_group}, {"id", id}});
  return d::kOk;
}

d::Return dcgmGroupDestroy(d::Handle, d::GpuGroup) { return IfDropped(); }

#ifndef OFU_FAKE_DCGM_NO_MIG_HIERARCHY
d::Return dcgmGetGpuInstanceHierarchy(d::Handle, d::MigHierarchyV2* hierarchy) {
  State& s = S();
  if (d::Return rc = IfDropped(); rc != d::kOk) return rc;
  s.record["hierarchy_calls"] = s.record["hierarchy_calls"].get<int>() + 1;
  if (hierarchy == nullptr) return d::kBadParam;
  if (hierarchy->version != d::kMigHierarchyVersion2) return d::kVersionMismatch;
  if (const int error = IntOr("hierarchy_error", 0); error != 0) return error;
  hierarchy->count = 0;
  auto add = [&](d::GroupEntityPair entity, d::GroupEntityPair parent, unsigned gpu, unsigned gi, unsigned ci) {
    d::MigHierarchyInfoV2& e = hierarchy->entityList[hierarchy->count++];
    e = d::MigHierarchyInfoV2{};
    e.entity = entity;
    e.parent = parent;
    std::snprintf(e.info.gpuUuid, sizeof e.info.gpuUuid, "%s", s.gpus[gpu].uuid.c_str());
    e.info.nvmlGpuIndex = gpu;
    e.info.nvmlInstanceId = gi;
    e.info.nvmlComputeInstanceId = ci;
  };
  for (unsigned gpu = 0; gpu < s.gpus.size(); ++gpu) {
    for (unsigned i = 0; i < s.gpus[gpu].instances.size(); ++i) {
      const unsigned entity = gpu * kInstancesPerGpu + i;
      const unsigned gi = s.gpus[gpu].instances[i].gi;
      add({d::kEntityGpuInstance, entity}, {d::kEntityGpu, gpu}, gpu, gi, ~0U);
      add({d::kEntityComputeInstance, entity}, {d::kEntityGpuInstance, entity}, gpu, gi, 0);
    }
  }
  return d::kOk;
}
#endif

d::Return dcgmFieldGroupCreate(d::Handle, int count, unsigned short* ids, const char*, d::FieldGroup* fg) {
  if (d::Return rc = IfDropped(); rc != d::kOk) return rc;
  std::vector<unsigned short> fields(ids, ids + count);
  if (BoolOr("no_cycle_fields", false) && std::find(fields.begin(), fields.end(), 1084) != fields.end()) {
    return d::kUnknownField;
  }
  *fg = static_cast<d::FieldGroup>(S().next_id++);
  S().field_groups[*fg] = std::move(fields);
  return d::kOk;
}

d::Return dcgmFieldGroupDestroy(d::Handle, d::FieldGroup fg) {
  S().field_groups.erase(fg);
  return IfDropped();
}

d::Return dcgmWatchFields(d::Handle, d::GpuGroup group, d::FieldGroup fg, long long update_us, double keep_age_s, int) {
  if (d::Return rc = IfDropped(); rc != d::kOk) return rc;
  const auto& fields = S().field_groups[fg];
  const int error = IntOr("watch_profiling_error", 0);
  if (error != 0 && std::find(fields.begin(), fields.end(), 1001) != fields.end()) return error;
  S().record["watch_update_us"] = update_us;
  S().record["watch_keep_age_s"] = keep_age_s;
  for (unsigned short f : fields) S().record["watched_fields"].push_back(f);
  S().record["watches"].push_back({{"group", group}, {"fields", fields}});
  return d::kOk;
}

d::Return dcgmUpdateAllFields(d::Handle, int) {
  if (d::Return rc = IfDropped(); rc != d::kOk) return rc;
  S().record["update_all_fields"] = S().record["update_all_fields"].get<int>() + 1;
  return d::kOk;
}

d::Return dcgmEntitiesGetLatestValues(d::Handle, d::GroupEntityPair* entities, unsigned int entity_count,
                                      unsigned short* fields, unsigned int field_count, unsigned int flags,
                                      d::FieldValueV2* values) {
  State& s = S();
  if (d::Return rc = IfDropped(); rc != d::kOk) return rc;
  const bool identity = (flags & d::kLiveData) != 0;
  const bool instances_only = entity_count > 0 &&
                              std::all_of(entities, entities + entity_count, [](const d::GroupEntityPair& e) {
                                return e.entityGroupId == d::kEntityGpuInstance;
                              });
  const bool advances = !identity && !instances_only;
  const int read = instances_only ? std::max(0, s.reads - 1) : s.reads;
  if (advances && read == IntOr("drop_at_read", -1) && !s.record.contains("dropped_once")) {
    s.record["dropped_once"] = true;
    s.dropped = true;
    s.connected = false;
    s.failed_connects_left = IntOr("failed_connects", 0);
    return d::kConnectionNotValid;
  }
  const int lost_gpu = IntOr("lost_gpu", -1);
  const bool paused = InRange("paused_reads", read);
  // Filled in reverse entity order: DCGM does not promise any order.
  for (unsigned e = 0; e < entity_count; ++e) {
    const unsigned id = entities[e].entityId;
    const bool is_instance = entities[e].entityGroupId == d::kEntityGpuInstance;
    const FakeInstance* instance = is_instance ? InstanceAt(id) : nullptr;
    const unsigned gpu = is_instance ? id / kInstancesPerGpu : id;
    for (unsigned f = 0; f < field_count; ++f) {
      d::FieldValueV2& v = values[(entity_count - 1 - e) * field_count + f];
      if (v.version != d::kFieldValueVersion2) return d::kVersionMismatch;
      v.entityGroupId = entities[e].entityGroupId;
      v.entityId = id;
      v.fieldId = fields[f];
      v.status = d::kOk;
      v.ts = 0;
      if (is_instance && instance == nullptr) {
        v.status = d::kBadParam;  // no such entity
        SetNumber(v, std::nullopt);
        continue;
      }
      if (identity) {
        if (is_instance) {
          SetText(v, v.fieldId == 50 ? instance->profile : "");
          continue;
        }
        const FakeGpu& g = s.gpus.at(gpu);
        if (v.fieldId == 67) {
          v.fieldType = d::kFieldTypeInt64;
          v.value.i64 = g.mig ? 1 : 0;
          continue;
        }
        SetText(v, v.fieldId == 50 ? g.name : v.fieldId == 54 ? g.uuid : v.fieldId == 57 ? g.pci_bus_id : "");
        continue;
      }
      if (static_cast<int>(gpu) == lost_gpu && read >= IntOr("lost_from_read", 0)) {
        v.status = d::kGpuIsLost;
        SetNumber(v, std::nullopt);
        continue;
      }
      const bool blank = paused && IsProfilingField(v.fieldId);
      const std::optional<double> scripted = is_instance ? ScriptedInstance(read, *instance, v.fieldId)
                                                         : Scripted(read, gpu, v.fieldId);
      SetNumber(v, blank ? std::nullopt : scripted);
    }
  }
  if (advances) ++s.reads;
  return d::kOk;
}

const char* errorString(d::Return result) {
  switch (result) {
    case d::kConnectionNotValid: return "Host engine connection invalid/disconnected";
    case d::kNoPermission: return "No permission";
    case d::kRequiresRoot: return "This operation requires root";
    case d::kNotSupported: return "This request is not supported";
    case d::kProfilingNotSupported: return "Profiling is not supported for this group of GPUs or GPU";
    case d::kGpuIsLost: return "GPU is lost";
    case d::kInitError: return "DCGM initialization error";
    default: return nullptr;
  }
}

}  // extern "C"

// Tells the product's loader that this library is a test double, so that
// everything read through it is labelled synthetic (DynamicLibrary::IsTestDouble).
extern "C" __attribute__((visibility("default"))) int ofu_test_double_marker() { return 1; }
