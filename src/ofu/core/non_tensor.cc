#include "ofu/core/non_tensor.h"

namespace ofu {
namespace {

std::optional<PipeRate> RateOf(const std::optional<PipeSpec>& pipe) {
  if (!pipe) return std::nullopt;
  return PipeRate{pipe->lanes_per_sm, pipe->peak_tflops};
}

}  // namespace

std::optional<NonTensorScale> NonTensorScaleOf(const GpuSpec& spec, double sms) {
  if (!spec.non_tensor || sms <= 0 || spec.sm_count <= 0) return std::nullopt;
  NonTensorScale scale;
  scale.sms = sms;
  scale.share_of_gpu = sms / spec.sm_count;
  scale.fp64 = RateOf(spec.non_tensor->fp64);
  scale.fp32 = RateOf(spec.non_tensor->fp32);
  scale.fp16 = RateOf(spec.non_tensor->fp16);
  return scale;
}

void CompleteNonTensor(NonTensorFigures& figures, std::optional<double> sm_clock_mhz,
                       const std::optional<NonTensorScale>& scale) {
  figures.flops_upper_bound_tflops.reset();
  figures.share_of_peak.reset();
  if (!scale || !sm_clock_mhz) return;
  double bound = 0, share = 0;
  bool any_bound = false, any_share = false;
  for (const auto& [activity, rate] :
       {std::pair{figures.fp64_active, scale->fp64}, std::pair{figures.fp32_active, scale->fp32},
        std::pair{figures.fp16_active, scale->fp16}}) {
    if (!activity || !rate || rate->lanes_per_sm <= 0) continue;
    // activity * SMs * lanes * 2 FLOP * f (MHz = 1e6/s) -> TFLOP/s is 1e-12.
    const double tflops = *activity * scale->sms * rate->lanes_per_sm * 2.0 * *sm_clock_mhz * 1e-6;
    bound += tflops;
    any_bound = true;
    if (rate->peak_tflops > 0 && scale->share_of_gpu > 0) {
      share += tflops / (rate->peak_tflops * scale->share_of_gpu);
      any_share = true;
    }
  }
  if (any_bound) figures.flops_upper_bound_tflops = bound;
  if (any_share) figures.share_of_peak = share;
}

}  // namespace ofu
