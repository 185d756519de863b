// `ofu agent`: the node daemon. Samples a counter source every window,
// computes OFU, labels GPUs with jobs, and serves Prometheus metrics
// (docs/prometheus.md) and /healthz; see docs/agent.md. The daemon itself is
// agent::Run (src/ofu/agent/run.h); this file turns flags into its config.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"
#include "source_flags.h"

namespace ofu::cli {

struct AgentArgs {
  std::optional<std::string> config;
  SourceFlags source;  // the flags given (source.given) override the config file
  std::optional<std::string> gpu_model;
  std::optional<std::string> listen;
  std::optional<std::string> web_config;
  std::optional<std::string> store;
  bool no_store = false;
  std::optional<std::string> spec_db;
  std::optional<double> duration_s;  // stop after this long (tests, benchmarks)
  bool check_config = false;
};

// Adds the command's flags to `cmd`; results land in `args` (command.h).
void AddAgentFlags(CLI::App& cmd, AgentArgs& args);

// Exit 0 on SIGTERM/SIGINT, --duration or the end of a replay; errors: bad
// flags or config (exit 1), the config file or spec database cannot be read
// (2), the source or the listen address cannot be opened (5).
// Threads: agent::Run (ofu/agent/run.h) starts the HTTP server's and the
// store queue's threads and joins them before it returns.
Result<int> RunAgent(const AgentArgs& args);

}  // namespace ofu::cli
