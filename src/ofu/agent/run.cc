#include "ofu/agent/run.h"

#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ofu/agent/attribution_setup.h"
#include "ofu/agent/queued_sink.h"
#include "ofu/agent/window_evaluator.h"
#include "ofu/net/web_config.h"
#include "ofu/sinks/async_sink.h"
#include "ofu/sinks/history_store.h"
#include "ofu/sinks/metrics_server.h"
#include "ofu/sinks/metrics_state.h"
#include "ofu/sources/builtin/builtin_sources.h"
#include "ofu/sources/call_accounting.h"

namespace ofu::agent {

sources::SourceOptions AgentSourceOptions(sources::SourceOptions given, double attribution_interval_s) {
  given.pace_replay = true;                           // a replay plays at the speed it was recorded
  given.process_interval_s = attribution_interval_s;  // only attribution reads them
  const auto fields = AgentCounterFields();           // nothing read that no output carries
  given.fields.assign(fields.begin(), fields.end());
  return given;
}

sources::SourceOptions SourceOptionsOf(const AgentConfig& config) {
  return AgentSourceOptions(config.source_options, config.attribution_interval_s);
}

namespace {

Result<std::unique_ptr<sources::Source>> OpenConfiguredSource(const AgentConfig& config, sources::Clock& clock,
                                                              sources::CallAccounting& calls) {
  sources::SourceOptions options = SourceOptionsOf(config);
  options.call_accounting = &calls;  // exported on /metrics: what the agent costs
  // The registry auto-detects when given an empty text.
  return sources::BuiltinSourceRegistry().Open(config.source == "auto" ? "" : config.source, options, clock);
}

// The history store: where the user said, or nowhere. A store the user
// named that cannot be opened is an error; the default one is skipped, with
// a note, where its directory does not exist (packages create /var/lib/ofu).
// Null when there is to be no history.
Result<std::unique_ptr<sinks::HistoryStore>> OpenHistory(const AgentConfig& config, sources::Clock& clock,
                                                         const Log& log) {
  if (config.store_path.empty()) return std::unique_ptr<sinks::HistoryStore>();
  sinks::HistoryOptions history_options;
  history_options.path = config.store_path;
  history_options.retention_days = config.retention_days;
  auto opened = sinks::HistoryStore::Open(history_options, clock);
  if (opened.ok()) {
    log(fmt::format("keeping history in {}", config.store_path));
    return std::move(*opened);
  }
  if (config.store_path == AgentConfig{}.store_path &&
      !std::filesystem::is_directory(std::filesystem::path(config.store_path).parent_path())) {
    log(fmt::format("no history: {}", opened.error().message));
    return std::unique_ptr<sinks::HistoryStore>();
  }
  return opened.error();
}

// kInvalidArgument when gpu_model is given and was not resolved (AgentConfig::gpu_sku).
Status CheckResolved(const AgentConfig& config) {
  if (config.gpu_model && config.gpu_sku == nullptr) {
    return Error::InvalidArgument("gpu_model {:?} was not resolved in the spec database", *config.gpu_model);
  }
  return OkStatus();
}

// One configuration's worth of running: until stop, reload or the end of a
// finite source. Returns how it ended, or nullopt to reload.
Result<std::optional<RunEnd>> RunConfigured(const AgentConfig& config, const GpuSpecDatabase& specs,
                                            std::unique_ptr<sinks::MetricsState>& metrics,
                                            sources::CallAccounting& calls, sources::Clock& clock, double started_s,
                                            const RunEnvironment& env) {
  const Log& log = env.log;
  OFU_ASSIGN_OR_RETURN(auto source, OpenConfiguredSource(config, clock, calls));
  log(fmt::format("reading {} every {} s", source->Describe(), config.source_options.window_s));

  sinks::MetricsOptions metrics_options;
  metrics_options.version = env.version;
  metrics_options.source_name = source->kind();
  metrics_options.window_s = config.source_options.window_s;
  metrics_options.call_accounting = &calls;
  metrics_options.proc_files = env.proc_files;
  // The counters live across reloads: they must never go back.
  if (metrics) {
    metrics->Reconfigure(metrics_options);
  } else {
    metrics = std::make_unique<sinks::MetricsState>(metrics_options, clock);
  }

  OFU_ASSIGN_OR_RETURN(auto history, OpenHistory(config, clock, log));
  // A commit may wait on the disk: the store writes on a thread of its own.
  std::unique_ptr<sinks::AsyncSink> queued_history;
  if (history) queued_history = QueueSink(std::move(history), *metrics, config.source_options.window_s);
  std::vector<sinks::Sink*> sinks = {metrics.get()};
  if (queued_history) sinks.push_back(queued_history.get());

  std::optional<net::WebConfig> web_config;
  if (!config.web_config.empty()) {
    OFU_ASSIGN_OR_RETURN(auto loaded, net::LoadWebConfig(config.web_config));
    web_config = std::move(loaded);
  }
  sinks::MetricsServer server(*metrics);
  OFU_RETURN_IF_ERROR(server.Start(config.listen_host, config.listen_port, web_config));
  log(fmt::format("serving /metrics on {}://{}:{}", web_config && web_config->tls ? "https" : "http",
                  config.listen_host, server.port()));

  WindowEvaluator evaluator(specs, config.gpu_sku, config.busy_threshold);
  AttributionSetup attribution = BuildAttribution(config, env.executable);
  for (const std::string& note : attribution.notes) log(note);
  Agent agent(*source, evaluator, attribution.attributor.get(), sinks, clock, config.attribution_interval_s, log);
  while (!env.stop_requested()) {
    if (env.take_reload_request()) {
      env.notify("RELOADING=1");
      return std::optional<RunEnd>();
    }
    OFU_ASSIGN_OR_RETURN(auto stepped, agent.Step());
    if (!stepped) {
      log("the source has ended");
      return std::optional<RunEnd>(RunEnd::kSourceEnded);
    }
    if (agent.windows() == 1) env.notify("READY=1\nSTATUS=serving OFU metrics");
    if (env.watchdog) env.notify("WATCHDOG=1");
    if (env.duration_s && clock.NowS() - started_s >= *env.duration_s) {
      return std::optional<RunEnd>(RunEnd::kDurationReached);
    }
  }
  env.notify("STOPPING=1");
  return std::optional<RunEnd>(RunEnd::kStopRequested);
}

}  // namespace

Result<RunEnd> Run(const AgentConfig& config, const GpuSpecDatabase& specs, sources::Clock& clock,
                   const RunEnvironment& environment) {
  const double started_s = clock.NowS();
  // Like the metrics state, the call counters live across reloads.
  sources::CallAccounting calls;
  std::unique_ptr<sinks::MetricsState> metrics;
  OFU_RETURN_IF_ERROR(CheckResolved(config));
  AgentConfig running = config;
  while (true) {
    OFU_ASSIGN_OR_RETURN(auto ended, RunConfigured(running, specs, metrics, calls, clock, started_s, environment));
    if (ended) return *ended;
    // A reload: the new configuration, or the running one when the new one is bad.
    if (!environment.load_config) continue;
    Result<AgentConfig> reloaded = environment.load_config();
    if (reloaded.ok()) {
      if (Status resolved = CheckResolved(*reloaded); !resolved.ok()) reloaded = resolved.error();
    }
    if (reloaded.ok()) {
      running = std::move(*reloaded);
      environment.log("configuration reloaded");
    } else {
      environment.log(fmt::format("reload failed, keeping the running configuration: {}", reloaded.error().message));
    }
  }
}

}  // namespace ofu::agent
