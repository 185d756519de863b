#include "ofu/sources/nvml/nvml_window.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace ofu::sources {

bool NvmlWindow::Measure(std::vector<NvmlDevice>& devices, double end, Snapshot& snapshot) {
  for (NvmlDevice& device : devices) {
    device.clock_sum = 0;
    device.clock_count = 0;
  }
  const int readings = options_.clock_readings > 0
                           ? options_.clock_readings
                           : std::max(1, static_cast<int>(std::lround(options_.window_s / kClockReadingIntervalS)));
  const double begin = clock_.NowS();
  for (int k = 1; k <= readings; ++k) {
    const double at = k == readings ? end : begin + (end - begin) * k / readings;
    clock_.SleepS(at - clock_.NowS());
    if (!ReadClocks(devices)) return false;
  }
  const double now = clock_.NowS();
  std::vector<GpuReading> readings_out;
  readings_out.reserve(devices.size());
  for (NvmlDevice& device : devices) {
    GpuReading reading;
    if (!ReadWindowEnd(device, now, reading)) return false;
    readings_out.push_back(std::move(reading));
  }
  snapshot.gpus = std::move(readings_out);
  return true;
}

bool NvmlWindow::ReadClocks(std::vector<NvmlDevice>& devices) {
  for (NvmlDevice& device : devices) {
    if (device.handle == nullptr || device.health == GpuHealth::kLost) continue;
    unsigned mhz = 0;
    const nvmlReturn_t got = fn().DeviceGetClockInfo(device.handle, NVML_CLOCK_SM, &mhz);
    switch (ClassifyNvml(got)) {
      case NvmlOutcome::kOk: {
        const double value = mhz;
        device.clock_min = device.clock_count == 0 ? value : std::min(device.clock_min, value);
        device.clock_max = device.clock_count == 0 ? value : std::max(device.clock_max, value);
        device.clock_sum += value;
        ++device.clock_count;
        break;
      }
      case NvmlOutcome::kLibraryGone: faults_.LibraryGone(got); return false;
      case NvmlOutcome::kLost: faults_.MarkLost(device.handle); break;
      default: break;
    }
  }
  return true;
}

// One optional value: stores it when the call succeeds, marks the GPU
// lost or the library gone when the call says so. False: library gone.
template <typename T, typename Call>
bool NvmlWindow::Optional(NvmlDevice& device, Call call, std::optional<T>& out) {
  T value{};
  const nvmlReturn_t got = call(&value);
  switch (ClassifyNvml(got)) {
    case NvmlOutcome::kOk: out = value; return true;
    case NvmlOutcome::kLibraryGone: faults_.LibraryGone(got); return false;
    case NvmlOutcome::kLost: faults_.MarkLost(device.handle); return true;
    default: return true;
  }
}

bool NvmlWindow::ReadWindowEnd(NvmlDevice& device, double now, GpuReading& reading) {
  reading.identity = device.identity;
  reading.sm_count = device.sm_count;
  reading.health = device.health;
  reading.problem = device.problem;
  if (device.handle == nullptr) return true;  // never opened: nothing to read
  CounterSample& sample = reading.sample;
  sample.max_sm_clock_mhz = device.max_sm_clock_mhz;
  if (device.clock_count > 0 && device.health != GpuHealth::kLost) {
    sample.sm_clock_mhz = device.clock_sum / device.clock_count;
    reading.sm_clock_min_mhz = device.clock_min;
    reading.sm_clock_max_mhz = device.clock_max;
    reading.clock_readings = device.clock_count;
    reading.clock_basis = device.clock_count > 1 ? ClockBasis::kOversampled : ClockBasis::kPointReading;
  }
  const nvmlDevice_t h = device.handle;
  if (device.health != GpuHealth::kLost && NvmlSampleable(device)) {
    if (!gpm_.Read(device, now, reading)) return false;
  }
  // Board-wide values belong to the whole GPU, not to a MIG instance.
  if (device.health != GpuHealth::kLost && !device.gpu_instance) {
    std::optional<unsigned> milliwatts;
    if (wanted_.power && fn().DeviceGetPowerUsage != nullptr &&
        !Optional<unsigned>(
            device, [&](unsigned* v) { return fn().DeviceGetPowerUsage(h, v); }, milliwatts)) {
      return false;
    }
    if (milliwatts) sample.power_w = *milliwatts / 1000.0;
    std::optional<unsigned long long> millijoules;
    if (wanted_.energy && fn().DeviceGetTotalEnergyConsumption != nullptr &&
        !Optional<unsigned long long>(
            device, [&](unsigned long long* v) { return fn().DeviceGetTotalEnergyConsumption(h, v); }, millijoules)) {
      return false;
    }
    if (millijoules) sample.energy_mj = static_cast<double>(*millijoules);
  }
  if (wanted_.clock_event_reasons && device.health != GpuHealth::kLost && fn().DeviceGetClockEventReasons != nullptr) {
    std::optional<unsigned long long> reasons;
    if (!Optional<unsigned long long>(
            device, [&](unsigned long long* v) { return fn().DeviceGetClockEventReasons(h, v); }, reasons)) {
      return false;
    }
    if (reasons) sample.clock_event_reasons = *reasons;
  }
  if (device.health != GpuHealth::kLost) {
    // A tolerance of a tenth of a window: windows end a little late or early.
    const bool due = !device.processes_read_s ||
                     now - *device.processes_read_s >= options_.process_interval_s - 0.1 * options_.window_s;
    if (due) {
      device.processes.clear();
      if (!ReadProcesses(device)) return false;
      device.processes_read_s = now;
    }
    reading.processes = device.processes;
  }

  if (device.health == GpuHealth::kLost) {
    // A lost GPU reports nothing from this window, not even the early
    // clock readings, so that no value of a failing GPU is trusted.
    reading.sample = CounterSample{};
    reading.clock_basis = ClockBasis::kNone;
    reading.clock_readings = 0;
    reading.sm_clock_min_mhz.reset();
    reading.sm_clock_max_mhz.reset();
    reading.processes.clear();
  }
  reading.health = device.health;
  reading.problem = device.problem;
  return true;
}

// Into device.processes. False: the library is gone.
bool NvmlWindow::ReadProcesses(NvmlDevice& device) {
  if (fn().DeviceGetComputeRunningProcesses == nullptr) return true;
  std::vector<nvmlProcessInfo_t> infos(32);
  nvmlReturn_t got = NVML_SUCCESS;
  unsigned count = 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    count = static_cast<unsigned>(infos.size());
    got = fn().DeviceGetComputeRunningProcesses(device.handle, &count, infos.data());
    if (got != NVML_ERROR_INSUFFICIENT_SIZE) break;
    infos.resize(count + 8);  // processes may start between the two calls
  }
  switch (ClassifyNvml(got)) {
    case NvmlOutcome::kOk: break;
    case NvmlOutcome::kLibraryGone: faults_.LibraryGone(got); return false;
    case NvmlOutcome::kLost: faults_.MarkLost(device.handle); return true;
    default: return true;
  }
  count = std::min<unsigned>(count, static_cast<unsigned>(infos.size()));
  for (unsigned i = 0; i < count; ++i) {
    const nvmlProcessInfo_t& info = infos[i];
    if (device.gpu_instance && info.gpuInstanceId != *device.gpu_instance) continue;
    GpuProcess process;
    process.pid = info.pid;
    if (info.usedGpuMemory != NVML_VALUE_NOT_AVAILABLE_ULL) process.used_memory_bytes = info.usedGpuMemory;
    device.processes.push_back(process);
  }
  return true;
}

}  // namespace ofu::sources
