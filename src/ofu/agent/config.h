// The agent's configuration: a TOML file, then command-line flags on top
// (apps/ofu/agent_command.cc: a flag given overrides the file's key).
//
//   [agent]
//   window = 1.0                  # seconds, 0.1 to 3600
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
#include "ofu/core/gpu_spec.h"
#include "ofu/core/result.h"
#include "ofu/sources/source.h"

namespace ofu::agent {

struct StaticLabel {
  std::string gpu;  // uuid or index
  attribution::JobInfo job;
};

// The attribution interval when neither the file nor a flag sets one:
// seconds between attribution passes, and between two process lists of the
// source (SourceOptionsOf).
inline constexpr double kDefaultAttributionIntervalS = 10;

struct AgentConfig {
  // [agent]
  std::string source = "auto";
  // What the source reads, whole: the [agent] keys that concern the source
  // (the window, the clock readings, the two libraries) land in it, as the
  // flags of the same names do (apps/ofu/source_flags.h); its other fields
  // keep their defaults here.
  // The agent's own policy (paced replays, process lists every attribution
  // interval, only the counters it exports) is added when the source is
  // opened (SourceOptionsOf, run.h), not stored here.
  sources::SourceOptions source_options;
  // The model every GPU is treated as, as the file or --gpu-model names it
  // (a SKU id or a driver's name); absent: each GPU's own.
  std::optional<std::string> gpu_model;
  // gpu_model's SKU, into the spec database Run is given: set once by whoever
  // builds the config (apps/ofu/agent_command.cc, with cli::ResolveGpuModel)
  // after the file and flags are read, so that nothing downstream looks the
  // name up again. Null when gpu_model is absent. Not read from the file.
  const GpuSpec* gpu_sku = nullptr;
  double busy_threshold = 0.01;
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
  double attribution_interval_s = kDefaultAttributionIntervalS;
  std::vector<StaticLabel> static_labels;
};

// Parses TOML text into `config` (keys not given keep their value).
// `source_name` names the file in errors: "<file>:<line>: <what>".
Status ParseAgentConfig(std::string_view toml_text, std::string_view source_name, AgentConfig& config);

// Reads the file at `path` and parses it; kIo when it cannot be read.
Status LoadAgentConfig(const std::string& path, AgentConfig& config);

// "host:port" (or "[v6]:port") into the config; kInvalidArgument otherwise.
Status SetListenAddress(std::string_view address, AgentConfig& config);

// The checks flags and file share: window and clock readings in their one
// range (sources::CheckSamplingSettings), ports in range, known
// attribution methods, ...
Status ValidateAgentConfig(const AgentConfig& config);

}  // namespace ofu::agent
