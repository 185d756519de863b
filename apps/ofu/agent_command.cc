#include "agent_command.h"

#include <systemd/sd-daemon.h>

#include <filesystem>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "exit_codes.h"
#include "source_flags.h"
#include "spec_db.h"
#include "stop_signal.h"
#include "ofu/agent/agent.h"
#include "ofu/agent/config.h"
#include "ofu/agent/window_evaluator.h"
#include "ofu/attribution/chain_attributor.h"
#include "ofu/attribution/kubelet_plugin.h"
#include "ofu/attribution/process_scan.h"
#include "ofu/attribution/slurm_mapping_dir.h"
#include "ofu/attribution/static_labels.h"
#include "ofu/sinks/history_store.h"
#include "ofu/sinks/metrics_server.h"
#include "ofu/sinks/metrics_state.h"
#include "ofu/sinks/web_config.h"
#include "ofu/sources/clock.h"
#include "ofu/core/version.h"

namespace ofu::cli {
namespace {

constexpr const char* kAgentHelp = R"(The node daemon: OFU per GPU as Prometheus metrics.

Every window (default 1 s) it reads the counter source, computes OFU per GPU,
labels GPUs with the job running on them (Slurm mapping directory, /proc scan,
kubelet pod-resources, static labels), and serves:
  /metrics   Prometheus text or OpenMetrics (by Accept): counters such that
             increase(ofu_utilized_seconds_total) / increase(ofu_observed_seconds_total)
             is the OFU of any range; see docs/prometheus.md
  /healthz   200 while windows arrive; 503 after 3 windows without data

It listens on 127.0.0.1:9477 unless told otherwise; TLS and basic auth come
from a Prometheus web config file (docs/agent-security.md). SIGHUP reloads the
config file; SIGTERM stops. Under systemd (Type=notify) it reports ready after
the first window and pings the watchdog every window (deploy/ofu-agent.service).

Examples:
  ofu agent
  ofu agent --config /etc/ofu/agent.toml
  ofu agent --source dcgm --listen 0.0.0.0:9477 --web-config /etc/ofu/web.yml
  ofu agent --check-config --config /etc/ofu/agent.toml

Exit status: 0 stopped by a signal or --duration, 1 bad flags or config,
2 unreadable config, spec file or history store, 5 no source or the address
cannot be bound.
See docs/agent.md.)";

int Fail(const Error& error) {
  fmt::print(stderr, "ofu agent: {}\n", error.message);
  return ExitCodeFor(error.code);
}

void Log(std::string_view message) { fmt::print(stderr, "ofu agent: {}\n", message); }

// Defaults, then the config file, then the flags given.
Result<agent::AgentConfig> BuildConfig(const AgentArgs& args) {
  agent::AgentConfig config;
  if (args.config) {
    if (Status s = agent::LoadAgentConfig(*args.config, config); !s.ok()) return s.error();
  }
  if (args.source) config.source = *args.source;
  if (args.window_s) config.window_s = *args.window_s;
  if (args.gpu_model) config.gpu_model = *args.gpu_model;
  if (args.listen) {
    if (Status s = agent::SetListenAddress(*args.listen, config); !s.ok()) return s.error();
  }
  if (args.web_config) config.web_config = *args.web_config;
  if (args.store) config.store_path = *args.store;
  if (args.no_store) config.store_path.clear();
  if (args.nvml_library) config.nvml_library = *args.nvml_library;
  if (args.dcgm_library) config.dcgm_library = *args.dcgm_library;
  if (Status s = agent::ValidateAgentConfig(config); !s.ok()) return s.error();
  return config;
}

std::unique_ptr<attribution::Attributor> BuildAttribution(const agent::AgentConfig& config) {
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
      if (config.kubelet_plugin.empty()) {
        std::error_code error;
        plugin_paths = attribution::DefaultKubeletPluginPaths(std::filesystem::read_symlink("/proc/self/exe", error));
      }
      methods.push_back(std::make_unique<attribution::KubeletPluginAttributor>(options, std::move(plugin_paths)));
    } else if (method == "static" && !config.static_labels.empty()) {
      std::map<std::string, attribution::JobInfo> labels;
      for (const agent::StaticLabel& label : config.static_labels) labels[label.gpu] = label.job;
      methods.push_back(std::make_unique<attribution::StaticAttributor>(std::move(labels)));
    }
  }
  return std::make_unique<attribution::ChainAttributor>(std::move(methods));
}

