// NVML loaded with dlopen: a table of function pointers resolved once.
//
// Load() opens `path` (empty: "libnvidia-ml.so.1") through DynamicLibrary
// and resolves every function ofu calls, newest symbol version first
// (nvmlInit_v2 before nvmlInit, ..._v3 before ..._v2). Required functions
// (init, enumeration, SM clock, GPM) make Load() fail with an error naming
// the missing symbol; optional ones (power, energy, processes, MIG, ...)
// are left null and the data they would give is simply absent.
//
// Every slot is an AccountedFunction (call_accounting.h): with a
// CallAccounting given to Load(), each call through the table is counted
// and timed under the symbol's own name; without one, a slot is a plain
// call through the pointer.
//
// Thread-safety: the table is immutable after Load(); NVML itself is
// thread-safe, and so is the accounting.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ofu/core/result.h"
#include "ofu/platform/dynamic_library.h"
#include "ofu/sources/call_accounting.h"
#include "ofu/sources/nvml/nvml_api.h"

namespace ofu::sources {

struct NvmlFunctions {
  // Required.
  AccountedFunction<nvmlReturn_t()> Init;
  AccountedFunction<nvmlReturn_t()> Shutdown;
  AccountedFunction<nvmlReturn_t(unsigned int*)> DeviceGetCount;
  AccountedFunction<nvmlReturn_t(unsigned int, nvmlDevice_t*)> DeviceGetHandleByIndex;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, char*, unsigned int)> DeviceGetName;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, char*, unsigned int)> DeviceGetUUID;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, int, unsigned int*)> DeviceGetClockInfo;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, nvmlGpmSupport_t*)> GpmQueryDeviceSupport;
  AccountedFunction<nvmlReturn_t(nvmlGpmSample_t*)> GpmSampleAlloc;
  AccountedFunction<nvmlReturn_t(nvmlGpmSample_t)> GpmSampleFree;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, nvmlGpmSample_t)> GpmSampleGet;
  AccountedFunction<nvmlReturn_t(nvmlGpmMetricsGet_t*)> GpmMetricsGet;

  // Optional: null when the library does not export them.
  AccountedFunction<const char*(nvmlReturn_t)> ErrorString;
  AccountedFunction<nvmlReturn_t(char*, unsigned int)> SystemGetDriverVersion;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, nvmlPciInfo_t*)> DeviceGetPciInfo;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, unsigned int*)> DeviceGetArchitecture;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, nvmlDeviceAttributes_t*)> DeviceGetAttributes;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, int, unsigned int*)> DeviceGetMaxClockInfo;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, unsigned int*)> DeviceGetPowerUsage;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, unsigned long long*)> DeviceGetTotalEnergyConsumption;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, unsigned long long*)> DeviceGetClockEventReasons;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*)> DeviceGetComputeRunningProcesses;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, unsigned int*, unsigned int*)> DeviceGetMigMode;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, unsigned int*)> DeviceGetMaxMigDeviceCount;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, unsigned int, nvmlDevice_t*)> DeviceGetMigDeviceHandleByIndex;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, unsigned int*)> DeviceGetGpuInstanceId;
  AccountedFunction<nvmlReturn_t(nvmlDevice_t, unsigned int, nvmlGpmSample_t)> GpmMigSampleGet;
};

class NvmlLibrary {
 public:
  // Errors: kUnavailable when the library cannot be opened (the message
  // names the path and says to install the driver or pass --nvml-library)
  // or lacks a required symbol (the message names it). `accounting`, when
  // not null, must outlive the library; it gets a counter for every symbol
  // resolved.
  static Result<std::unique_ptr<NvmlLibrary>> Load(const std::string& path, CallAccounting* accounting = nullptr);

  const NvmlFunctions& fn() const { return fn_; }
  const std::string& path() const { return library_->path(); }
  bool is_test_double() const { return library_->IsTestDouble(); }

  // "GPU_IS_LOST (15): GPU is lost": ofu's name for the code, then the
  // library's own text where it exports nvmlErrorString.
  std::string ErrorString(nvmlReturn_t code) const;

 private:
  explicit NvmlLibrary(std::unique_ptr<platform::DynamicLibrary> library) : library_(std::move(library)) {}
  std::unique_ptr<platform::DynamicLibrary> library_;
  NvmlFunctions fn_;
};

// ofu's own short name of an NVML return code ("NO_PERMISSION"), for
// messages that must make sense without the library.
std::string_view NvmlReturnName(nvmlReturn_t code);

}  // namespace ofu::sources
