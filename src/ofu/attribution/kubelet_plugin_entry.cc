// The one export of libofu-kubelet.so (see kubelet_plugin.h).
#include "ofu/attribution/kubelet_plugin.h"

extern "C" __attribute__((visibility("default"))) ofu::attribution::Attributor* ofu_create_kubelet_attributor(
    int abi_version, const ofu::attribution::KubeletOptions* options) {
  if (abi_version != ofu::attribution::kKubeletPluginAbiVersion || options == nullptr) return nullptr;
  return new ofu::attribution::KubeletPodResourcesAttributor(*options);
}
