#include "ofu/attribution/kubelet_plugin.h"

#include <sys/stat.h>

#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "ofu/platform/dynamic_library.h"

namespace ofu::attribution {

std::vector<std::string> DefaultKubeletPluginPaths(const std::string& executable_path) {
  return platform::PluginPathsBeside(executable_path, kKubeletPluginFileName);
}

KubeletPluginAttributor::KubeletPluginAttributor(KubeletOptions options, std::vector<std::string> plugin_paths)
    : options_(std::move(options)), plugin_paths_(std::move(plugin_paths)) {}

KubeletPluginAttributor::~KubeletPluginAttributor() = default;

std::string KubeletPluginAttributor::Describe() const {
  return fmt::format("kubelet pod-resources unix:{}", options_.socket_path);
}

Result<Attribution> KubeletPluginAttributor::Attribute(const std::vector<GpuRef>& gpus) {
  if (client_ == nullptr) {
    struct stat info {};
    if (::stat(options_.socket_path.c_str(), &info) != 0) {
      return Error::Unavailable(
          "kubelet pod-resources socket {} does not exist; no kubelet on this "
          "node, or its directory is not mounted into the agent's pod",
          options_.socket_path);
    }
    auto library = platform::DynamicLibrary::Open(plugin_paths_);
    if (!library.ok()) {
      return Error::Unavailable(
          "the kubelet client plugin did not load ({}); it is built beside ofu "
          "as {}",
          library.error().message, kKubeletPluginFileName);
    }
    auto create = (*library)->Function<CreateKubeletAttributorFn>({kKubeletPluginSymbol});
    Attributor* client = create == nullptr ? nullptr : create(kKubeletPluginAbiVersion, &options_);
    if (client == nullptr) {
      return Error::Unavailable("{} is not an ofu kubelet plugin of this build (ABI {})", (*library)->path(),
                                kKubeletPluginAbiVersion);
    }
    library_ = std::move(*library);
    client_.reset(client);
  }
  return client_->Attribute(gpus);
}

}  // namespace ofu::attribution
