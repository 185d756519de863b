// `ofu rules hourly`: the Prometheus recording rules of the hourly rollups
// that `ofu report --prometheus` reads long ranges from
// (src/ofu/history/prometheus_hourly.h), for the agents' scrape interval;
// or those of dcgm-exporter's series (src/ofu/history/dcgm_hourly.h).
// `ofu rules dcgm-exporter`: the zero-deploy rules, OFU per scrape from
// dcgm-exporter's series (src/ofu/history/dcgm_exporter_rules.h).
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"

namespace ofu::cli {

struct RulesArgs {
  bool zero_deploy = false;            // `rules dcgm-exporter` rather than `rules hourly`
  double scrape_interval_s = 15;       // --scrape-interval: how often Prometheus scrapes the agents
  std::string series = "ofu";          // --series: ofu (the agent's counters) or dcgm-exporter
  std::optional<std::string> spec_db;  // --spec-db: the constants and clock models of dcgm-exporter's rules
};

// Adds `rules`' subcommands `hourly` and `dcgm-exporter` to `cmd`, and their flags.
void AddRulesFlags(CLI::App& cmd, RulesArgs& args);

// Prints the rule file (YAML) to stdout. kInvalidArgument (exit 1) for a
// scrape interval too short for the rollups' step.
Result<int> RunRules(const RulesArgs& args);

}  // namespace ofu::cli
