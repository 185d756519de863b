#include "ofu/analysis/correction_view.h"

#include <fmt/format.h>

namespace ofu::analysis {

std::optional<double> CorrectionView::CorrectedOfu() const {
  if (!ofu || !report->factor) return std::nullopt;
  return *ofu * *report->factor;
}

std::optional<double> CorrectionView::PredictedMfu() const {
  const std::optional<double> corrected = CorrectedOfu();
  if (!corrected || !report->mfu_scale) return std::nullopt;
  return *corrected * *report->mfu_scale;
}

std::optional<CorrectionView::Reported> CorrectionView::ReportedBesidePredicted() const {
  if (training_log == nullptr) return std::nullopt;
  const kernels::Precision precision = training_log->reference_precision;
  std::optional<double> own_peak;
  if (gpu != nullptr) {
    if (const std::optional<double> tflops = gpu->PeakTflops(kernels::PrecisionName(precision))) {
      own_peak = *tflops * 1e12;
    }
  }
  Reported out;
  out.mfu = MfuOverOwnPeak(formats::ReportedMfuOf(*training_log, ""), own_peak,
                           gpu != nullptr ? fmt::format("{} (from {})", gpu->id, gpu_origin) : "the trace's GPU",
                           gpu != nullptr ? "check --gpu-model and --reference-precision"
                                          : "name the GPU with --gpu-model (a SKU id such as h100-sxm5, or its name)");
  const std::optional<double> predicted = PredictedMfu();
  if (out.mfu.mfu && predicted && *predicted > 0 && precision == report->reference_precision) {
    out.ratio = *out.mfu.mfu / *predicted;
    out.verdict = ClassifyRatio(*out.ratio, std::nullopt, ReconcileOptions{});
  }
  return out;
}

}  // namespace ofu::analysis
