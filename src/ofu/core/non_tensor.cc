#include "ofu/core/non_tensor.h"

namespace ofu {
namespace {

using P = CudaCorePipe;

constexpr std::array<CudaCorePipeInfo, kCudaCorePipes> kPipes = {{
    {P::kFp64, CounterField::kFp64Active, "fp64", "FP64", &NonTensorSpec::fp64},
    {P::kFp32, CounterField::kFp32Active, "fp32", "FP32", &NonTensorSpec::fp32},
    {P::kFp16, CounterField::kFp16Active, "fp16", "FP16", &NonTensorSpec::fp16},
}};

std::optional<PipeRate> RateOf(const std::optional<PipeSpec>& pipe) {
  if (!pipe) return std::nullopt;
  return PipeRate{pipe->lanes_per_sm, pipe->peak_tflops};
}

}  // namespace

std::span<const CudaCorePipeInfo> CudaCorePipes() { return kPipes; }

const CudaCorePipeInfo& InfoFor(CudaCorePipe pipe) { return kPipes[IndexOf(pipe)]; }

bool NonTensorFigures::any_activity() const {
  for (const std::optional<double>& a : active) {
    if (a) return true;
  }
  return false;
}

std::optional<CudaCorePipe> BusiestPipe(const NonTensorFigures& figures, double threshold) {
  std::optional<CudaCorePipe> busiest;
  for (CudaCorePipe pipe : {P::kFp32, P::kFp16, P::kFp64}) {
    const std::optional<double>& a = figures[pipe];
    if (a && *a >= threshold && (!busiest || *a > *figures[*busiest])) busiest = pipe;
  }
  return busiest;
}

std::optional<NonTensorScale> NonTensorScaleOf(const GpuSpec& spec, double sms) {
  if (!spec.non_tensor || sms <= 0 || spec.sm_count <= 0) return std::nullopt;
  NonTensorScale scale;
  scale.sms = sms;
  scale.share_of_gpu = sms / spec.sm_count;
  for (const CudaCorePipeInfo& pipe : CudaCorePipes()) {
    scale.rates[IndexOf(pipe.pipe)] = RateOf((*spec.non_tensor).*pipe.spec);
  }
  return scale;
}

void CompleteNonTensor(NonTensorFigures& figures, std::optional<double> sm_clock_mhz,
                       const std::optional<NonTensorScale>& scale) {
  figures.flops_upper_bound_tflops.reset();
  figures.share_of_peak.reset();
  if (!scale || !sm_clock_mhz) return;
  double bound = 0, share = 0;
  bool any_bound = false, any_share = false;
  for (std::size_t i = 0; i < kCudaCorePipes; ++i) {
    const std::optional<double>& activity = figures.active[i];
    const std::optional<PipeRate>& rate = scale->rates[i];
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
