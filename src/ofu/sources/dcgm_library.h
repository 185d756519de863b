// The DCGM library, opened with dlopen, as a table of function pointers.
//
// Load() opens the first library that exists among the candidates (by
// default "libdcgm.so.4", then "libdcgm.so.3": newest first) and resolves
// every function the DCGM source calls, each by its newest exported name
// first (dcgmStartEmbedded_v2 before dcgmStartEmbedded). A required symbol
// that is missing makes Load() fail with an error naming it; the optional
// ones (errorString, the older dcgmStartEmbedded, and the MIG calls
// dcgmGetGpuInstanceHierarchy and dcgmGroupAddEntity) are null when absent.
// Without the MIG calls the source cannot read MIG GPU instances, and says
// so for each MIG-mode GPU (CanEnumerateMig).
//
// The pointers are valid while the DcgmLibrary lives.
//
// Thread-safety: immutable after Load(); DCGM's own calls are thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/sources/dcgm_api.h"
#include "ofu/sources/dynamic_library.h"

namespace ofu::sources {

class DcgmLibrary {
 public:
  // The library names to try: `option` alone when set (--dcgm-library),
  // else the versioned sonames, newest first.
  static std::vector<std::string> Candidates(const std::string& option);

  // Errors: kUnavailable, naming every path tried (or the missing symbol)
  // and saying how to get DCGM.
  static Result<std::unique_ptr<DcgmLibrary>> Load(const std::vector<std::string>& candidates);

  const std::string& path() const { return library_->path(); }
  bool is_test_double() const { return library_->IsTestDouble(); }

  // DCGM's text for a return code ("Host engine connection invalid/disconnected"),
  // with the code; "DCGM error N" when the library has no errorString.
  std::string ErrorText(dcgm::Return code) const;

  // Whether this library can list MIG GPU instances and watch them.
  bool CanEnumerateMig() const { return get_gpu_instance_hierarchy != nullptr && group_add_entity != nullptr; }

  dcgm::InitFn init = nullptr;
  dcgm::ShutdownFn shutdown = nullptr;
  dcgm::ConnectV2Fn connect_v2 = nullptr;
  dcgm::DisconnectFn disconnect = nullptr;
  dcgm::StartEmbeddedV2Fn start_embedded_v2 = nullptr;  // optional
  dcgm::StartEmbeddedFn start_embedded = nullptr;       // optional (one of the two is required)
  dcgm::StopEmbeddedFn stop_embedded = nullptr;
  dcgm::GetAllSupportedDevicesFn get_all_supported_devices = nullptr;
  dcgm::GroupCreateFn group_create = nullptr;
  dcgm::GroupAddDeviceFn group_add_device = nullptr;
  dcgm::GroupAddEntityFn group_add_entity = nullptr;                     // optional (MIG)
  dcgm::GetGpuInstanceHierarchyFn get_gpu_instance_hierarchy = nullptr;  // optional (MIG)
  dcgm::GroupDestroyFn group_destroy = nullptr;
  dcgm::FieldGroupCreateFn field_group_create = nullptr;
  dcgm::FieldGroupDestroyFn field_group_destroy = nullptr;
  dcgm::WatchFieldsFn watch_fields = nullptr;
  dcgm::UpdateAllFieldsFn update_all_fields = nullptr;
  dcgm::EntitiesGetLatestValuesFn entities_get_latest_values = nullptr;
  dcgm::ErrorStringFn error_string = nullptr;  // optional

 private:
  explicit DcgmLibrary(std::unique_ptr<DynamicLibrary> library) : library_(std::move(library)) {}
  std::unique_ptr<DynamicLibrary> library_;
};

}  // namespace ofu::sources
