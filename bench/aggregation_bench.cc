// Aggregation speed: samples -> windows -> summary, per GPU.
//
// Input is synthetic: one GPU sampled every second (tensor activity and SM
// clock drawn from a fixed-seed generator), as `ofu record` would write it.
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "ofu/core/aggregate.h"
#include "ofu/core/windows.h"

namespace {

std::vector<ofu::CounterSample> SyntheticGpu(int seconds) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> tensor(0.0, 0.9);
  std::uniform_int_distribution<int> clock(1400, 1980);
  std::vector<ofu::CounterSample> samples(static_cast<std::size_t>(seconds));
  for (int t = 0; t < seconds; ++t) {
    auto& s = samples[static_cast<std::size_t>(t)];
    s.time_s = 1789999980.0 + t;
    s.tensor_active = tensor(rng);
    s.gr_engine_active = 1.0;
    s.sm_clock_mhz = clock(rng);
  }
  return samples;
}

// Range: window length in seconds. One GPU-day of 1 Hz samples.
void BM_WindowAndSummarizeGpuDay(benchmark::State& state) {
  const auto samples = SyntheticGpu(86400);
  ofu::WindowOptions options;
  options.window_s = static_cast<double>(state.range(0));
  const ofu::OfuScale h100{1829.95, 1.0};
  std::size_t windows = 0;
  for (auto _ : state) {
    const ofu::WindowedGpu w = ofu::BuildWindows(samples, h100, options);
    ofu::Summarizer summarizer;
    for (const auto& window : w.windows) summarizer.Add(window);
    benchmark::DoNotOptimize(summarizer.Finish());
    windows += w.windows.size();
  }
  state.counters["windows/s"] = benchmark::Counter(static_cast<double>(windows), benchmark::Counter::kIsRate);
  state.counters["samples/s"] = benchmark::Counter(static_cast<double>(samples.size() * state.iterations()),
                                                   benchmark::Counter::kIsRate);
}
BENCHMARK(BM_WindowAndSummarizeGpuDay)->Arg(1)->Arg(10)->Arg(60)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
