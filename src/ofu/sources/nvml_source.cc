#include "ofu/sources/nvml_source.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ofu/core/windows.h"
#include "ofu/sources/backoff.h"
#include "ofu/sources/exact_cycles.h"
#include "ofu/sources/nvml_library.h"

namespace ofu::sources {
namespace {

// What a failed call means for the GPU it was about, or for all of them.
enum class Outcome {
  kOk,
  kAbsent,        // this value is not available (NOT_SUPPORTED, NO_DATA, ...)
  kLost,          // the GPU fell off the bus or needs a reset
  kNoPermission,  // profiling restricted to administrators
  kLibraryGone,   // driver unloaded or replaced: every GPU is unavailable
};

Outcome Classify(nvmlReturn_t code) {
  switch (code) {
    case NVML_SUCCESS: return Outcome::kOk;
    case NVML_ERROR_GPU_IS_LOST:
    case NVML_ERROR_RESET_REQUIRED: return Outcome::kLost;
    case NVML_ERROR_NO_PERMISSION: return Outcome::kNoPermission;
    case NVML_ERROR_DRIVER_NOT_LOADED:
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
    case NVML_ERROR_UNINITIALIZED: return Outcome::kLibraryGone;
    default: return Outcome::kAbsent;
  }
}

std::string ArchitectureName(unsigned arch) {
  switch (arch) {
    case NVML_DEVICE_ARCH_KEPLER: return "Kepler";
    case NVML_DEVICE_ARCH_MAXWELL: return "Maxwell";
    case NVML_DEVICE_ARCH_PASCAL: return "Pascal";
    case NVML_DEVICE_ARCH_VOLTA: return "Volta";
    case NVML_DEVICE_ARCH_TURING: return "Turing";
    case NVML_DEVICE_ARCH_AMPERE: return "Ampere";
    case NVML_DEVICE_ARCH_ADA: return "Ada";
    case NVML_DEVICE_ARCH_HOPPER: return "Hopper";
    case NVML_DEVICE_ARCH_BLACKWELL: return "Blackwell";
    default: return fmt::format("architecture {}", arch);
  }
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

// The driver calls the consumer's counters need (SourceOptions::fields),
// decided once. On the H100 one nvmlGpmMetricsGet of 14 metrics took 1,420 us
// (p50, docs/results/2026-11-26-h100-sxm5/stage-A/probe-cost.json), the
// largest cost per window by far, so nothing is asked that nobody reads.
// Whether fewer metrics make that call cheaper was not measured there.
struct Wanted {
  std::vector<unsigned> gpm_metrics;  // GPM metric ids, in CounterField order
  bool cycles = false;                // the exact-cycle pair (248, 250): tensor_active and sm_clock_mhz
  bool power = false;
  bool energy = false;
  bool clock_event_reasons = false;
};

Wanted Resolve(const SourceOptions& options) {
  Wanted wanted;
  for (const CounterFieldInfo& info : AllCounterFields()) {
    if (!options.Wants(info.field)) continue;
    if (info.gpm_metric_id != 0) wanted.gpm_metrics.push_back(static_cast<unsigned>(info.gpm_metric_id));
    if (info.field == CounterField::kTensorActive || info.field == CounterField::kSmClockMhz) wanted.cycles = true;
    if (info.field == CounterField::kPowerW) wanted.power = true;
    if (info.field == CounterField::kEnergyMj) wanted.energy = true;
    if (info.field == CounterField::kClockEventReasons) wanted.clock_event_reasons = true;
  }
  return wanted;
}

constexpr const char* kLostAdvice =
    "the GPU fell off the bus or needs a reset: look for Xid 79 (or 48, 74) in `dmesg`, drain the node's jobs "
    "from it and reset it (nvidia-smi -r) or reboot";
constexpr const char* kNoPermissionAdvice =
    "GPM profiling is restricted to administrators: run ofu as root, or load the nvidia module with "
    "NVreg_RestrictProfilingToAdminUsers=0";
constexpr const char* kNotSupportedAdvice =
    "this GPU has no NVML GPM (it needs Hopper or later): tensor activity is absent here; use --source dcgm "
    "for its profiling fields";

struct Device {
  nvmlDevice_t handle = nullptr;  // the physical GPU, also for a MIG instance
  std::optional<unsigned> gpu_instance;
  GpuIdentity identity;
  std::optional<int> sm_count;
  std::optional<double> max_sm_clock_mhz;
  GpuHealth health = GpuHealth::kOk;
  std::string problem;
  bool gpm = false;  // GPM may be sampled (supported, or permission unknown)

  std::array<nvmlGpmSample_t, 2> samples{};
  int latest = -1;  // index in samples of the newest sample; -1 when none
  double latest_time_s = 0;
  bool cycles_probed = false;
  bool has_cycles = false;
  bool cycles_note_given = false;

  // This window's clock readings.
  double clock_sum = 0;
  int clock_count = 0;
  double clock_min = 0;
  double clock_max = 0;

  // The last process list read, repeated until the next reading is due.
  std::vector<GpuProcess> processes;
  std::optional<double> processes_read_s;
};

class NvmlSource final : public Source {
 public:
  NvmlSource(const SourceOptions& options, Clock& clock, std::unique_ptr<NvmlLibrary> library)
      : options_(options), wanted_(Resolve(options)), clock_(clock), nvml_(std::move(library)), hostname_(HostName()) {}

  ~NvmlSource() override { Shutdown(); }

  // nvmlInit and the first enumeration.
  Status Start() {
    const nvmlReturn_t init = fn().Init();
    if (init != NVML_SUCCESS) {
      return Error::Unavailable(
          "nvmlInit failed in {}: {}; check that the NVIDIA driver is loaded (nvidia-smi) "
          "and matches the library",
          nvml_->path(), nvml_->ErrorString(init));
    }
    initialized_ = true;
    if (fn().SystemGetDriverVersion != nullptr) {
      char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
      if (fn().SystemGetDriverVersion(version, sizeof(version)) == NVML_SUCCESS) driver_version_ = version;
    }
    return Enumerate();
  }

  std::string_view kind() const override { return "nvml"; }

  std::string Describe() const override {
    const std::string_view double_note = nvml_->is_test_double() ? ", TEST DOUBLE: synthetic data" : "";
    return driver_version_.empty() ? fmt::format("nvml ({}{})", nvml_->path(), double_note)
                                   : fmt::format("nvml ({}, driver {}{})", nvml_->path(), driver_version_, double_note);
  }

  bool live() const override { return true; }

  Result<std::optional<Snapshot>> Next() override {
    const double window = std::max(options_.window_s, kMinWindowS);
    const double start = clock_.NowS();
    if (!window_end_) {
      window_end_ = start;
      if (initialized_) TakeStartingSamples(start);
    }
    // The next boundary after now; whole windows missed by a late caller
    // are skipped rather than squeezed.
    const double missed = std::floor((start - *window_end_) / window);
    double end = *window_end_ + (missed + 1) * window;
    if (end <= start) end += window;

    Snapshot snapshot;
    snapshot.window_s = end - *window_end_;
    bool measured = false;
    if (initialized_) measured = MeasureWindow(end, snapshot);
    if (!measured) {
      clock_.SleepS(end - clock_.NowS());
      // This window has no data whatever the retry below gives.
      for (const Device& device : devices_) {
        GpuReading reading;
        reading.identity = device.identity;
        reading.health = device.health;
        reading.problem = device.problem;
        reading.sm_count = device.sm_count;
        reading.sample.time_s = clock_.NowS();
        snapshot.gpus.push_back(std::move(reading));
      }
      if (!initialized_ && backoff_.ReadyToRetry(clock_.NowS())) Reinitialize();
    }
    window_end_ = end;
    snapshot.time_s = clock_.NowS();
    for (auto& reading : snapshot.gpus) reading.sample.time_s = snapshot.time_s;
    snapshot.notes = std::move(notes_);
    notes_.clear();
    snapshot.synthetic = nvml_->is_test_double();
    return std::optional<Snapshot>(std::move(snapshot));
  }

 private:
  const NvmlFunctions& fn() const { return nvml_->fn(); }

  // Builds devices_ from the driver; lost GPUs keep the identity they had.
  Status Enumerate() {
    std::vector<Device> previous = std::move(devices_);
    devices_.clear();
    unsigned count = 0;
    const nvmlReturn_t counted = fn().DeviceGetCount(&count);
    if (counted != NVML_SUCCESS) {
      return Error::Unavailable("NVML cannot count the GPUs: {}", nvml_->ErrorString(counted));
    }
    if (count == 0) {
      return Error::Unavailable("NVML ({}) sees no GPU on this machine; check nvidia-smi", nvml_->path());
    }
    for (unsigned index = 0; index < count; ++index) AddDevice(index, previous);
    const bool any_gpm = std::any_of(devices_.begin(), devices_.end(), [](const Device& d) { return d.gpm; });
    if (!any_gpm) {
      return Error::Unavailable(
          "none of the {} GPUs supports NVML GPM (GPM needs Hopper or later); use --source "
          "dcgm",
          count);
    }
    return OkStatus();
  }

  void AddDevice(unsigned index, const std::vector<Device>& previous) {
    Device gpu;
    gpu.identity.hostname = hostname_;
    gpu.identity.gpu_index = std::to_string(index);
    gpu.identity.key = "gpu" + gpu.identity.gpu_index;  // until the UUID is known
    const nvmlReturn_t got = fn().DeviceGetHandleByIndex(index, &gpu.handle);
    if (got != NVML_SUCCESS) {
      for (const Device& old : previous) {
        if (old.identity.gpu_index == gpu.identity.gpu_index && !old.gpu_instance) gpu.identity = old.identity;
      }
      gpu.health = Classify(got) == Outcome::kLost ? GpuHealth::kLost : GpuHealth::kUnavailable;
      gpu.problem = Classify(got) == Outcome::kLost
                        ? std::string(kLostAdvice)
                        : fmt::format("NVML cannot open this GPU: {}", nvml_->ErrorString(got));
      devices_.push_back(std::move(gpu));
      return;
    }
    char text[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (fn().DeviceGetUUID(gpu.handle, text, sizeof(text)) == NVML_SUCCESS) {
      gpu.identity.uuid = text;
      gpu.identity.key = gpu.identity.uuid;
    }
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    if (fn().DeviceGetName(gpu.handle, name, sizeof(name)) == NVML_SUCCESS) gpu.identity.model = name;
    if (fn().DeviceGetPciInfo != nullptr) {
      nvmlPciInfo_t pci{};
      if (fn().DeviceGetPciInfo(gpu.handle, &pci) == NVML_SUCCESS) gpu.identity.pci_bus_id = pci.busId;
    }
    if (fn().DeviceGetAttributes != nullptr) {
      nvmlDeviceAttributes_t attributes{};
      if (fn().DeviceGetAttributes(gpu.handle, &attributes) == NVML_SUCCESS && attributes.multiprocessorCount > 0) {
        gpu.sm_count = static_cast<int>(attributes.multiprocessorCount);
      }
    }
    if (fn().DeviceGetMaxClockInfo != nullptr) {
      unsigned mhz = 0;
      if (fn().DeviceGetMaxClockInfo(gpu.handle, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS && mhz > 0) {
        gpu.max_sm_clock_mhz = mhz;
      }
    }
    std::string architecture;
    if (fn().DeviceGetArchitecture != nullptr) {
      unsigned arch = 0;
      if (fn().DeviceGetArchitecture(gpu.handle, &arch) == NVML_SUCCESS) architecture = ArchitectureName(arch);
    }

    nvmlGpmSupport_t support{};
    support.version = NVML_GPM_SUPPORT_VERSION;
    const nvmlReturn_t queried = fn().GpmQueryDeviceSupport(gpu.handle, &support);
    switch (Classify(queried)) {
      case Outcome::kOk: gpu.gpm = support.isSupportedDevice != 0; break;
      case Outcome::kNoPermission:
        gpu.gpm = true;  // supported or not, sampling will say; the fix is the same
        gpu.health = GpuHealth::kNoPermission;
        gpu.problem = kNoPermissionAdvice;
        break;
      case Outcome::kLost:
        gpu.health = GpuHealth::kLost;
        gpu.problem = kLostAdvice;
        break;
      default: gpu.gpm = false; break;
    }
    if (!gpu.gpm && gpu.health == GpuHealth::kOk) {
      gpu.health = GpuHealth::kNotSupported;
      gpu.problem = architecture.empty() ? std::string(kNotSupportedAdvice)
                                         : fmt::format("{} ({})", kNotSupportedAdvice, architecture);
    }

    if (gpu.gpm && IsMig(gpu.handle)) {
      AddMigInstances(gpu);
      return;
    }
    if (gpu.gpm) AllocateSamples(gpu);
    devices_.push_back(std::move(gpu));
  }

  bool IsMig(nvmlDevice_t handle) const {
    if (fn().DeviceGetMigMode == nullptr) return false;
    unsigned current = 0;
    unsigned pending = 0;
    return fn().DeviceGetMigMode(handle, &current, &pending) == NVML_SUCCESS && current == NVML_DEVICE_MIG_ENABLE;
  }

  // One Device per GPU instance of a MIG-mode GPU.
  void AddMigInstances(const Device& gpu) {
    unsigned max_count = 0;
    const bool can_enumerate = fn().DeviceGetMaxMigDeviceCount != nullptr &&
                               fn().DeviceGetMigDeviceHandleByIndex != nullptr &&
                               fn().DeviceGetGpuInstanceId != nullptr && fn().GpmMigSampleGet != nullptr &&
                               fn().DeviceGetMaxMigDeviceCount(gpu.handle, &max_count) == NVML_SUCCESS;
    if (!can_enumerate) {
      Device whole = gpu;
      whole.gpm = false;
      whole.health = GpuHealth::kNotSupported;
      whole.problem = "MIG is on, and this driver cannot enumerate its GPU instances for GPM";
      devices_.push_back(std::move(whole));
      return;
    }
    std::vector<unsigned> seen;
    for (unsigned i = 0; i < max_count; ++i) {
      nvmlDevice_t mig = nullptr;
      if (fn().DeviceGetMigDeviceHandleByIndex(gpu.handle, i, &mig) != NVML_SUCCESS) continue;
      unsigned gi = 0;
      if (fn().DeviceGetGpuInstanceId(mig, &gi) != NVML_SUCCESS) continue;
      // Several compute instances may share a GPU instance; GPM samples GIs.
      if (std::find(seen.begin(), seen.end(), gi) != seen.end()) continue;
      seen.push_back(gi);
      Device instance = gpu;
      instance.gpu_instance = gi;
      instance.identity.key = fmt::format("{}/gi{}", gpu.identity.uuid, gi);
      instance.identity.mig_instance = std::to_string(gi);
      char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
      if (fn().DeviceGetName(mig, name, sizeof(name)) == NVML_SUCCESS) {
        // "NVIDIA H100 80GB HBM3 MIG 3g.40gb": the profile follows "MIG ".
        const std::string full = name;
        const auto at = full.rfind("MIG ");
        if (at != std::string::npos) instance.identity.mig_profile = full.substr(at + 4);
      }
      instance.sm_count.reset();
      if (fn().DeviceGetAttributes != nullptr) {
        nvmlDeviceAttributes_t attributes{};
        if (fn().DeviceGetAttributes(mig, &attributes) == NVML_SUCCESS && attributes.multiprocessorCount > 0) {
          instance.sm_count = static_cast<int>(attributes.multiprocessorCount);
        }
      }
      AllocateSamples(instance);
      devices_.push_back(std::move(instance));
    }
    if (seen.empty()) {
      Device whole = gpu;
      whole.gpm = false;
      whole.health = GpuHealth::kNotSupported;
      whole.problem = "MIG is on but no GPU instance exists: create one (nvidia-smi mig -cgi) to measure it";
      devices_.push_back(std::move(whole));
    }
  }

  void AllocateSamples(Device& device) {
    for (auto& sample : device.samples) {
      if (fn().GpmSampleAlloc(&sample) != NVML_SUCCESS) sample = nullptr;
    }
    if (device.samples[0] == nullptr || device.samples[1] == nullptr) {
      device.gpm = false;
      device.health = GpuHealth::kNotSupported;
      device.problem = "NVML could not allocate GPM sample buffers for this GPU";
    }
  }

  void FreeSamples() {
    for (Device& device : devices_) {
      for (auto& sample : device.samples) {
        if (sample != nullptr) fn().GpmSampleFree(sample);
        sample = nullptr;
      }
      device.latest = -1;
    }
  }

  void Shutdown() {
    if (!initialized_) return;
    FreeSamples();
    fn().Shutdown();
    initialized_ = false;
  }

  // The driver went away: every GPU unavailable until nvmlInit works again.
  void LibraryGone(nvmlReturn_t code) {
    const std::string reason = nvml_->ErrorString(code);
    Shutdown();
    backoff_.Failed(clock_.NowS());
    SetAllUnavailable(reason);
    notes_.push_back(fmt::format("NVML stopped working ({}); retrying with back-off", reason));
  }

  void SetAllUnavailable(const std::string& reason) {
    for (Device& device : devices_) {
      device.health = GpuHealth::kUnavailable;
      device.problem = fmt::format(
          "NVML is unavailable ({}); ofu retries by itself. If the driver was upgraded, reload the nvidia kernel "
          "module or reboot",
          reason);
    }
  }

  void Reinitialize() {
    const double now = clock_.NowS();
    const nvmlReturn_t init = fn().Init();
    if (init != NVML_SUCCESS) {
      backoff_.Failed(now);
      SetAllUnavailable(nvml_->ErrorString(init));
      return;
    }
    initialized_ = true;
    const int failures = backoff_.consecutive_failures();
    Status enumerated = Enumerate();
    if (!enumerated.ok()) {
      Shutdown();
      backoff_.Failed(now);
      SetAllUnavailable(enumerated.error().message);
      return;
    }
    backoff_.Succeeded();
    notes_.push_back(fmt::format("NVML is back after {} failed attempt{}; found {} GPU reading{} again", failures,
                                 failures == 1 ? "" : "s", devices_.size(), devices_.size() == 1 ? "" : "s"));
    TakeStartingSamples(now);
  }

  void MarkLost(nvmlDevice_t handle) {
    for (Device& device : devices_) {
      if (device.handle != handle) continue;
      device.health = GpuHealth::kLost;
      device.problem = kLostAdvice;
      device.latest = -1;
    }
  }

  bool Sampleable(const Device& device) const {
    return device.gpm && device.health != GpuHealth::kLost && device.health != GpuHealth::kUnavailable;
  }

  // Takes the sample the first window's metrics start from. Returns false
  // when the library went away.
  bool TakeStartingSamples(double now) {
    for (Device& device : devices_) {
      if (!Sampleable(device)) continue;
      if (!SampleGpm(device, now)) return false;
    }
    return true;
  }

  // A GPM sample into the spare buffer; on success it becomes the latest.
  // Returns false only when the library went away.
  bool SampleGpm(Device& device, double now) {
    const int next = device.latest == 0 ? 1 : 0;
    const nvmlReturn_t got = device.gpu_instance
                                 ? fn().GpmMigSampleGet(device.handle, *device.gpu_instance, device.samples[next])
                                 : fn().GpmSampleGet(device.handle, device.samples[next]);
    switch (Classify(got)) {
      case Outcome::kOk:
        if (device.health == GpuHealth::kNoPermission) {
          device.health = GpuHealth::kOk;
          device.problem.clear();
        }
        device.latest = next;
        device.latest_time_s = now;
        return true;
      case Outcome::kLibraryGone: LibraryGone(got); return false;
      case Outcome::kLost: MarkLost(device.handle); return true;
      case Outcome::kNoPermission:
        device.health = GpuHealth::kNoPermission;
        device.problem = kNoPermissionAdvice;
        device.latest = -1;
        return true;
      case Outcome::kAbsent:
        if (got == NVML_ERROR_NOT_SUPPORTED) {
          device.gpm = false;
          device.health = GpuHealth::kNotSupported;
          device.problem = kNotSupportedAdvice;
        }
        device.latest = -1;
        return true;
    }
    return true;
  }

  // Reads the clocks through the window and everything else at its end.
  // Returns false when the library went away (snapshot left for the caller).
  bool MeasureWindow(double end, Snapshot& snapshot) {
    for (Device& device : devices_) {
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
      if (!ReadClocks()) return false;
    }
    const double now = clock_.NowS();
    std::vector<GpuReading> readings_out;
    readings_out.reserve(devices_.size());
    for (Device& device : devices_) {
      GpuReading reading;
      if (!ReadWindowEnd(device, now, reading)) return false;
      readings_out.push_back(std::move(reading));
    }
    snapshot.gpus = std::move(readings_out);
    return true;
  }

  bool ReadClocks() {
    for (Device& device : devices_) {
      if (device.handle == nullptr || device.health == GpuHealth::kLost) continue;
      unsigned mhz = 0;
      const nvmlReturn_t got = fn().DeviceGetClockInfo(device.handle, NVML_CLOCK_SM, &mhz);
      switch (Classify(got)) {
        case Outcome::kOk: {
          const double value = mhz;
          device.clock_min = device.clock_count == 0 ? value : std::min(device.clock_min, value);
          device.clock_max = device.clock_count == 0 ? value : std::max(device.clock_max, value);
          device.clock_sum += value;
          ++device.clock_count;
          break;
        }
        case Outcome::kLibraryGone: LibraryGone(got); return false;
        case Outcome::kLost: MarkLost(device.handle); break;
        default: break;
      }
    }
    return true;
  }

  // One optional value: stores it when the call succeeds, marks the GPU
  // lost or the library gone when the call says so. False: library gone.
  template <typename T, typename Call>
  bool Optional(Device& device, Call call, std::optional<T>& out) {
    T value{};
    const nvmlReturn_t got = call(&value);
    switch (Classify(got)) {
      case Outcome::kOk: out = value; return true;
      case Outcome::kLibraryGone: LibraryGone(got); return false;
      case Outcome::kLost: MarkLost(device.handle); return true;
      default: return true;
    }
  }

  bool ReadWindowEnd(Device& device, double now, GpuReading& reading) {
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
    if (device.health != GpuHealth::kLost && Sampleable(device)) {
      if (!ReadGpm(device, now, reading)) return false;
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
    if (wanted_.clock_event_reasons && device.health != GpuHealth::kLost &&
        fn().DeviceGetClockEventReasons != nullptr) {
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

  bool ReadGpm(Device& device, double now, GpuReading& reading) {
    const int before = device.latest;
    const double before_time = device.latest_time_s;
    if (!SampleGpm(device, now)) return false;
    if (before < 0 || device.latest < 0 || device.health == GpuHealth::kLost) return true;

    // The request is 24 KiB, nearly all of it metric slots NVML never
    // touches: reuse one and clear only the slots asked for.
    nvmlGpmMetricsGet_t& request = *gpm_request_;
    request.version = NVML_GPM_METRICS_GET_VERSION;
    request.sample1 = device.samples[before];
    request.sample2 = device.samples[device.latest];
    unsigned n = 0;
    const auto ask = [&](unsigned id) {
      request.metrics[n] = nvmlGpmMetric_t{};
      request.metrics[n++].metricId = id;
    };
    for (unsigned id : wanted_.gpm_metrics) ask(id);
    const bool ask_cycles = wanted_.cycles && (!device.cycles_probed || device.has_cycles);
    if (ask_cycles) {
      ask(NVML_GPM_METRIC_SM_CYCLES_ELAPSED);
      ask(NVML_GPM_METRIC_MMA_CYCLES_ACTIVE);
    }
    request.numMetrics = n;
    if (n == 0) return true;  // the sample still opens the next window
    const nvmlReturn_t got = fn().GpmMetricsGet(&request);
    switch (Classify(got)) {
      case Outcome::kOk: break;
      case Outcome::kLibraryGone: LibraryGone(got); return false;
      case Outcome::kLost: MarkLost(device.handle); return true;
      default: return true;  // no GPM values this window; absent
    }

    std::optional<double> elapsed;
    std::optional<double> mma;
    for (unsigned i = 0; i < n; ++i) {
      const nvmlGpmMetric_t& metric = request.metrics[i];
      if (metric.nvmlReturn != NVML_SUCCESS || !std::isfinite(metric.value)) continue;
      if (metric.metricId == NVML_GPM_METRIC_SM_CYCLES_ELAPSED) {
        elapsed = metric.value;
      } else if (metric.metricId == NVML_GPM_METRIC_MMA_CYCLES_ACTIVE) {
        mma = metric.value;
      } else {
        for (const CounterFieldInfo& field : AllCounterFields()) {
          if (field.gpm_metric_id == static_cast<int>(metric.metricId)) {
            SetField(reading.sample, field.field, metric.value / 100.0);  // GPM gives percent
          }
        }
      }
    }
    if (ask_cycles && !device.cycles_probed) {
      device.cycles_probed = true;
      device.has_cycles = elapsed.has_value() && mma.has_value();
    }
    if (device.has_cycles && elapsed && mma) ApplyExactCycles(device, now - before_time, *elapsed, *mma, reading);
    return true;
  }

  void ApplyExactCycles(Device& device, double dt_s, double elapsed, double mma, GpuReading& reading) {
    // Per-interval counts (see the header's assumption): the "before"
    // reading of a cumulative counter is zero.
    auto exact = DeriveExactCycles(CycleCounters{}, CycleCounters{elapsed, mma}, dt_s, device.sm_count.value_or(0),
                                   reading.sample.sm_clock_mhz);
    if (!exact.ok()) {
      if (!device.cycles_note_given) {
        notes_.push_back(
            fmt::format("{}: GPM cycle counters not used, keeping the sampled clock and tensor "
                        "utilization: {}",
                        device.identity.key, exact.error().message));
        device.cycles_note_given = true;
      }
      return;
    }
    reading.sample.tensor_active = exact->tensor_active;
    reading.sample.sm_clock_mhz = exact->sm_clock_mhz;
    reading.clock_basis = ClockBasis::kExactCycles;
  }

  // Into device.processes. False: the library is gone.
  bool ReadProcesses(Device& device) {
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
    switch (Classify(got)) {
      case Outcome::kOk: break;
      case Outcome::kLibraryGone: LibraryGone(got); return false;
      case Outcome::kLost: MarkLost(device.handle); return true;
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

  SourceOptions options_;
  Wanted wanted_;
  Clock& clock_;
  std::unique_ptr<NvmlLibrary> nvml_;
  std::string hostname_;
  std::string driver_version_;
  bool initialized_ = false;
  Backoff backoff_{1, 60};
  std::vector<Device> devices_;
  std::unique_ptr<nvmlGpmMetricsGet_t> gpm_request_ = std::make_unique<nvmlGpmMetricsGet_t>();
  std::optional<double> window_end_;
  std::vector<std::string> notes_;
};

}  // namespace

Result<std::unique_ptr<Source>> OpenNvmlSource(const SourceOptions& options, Clock& clock) {
  OFU_ASSIGN_OR_RETURN(auto library, NvmlLibrary::Load(options.nvml_library, options.call_accounting));
  auto source = std::make_unique<NvmlSource>(options, clock, std::move(library));
  OFU_RETURN_IF_ERROR(source->Start());  // on an error, the destructor shuts NVML down
  return std::unique_ptr<Source>(std::move(source));
}

}  // namespace ofu::sources
