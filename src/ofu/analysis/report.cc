#include "ofu/analysis/report.h"

#include <fmt/format.h>

namespace ofu::analysis {
namespace {

void ExplainAbsences(GpuReport& gpu) {
  const Summary& s = gpu.summary;
  if (s.tensor_seconds == 0) gpu.problems.push_back("no tensor activity samples (DCGM field 1004)");
  if (!s.sm_clock_mhz) gpu.problems.push_back("no SM clock readings (DCGM field 100)");
  if (s.windows_without_clock > 0 && s.sm_clock_mhz) {
    gpu.problems.push_back(fmt::format("{} window(s) with tensor activity but no clock reading: excluded",
                                       s.windows_without_clock));
  }
  if (!gpu.windowed.gaps.empty()) {
    double seconds = 0;
    for (const auto& gap : gpu.windowed.gaps) seconds += gap.seconds();
    gpu.problems.push_back(fmt::format("{} gap(s) in the data, {:.0f} s in all: excluded, not filled",
                                       gpu.windowed.gaps.size(), seconds));
  }
}

}  // namespace

Result<Report> BuildReport(const sources::Recording& recording, const GpuSpecDatabase& specs,
                           const ReportOptions& options) {
  if (!(options.windows.window_s >= kMinWindowS)) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("the window length must be at least {} s", kMinWindowS)};
  }
  Report report;
  report.source_name = recording.source_name;
  report.synthetic = recording.synthetic;
  report.description = recording.description;
  report.timestamps_assumed = recording.timestamps_assumed;
  report.assumed_interval_s = recording.assumed_interval_s;
  report.window_s = options.windows.window_s;

  Summarizer overall;
  for (const auto& recorded : recording.gpus) {
    GpuReport gpu;
    gpu.identity = recorded.identity;
    gpu.model = options.gpu_model.value_or(recorded.identity.model);
    if (gpu.model.empty()) {
      gpu.problems.push_back("the data name no GPU model (no modelName label): pass --gpu-model to get OFU");
    } else {
      auto spec = specs.Lookup(gpu.model);
      if (!spec.ok()) {
        return Error{spec.error().code, fmt::format("GPU {}: {}", gpu.identity.key, spec.error().message)};
      }
      gpu.spec = *spec;
    }

    // Without a SKU there is no OFU, but activity and clocks still tell a story.
    std::optional<OfuScale> scale;
    if (gpu.spec != nullptr) scale = OfuScale{gpu.spec->SpecClockMhz(), gpu.spec->k_arch};
    gpu.windowed = BuildWindows(recorded.samples, scale, options.windows);
    Summarizer summarizer;
    for (const auto& window : gpu.windowed.windows) {
      summarizer.Add(window);
      if (scale) overall.Add(window);  // the overall figures are about GPUs with OFU
    }
    gpu.summary = summarizer.Finish();
    ExplainAbsences(gpu);
    report.gpus.push_back(std::move(gpu));
  }
  report.overall = overall.Finish();
  return report;
}

}  // namespace ofu::analysis
