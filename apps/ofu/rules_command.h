// `ofu rules hourly`: the Prometheus recording rules of the hourly rollups
// that `ofu report --prometheus` reads long ranges from
// (src/ofu/history/prometheus_hourly.h), for the agents' scrape interval.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"

namespace ofu::cli {

struct RulesArgs {
  double scrape_interval_s = 15;  // --scrape-interval: how often Prometheus scrapes the agents
};

// Adds `rules`' one subcommand `hourly` to `cmd`, and its flag.
void AddRulesFlags(CLI::App& cmd, RulesArgs& args);

// Prints the rule file (YAML) to stdout. kInvalidArgument (exit 1) for a
// scrape interval too short for the rollups' step.
Result<int> RunRules(const RulesArgs& args);

}  // namespace ofu::cli
