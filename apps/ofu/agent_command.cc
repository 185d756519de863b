#include "agent_command.h"

#include <systemd/sd-daemon.h>

#include <filesystem>

#include <fmt/format.h>

#include "ofu/agent/config.h"
#include "ofu/agent/run.h"
#include "ofu/cli/exit_codes.h"
#include "ofu/cli/spec_db.h"
#include "ofu/cli/stop_signal.h"
#include "ofu/core/version.h"
#include "ofu/sources/clock.h"

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

Settings come from the defaults, then the config file (--config), then the
flags given on the command line: a flag overrides the file's key, and a key
the flags do not name keeps the file's value. A reload reads the file again
and applies the same flags on top. --source also takes auto (NVML GPM, then
DCGM), as the file's source key does.

Examples:
  ofu agent
  ofu agent --config /etc/ofu/agent.toml
  ofu agent --source dcgm --listen 0.0.0.0:9477 --web-config /etc/ofu/web.yml
  ofu agent -s replay:run.om -w 0.5 --no-store
  ofu agent --check-config --config /etc/ofu/agent.toml

Exit status: 0 stopped by a signal or --duration, 1 bad flags or config,
2 unreadable config, spec file or history store, 5 no source or the address
cannot be bound.
See docs/agent.md.)";

void Log(std::string_view message) { fmt::print(stderr, "ofu agent: {}\n", message); }

// Defaults, then the config file, then the flags given; the GPU model
// resolved in `specs`, once for each configuration built.
Result<agent::AgentConfig> BuildConfig(const AgentArgs& args, const GpuSpecDatabase& specs) {
  agent::AgentConfig config;
  if (args.config) {
    OFU_RETURN_IF_ERROR(agent::LoadAgentConfig(*args.config, config));
  }
  OverrideWithGivenFlags(args.source, config.source, config.source_options);
  if (args.gpu_model) config.gpu_model = *args.gpu_model;
  if (args.listen) {
    OFU_RETURN_IF_ERROR(agent::SetListenAddress(*args.listen, config));
  }
  if (args.web_config) config.web_config = *args.web_config;
  if (args.store) config.store_path = *args.store;
  if (args.no_store) config.store_path.clear();
  OFU_RETURN_IF_ERROR(agent::ValidateAgentConfig(config));
  OFU_ASSIGN_OR_RETURN(config.gpu_sku, ResolveGpuModel(specs, config.gpu_model));
  return config;
}

}  // namespace

void AddAgentFlags(CLI::App& cmd, AgentArgs& args) {
  cmd.description(kAgentHelp);
  cmd.add_option("--config,-c", args.config, "TOML config file (docs/agent.md); flags given override it");
  AddSourceFlags(cmd, args.source);
  AddGpuModelFlag(cmd, args.gpu_model, "Treat every GPU as this model");
  cmd.add_option("--listen", args.listen, "host:port to serve /metrics on (default 127.0.0.1:9477)");
  cmd.add_option("--web-config", args.web_config, "Prometheus web config file: TLS and basic auth");
  cmd.add_option("--store", args.store, "History database (SQLite; default /var/lib/ofu/history.sqlite)");
  cmd.add_flag("--no-store", args.no_store, "Keep no history");
  AddSpecDbFlag(cmd, args.spec_db);
  cmd.add_option("--duration", args.duration_s, "Stop after this many seconds (default: run until stopped)")
      ->check(CLI::PositiveNumber);
  cmd.add_flag("--check-config", args.check_config, "Check the config and flags, print the result, and exit");
}

Result<int> RunAgent(const AgentArgs& args) {
  OFU_ASSIGN_OR_RETURN(const GpuSpecDatabase specs, LoadSpecDatabase(args.spec_db));
  OFU_ASSIGN_OR_RETURN(auto config, BuildConfig(args, specs));  // --check-config checks the model too
  if (args.check_config) {
    fmt::print("config ok: source {}, window {} s, listen {}:{}, store {}\n", config.source,
               config.source_options.window_s, config.listen_host, config.listen_port,
               config.store_path.empty() ? "off" : config.store_path);
    return kExitOk;
  }

  InstallStopSignals();
  InstallReloadSignal();
  agent::RunEnvironment environment;
  environment.version = kVersion;
  std::error_code unreadable;  // then the path is empty, and the plugin is looked for relative to the working directory
  environment.executable = std::filesystem::read_symlink("/proc/self/exe", unreadable);
  environment.stop_requested = StopRequested;
  environment.take_reload_request = TakeReloadRequest;
  environment.load_config = [&args, &specs] { return BuildConfig(args, specs); };
  environment.notify = [](const std::string& state) { sd_notify(0, state.c_str()); };
  uint64_t watchdog_usec = 0;
  environment.watchdog = sd_watchdog_enabled(0, &watchdog_usec) > 0;
  environment.log = Log;
  environment.duration_s = args.duration_s;
  sources::SystemClock clock;
  OFU_RETURN_IF_ERROR(agent::Run(config, specs, clock, environment));
  return kExitOk;
}

}  // namespace ofu::cli
