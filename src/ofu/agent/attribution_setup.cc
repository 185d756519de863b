#include "ofu/agent/attribution_setup.h"

#include <map>
#include <utility>

#include "ofu/attribution/chain_attributor.h"
#include "ofu/attribution/kubelet_plugin.h"
#include "ofu/attribution/process_scan.h"
#include "ofu/attribution/slurm_mapping_dir.h"
#include "ofu/attribution/static_labels.h"

namespace ofu::agent {

AttributionSetup BuildAttribution(const AgentConfig& config, const std::filesystem::path& executable) {
  AttributionSetup setup;
  const bool default_methods = config.attribution_methods == AgentConfig{}.attribution_methods;
  std::vector<std::unique_ptr<attribution::Attributor>> methods;
  for (const std::string& method : config.attribution_methods) {
    if (method == "slurm-mapping") {
      methods.push_back(std::make_unique<attribution::SlurmMappingDirAttributor>(config.slurm_mapping_dir));
    } else if (method == "process") {
      attribution::ProcessScanOptions options;
      options.proc_root = config.proc_root;
      methods.push_back(std::make_unique<attribution::ProcessScanAttributor>(options));
    } else if (method == "kubelet") {
      attribution::KubeletOptions options;
      options.socket_path = config.kubelet_socket;
      std::vector<std::string> plugin_paths = {config.kubelet_plugin};
      if (config.kubelet_plugin.empty()) plugin_paths = attribution::DefaultKubeletPluginPaths(executable);
      methods.push_back(std::make_unique<attribution::KubeletPluginAttributor>(options, std::move(plugin_paths)));
    } else if (method == "static" && !config.static_labels.empty()) {
      std::map<std::string, attribution::JobInfo> labels;
      for (const StaticLabel& label : config.static_labels) labels[label.gpu] = label.job;
      methods.push_back(std::make_unique<attribution::StaticAttributor>(std::move(labels)));
    } else if (method == "static" && !default_methods) {
      setup.notes.push_back("attribution method \"static\" has no [[attribution.static]] labels, so it labels no GPU");
    }
  }
  setup.attributor = std::make_unique<attribution::ChainAttributor>(std::move(methods));
  return setup;
}

}  // namespace ofu::agent
