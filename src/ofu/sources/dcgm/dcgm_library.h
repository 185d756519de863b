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
// The pointers are valid while the DcgmLibrary lives. Each is an
// AccountedFunction (call_accounting.h): with a CallAccounting given to
// Load(), every call is counted and timed under the symbol's own name.
//
// Thread-safety: immutable after Load(); DCGM's own calls are thread-safe,
// and so is the accounting.
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/platform/dynamic_library.h"
#include "ofu/sources/call_accounting.h"
#include "ofu/sources/dcgm/dcgm_api.h"

namespace ofu::sources {

class DcgmLibrary {
 public:
  // The library names to try: `option` alone when set (--dcgm-library),
  // else the versioned sonames, newest first.
  static std::vector<std::string> Candidates(const std::string& option);

  // Errors: kUnavailable, naming every path tried (or the missing symbol)
  // and saying how to get DCGM.
  // `accounting`, when not null, must outlive the library.
  static Result<std::unique_ptr<DcgmLibrary>> Load(const std::vector<std::string>& candidates,
                                                   CallAccounting* accounting = nullptr);

  const std::string& path() const { return library_->path(); }
  bool is_test_double() const { return library_->IsTestDouble(); }

  // DCGM's text for a return code ("Host engine connection invalid/disconnected"),
  // with the code; "DCGM error N" when the library has no errorString.
  std::string ErrorText(dcgm::Return code) const;

  // Whether this library can list MIG GPU instances and watch them.
  bool CanEnumerateMig() const { return get_gpu_instance_hierarchy != nullptr && group_add_entity != nullptr; }

  // A table slot from dcgm_api.h's pointer type.
  template <typename FnPointer>
  using Slot = AccountedFunction<std::remove_pointer_t<FnPointer>>;

  Slot<dcgm::InitFn> init;
  Slot<dcgm::ShutdownFn> shutdown;
  Slot<dcgm::ConnectV2Fn> connect_v2;
  Slot<dcgm::DisconnectFn> disconnect;
  Slot<dcgm::StartEmbeddedV2Fn> start_embedded_v2;  // optional
  Slot<dcgm::StartEmbeddedFn> start_embedded;       // optional (one of the two is required)
  Slot<dcgm::StopEmbeddedFn> stop_embedded;
  Slot<dcgm::GetAllSupportedDevicesFn> get_all_supported_devices;
  Slot<dcgm::GroupCreateFn> group_create;
  Slot<dcgm::GroupAddDeviceFn> group_add_device;
  Slot<dcgm::GroupAddEntityFn> group_add_entity;                     // optional (MIG)
  Slot<dcgm::GetGpuInstanceHierarchyFn> get_gpu_instance_hierarchy;  // optional (MIG)
  Slot<dcgm::GroupDestroyFn> group_destroy;
  Slot<dcgm::FieldGroupCreateFn> field_group_create;
  Slot<dcgm::FieldGroupDestroyFn> field_group_destroy;
  Slot<dcgm::WatchFieldsFn> watch_fields;
  Slot<dcgm::UpdateAllFieldsFn> update_all_fields;
  Slot<dcgm::EntitiesGetLatestValuesFn> entities_get_latest_values;
  Slot<dcgm::ErrorStringFn> error_string;  // optional

 private:
  explicit DcgmLibrary(std::unique_ptr<platform::DynamicLibrary> library) : library_(std::move(library)) {}
  std::unique_ptr<platform::DynamicLibrary> library_;
};

}  // namespace ofu::sources