std::string SourceNameOf(const std::string& description) {
  for (const char* name : {"nvml", "dcgm", "scrape", "replay"}) {
    if (description.rfind(name, 0) == 0) return name;
  }
  return "unknown";
}

// One configuration's worth of running: until stop, reload or the end of a
// finite source. Returns the exit status, or nullopt to reload.
std::optional<int> RunConfigured(const agent::AgentConfig& config, const AgentArgs& args,
                                 const GpuSpecDatabase& specs, std::unique_ptr<sinks::MetricsState>& metrics,
                                 sources::Clock& clock, double started_s) {
  SourceFlags flags;
  flags.source = config.source == "auto" ? "" : config.source;
  flags.options.window_s = config.window_s;
  flags.options.nvml_library = config.nvml_library;
  flags.options.dcgm_library = config.dcgm_library;
  flags.options.pace_replay = true;  // a replay plays at the speed it was recorded
  flags.options.process_interval_s = config.attribution_interval_s;  // only attribution reads them
  auto source = OpenSourceFromFlags(flags, clock);
  if (!source.ok()) return Fail(source.error());
  Log(fmt::format("reading {} every {} s", (*source)->Describe(), config.window_s));

  sinks::MetricsOptions metrics_options;
  metrics_options.version = kVersion;
  metrics_options.source_name = SourceNameOf((*source)->Describe());
  metrics_options.window_s = config.window_s;
  // The counters live across reloads: they must never go back.
  if (metrics) {
    metrics->Reconfigure(metrics_options);
  } else {
    metrics = std::make_unique<sinks::MetricsState>(metrics_options, clock);
  }

  // History: where the user said, or nowhere. A store the user named that
  // cannot be opened is an error; the default one is skipped, with a note,
  // where its directory does not exist (packages create /var/lib/ofu).
  std::unique_ptr<sinks::HistoryStore> history;
  if (!config.store_path.empty()) {
    sinks::HistoryOptions history_options;
    history_options.path = config.store_path;
    history_options.retention_days = config.retention_days;
    auto opened = sinks::HistoryStore::Open(history_options, clock);
    if (opened.ok()) {
      history = std::move(*opened);
      Log(fmt::format("keeping history in {}", config.store_path));
    } else if (config.store_path == agent::AgentConfig{}.store_path &&
               !std::filesystem::is_directory(std::filesystem::path(config.store_path).parent_path())) {
      Log(fmt::format("no history: {}", opened.error().message));
    } else {
      return Fail(opened.error());
    }
  }
  std::vector<sinks::Sink*> sinks = {metrics.get()};
  if (history) sinks.push_back(history.get());

  std::optional<sinks::WebConfig> web_config;
  if (!config.web_config.empty()) {
    auto loaded = sinks::LoadWebConfig(config.web_config);
    if (!loaded.ok()) return Fail(loaded.error());
    web_config = std::move(*loaded);
  }
  sinks::MetricsServer server(*metrics);
  if (Status s = server.Start(config.listen_host, config.listen_port, web_config); !s.ok()) return Fail(s.error());
  Log(fmt::format("serving /metrics on {}://{}:{}", web_config && web_config->tls ? "https" : "http",
                  config.listen_host, server.port()));

  agent::WindowEvaluator evaluator(specs, config.gpu_model, config.busy_threshold);
  std::unique_ptr<attribution::Attributor> attributor = BuildAttribution(config);
  agent::Agent agent(**source, evaluator, attributor.get(), sinks, clock, config.attribution_interval_s,
                     Log);
  uint64_t watchdog_usec = 0;
  const bool watchdog = sd_watchdog_enabled(0, &watchdog_usec) > 0;
  while (!StopRequested()) {
    if (TakeReloadRequest()) {
      sd_notify(0, "RELOADING=1");
      return std::nullopt;
    }
    auto stepped = agent.Step();
    if (!stepped.ok()) return Fail(stepped.error());
    if (!*stepped) {
      Log("the source has ended");
      return kExitOk;
    }
    if (agent.windows() == 1) sd_notify(0, "READY=1\nSTATUS=serving OFU metrics");
    if (watchdog) sd_notify(0, "WATCHDOG=1");
    if (args.duration_s && clock.NowS() - started_s >= *args.duration_s) return kExitOk;
  }
  sd_notify(0, "STOPPING=1");
  return kExitOk;
}

}  // namespace

