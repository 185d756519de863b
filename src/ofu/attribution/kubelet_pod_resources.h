// Kubernetes jobs from the kubelet's pod-resources API: one List call over
// the kubelet's unix socket (gRPC v1.PodResourcesLister/List, our minimal
// podresources.proto) says which devices each pod's containers hold.
//
//   job_id         "<namespace>/<pod>": List gives names, not the pod UID
//   pod_namespace, pod_name, container   from the answer
//   job_name       the pod name
//   scheduler      "kubernetes"; user stays empty (pods have none)
//
// A device counts when its resource name is one of `resource_names` or
// starts with one of `resource_prefixes` (default: nvidia.com/gpu and the
// MIG resources nvidia.com/mig-…). Its id matches a GPU when it equals the
// GPU's uuid (the device plugin's default, "GPU-…" or "MIG-…"), or when it
// is the GPU's index in decimal (the plugin's index strategy). A replica
// suffix "::<n>" (time-slicing) is dropped before matching.
//
// Several pods on one GPU (time-slicing): the smallest "<namespace>/<pod>"
// wins and a note names the others.
//
// Errors: the socket missing, not answering within `timeout_s`, or
// answering with a gRPC error: the message names the socket and what to
// check. The connection is made on first use and kept.
//
// Thread-safety: one thread at a time (see attributor.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ofu/attribution/attributor.h"

namespace ofu::attribution {

struct KubeletOptions {
  std::string socket_path = "/var/lib/kubelet/pod-resources/kubelet.sock";
  double timeout_s = 2;  // deadline of each List call
  std::vector<std::string> resource_names = {"nvidia.com/gpu"};
  std::vector<std::string> resource_prefixes = {"nvidia.com/mig-"};
};

class KubeletPodResourcesAttributor : public Attributor {
 public:
  explicit KubeletPodResourcesAttributor(KubeletOptions options = {});
  ~KubeletPodResourcesAttributor() override;

  std::string Describe() const override;
  Result<Attribution> Attribute(const std::vector<GpuRef>& gpus) override;

 private:
  struct Client;  // the gRPC channel and stub, kept out of this header
  KubeletOptions options_;
  std::unique_ptr<Client> client_;
};

}  // namespace ofu::attribution
