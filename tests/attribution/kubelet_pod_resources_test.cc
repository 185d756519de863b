// The kubelet pod-resources client against an in-test gRPC server that
// implements v1.PodResourcesLister/List on a unix socket in a temp directory
// and answers with synthetic pods.
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "attribution/temp_tree.h"
#include "ofu/attribution/kubelet_pod_resources.h"
#include "podresources.grpc.pb.h"

namespace ofu::attribution {
namespace {

using ::testing::HasSubstr;
using testing::TempTree;

struct FakeDevices {
  std::string resource;
  std::vector<std::string> ids;
};
struct FakeContainer {
  std::string name;
  std::vector<FakeDevices> devices;
};
struct FakePod {
  std::string namespace_, name;
  std::vector<FakeContainer> containers;
};

class FakeKubelet final : public v1::PodResourcesLister::Service {
 public:
  explicit FakeKubelet(std::vector<FakePod> pods) : pods_(std::move(pods)) {}

  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* response) override {
    for (const FakePod& fake : pods_) {
      v1::PodResources* pod = response->add_pod_resources();
      pod->set_name(fake.name);
      pod->set_namespace_(fake.namespace_);
      for (const FakeContainer& fake_container : fake.containers) {
        v1::ContainerResources* container = pod->add_containers();
        container->set_name(fake_container.name);
        for (const FakeDevices& fake_devices : fake_container.devices) {
          v1::ContainerDevices* devices = container->add_devices();
          devices->set_resource_name(fake_devices.resource);
          for (const std::string& id : fake_devices.ids) devices->add_device_ids(id);
        }
      }
    }
    return grpc::Status::OK;
  }

 private:
  std::vector<FakePod> pods_;
};

class KubeletTest : public ::testing::Test {
 protected:
  void Serve(std::vector<FakePod> pods) {
    service_ = std::make_unique<FakeKubelet>(std::move(pods));
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket(), grpc::InsecureServerCredentials());
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }
  std::string socket() const { return tree_.str() + "/kubelet.sock"; }

  KubeletPodResourcesAttributor Method() {
    KubeletOptions options;
    options.socket_path = socket();
    options.timeout_s = 1;
    return KubeletPodResourcesAttributor(options);
  }

  TempTree tree_;
  std::unique_ptr<FakeKubelet> service_;
  std::unique_ptr<grpc::Server> server_;
};

JobInfo Pod(std::string ns, std::string name, std::string container) {
  JobInfo job;
  job.job_id = ns + "/" + name;
  job.job_name = name;
  job.scheduler = "kubernetes";
  job.pod_namespace = std::move(ns);
  job.pod_name = std::move(name);
  job.container = std::move(container);
  return job;
}

// The field numbers of our podresources.proto are the kubelet's: bytes
// encoded by hand from k8s.io/kubelet/pkg/apis/podresources/v1/api.proto
// (tag = field << 3 | 2 for strings and messages) parse into the fields
// we read. Both sides of the other tests share our .proto, so only this
// test would catch a wrong number.
TEST(PodResourcesProto, WireFormatMatchesTheKubelet) {
  using namespace std::string_literals;
  // ContainerDevices{resource_name=1:"nvidia.com/gpu", device_ids=2:"GPU-1"}: 2+14+2+5 = 23 bytes.
  const std::string devices =
      "\x0a\x0e"
      "nvidia.com/gpu"
      "\x12\x05"
      "GPU-1";
  // ContainerResources{name=1:"c", devices=2:<23 bytes>}: 3+2+23 = 28 bytes.
  const std::string container =
      "\x0a\x01"
      "c"
      "\x12\x17"s +
      devices;
  // PodResources{name=1:"p", namespace=2:"n", containers=3:<28 bytes>}: 3+3+2+28 = 36 bytes.
  const std::string pod =
      "\x0a\x01"
      "p"
      "\x12\x01"
      "n"
      "\x1a\x1c"s +
      container;
  // ListPodResourcesResponse{pod_resources=1:<36 bytes>}.
  const std::string response = "\x0a\x24"s + pod;
  ASSERT_EQ(devices.size(), 23u);
  ASSERT_EQ(container.size(), 28u);
  ASSERT_EQ(pod.size(), 36u);

  v1::ListPodResourcesResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(response));
  ASSERT_EQ(parsed.pod_resources_size(), 1);
  const v1::PodResources& got = parsed.pod_resources(0);
  EXPECT_EQ(got.name(), "p");
  EXPECT_EQ(got.namespace_(), "n");
  ASSERT_EQ(got.containers_size(), 1);
  EXPECT_EQ(got.containers(0).name(), "c");
  ASSERT_EQ(got.containers(0).devices_size(), 1);
  EXPECT_EQ(got.containers(0).devices(0).resource_name(), "nvidia.com/gpu");
  ASSERT_EQ(got.containers(0).devices(0).device_ids_size(), 1);
  EXPECT_EQ(got.containers(0).devices(0).device_ids(0), "GPU-1");
}

