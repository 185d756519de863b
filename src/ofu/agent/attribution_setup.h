// The agent's attribution, assembled from its configuration: one method per
// entry of [attribution] methods, asked in that order (a ChainAttributor).
//
//   slurm-mapping  the Slurm mapping directory (slurm_mapping_dir)
//   process        a scan of the GPUs' processes under proc_root
//   kubelet        the kubelet pod-resources API, through the plugin
//                  kubelet_plugin, or the one beside `executable`
//                  (attribution::DefaultKubeletPluginPaths)
//   static         the [[attribution.static]] labels
//
// "static" without labels can attribute nothing and is left out of the
// chain. The default methods list names it so that adding labels is enough;
// a methods list the user wrote that names it without labels is a mistake,
// and a note says so.
//
// Thread-safety: plain function; the attributor belongs to one thread.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ofu/agent/config.h"
#include "ofu/attribution/attributor.h"

namespace ofu::agent {

struct AttributionSetup {
  std::unique_ptr<attribution::Attributor> attributor;  // never null; asks no one when no method applies
  std::vector<std::string> notes;                       // for the log: methods listed that can do nothing
};

// `executable` is the agent's own program (/proc/self/exe); it locates the
// kubelet plugin when kubelet_plugin is empty. Nothing is opened here.
AttributionSetup BuildAttribution(const AgentConfig& config, const std::filesystem::path& executable);

}  // namespace ofu::agent
