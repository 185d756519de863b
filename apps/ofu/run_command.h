// `ofu run [options] -- COMMAND [ARGS...]`: one job's OFU, its stalls and
// the MFU it printed, in one command (agent/job_recording.h records it,
// analysis/run_report.h reports it, render/run_output.h shows it).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"

#include "source_flags.h"

namespace ofu::cli {

struct RunArgs {
  SourceFlags source;
  std::vector<std::string> command;
  std::string report;  // --report FILE: the JSON report
  std::string out;     // --out FILE: keep the recording
  std::string html;    // --html FILE: the run's page
  std::optional<std::string> gpu_model;
  std::optional<std::string> spec_db;
};

// Adds the command's flags to `cmd`; results land in `args` (command.h).
void AddRunFlags(CLI::App& cmd, RunArgs& args);

// Runs it: the command's own exit status (128 + N when signal N ended it),
// or the error that kept it from starting.
Result<int> RunRun(const RunArgs& args);

}  // namespace ofu::cli
