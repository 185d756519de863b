// The kubelet client as the agent loads it: from the built plugin
// (OFU_KUBELET_PLUGIN_PATH) through dlopen, asking a stand-in kubelet that
// runs as its own process (tests/doubles/fake_kubelet.cc, OFU_FAKE_KUBELET).
// This program links no gRPC, as `ofu` does not.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attribution/temp_tree.h"
#include "ofu/attribution/kubelet_plugin.h"
#include "support/background_process.h"

namespace ofu::attribution {
namespace {

using ::testing::HasSubstr;
using testing::TempTree;

class KubeletPluginTest : public ::testing::Test {
 protected:
  std::string socket() const { return tree_.str() + "/kubelet.sock"; }

  // Starts the stand-in kubelet with synthetic pods and waits for its socket.
  void ServePods(const std::string& pods_json) {
    const std::string pods = tree_.str() + "/pods.json";
    std::ofstream(pods) << pods_json;
    ASSERT_TRUE(kubelet_.Start({OFU_FAKE_KUBELET, socket(), pods}, {}, tree_.str() + "/kubelet.log"));
    for (int i = 0; i < 500 && !std::filesystem::exists(socket()); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(std::filesystem::exists(socket())) << "the stand-in kubelet did not start";
  }

  KubeletOptions Options() const {
    KubeletOptions options;
    options.socket_path = socket();
    options.timeout_s = 2;
    return options;
  }

  TempTree tree_;
  ofu::testing::BackgroundProcess kubelet_;
};

TEST_F(KubeletPluginTest, LoadsOnlyOnceTheSocketExistsThenAnswersFromTheKubelet) {
  KubeletPluginAttributor method(Options(), {"/nonexistent/libofu-kubelet.so", OFU_KUBELET_PLUGIN_PATH});
  EXPECT_EQ(method.Describe(), "kubelet pod-resources unix:" + socket());

  const Result<Attribution> before = method.Attribute({{"GPU-aaa", 0, {}}});
  ASSERT_FALSE(before.ok());
  EXPECT_EQ(before.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(before.error().message, HasSubstr("socket " + socket() + " does not exist"));
  EXPECT_FALSE(method.loaded());

  ServePods(R"([{"namespace": "ml", "name": "trainer-0",
                 "containers": [{"name": "main", "devices": [{"resource": "nvidia.com/gpu", "ids": ["GPU-aaa"]}]}]}])");
  const Result<Attribution> after = method.Attribute({{"GPU-aaa", 0, {}}, {"GPU-bbb", 1, {}}});
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_TRUE(method.loaded());
  ASSERT_EQ(after->jobs.size(), 1u);
  const JobInfo& job = after->jobs.at("GPU-aaa");
  EXPECT_EQ(job.job_id, "ml/trainer-0");
  EXPECT_EQ(job.pod_namespace, "ml");
  EXPECT_EQ(job.pod_name, "trainer-0");
  EXPECT_EQ(job.container, "main");
  EXPECT_EQ(job.scheduler, "kubernetes");
}

TEST_F(KubeletPluginTest, MissingPluginIsAnErrorNamingWhereItLooked) {
  ServePods("[]");
  KubeletPluginAttributor method(Options(), DefaultKubeletPluginPaths("/opt/nowhere/bin/ofu"));
  const Result<Attribution> got = method.Attribute({{"GPU-aaa", 0, {}}});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(got.error().message, HasSubstr("kubelet client plugin did not load"));
  EXPECT_THAT(got.error().message, HasSubstr("/opt/nowhere/bin/libofu-kubelet.so"));
  EXPECT_THAT(got.error().message, HasSubstr("/opt/nowhere/lib/ofu/libofu-kubelet.so"));
  EXPECT_FALSE(method.loaded());
}

TEST_F(KubeletPluginTest, ALibraryWithoutTheEntryPointIsRefused) {
  ServePods("[]");
  // Any shared object without the symbol: the C library will do.
  KubeletPluginAttributor method(Options(), {"libc.so.6"});
  const Result<Attribution> got = method.Attribute({{"GPU-aaa", 0, {}}});
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.error().message, HasSubstr("is not an ofu kubelet plugin of this build"));
  EXPECT_FALSE(method.loaded());
}

}  // namespace
}  // namespace ofu::attribution
