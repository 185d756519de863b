#include "ofu/attribution/kubelet_pod_resources.h"

#include <chrono>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <grpcpp/grpcpp.h>

#include "podresources.grpc.pb.h"  // generated at build time from podresources.proto

namespace ofu::attribution {
namespace {

std::string_view StripReplica(std::string_view id) {
  const std::size_t at = id.find("::");
  return at == std::string_view::npos ? id : id.substr(0, at);
}

bool IsGpuResource(const KubeletOptions& options, const std::string& name) {
  for (const std::string& exact : options.resource_names) {
    if (name == exact) return true;
  }
  for (const std::string& prefix : options.resource_prefixes) {
    if (name.compare(0, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

const GpuRef* FindGpu(const std::vector<GpuRef>& gpus, std::string_view id) {
  for (const GpuRef& gpu : gpus) {
    if (!gpu.uuid.empty() && gpu.uuid == id) return &gpu;
  }
  for (const GpuRef& gpu : gpus) {
    if (gpu.index >= 0 && std::to_string(gpu.index) == id) return &gpu;
  }
  return nullptr;
}

}  // namespace

struct KubeletPodResourcesAttributor::Client {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::PodResourcesLister::Stub> stub;
};

KubeletPodResourcesAttributor::KubeletPodResourcesAttributor(KubeletOptions options) : options_(std::move(options)) {}

KubeletPodResourcesAttributor::~KubeletPodResourcesAttributor() = default;

std::string KubeletPodResourcesAttributor::Describe() const {
  return fmt::format("kubelet pod-resources unix:{}", options_.socket_path);
}

Result<Attribution> KubeletPodResourcesAttributor::Attribute(const std::vector<GpuRef>& gpus) {
  if (!client_) {
    client_ = std::make_unique<Client>();
    client_->channel = grpc::CreateChannel("unix:" + options_.socket_path, grpc::InsecureChannelCredentials());
    client_->stub = v1::PodResourcesLister::NewStub(client_->channel);
  }
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::microseconds(static_cast<long long>(options_.timeout_s * 1e6)));
  v1::ListPodResourcesRequest request;
  v1::ListPodResourcesResponse response;
  const grpc::Status status = client_->stub->List(&context, request, &response);
  if (!status.ok()) {
    return Error::Unavailable(
        "kubelet pod-resources API at unix:{} failed ({}: {}); check that "
        "the kubelet runs on this node, that the socket exists and that the "
        "agent can reach it (mount /var/lib/kubelet/pod-resources into its "
        "pod, run it as root)",
        options_.socket_path, static_cast<int>(status.error_code()), status.error_message());
  }

  // uuid -> every (job id, job) claiming it, sorted by job id.
  std::map<std::string, std::map<std::string, JobInfo>> claims;
  for (const v1::PodResources& pod : response.pod_resources()) {
    for (const v1::ContainerResources& container : pod.containers()) {
      for (const v1::ContainerDevices& devices : container.devices()) {
        if (!IsGpuResource(options_, devices.resource_name())) continue;
        for (const std::string& id : devices.device_ids()) {
          const GpuRef* gpu = FindGpu(gpus, StripReplica(id));
          if (gpu == nullptr || gpu->uuid.empty()) continue;
          JobInfo job;
          job.job_id = fmt::format("{}/{}", pod.namespace_(), pod.name());
          job.job_name = pod.name();
          job.scheduler = "kubernetes";
          job.pod_namespace = pod.namespace_();
          job.pod_name = pod.name();
          job.container = container.name();
          // emplace keeps the first container of a pod that holds the GPU twice.
          claims[gpu->uuid].emplace(job.job_id, std::move(job));
        }
      }
    }
  }

  Attribution out;
  for (auto& [uuid, jobs] : claims) {
    if (jobs.size() > 1) {
      std::vector<std::string> ids;
      for (const auto& [id, job] : jobs) ids.push_back(id);
      out.notes.push_back(
          fmt::format("GPU {} is shared by pods {}: attributed to {}, the first "
                      "by namespace/name",
                      uuid, fmt::join(ids, ", "), ids.front()));
    }
    out.jobs.emplace(uuid, std::move(jobs.begin()->second));
  }
  return out;
}

}  // namespace ofu::attribution
