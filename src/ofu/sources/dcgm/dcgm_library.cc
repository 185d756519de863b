#include "ofu/sources/dcgm/dcgm_library.h"

#include <fmt/format.h>

namespace ofu::sources {
namespace {

constexpr std::string_view kInstallHint =
    "install DCGM (the datacenter-gpu-manager package, version 3 or 4) or pass --dcgm-library PATH";

}  // namespace

std::vector<std::string> DcgmLibrary::Candidates(const std::string& option) {
  if (!option.empty()) return {option};
  return {"libdcgm.so.4", "libdcgm.so.3"};
}

Result<std::unique_ptr<DcgmLibrary>> DcgmLibrary::Load(const std::vector<std::string>& candidates,
                                                       CallAccounting* accounting) {
  auto opened = platform::DynamicLibrary::Open(candidates);
  if (!opened.ok()) {
    return Error::Unavailable("cannot load the DCGM library ({}); {}", opened.error().message, kInstallHint);
  }
  std::unique_ptr<DcgmLibrary> dcgm(new DcgmLibrary(std::move(*opened)));
  const platform::DynamicLibrary& lib = *dcgm->library_;

  // Resolves `slot` from `names` (newest first), counted under the name
  // found; remembers the first required one missing so the error names it.
  std::string missing;
  auto bind = [&]<typename Signature>(AccountedFunction<Signature>& slot, std::initializer_list<std::string_view> names,
                                      bool required) {
    const platform::DynamicLibrary::Found found = lib.Symbol(names);
    slot = BindAccounted<Signature>(found.address, found.name, accounting);
    if (slot == nullptr && required && missing.empty()) missing = std::string(*names.begin());
  };
  bind(dcgm->init, {"dcgmInit"}, true);
  bind(dcgm->shutdown, {"dcgmShutdown"}, true);
  bind(dcgm->connect_v2, {"dcgmConnect_v2"}, true);
  bind(dcgm->disconnect, {"dcgmDisconnect"}, true);
  bind(dcgm->start_embedded_v2, {"dcgmStartEmbedded_v2"}, false);
  bind(dcgm->start_embedded, {"dcgmStartEmbedded"}, false);
  bind(dcgm->stop_embedded, {"dcgmStopEmbedded"}, true);
  bind(dcgm->get_all_supported_devices, {"dcgmGetAllSupportedDevices"}, true);
  bind(dcgm->group_create, {"dcgmGroupCreate"}, true);
  bind(dcgm->group_add_device, {"dcgmGroupAddDevice"}, true);
  bind(dcgm->group_add_entity, {"dcgmGroupAddEntity"}, false);
  bind(dcgm->get_gpu_instance_hierarchy, {"dcgmGetGpuInstanceHierarchy"}, false);
  bind(dcgm->group_destroy, {"dcgmGroupDestroy"}, true);
  bind(dcgm->field_group_create, {"dcgmFieldGroupCreate"}, true);
  bind(dcgm->field_group_destroy, {"dcgmFieldGroupDestroy"}, true);
  bind(dcgm->watch_fields, {"dcgmWatchFields"}, true);
  bind(dcgm->update_all_fields, {"dcgmUpdateAllFields"}, true);
  bind(dcgm->entities_get_latest_values, {"dcgmEntitiesGetLatestValues"}, true);
  bind(dcgm->error_string, {"errorString"}, false);
  if (missing.empty() && dcgm->start_embedded_v2 == nullptr && dcgm->start_embedded == nullptr) {
    missing = "dcgmStartEmbedded_v2";
  }
  if (!missing.empty()) {
    return Error::Unavailable("{} does not export {}: it is not a DCGM library ofu can use; {}", lib.path(), missing,
                              kInstallHint);
  }
  return dcgm;
}

std::string DcgmLibrary::ErrorText(dcgm::Return code) const {
  const char* text = error_string != nullptr ? error_string(code) : nullptr;
  if (text == nullptr) return fmt::format("DCGM error {}", code);
  return fmt::format("{} (DCGM error {})", text, code);
}

}  // namespace ofu::sources
