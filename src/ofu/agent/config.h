// The agent's configuration: a TOML file, then command-line flags on top
// (apps/ofu/agent_command.cc: a flag given overrides the file's key).
//
//   [agent]
//   window = 1.0                  # seconds, at least 0.1
//   source = "auto"               # auto | nvml | dcgm[:ADDRESS] | scrape:URL | replay:FILE
//   gpu_model = ""                # treat every GPU as this model (SKU id or name)
//   busy_threshold = 0.01         # a window is busy when engine activity reaches this
//   clock_readings = 0            # SM clock readings per window (NVML); 0: ten a second
//   nvml_library = ""             # default libnvidia-ml.so.1
//   dcgm_library = ""             # default libdcgm.so.4, then .so.3
//
//   [http]
//   listen = "127.0.0.1:9477"     # host:port; loopback unless you say otherwise
//   web_config = ""               # Prometheus web config file: TLS and basic auth
//
//   [store]
//   path = "/var/lib/ofu/history.sqlite"   # "" turns the history off
//   retention_days = 14
//
//   [attribution]
//   methods = ["slurm-mapping", "process", "kubelet", "static"]   # asked in this order
//   slurm_mapping_dir = "/run/ofu/job-map"
//   proc_root = "/proc"
//   kubelet_socket = "/var/lib/kubelet/pod-resources/kubelet.sock"
//   kubelet_plugin = ""           # default: libofu-kubelet.so beside ofu, then ../lib/ofu/
//   interval = 10.0               # seconds between attribution passes
//   [[attribution.static]]        # fixed labels, by GPU uuid or index
//   gpu = "0"
//   job_id = "inference-pool-a"
//   user = "svc"
//   job_name = "vllm"
//
// Every key is optional; an unknown key or table is an error (a typo must not
// silently keep a default), and errors name the file, line and key.
//
// Thread-safety: plain values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/attribution/attributor.h"
#include "ofu/core/result.h"

namespace ofu::agent {

struct StaticLabel {
  std::string gpu;  // uuid or index
  attribution::JobInfo job;
};

struct AgentConfig {
  // [agent]
  double window_s = 1.0;
  std::string source = "auto";
  std::optional<std::string> gpu_model;
  double busy_threshold = 0.01;
  int clock_readings = 0;  // sources::SourceOptions::clock_readings; 0: automatic
  std::string nvml_library;
  std::string dcgm_library;
  // [http]
  std::string listen_host = "127.0.0.1";
  int listen_port = 9477;
  std::string web_config;
  // [store]
  std::string store_path = "/var/lib/ofu/history.sqlite";
  double retention_days = 14;
  // [attribution]
  std::vector<std::string> attribution_methods = {"slurm-mapping", "process", "kubelet", "static"};
  std::string slurm_mapping_dir = "/run/ofu/job-map";
  std::string proc_root = "/proc";
  std::string kubelet_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::string kubelet_plugin;  // empty: attribution::DefaultKubeletPluginPaths
  double attribution_interval_s = 10;
  std::vector<StaticLabel> static_labels;
};

// Parses TOML text into `config` (keys not given keep their value).
// `source_name` names the file in errors: "<file>:<line>: <what>".
Status ParseAgentConfig(std::string_view toml_text, std::string_view source_name, AgentConfig& config);

// Reads the file at `path` and parses it; kIo when it cannot be read.
Status LoadAgentConfig(const std::string& path, AgentConfig& config);

// "host:port" (or "[v6]:port") into the config; kInvalidArgument otherwise.
Status SetListenAddress(std::string_view address, AgentConfig& config);

// The checks flags and file share: window ≥ 0.1 s, ports in range, known
// attribution methods, ...
Status ValidateAgentConfig(const AgentConfig& config);

}  // namespace ofu::agent
