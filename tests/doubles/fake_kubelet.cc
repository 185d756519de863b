// A stand-in kubelet for tests: serves v1.PodResourcesLister/List on a unix
// socket with the pods of a JSON file, until SIGTERM or SIGINT.
//
//   fake_kubelet SOCKET PODS.json
//   PODS.json: [{"namespace": "ml", "name": "trainer-0",
//                "containers": [{"name": "main",
//                                "devices": [{"resource": "nvidia.com/gpu", "ids": ["GPU-a"]}]}]}]
//
// Every pod it serves is made up by the test that starts it. It runs as its
// own process so that the program under test loads the kubelet client only
// through the plugin, as the agent does (kubelet_plugin.h); a second copy of
// the generated protobuf code in one process would abort.
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "podresources.grpc.pb.h"

namespace {

class FakeKubelet final : public v1::PodResourcesLister::Service {
 public:
  explicit FakeKubelet(nlohmann::json pods) : pods_(std::move(pods)) {}

  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* response) override {
    for (const auto& fake : pods_) {
      v1::PodResources* pod = response->add_pod_resources();
      pod->set_name(fake.at("name").get<std::string>());
      pod->set_namespace_(fake.at("namespace").get<std::string>());
      for (const auto& fake_container : fake.at("containers")) {
        v1::ContainerResources* container = pod->add_containers();
        container->set_name(fake_container.at("name").get<std::string>());
        for (const auto& fake_devices : fake_container.at("devices")) {
          v1::ContainerDevices* devices = container->add_devices();
          devices->set_resource_name(fake_devices.at("resource").get<std::string>());
          for (const auto& id : fake_devices.at("ids")) devices->add_device_ids(id.get<std::string>());
        }
      }
    }
    return grpc::Status::OK;
  }

 private:
  nlohmann::json pods_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fake_kubelet SOCKET PODS.json\n");
    return 1;
  }
  std::ifstream in(argv[2]);
  const nlohmann::json pods = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!pods.is_array()) {
    std::fprintf(stderr, "fake_kubelet: %s is not a JSON array of pods\n", argv[2]);
    return 1;
  }

  // Signals are taken by a waiting thread, so block them everywhere first.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  FakeKubelet service(pods);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(std::string("unix:") + argv[1], grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    std::fprintf(stderr, "fake_kubelet: cannot listen on unix:%s\n", argv[1]);
    return 1;
  }
  std::printf("fake_kubelet: serving %zu pods on unix:%s\n", pods.size(), argv[1]);
  std::fflush(stdout);

  std::thread stopper([&] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    server->Shutdown();
  });
  server->Wait();
  stopper.join();
  return 0;
}
