// `ofu agent` from a configuration to its end: open the source, the sinks
// (the metrics state, the history store) and the HTTP server, then run the
// sampling loop (agent.h) until a stop, the end of a finite source or the
// duration. On a reload request everything is opened again from the new
// configuration, except the metrics state: its counters carry on, since a
// Prometheus counter must never go back.
//
// What the process provides (signals, systemd notifications, its own path,
// the log) comes in through RunEnvironment, so that tests drive Run with a
// FakeClock and scripted stop and reload requests; apps/ofu/agent_command.cc
// connects them to SIGTERM, SIGHUP and sd_notify.
//
// Thread-safety: Run blocks its thread; the HTTP server it starts runs on
// its own thread and is stopped before Run returns. The environment's
// functions are called on Run's thread.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "ofu/agent/agent.h"
#include "ofu/agent/config.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/core/result.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/process_figures.h"
#include "ofu/sources/source.h"

namespace ofu::agent {

struct RunEnvironment {
  std::string version;               // ofu_build_info{version}
  std::filesystem::path executable;  // the agent's program; locates the kubelet plugin (attribution_setup.h)
  // Asked before every window: true stops the agent (SIGTERM, SIGINT).
  std::function<bool()> stop_requested = [] { return false; };
  // Asked before every window: true once per request to reload (SIGHUP).
  std::function<bool()> take_reload_request = [] { return false; };
  // The configuration to reload to (the file read again, the flags on top).
  // An error is logged and the running configuration kept. Unset: the
  // running configuration is reopened as it is.
  std::function<Result<AgentConfig>()> load_config;
  // systemd's notify protocol (sd_notify): "READY=1\nSTATUS=serving OFU
  // metrics" after the first window of a configuration, "WATCHDOG=1" after
  // every window when `watchdog`, "RELOADING=1" and "STOPPING=1".
  std::function<void(const std::string& state)> notify = [](const std::string&) {};
  bool watchdog = false;
  Log log = [](std::string_view) {};  // one line per event, for people
  // Stop once this much clock time has passed since Run began (tests,
  // benchmarks); unset: run until stopped.
  std::optional<double> duration_s;
  // Where the process_* figures on /metrics are read (process_figures.h);
  // unset: not exported.
  std::optional<sources::ProcFiles> proc_files = sources::SystemProcFiles();
};

// Why Run returned without an error.
enum class RunEnd {
  kStopRequested,    // stop_requested() said so
  kSourceEnded,      // a finite source (a replay) ended
  kDurationReached,  // duration_s passed
};

// The options the agent opens a source with: `given` (window, clock
// readings, libraries: the config's or the flags') and the agent's policy on
// top: a replay paced at its recorded speed, process lists every
// `attribution_interval_s` (only attribution reads them), and only the
// counters its outputs carry (AgentCounterFields). `ofu sources --cost`
// opens its source this way too. The driver calls these cause per window
// are pinned in tests/sources/nvml_call_count_test.cc.
sources::SourceOptions AgentSourceOptions(sources::SourceOptions given,
                                          double attribution_interval_s = kDefaultAttributionIntervalS);

// AgentSourceOptions of the config's source options and attribution interval.
sources::SourceOptions SourceOptionsOf(const AgentConfig& config);

// Runs the agent. `config` must have passed ValidateAgentConfig, and its
// gpu_sku, if any, must point into `specs` (its gpu_model is not read:
// kInvalidArgument when it is given and gpu_sku is not, the same for a
// reloaded configuration, which is then not used). Errors: the source cannot be
// opened (kUnavailable, or the source's own error), a store path the user
// chose cannot be opened (kIo), the web config cannot be read, the listen
// address cannot be bound (kUnavailable), or the source fails for good.
// The default store path is skipped with a note when its directory does
// not exist.
Result<RunEnd> Run(const AgentConfig& config, const GpuSpecDatabase& specs, sources::Clock& clock,
                   const RunEnvironment& environment);

}  // namespace ofu::agent
