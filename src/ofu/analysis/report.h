// The OFU report of a recording: per GPU and overall.
//
// For each GPU of the recording: find its SKU in the spec database (or use
// the --gpu-model override), cut its samples into windows, and summarize.
// The overall summary weighs every GPU-second the same.
//
// A GPU whose model name is in the data but not in the database makes the
// whole report fail with kUnknownModel (the error names the file to extend):
// a wrong f_spec would be a silent lie. A GPU with no model name at all is
// reported without OFU, with a problem saying so.
//
// Thread-safety: pure function of its inputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ofu/core/aggregate.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/core/result.h"
#include "ofu/core/windows.h"
#include "ofu/sources/replay.h"

namespace ofu::analysis {

struct ReportOptions {
  WindowOptions windows;
  std::optional<std::string> gpu_model;  // SKU id or model name for every GPU
};

struct GpuReport {
  GpuIdentity identity;
  std::string model;          // the model used: the override, else the data's
  const GpuSpec* spec = nullptr;  // into the database; null when the model is unknown
  WindowedGpu windowed;
  Summary summary;
  std::vector<std::string> problems;  // why figures are absent, for people
};

struct Report {
  std::string source_name;
  std::optional<bool> synthetic;
  std::string description;
  bool timestamps_assumed = false;
  double assumed_interval_s = 0;
  double window_s = 0;
  std::vector<GpuReport> gpus;
  Summary overall;
};

// `specs` must outlive the returned report (GpuReport::spec points into it).
Result<Report> BuildReport(const sources::Recording& recording, const GpuSpecDatabase& specs,
                           const ReportOptions& options);

}  // namespace ofu::analysis
