// `ofu correct --trace FILE`: the tile-quantization correction factor and
// precision mix of a kernel trace, the corrected OFU and the MFU it predicts,
// and the GEMMs that waste the most tensor time (src/ofu/analysis/correction.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ofu/core/result.h"
#include "ofu/render/output_format.h"

namespace ofu::cli {

struct CorrectArgs {
  std::vector<std::string> trace;  // files or directories of per-rank traces
  std::optional<double> ofu;
  std::optional<std::string> input;         // a recording to take the OFU from
  std::optional<std::string> training_log;  // the job's own log, for its reported MFU
  std::string reference_precision = "bf16";
  std::optional<std::string> gpu_model;
  std::optional<std::string> spec_db;
  bool strict = false;  // --strict: an unknown model in --input fails (exit 3)
  std::string orientation = "swapped";
  int top = 10;
  render::OutputFormat format = render::OutputFormat::kTable;  // --format; AddFormatFlag sets the default
};

// Adds the command's flags to `cmd`; results land in `args` (command.h).
void AddCorrectFlags(CLI::App& cmd, CorrectArgs& args);

// Exit 0 with a factor; 1 usage; 2 unreadable or malformed trace or recording;
// 3 unknown --gpu-model; 4 no GEMM kernel could be corrected, or the
// recording gives no OFU.
Result<int> RunCorrect(const CorrectArgs& args);

}  // namespace ofu::cli