TEST_F(KubeletTest, PodsWithGpusAndOneWithout) {
  Serve({
      {"ml", "trainer-0", {{"main", {{"nvidia.com/gpu", {"GPU-aaa", "GPU-bbb"}}}}}},
      // Time-slicing replica "::1"; and a CPU-only sidecar in the same pod.
      {"ml", "eval-1", {{"sidecar", {}}, {"worker", {{"nvidia.com/gpu", {"GPU-ccc::1"}}}}}},
      // Not a GPU resource, even though the id looks like one.
      {"infra", "nic", {{"c", {{"rdma/hca", {"GPU-ddd"}}}}}},
      {"ml", "mig", {{"m", {{"nvidia.com/mig-1g.10gb", {"MIG-eee"}}}}}},
      // The device plugin's index strategy.
      {"ml", "by-index", {{"i", {{"nvidia.com/gpu", {"5"}}}}}},
      // A GPU of another node's list: ignored.
      {"ml", "elsewhere", {{"x", {{"nvidia.com/gpu", {"GPU-zzz"}}}}}},
  });
  auto method = Method();
  const std::vector<GpuRef> gpus = {{"GPU-aaa", 0, {}}, {"GPU-bbb", 1, {}}, {"GPU-ccc", 2, {}}, {"GPU-ddd", 3, {}},
                                    {"MIG-eee", 4, {}}, {"GPU-fff", 5, {}}, {"GPU-ggg", 6, {}}};
  const Result<Attribution> got = method.Attribute(gpus);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_TRUE(got->notes.empty());
  ASSERT_EQ(got->jobs.size(), 5u);
  EXPECT_EQ(got->jobs.at("GPU-aaa"), Pod("ml", "trainer-0", "main"));
  EXPECT_EQ(got->jobs.at("GPU-bbb"), Pod("ml", "trainer-0", "main"));
  EXPECT_EQ(got->jobs.at("GPU-ccc"), Pod("ml", "eval-1", "worker"));
  EXPECT_EQ(got->jobs.at("MIG-eee"), Pod("ml", "mig", "m"));
  EXPECT_EQ(got->jobs.at("GPU-fff"), Pod("ml", "by-index", "i"));
  EXPECT_EQ(got->jobs.count("GPU-ddd"), 0u);
  EXPECT_EQ(got->jobs.count("GPU-ggg"), 0u);
}

TEST_F(KubeletTest, SharedGpuGoesToTheFirstPodByName) {
  Serve({
      {"b", "x", {{"c1", {{"nvidia.com/gpu", {"GPU-aaa::0"}}}}}},
      {"a", "y", {{"c2", {{"nvidia.com/gpu", {"GPU-aaa::1"}}}}}},
  });
  auto method = Method();
  const Result<Attribution> got = method.Attribute({{"GPU-aaa", 0, {}}});
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->jobs.at("GPU-aaa"), Pod("a", "y", "c2"));
  ASSERT_EQ(got->notes.size(), 1u);
  EXPECT_THAT(got->notes[0], HasSubstr("GPU GPU-aaa is shared by pods a/y, b/x: attributed to a/y"));
}

TEST_F(KubeletTest, NoServerIsAnErrorNamingTheSocket) {
  auto method = Method();  // nothing listens on the socket
  const Result<Attribution> got = method.Attribute({{"GPU-aaa", 0, {}}});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(got.error().message, HasSubstr("kubelet pod-resources API at unix:" + socket()));
  EXPECT_THAT(got.error().message, HasSubstr("check that the kubelet runs"));
}

}  // namespace
}  // namespace ofu::attribution
