// The kubelet pod-resources client as a plugin, loaded only where a kubelet
// runs.
//
// The client speaks gRPC, and gRPC with protobuf and abseil costs every
// process that links it about 8 MiB of resident memory and a few
// milliseconds of start-up relocations, used or not. A Slurm node has no
// kubelet, so the agent keeps the client in a plugin, libofu-kubelet.so
// (built beside `ofu`), and opens it on the first attribution pass that
// finds the kubelet's socket.
//
// The plugin exports one C function, kKubeletPluginSymbol, of type
// CreateKubeletAttributorFn: it returns a new KubeletPodResourcesAttributor
// (kubelet_pod_resources.h) that the caller owns, or nullptr when the
// caller's ABI version is not the plugin's. Plugin and program come from the
// same build, so the C++ types they share are the same.
//
// Thread-safety: as any Attributor, one thread at a time.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/attribution/attributor.h"
#include "ofu/attribution/kubelet_pod_resources.h"

namespace ofu::platform {
class DynamicLibrary;
}

namespace ofu::attribution {

inline constexpr int kKubeletPluginAbiVersion = 1;
inline constexpr std::string_view kKubeletPluginSymbol = "ofu_create_kubelet_attributor";
inline constexpr std::string_view kKubeletPluginFileName = "libofu-kubelet.so";
using CreateKubeletAttributorFn = Attributor* (*)(int abi_version, const KubeletOptions* options);

// Where to look for the plugin of the program at `executable_path`: beside
// it, then in ../lib/ofu/ (an installed layout).
std::vector<std::string> DefaultKubeletPluginPaths(const std::string& executable_path);

// Stands for the kubelet client. While the kubelet's socket does not exist,
// Attribute() says so (kUnavailable) without loading anything; once it does,
// the first call opens the plugin from the first of `plugin_paths` that
// loads and delegates to the client from then on. A plugin that cannot be
// loaded is kUnavailable naming every path tried; the next pass tries again.
class KubeletPluginAttributor : public Attributor {
 public:
  KubeletPluginAttributor(KubeletOptions options, std::vector<std::string> plugin_paths);
  ~KubeletPluginAttributor() override;

  std::string Describe() const override;
  Result<Attribution> Attribute(const std::vector<GpuRef>& gpus) override;

  // Whether the plugin has been loaded (for tests and the agent's log).
  bool loaded() const { return client_ != nullptr; }

 private:
  KubeletOptions options_;
  std::vector<std::string> plugin_paths_;
  // Declared before client_: the client's code lives in the library, so the
  // client must be destroyed first.
  std::unique_ptr<platform::DynamicLibrary> library_;
  std::unique_ptr<Attributor> client_;
};

}  // namespace ofu::attribution
