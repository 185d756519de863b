// The part of the DCGM C API that ofu uses, declared by the project itself.
//
// No DCGM header is installed where ofu builds, and ofu never links DCGM:
// the library is opened with dlopen (dcgm_library.h) and these declarations
// describe what it exports. Every constant and layout below was taken from
// NVIDIA's public headers in github.com/NVIDIA/DCGM (dcgmlib/dcgm_structs.h
// of the 2024 tree that defines dcgmFieldValue_v2, dcgmConnectV2Params_v2
// and dcgmStartEmbeddedV2Params_v2; dcgmlib/dcgm_agent.h of 2025;
// dcgmlib/dcgm_fields.h), which DCGM 3.x and 4.x share for these items.
// Fields 1084-1090 are the cumulative cycle counters of DCGM 4.6. The MIG
// hierarchy (dcgmMigHierarchy_v2 and its parts, DCGM_MAX_TOTAL_INSTANCES_PER_GPU,
// dcgmGetGpuInstanceHierarchy, dcgmGroupAddEntity, DCGM_FE_GPU_I/_CI and
// DCGM_FI_DEV_MIG_MODE) is as in dcgm_structs.h, dcgm_agent.h and dcgm_fields.h
// of DCGM 4.6.0 (commit 72fa3fe), unchanged in every public release since
// DCGM 2.2.6, the oldest in that repository.
//
// Layouts matter: DCGM stamps each versioned struct with its size
// (MakeVersion), and a hostengine rejects a struct whose size it does not
// know with VER_MISMATCH. Do not add members.
//
// The in-tree test double (tests/doubles/fake_dcgm.cc) implements these same
// declarations, so the source and the double cannot drift apart.
//
// Thread-safety: declarations only. What DCGM allows across threads is
// DCGM's; ofu calls it from one thread at a time (dcgm_source.h).
#pragma once

#include <cstdint>

