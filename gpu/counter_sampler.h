// Counters sampled while a GEMM loop runs, in the same process: ofu's own
// NVML source (sources/nvml/nvml_source.h) on one thread, and a clock reader on
// another that reads the SM clock every clock_period_s (the harness's
// oversampled clock and its one-reading-per-window point clock, for the
// clock study).
//
// Start() launches both threads; Stop(begin, end) ends them and returns the
// source's windows that lie wholly inside [begin, end] (wall-clock seconds,
// the span the GPU ran the timed loop), each with the clock readings that
// fall in it, and its start and end on the sampler's clock. Windows
// straddling the loop's edges are dropped, so idle time before or after the
// loop never enters an OFU.
//
// The GPU is picked by UUID (the CUDA device's), so that CUDA's and NVML's
// device orders need not agree.
//
// One sampler per case: a fresh NVML source takes its first GPM sample when
// the case starts, so no window spans the pause between two cases.
//
// Thread-safety: Start once, then Stop, from one thread; the sampler owns
// its threads.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/gemm/evaluate.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/nvml/nvml_library.h"
#include "ofu/sources/source.h"

namespace ofu::gpu {

struct SamplerOptions {
  std::string nvml_library;  // empty: libnvidia-ml.so.1
  double window_s = 0.25;    // NVML GPM needs >= 0.1 s between samples
  int source_clock_readings = 10;
  double clock_period_s = 0.01;
};

class CounterSampler {
 public:
  // Errors: kUnavailable when NVML cannot be loaded or initialised, has no
  // GPU with this UUID, or the GPU has no GPM (the message says why).
  static Result<std::unique_ptr<CounterSampler>> Open(const SamplerOptions& options, const std::string& gpu_uuid,
                                                      sources::Clock& clock);
  ~CounterSampler();
  CounterSampler(const CounterSampler&) = delete;
  CounterSampler& operator=(const CounterSampler&) = delete;

  std::string Describe() const { return source_->Describe(); }
  const sources::NvmlLibrary& nvml() const { return *nvml_; }
  nvmlDevice_t device() const { return device_; }

  void Start();
  // `note` gets what went wrong in the windows (GPU health, source errors).
  std::vector<gemm::CounterWindow> Stop(double begin_s, double end_s, std::string& note);

 private:
  struct ClockReading {
    double time_s = 0;
    double mhz = 0;
  };
  CounterSampler() = default;
  void RunSource();
  void RunClock();

  SamplerOptions options_;
  std::string uuid_;
  sources::Clock* clock_ = nullptr;
  std::unique_ptr<sources::Source> source_;
  std::unique_ptr<sources::NvmlLibrary> nvml_;
  bool nvml_initialized_ = false;
  nvmlDevice_t device_ = nullptr;

  std::atomic<bool> stop_{false};
  std::thread source_thread_, clock_thread_;
  std::mutex mutex_;  // guards the three below
  std::vector<sources::Snapshot> snapshots_;
  std::vector<ClockReading> clock_readings_;
  std::string problems_;
};

}  // namespace ofu::gpu
