// The agent's attribution chain as its configuration assembles it
// (agent/attribution_setup.h): which methods are asked, in which order,
// where the kubelet plugin is looked for, and the note for "static"
// without labels.
#include "ofu/agent/attribution_setup.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace ofu::agent {
namespace {

namespace fs = std::filesystem;

TEST(BuildAttribution, AsksTheConfiguredMethodsInOrder) {
  AgentConfig config;
  config.attribution_methods = {"process", "slurm-mapping", "kubelet", "static"};
  config.proc_root = "/host/proc";
  config.slurm_mapping_dir = "/run/ofu/job-map";
  config.kubelet_socket = "/run/kubelet.sock";
  config.static_labels = {StaticLabel{"0", attribution::JobInfo{"pool-a", "svc", "", "static", "", "", ""}}};
  const AttributionSetup setup = BuildAttribution(config, "/opt/ofu/bin/ofu");
  ASSERT_NE(setup.attributor, nullptr);
  EXPECT_EQ(setup.attributor->Describe(),
            "chain: process scan of /host/proc, then slurm mapping directory /run/ofu/job-map, then kubelet "
            "pod-resources unix:/run/kubelet.sock, then static labels (1 entries)");
  EXPECT_TRUE(setup.notes.empty());
}

TEST(BuildAttribution, StaticLabelsLabelTheirGpu) {
  AgentConfig config;
  config.attribution_methods = {"static"};
  config.static_labels = {StaticLabel{"0", attribution::JobInfo{"pool-a", "svc", "vllm", "static", "", "", ""}}};
  const AttributionSetup setup = BuildAttribution(config, "/opt/ofu/bin/ofu");
  auto answer = setup.attributor->Attribute({attribution::GpuRef{"GPU-a", 0, {}}, attribution::GpuRef{"GPU-b", 1, {}}});
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  ASSERT_EQ(answer->jobs.size(), 1u);
  EXPECT_EQ(answer->jobs.at("GPU-a").job_id, "pool-a");
  EXPECT_EQ(answer->jobs.at("GPU-a").job_name, "vllm");
}

// The default list names "static" so that adding labels is enough: without
// them it is left out quietly. A list the user wrote gets a note.
TEST(BuildAttribution, StaticWithoutLabelsIsLeftOutWithANoteWhenTheUserListedIt) {
  const AttributionSetup defaults = BuildAttribution(AgentConfig{}, "/opt/ofu/bin/ofu");
  EXPECT_TRUE(defaults.notes.empty());
  EXPECT_EQ(defaults.attributor->Describe().find("static"), std::string::npos) << defaults.attributor->Describe();

  AgentConfig config;
  config.attribution_methods = {"slurm-mapping", "static"};
  const AttributionSetup chosen = BuildAttribution(config, "/opt/ofu/bin/ofu");
  ASSERT_EQ(chosen.notes.size(), 1u);
  EXPECT_EQ(chosen.notes[0], "attribution method \"static\" has no [[attribution.static]] labels, so it labels no GPU");
  EXPECT_EQ(chosen.attributor->Describe(), "chain: slurm mapping directory /run/ofu/job-map");
}

// Without kubelet_plugin, the plugin is looked for beside the executable
// given, then in ../lib/ofu/: the failed load names both.
TEST(BuildAttribution, LooksForTheKubeletPluginBesideTheExecutableGiven) {
  const fs::path dir = fs::temp_directory_path() / ("ofu-attribution-setup-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path socket = dir / "kubelet.sock";  // a plain file: it exists, so the plugin is loaded
  ::close(::open(socket.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
  AgentConfig config;
  config.attribution_methods = {"kubelet"};
  config.kubelet_socket = socket.string();
  const AttributionSetup setup = BuildAttribution(config, "/nonexistent/ofu-prefix/bin/ofu");
  auto answer = setup.attributor->Attribute({attribution::GpuRef{"GPU-a", 0, {}}});
  fs::remove_all(dir);
  ASSERT_FALSE(answer.ok());
  EXPECT_NE(answer.error().message.find("/nonexistent/ofu-prefix/bin/libofu-kubelet.so"), std::string::npos)
      << answer.error().message;
  EXPECT_NE(answer.error().message.find("/nonexistent/ofu-prefix/lib/ofu/libofu-kubelet.so"), std::string::npos)
      << answer.error().message;
}

}  // namespace
}  // namespace ofu::agent
