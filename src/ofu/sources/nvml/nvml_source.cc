#include "ofu/sources/nvml/nvml_source.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ofu/core/windows.h"
#include "ofu/sources/backoff.h"
#include "ofu/sources/nvml/nvml_devices.h"
#include "ofu/sources/nvml/nvml_gpm.h"
#include "ofu/sources/nvml/nvml_library.h"
#include "ofu/sources/nvml/nvml_window.h"

namespace ofu::sources {
namespace {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

// The source: NVML's lifetime (init, enumeration, shutdown, re-init with
// back-off) and the window grid; the devices are in nvml_devices.h and what
// a window reads in nvml_window.h and nvml_gpm.h.
class NvmlSource final : public Source, private NvmlFaults {
 public:
  NvmlSource(const SourceOptions& options, Clock& clock, std::unique_ptr<NvmlLibrary> library)
      : options_(options),
        wanted_(ResolveNvmlWanted(options)),
        clock_(clock),
        nvml_(std::move(library)),
        hostname_(HostName()),
        gpm_(*nvml_, wanted_, *this, notes_),
        window_(*nvml_, options_, wanted_, clock_, *this, gpm_) {}

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
    if (initialized_) measured = window_.Measure(devices_, end, snapshot);
    if (!measured) {
      clock_.SleepS(end - clock_.NowS());
      // This window has no data whatever the retry below gives.
      for (const NvmlDevice& device : devices_) {
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

  Status Enumerate() { return EnumerateNvmlDevices(*nvml_, hostname_, devices_); }

  void Shutdown() {
    if (!initialized_) return;
    FreeNvmlSamples(*nvml_, devices_);
    fn().Shutdown();
    initialized_ = false;
  }

  // The driver went away: every GPU unavailable until nvmlInit works again.
  void LibraryGone(nvmlReturn_t code) override {
    const std::string reason = nvml_->ErrorString(code);
    Shutdown();
    backoff_.Failed(clock_.NowS());
    SetAllUnavailable(reason);
    notes_.push_back(fmt::format("NVML stopped working ({}); retrying with back-off", reason));
  }

  void SetAllUnavailable(const std::string& reason) {
    for (NvmlDevice& device : devices_) {
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

  void MarkLost(nvmlDevice_t handle) override {
    for (NvmlDevice& device : devices_) {
      if (device.handle != handle) continue;
      device.health = GpuHealth::kLost;
      device.problem = kNvmlLostAdvice;
      device.latest = -1;
    }
  }

  // Takes the sample the first window's metrics start from. Returns false
  // when the library went away.
  bool TakeStartingSamples(double now) {
    for (NvmlDevice& device : devices_) {
      if (!NvmlSampleable(device)) continue;
      if (!gpm_.Sample(device, now)) return false;
    }
    return true;
  }

  SourceOptions options_;
  NvmlWanted wanted_;
  Clock& clock_;
  std::unique_ptr<NvmlLibrary> nvml_;
  std::string hostname_;
  std::string driver_version_;
  bool initialized_ = false;
  Backoff backoff_{1, 60};
  std::vector<NvmlDevice> devices_;
  std::optional<double> window_end_;
  std::vector<std::string> notes_;
  NvmlGpm gpm_;
  NvmlWindow window_;
};

}  // namespace

Result<std::unique_ptr<Source>> OpenNvmlSource(const SourceOptions& options, Clock& clock) {
  OFU_ASSIGN_OR_RETURN(auto library, NvmlLibrary::Load(options.nvml_library, options.call_accounting));
  auto source = std::make_unique<NvmlSource>(options, clock, std::move(library));
  OFU_RETURN_IF_ERROR(source->Start());  // on an error, the destructor shuts NVML down
  return std::unique_ptr<Source>(std::move(source));
}

}  // namespace ofu::sources
