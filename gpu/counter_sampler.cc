#include "counter_sampler.h"

#include <fmt/format.h>

#include "ofu/sources/nvml/nvml_source.h"

namespace ofu::gpu {

Result<std::unique_ptr<CounterSampler>> CounterSampler::Open(const SamplerOptions& options, const std::string& gpu_uuid,
                                                             sources::Clock& clock) {
  std::unique_ptr<CounterSampler> sampler(new CounterSampler());
  sampler->options_ = options;
  sampler->uuid_ = gpu_uuid;
  sampler->clock_ = &clock;

  sources::SourceOptions source_options;
  source_options.window_s = options.window_s;
  source_options.clock_readings = options.source_clock_readings;
  source_options.nvml_library = options.nvml_library;
  OFU_ASSIGN_OR_RETURN(auto source, sources::OpenNvmlSource(source_options, clock));
  sampler->source_ = std::move(source);

  // The clock reader's own handle on NVML (nvmlInit counts references).
  OFU_ASSIGN_OR_RETURN(auto nvml, sources::NvmlLibrary::Load(options.nvml_library));
  sampler->nvml_ = std::move(nvml);
  const sources::NvmlFunctions& fn = sampler->nvml_->fn();
  if (nvmlReturn_t got = fn.Init(); got != NVML_SUCCESS) {
    return Error::Unavailable("nvmlInit: {}", sampler->nvml_->ErrorString(got));
  }
  sampler->nvml_initialized_ = true;
  unsigned count = 0;
  fn.DeviceGetCount(&count);
  for (unsigned i = 0; i < count && sampler->device_ == nullptr; ++i) {
    nvmlDevice_t handle = nullptr;
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (fn.DeviceGetHandleByIndex(i, &handle) == NVML_SUCCESS &&
        fn.DeviceGetUUID(handle, uuid, sizeof(uuid)) == NVML_SUCCESS && gpu_uuid == uuid) {
      sampler->device_ = handle;
    }
  }
  if (sampler->device_ == nullptr) {
    return Error::Unavailable("NVML lists no GPU with the CUDA device's UUID {}", gpu_uuid);
  }
  return sampler;
}

CounterSampler::~CounterSampler() {
  stop_ = true;
  if (source_thread_.joinable()) source_thread_.join();
  if (clock_thread_.joinable()) clock_thread_.join();
  if (nvml_initialized_) nvml_->fn().Shutdown();
}

void CounterSampler::Start() {
  stop_ = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    snapshots_.clear();
    clock_readings_.clear();
    problems_.clear();
  }
  source_thread_ = std::thread([this] { RunSource(); });
  clock_thread_ = std::thread([this] { RunClock(); });
}

void CounterSampler::RunSource() {
  while (!stop_) {
    auto next = source_->Next();
    std::lock_guard<std::mutex> lock(mutex_);
    if (!next.ok()) {
      problems_ = "the NVML source stopped: " + next.error().message;
      return;
    }
    if (!next->has_value()) return;
    snapshots_.push_back(std::move(**next));
  }
}

void CounterSampler::RunClock() {
  const sources::NvmlFunctions& fn = nvml_->fn();
  while (!stop_) {
    unsigned mhz = 0;
    if (fn.DeviceGetClockInfo(device_, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS) {
      const double now = clock_->NowS();
      std::lock_guard<std::mutex> lock(mutex_);
      clock_readings_.push_back(ClockReading{now, static_cast<double>(mhz)});
    }
    clock_->SleepS(options_.clock_period_s);
  }
}

std::vector<gemm::CounterWindow> CounterSampler::Stop(double begin_s, double end_s, std::string& note) {
  stop_ = true;
  if (source_thread_.joinable()) source_thread_.join();
  if (clock_thread_.joinable()) clock_thread_.join();
  std::vector<gemm::CounterWindow> windows;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const sources::Snapshot& snapshot : snapshots_) {
    const double start = snapshot.time_s - snapshot.window_s;
    if (start < begin_s || snapshot.time_s > end_s) continue;
    for (const sources::GpuReading& reading : snapshot.gpus) {
      if (reading.identity.uuid != uuid_ || !reading.identity.mig_instance.empty()) continue;
      if (reading.health != sources::GpuHealth::kOk && problems_.find(reading.problem) == std::string::npos) {
        problems_ += (problems_.empty() ? "" : "; ") + reading.problem;
      }
      gemm::CounterWindow window;
      window.tensor_active = reading.sample.tensor_active;
      window.source_clock_mhz = reading.sample.sm_clock_mhz;
      window.exact_cycles = reading.clock_basis == sources::ClockBasis::kExactCycles;
      window.start_s = start;
      window.end_s = snapshot.time_s;
      double sum = 0;
      int n = 0;
      for (const ClockReading& r : clock_readings_) {
        if (r.time_s <= start || r.time_s > snapshot.time_s) continue;
        sum += r.mhz;
        n += 1;
        window.point_clock_mhz = r.mhz;  // the last one before the window ends
      }
      if (n > 0) window.oversampled_clock_mhz = sum / n;
      windows.push_back(window);
    }
  }
  if (!problems_.empty()) note += (note.empty() ? "" : "; ") + problems_;
  return windows;
}

}  // namespace ofu::gpu
