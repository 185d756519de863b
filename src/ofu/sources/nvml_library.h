// NVML loaded with dlopen: a table of function pointers resolved once.
//
// Load() opens `path` (empty: "libnvidia-ml.so.1") through DynamicLibrary
// and resolves every function ofu calls, newest symbol version first
// (nvmlInit_v2 before nvmlInit, ..._v3 before ..._v2). Required functions
// (init, enumeration, SM clock, GPM) make Load() fail with an error naming
// the missing symbol; optional ones (power, energy, processes, MIG, ...)
// are left null and the data they would give is simply absent.
//
// Thread-safety: the table is immutable after Load(); NVML itself is
// thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ofu/core/result.h"
#include "ofu/sources/dynamic_library.h"
#include "ofu/sources/nvml_api.h"

namespace ofu::sources {

struct NvmlFunctions {
  // Required.
  nvmlReturn_t (*Init)() = nullptr;
  nvmlReturn_t (*Shutdown)() = nullptr;
  nvmlReturn_t (*DeviceGetCount)(unsigned int*) = nullptr;
  nvmlReturn_t (*DeviceGetHandleByIndex)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*DeviceGetName)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*DeviceGetUUID)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*DeviceGetClockInfo)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*GpmQueryDeviceSupport)(nvmlDevice_t, nvmlGpmSupport_t*) = nullptr;
  nvmlReturn_t (*GpmSampleAlloc)(nvmlGpmSample_t*) = nullptr;
  nvmlReturn_t (*GpmSampleFree)(nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*GpmSampleGet)(nvmlDevice_t, nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*GpmMetricsGet)(nvmlGpmMetricsGet_t*) = nullptr;

  // Optional: null when the library does not export them.
  const char* (*ErrorString)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*SystemGetDriverVersion)(char*, unsigned int) = nullptr;
  nvmlReturn_t (*DeviceGetPciInfo)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*DeviceGetArchitecture)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*DeviceGetAttributes)(nvmlDevice_t, nvmlDeviceAttributes_t*) = nullptr;
  nvmlReturn_t (*DeviceGetMaxClockInfo)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*DeviceGetPowerUsage)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*DeviceGetTotalEnergyConsumption)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*DeviceGetClockEventReasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*DeviceGetComputeRunningProcesses)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*) = nullptr;
  nvmlReturn_t (*DeviceGetMigMode)(nvmlDevice_t, unsigned int*, unsigned int*) = nullptr;
  nvmlReturn_t (*DeviceGetMaxMigDeviceCount)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*DeviceGetMigDeviceHandleByIndex)(nvmlDevice_t, unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*DeviceGetGpuInstanceId)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*GpmMigSampleGet)(nvmlDevice_t, unsigned int, nvmlGpmSample_t) = nullptr;
};

class NvmlLibrary {
 public:
  // Errors: kUnavailable when the library cannot be opened (the message
  // names the path and says to install the driver or pass --nvml-library)
  // or lacks a required symbol (the message names it).
  static Result<std::unique_ptr<NvmlLibrary>> Load(const std::string& path);

  const NvmlFunctions& fn() const { return fn_; }
  const std::string& path() const { return library_->path(); }
  bool is_test_double() const { return library_->IsTestDouble(); }

  // "GPU_IS_LOST (15): GPU is lost": ofu's name for the code, then the
  // library's own text where it exports nvmlErrorString.
  std::string ErrorString(nvmlReturn_t code) const;

 private:
  explicit NvmlLibrary(std::unique_ptr<DynamicLibrary> library) : library_(std::move(library)) {}
  std::unique_ptr<DynamicLibrary> library_;
  NvmlFunctions fn_;
};

// ofu's own short name of an NVML return code ("NO_PERMISSION"), for
// messages that must make sense without the library.
std::string_view NvmlReturnName(nvmlReturn_t code);

}  // namespace ofu::sources