CLI::App* AddAgentCommand(CLI::App& app, AgentArgs& args) {
  CLI::App* cmd = app.add_subcommand("agent", "The node daemon: OFU per GPU as Prometheus metrics");
  cmd->description(kAgentHelp);
  cmd->add_option("--config,-c", args.config, "TOML config file (docs/agent.md); flags override it");
  cmd->add_option("--source", args.source, "auto, nvml, dcgm[:ADDRESS], scrape:URL or replay:FILE (default auto)");
  cmd->add_option("--window", args.window_s, "Window length in seconds (at least 0.1; default 1)");
  cmd->add_option("--gpu-model", args.gpu_model, "Treat every GPU as this model (SKU id or name)");
  cmd->add_option("--listen", args.listen, "host:port to serve /metrics on (default 127.0.0.1:9477)");
  cmd->add_option("--web-config", args.web_config, "Prometheus web config file: TLS and basic auth");
  cmd->add_option("--store", args.store, "History database (SQLite; default /var/lib/ofu/history.sqlite)");
  cmd->add_flag("--no-store", args.no_store, "Keep no history");
  cmd->add_option("--nvml-library", args.nvml_library, "Path of libnvidia-ml.so.1 to load");
  cmd->add_option("--dcgm-library", args.dcgm_library, "Path of libdcgm.so.4 to load");
  cmd->add_option("--spec-db", args.spec_db, "GPU spec database to use instead of the built-in one");
  cmd->add_option("--duration", args.duration_s, "Stop after this many seconds (default: run until stopped)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--check-config", args.check_config, "Check the config and flags, print the result, and exit");
  return cmd;
}

int RunAgent(const AgentArgs& args) {
  auto config = BuildConfig(args);
  if (!config.ok()) return Fail(config.error());
  auto specs = LoadSpecDatabase(args.spec_db);
  if (!specs.ok()) return Fail(specs.error());
  if (config->gpu_model) {
    if (auto known = specs->Lookup(*config->gpu_model); !known.ok()) return Fail(known.error());
  }
  if (args.check_config) {
    fmt::print("config ok: source {}, window {} s, listen {}:{}, store {}\n", config->source, config->window_s,
               config->listen_host, config->listen_port, config->store_path.empty() ? "off" : config->store_path);
    return kExitOk;
  }

  InstallStopSignals();
  InstallReloadSignal();
  sources::SystemClock clock;
  const double started_s = clock.NowS();
  std::unique_ptr<sinks::MetricsState> metrics;
  agent::AgentConfig running = *config;
  while (true) {
    std::optional<int> status = RunConfigured(running, args, *specs, metrics, clock, started_s);
    if (status) return *status;
    // SIGHUP: read the file again; keep the running config when the new one is bad.
    auto reloaded = BuildConfig(args);
    if (reloaded.ok()) {
      running = *reloaded;
      Log("configuration reloaded");
    } else {
      Log(fmt::format("reload failed, keeping the running configuration: {}", reloaded.error().message));
    }
  }
}

}  // namespace ofu::cli
