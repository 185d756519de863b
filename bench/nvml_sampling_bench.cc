// CPU cost of NVML GPM sampling, per GPU-second of measurement, at 10 Hz:
// 0.1 s windows with 10 SM-clock readings each, plus per window one GPM
// sample, one nvmlGpmMetricsGet (14 metrics), power, energy, clock event
// reasons and the process list per GPU.
//
// It runs against the test double libnvidia-ml.so.1 (tests/doubles) with a
// FakeClock, so the sleeps cost nothing and only CPU work is timed: the
// source's own work plus the double's (a JSON lookup per call, likely more
// than a real driver's user-space part; the real driver adds its ioctls).
#include <dlfcn.h>

#include <string>

#include <benchmark/benchmark.h>

#include "ofu/sources/nvml/nvml_source.h"

namespace {

std::string Scenario(int gpus) {
  std::string devices;
  for (int i = 0; i < gpus; ++i) {
    devices += (i == 0 ? "" : ",") + std::string(R"({"uuid": "GPU-)") + std::to_string(i) +
               R"(", "sm_count": 132, "max_sm_clock_mhz": 1980, "clocks": [1830, 1755, 1980],
                  "power_mw": [650000], "energy_mj": [1000000], "clock_event_reasons": [4],
                  "processes": [{"pid": 4242, "used_memory": 1048576}],
                  "gpm": [{"1": 100, "2": 95, "3": 40, "5": 50, "6": 0, "7": 45, "8": 0, "9": 5,
                           "10": 30, "11": 1, "12": 10, "13": 2}]})";
  }
  return R"({"devices": [)" + devices + "]}";
}

// Range: number of fake GPUs. One iteration is one 0.1 s window.
void BM_NvmlWindow10Hz(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  void* fake = dlopen(OFU_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
  auto load = fake != nullptr ? reinterpret_cast<int (*)(const char*)>(dlsym(fake, "ofu_fake_nvml_load_scenario"))
                              : nullptr;
  if (load == nullptr || load(Scenario(gpus).c_str()) != 0) {
    state.SkipWithError("cannot load the NVML double");
    return;
  }
  ofu::sources::FakeClock clock(1789999980.0);
  ofu::sources::SourceOptions options;
  options.nvml_library = OFU_FAKE_NVML_PATH;
  options.window_s = 0.1;
  options.clock_readings = 10;
  auto source = ofu::sources::OpenNvmlSource(options, clock);
  if (!source.ok()) {
    state.SkipWithError(source.error().message.c_str());
    return;
  }
  for (auto _ : state) {
    auto snapshot = (*source)->Next();
    benchmark::DoNotOptimize(snapshot);
  }
  const double gpu_seconds = static_cast<double>(state.iterations()) * options.window_s * gpus;
  // Inverted rate: CPU seconds per GPU-second ("u" = µs).
  state.counters["cpu_per_gpu_s"] = benchmark::Counter(gpu_seconds,
                                                       benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  source = ofu::Error{ofu::ErrorCode::kUnavailable, "closed"};  // close NVML before the double goes
  dlclose(fake);
}
BENCHMARK(BM_NvmlWindow10Hz)->Arg(1)->Arg(8)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
