#include "ofu/sinks/window_counters.h"

namespace ofu::sinks {
namespace {

std::optional<double> PipeSeconds(const std::optional<double>& activity, double window_s) {
  if (!activity) return std::nullopt;
  return *activity * window_s;
}

void AddOptional(std::optional<double>& total, const std::optional<double>& part) {
  if (part) total = total.value_or(0) + *part;
}

}  // namespace

bool AdvancesCounters(const OfuWindow& window) { return window.ofu.has_value() && window.tensor_active.has_value(); }

CounterSeconds CountersOfWindow(const GpuWindow& gpu, double window_s) {
  CounterSeconds counters;
  const OfuWindow& w = gpu.window;
  if (!AdvancesCounters(w)) return counters;
  counters.observed_s = window_s;
  counters.utilized_s = *w.ofu * window_s;
  counters.tensor_active_s = *w.tensor_active * window_s;
  if (w.busy) {
    counters.busy_s = window_s;
    counters.busy_utilized_s = *w.ofu * window_s;
  }
  counters.hmma_active_s = PipeSeconds(gpu.pipes.hmma, window_s);
  counters.imma_active_s = PipeSeconds(gpu.pipes.imma, window_s);
  counters.dfma_active_s = PipeSeconds(gpu.pipes.dfma, window_s);
  counters.fp64_active_s = PipeSeconds(w.non_tensor.fp64_active, window_s);
  counters.fp32_active_s = PipeSeconds(w.non_tensor.fp32_active, window_s);
  counters.fp16_active_s = PipeSeconds(w.non_tensor.fp16_active, window_s);
  counters.non_tensor_tflop = PipeSeconds(w.non_tensor.flops_upper_bound_tflops, window_s);
  counters.non_tensor_peak_s = PipeSeconds(w.non_tensor.share_of_peak, window_s);
  return counters;
}

void AddCounters(CounterSeconds& total, const CounterSeconds& part) {
  total.observed_s += part.observed_s;
  total.utilized_s += part.utilized_s;
  total.busy_s += part.busy_s;
  total.busy_utilized_s += part.busy_utilized_s;
  total.tensor_active_s += part.tensor_active_s;
  AddOptional(total.hmma_active_s, part.hmma_active_s);
  AddOptional(total.imma_active_s, part.imma_active_s);
  AddOptional(total.dfma_active_s, part.dfma_active_s);
  AddOptional(total.fp64_active_s, part.fp64_active_s);
  AddOptional(total.fp32_active_s, part.fp32_active_s);
  AddOptional(total.fp16_active_s, part.fp16_active_s);
  AddOptional(total.non_tensor_tflop, part.non_tensor_tflop);
  AddOptional(total.non_tensor_peak_s, part.non_tensor_peak_s);
}

}  // namespace ofu::sinks