namespace ofu::dcgm {

// dcgmReturn_t is a C enum with negative members; its ABI is an int.
using Return = int;

inline constexpr Return kOk = 0;
inline constexpr Return kBadParam = -1;
inline constexpr Return kGenericError = -3;
inline constexpr Return kNotSupported = -6;
inline constexpr Return kInitError = -7;
inline constexpr Return kTimeout = -11;
inline constexpr Return kVersionMismatch = -12;
inline constexpr Return kUnknownField = -13;
inline constexpr Return kNoData = -14;
inline constexpr Return kNotWatched = -16;
inline constexpr Return kNoPermission = -17;
inline constexpr Return kGpuIsLost = -18;
inline constexpr Return kResetRequired = -19;
inline constexpr Return kConnectionNotValid = -21;
inline constexpr Return kGpuNotSupported = -22;
inline constexpr Return kRequiresRoot = -29;
inline constexpr Return kModuleNotLoaded = -33;
inline constexpr Return kInUse = -34;
inline constexpr Return kProfilingNotSupported = -36;
inline constexpr Return kProfilingLibraryError = -37;
inline constexpr Return kProfilingMultiPass = -38;

// Opaque identifiers; all are uintptr_t in the C API.
using Handle = std::uintptr_t;
using GpuGroup = std::uintptr_t;
using FieldGroup = std::uintptr_t;

// Blank sentinels: a value at or above these carries no data (not found,
// not supported, no permission, profiling paused...). Never read them as
// numbers.
inline constexpr double kFp64Blank = 140737488355328.0;  // 2^47
inline constexpr std::int64_t kInt64Blank = 0x7ffffffffffffff0;

inline constexpr int kMaxDevices = 32;        // DCGM_MAX_NUM_DEVICES (DCGM >= 2)
inline constexpr int kMaxStringLength = 256;  // DCGM_MAX_STR_LENGTH
inline constexpr int kMaxBlobLength = 4096;   // DCGM_MAX_BLOB_LENGTH
inline constexpr int kDefaultPort = 5555;     // DCGM_HE_PORT_NUMBER

// dcgmOperationMode_t
inline constexpr int kOperationModeAuto = 1;
inline constexpr int kOperationModeManual = 2;

// dcgmGroupType_t
inline constexpr int kGroupEmpty = 1;

// dcgm_field_entity_group_t (dcgm_fields.h): DCGM_FE_GPU, DCGM_FE_GPU_I (a MIG
// GPU instance) and DCGM_FE_GPU_CI (a compute instance inside one).
inline constexpr int kEntityGpu = 1;
inline constexpr int kEntityGpuInstance = 2;
inline constexpr int kEntityComputeInstance = 3;

// Field types (one byte in dcgmFieldValue_v2::fieldType).
inline constexpr unsigned short kFieldTypeDouble = 'd';
inline constexpr unsigned short kFieldTypeInt64 = 'i';
inline constexpr unsigned short kFieldTypeString = 's';

// dcgmEntitiesGetLatestValues flag: read the driver now rather than the
// cache (used once at start for names, which need no watch then).
inline constexpr unsigned int kLiveData = 0x1;

// Field ids used outside CounterSample (sample.h maps the counter ones).
inline constexpr unsigned short kFieldName = 50;
inline constexpr unsigned short kFieldUuid = 54;
inline constexpr unsigned short kFieldPciBusId = 57;
inline constexpr unsigned short kFieldMigMode = 67;  // DCGM_FI_DEV_MIG_MODE: int64, 1 when MIG is on
inline constexpr unsigned short kFieldSmClock = 100;
inline constexpr unsigned short kFieldSmCyclesElapsedTotal = 1084;
inline constexpr unsigned short kFieldMmaCyclesActiveTotal = 1086;

// MAKE_DCGM_VERSION: the struct's size in the low 24 bits, its version above.
template <typename T>
constexpr unsigned int MakeVersion(unsigned int version) {
  return static_cast<unsigned int>(sizeof(T)) | (version << 24U);
}

// dcgmConnectV2Params_v2
struct ConnectV2Params {
  unsigned int version;
  unsigned int persistAfterDisconnect;  // 0: the hostengine drops our watches when we go
  unsigned int timeoutMs;
  unsigned int addressIsUnixSocket;
};
inline constexpr unsigned int kConnectV2ParamsVersion2 = MakeVersion<ConnectV2Params>(2);

// dcgmStartEmbeddedV2Params_v2; denyList has DcgmModuleIdCount (10) entries
// in the header followed. A library built with more modules answers
// VER_MISMATCH, and the source then falls back to dcgmStartEmbedded.
inline constexpr int kModuleCount = 10;
struct StartEmbeddedV2Params {
  unsigned int version;
  int opMode;
  Handle dcgmHandle;  // out
  const char* logFile;
  int severity;  // DcgmLoggingSeverity_t
  unsigned int denyListCount;
  const char* serviceAccount;
  unsigned int denyList[kModuleCount];
};
inline constexpr unsigned int kStartEmbeddedV2ParamsVersion2 = MakeVersion<StartEmbeddedV2Params>(2);

// dcgmGroupEntityPair_t
struct GroupEntityPair {
  int entityGroupId;
  unsigned int entityId;
};

// dcgmFieldValue_v2
struct FieldValueV2 {
  unsigned int version;
  int entityGroupId;
  unsigned int entityId;
  unsigned short fieldId;
  unsigned short fieldType;
  int status;
  unsigned int unused;
  std::int64_t ts;  // µs since 1970
  union {
    std::int64_t i64;
    double dbl;
    char str[kMaxStringLength];
    char blob[kMaxBlobLength];
  } value;
};
inline constexpr unsigned int kFieldValueVersion2 = MakeVersion<FieldValueV2>(2);
static_assert(sizeof(FieldValueV2) == 32 + kMaxBlobLength, "dcgmFieldValue_v2 layout");
static_assert(sizeof(ConnectV2Params) == 16, "dcgmConnectV2Params_v2 layout");

// The MIG hierarchy: one entry per GPU instance of every MIG-mode GPU (parent
// a DCGM_FE_GPU), each followed by its compute instances (parent the
// DCGM_FE_GPU_I). A GPU without MIG has no entry. DCGM's entity id of a GPU
// instance is its own numbering (gpuId x the GPU's maximum GPU instances +
// index, in DcgmCacheManager.cpp); the GPU instance id that NVML and
// dcgm-exporter's GPU_I_ID label use is info.nvmlInstanceId.
inline constexpr int kMaxTotalInstancesPerGpu = 14;                               // DCGM_MAX_TOTAL_INSTANCES_PER_GPU
inline constexpr int kMaxHierarchyInfo = kMaxDevices * kMaxTotalInstancesPerGpu;  // DCGM_MAX_HIERARCHY_INFO

// dcgmMigEntityInfo_t
struct MigEntityInfo {
  char gpuUuid[128];
  unsigned int nvmlGpuIndex;
  unsigned int nvmlInstanceId;         // GPU instance id within the GPU
  unsigned int nvmlComputeInstanceId;  // -1 (all ones) for a GPU instance
  unsigned int nvmlMigProfileId;
  unsigned int nvmlProfileSlices;
};

// dcgmMigHierarchyInfo_v2
struct MigHierarchyInfoV2 {
  GroupEntityPair entity;
  GroupEntityPair parent;
  MigEntityInfo info;
};

// dcgmMigHierarchy_v2 (72 KiB: allocate it, do not put it on the stack)
struct MigHierarchyV2 {
  unsigned int version;
  unsigned int count;
  MigHierarchyInfoV2 entityList[kMaxHierarchyInfo];
};
inline constexpr unsigned int kMigHierarchyVersion2 = MakeVersion<MigHierarchyV2>(2);
static_assert(sizeof(MigEntityInfo) == 148, "dcgmMigEntityInfo_t layout");
static_assert(sizeof(MigHierarchyInfoV2) == 164, "dcgmMigHierarchyInfo_v2 layout");
static_assert(sizeof(MigHierarchyV2) == 8 + 448 * 164, "dcgmMigHierarchy_v2 layout");
static_assert(kMigHierarchyVersion2 == 0x02011F08, "dcgmMigHierarchy_version2");

// Function types, named after the exported symbols.
extern "C" {
using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ConnectV2Fn = Return (*)(const char* address, ConnectV2Params* params, Handle* handle);
using DisconnectFn = Return (*)(Handle handle);
using StartEmbeddedV2Fn = Return (*)(StartEmbeddedV2Params* params);
using StartEmbeddedFn = Return (*)(int op_mode, Handle* handle);
using StopEmbeddedFn = Return (*)(Handle handle);
using GetAllSupportedDevicesFn = Return (*)(Handle handle, unsigned int* gpu_ids, int* count);
using GroupCreateFn = Return (*)(Handle handle, int type, const char* name, GpuGroup* group);
using GroupAddDeviceFn = Return (*)(Handle handle, GpuGroup group, unsigned int gpu_id);
using GroupAddEntityFn = Return (*)(Handle handle, GpuGroup group, int entity_group_id, unsigned int entity_id);
using GroupDestroyFn = Return (*)(Handle handle, GpuGroup group);
using FieldGroupCreateFn = Return (*)(Handle handle, int count, unsigned short* field_ids, const char* name,
                                      FieldGroup* field_group);
using FieldGroupDestroyFn = Return (*)(Handle handle, FieldGroup field_group);
using WatchFieldsFn = Return (*)(Handle handle, GpuGroup group, FieldGroup field_group, long long update_freq_us,
                                 double max_keep_age_s, int max_keep_samples);
using UpdateAllFieldsFn = Return (*)(Handle handle, int wait_for_update);
using EntitiesGetLatestValuesFn = Return (*)(Handle handle, GroupEntityPair* entities, unsigned int entity_count,
                                             unsigned short* field_ids, unsigned int field_count, unsigned int flags,
                                             FieldValueV2* values);
using GetGpuInstanceHierarchyFn = Return (*)(Handle handle, MigHierarchyV2* hierarchy);
using ErrorStringFn = const char* (*)(Return result);
}

}  // namespace ofu::dcgm
