// `ofu rules hourly`: the Prometheus recording rules of the hourly rollups
// that `ofu report --prometheus` reads long ranges from
// (src/ofu/history/prometheus_hourly.h), for the agents' scrape interval;
// or those of dcgm-exporter's series (src/ofu/history/dcgm_hourly.h).
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"

namespace ofu::cli {

struct RulesArgs {
  double scrape_interval_s = 15;       // --scrape-interval: how often Prometheus scrapes the agents
  std::string series = "ofu";          // --series: ofu (the agent's counters) or dcgm-exporter
  std::optional<std::string> spec_db;  // --spec-db: the clock models of dcgm-exporter's rules
};

// Adds `rules`' one subcommand `hourly` to `cmd`, and its flag.
void AddRulesFlags(CLI::App& cmd, RulesArgs& args);

// Prints the rule file (YAML) to stdout. kInvalidArgument (exit 1) for a
// scrape interval too short for the rollups' step.
Result<int> RunRules(const RulesArgs& args);

}  // namespace ofu::cli
