// The project's own minimal declarations of the NVML C API: only what the
// NVML source calls, so that ofu builds where no NVIDIA header or driver is
// installed. The test double (tests/doubles/fake_nvml.cc) includes this same
// file, so product and double cannot disagree on a layout.
//
// Facts (values, struct layouts, symbol versions) follow the public nvml.h of
// NVML 12.2.140 as vendored by NVIDIA/go-nvml (gen/nvml/nvml.h), and, for the
// GPM metric ids above 98 (248 SM_CYCLES_ELAPSED, 249 SM_CYCLES_ACTIVE, 250
// MMA_CYCLES_ACTIVE), the NVML enum of cuda-bindings generated from the
// 12.9.1 .. 13.3.0 headers. Every NVML enum is passed as a C int, which is
// how the real header's enums are laid out on Linux x86-64 and aarch64.
//
// Only layouts that cross the library boundary are declared; handles stay
// opaque.
//
// Thread-safety: declarations only. NVML's calls are thread-safe as NVML
// documents; ofu still calls them from one thread at a time (nvml_source.h).
#pragma once

#include <cstddef>

extern "C" {

typedef int nvmlReturn_t;

// Return codes. Values are fixed by the ABI and never renumbered.
enum : int {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_UNKNOWN = 999,
};

typedef struct nvmlDevice_st* nvmlDevice_t;
// nvml.h wraps this pointer in a one-member struct; the ABI is the same.
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;

// nvmlClockType_t
enum : int { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_CLOCK_VIDEO = 3 };

// nvmlDeviceArchitecture_t (an unsigned int)
enum : unsigned {
  NVML_DEVICE_ARCH_KEPLER = 2,
  NVML_DEVICE_ARCH_MAXWELL = 3,
  NVML_DEVICE_ARCH_PASCAL = 4,
  NVML_DEVICE_ARCH_VOLTA = 5,
  NVML_DEVICE_ARCH_TURING = 6,
  NVML_DEVICE_ARCH_AMPERE = 7,
  NVML_DEVICE_ARCH_ADA = 8,
  NVML_DEVICE_ARCH_HOPPER = 9,
  NVML_DEVICE_ARCH_BLACKWELL = 10,
};

// nvmlDeviceGetMigMode's "current" output.
enum : unsigned { NVML_DEVICE_MIG_DISABLE = 0, NVML_DEVICE_MIG_ENABLE = 1 };

// Buffer sizes the header guarantees to be large enough.
inline constexpr unsigned NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32;
inline constexpr unsigned NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16;

// nvmlDeviceGetPciInfo_v3.
typedef struct {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

// The process record of nvmlDeviceGetComputeRunningProcesses_v2 and _v3
// (both take this "v2" layout; the unversioned v1 lacks the instance ids).
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes; NVML_VALUE_NOT_AVAILABLE when unknown
  unsigned int gpuInstanceId;        // 0xFFFFFFFF when MIG is off
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;

inline constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE_ULL = ~0ULL;

// nvmlDeviceGetAttributes_v2.
typedef struct {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

// GPM: nvmlGpmQueryDeviceSupport.
inline constexpr unsigned NVML_GPM_SUPPORT_VERSION = 1;
typedef struct {
  unsigned int version;            // in: NVML_GPM_SUPPORT_VERSION
  unsigned int isSupportedDevice;  // out
} nvmlGpmSupport_t;

// GPM metric ids used by ofu (nvmlGpmMetricId_t).
enum : unsigned {
  NVML_GPM_METRIC_GRAPHICS_UTIL = 1,
  NVML_GPM_METRIC_SM_UTIL = 2,
  NVML_GPM_METRIC_SM_OCCUPANCY = 3,
  NVML_GPM_METRIC_INTEGER_UTIL = 4,
  NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,
  NVML_GPM_METRIC_DFMA_TENSOR_UTIL = 6,
  NVML_GPM_METRIC_HMMA_TENSOR_UTIL = 7,
  NVML_GPM_METRIC_DMMA_TENSOR_UTIL = 8,
  NVML_GPM_METRIC_IMMA_TENSOR_UTIL = 9,
  NVML_GPM_METRIC_DRAM_BW_UTIL = 10,
  NVML_GPM_METRIC_FP64_UTIL = 11,
  NVML_GPM_METRIC_FP32_UTIL = 12,
  NVML_GPM_METRIC_FP16_UTIL = 13,
  // Graphics engine 0's context-switch cycle counters (unit "#", 0 at idle;
  // names from nvmlGpmMetricsGet's metricInfo on driver 580.159.04,
  // docs/results/2026-11-27-h200/stage-A/probe-metrics.json). Whether 170
  // tracks the SMs' clock is issue 39's question: read by ofu-gpm-probe only.
  NVML_GPM_METRIC_GR0_CTXSW_CYCLES_ELAPSED = 170,
  NVML_GPM_METRIC_GR0_CTXSW_CYCLES_ACTIVE = 171,
  NVML_GPM_METRIC_GR0_CTXSW_REQUESTS = 172,
  NVML_GPM_METRIC_GR0_CTXSW_CYCLES_PER_REQ = 173,
  NVML_GPM_METRIC_GR0_CTXSW_ACTIVE_PCT = 174,
  NVML_GPM_METRIC_SM_CYCLES_ELAPSED = 248,
  NVML_GPM_METRIC_SM_CYCLES_ACTIVE = 249,
  NVML_GPM_METRIC_MMA_CYCLES_ACTIVE = 250,
};

// One requested metric and its own result.
typedef struct {
  unsigned int metricId;    // in
  nvmlReturn_t nvmlReturn;  // out: the value is valid only when NVML_SUCCESS
  double value;             // out
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;  // out, owned by NVML
} nvmlGpmMetric_t;

// nvmlGpmMetricsGet's argument. The header's array length
// (NVML_GPM_METRIC_MAX) grew from 98 to over 300 while the struct version
// stayed 1; the library only touches the first numMetrics entries, so a
// larger array than any header's is safe and one that is too small is not.
inline constexpr unsigned NVML_GPM_METRICS_GET_VERSION = 1;
inline constexpr std::size_t kOfuGpmMetricsCapacity = 512;
typedef struct {
  unsigned int version;  // in: NVML_GPM_METRICS_GET_VERSION
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;  // the earlier sample
  nvmlGpmSample_t sample2;  // the later sample
  nvmlGpmMetric_t metrics[kOfuGpmMetricsCapacity];
} nvmlGpmMetricsGet_t;

}  // extern "C"
