// `ofu report`: OFU per GPU and overall from a recording.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace ofu::cli {

struct ReportArgs {
  std::string input;
  std::string format = "table";
  std::optional<std::string> gpu_model;
  double window_s = 60;
  std::optional<double> interval_s;
  std::string activity_scale = "auto";
  std::optional<std::string> spec_db;
  double busy_threshold = 0.01;
};

// Registers the subcommand and its flags on `app`; results land in `args`.
CLI::App* AddReportCommand(CLI::App& app, ReportArgs& args);

// Runs it; returns the process exit status (exit_codes.h).
int RunReport(const ReportArgs& args);

}  // namespace ofu::cli
