// A scripted stand-in for libnvidia-ml.so.1, built as a shared library of
// that exact name so the NVML source loads it through its ordinary dlopen
// path. It exports the C functions of src/ofu/sources/nvml/nvml_api.h that the
// source uses, plus two control functions for in-process tests:
//
//   int ofu_fake_nvml_load_scenario(const char* json);  // 0 ok, -1 bad JSON or unknown driver_profile
//   int ofu_fake_nvml_count(const char* what);          // call counters:
//       "init", "shutdown", "gpm_sample", "metrics_get", "clock", "processes", "samples_live";
//       or the name of any NVML function this double exports ("nvmlDeviceGetPowerUsage"):
//       how many times it was called, whatever it returned; "nvml_calls": all of
//       those together (0 for one not called yet); "gpm_metrics_asked": the
//       metrics asked over all nvmlGpmMetricsGet calls (numMetrics summed).
//       -1 for any other name.
//
// A test reaches them by dlopen()ing the same path (the same handle) and
// dlsym. Subprocess tests set OFU_FAKE_NVML_SCENARIO=path instead; the file
// is read at the first nvmlInit when no scenario was loaded.
//
// Nothing depends on wall time: values advance with calls.
//
// What a scenario leaves out behaves like the one real driver measured so
// far: driver 580.159.04 on an NVIDIA H100 80GB HBM3 (SXM5, 132 SMs, max SM
// clock 1980 MHz), docs/results/2026-11-26-h100-sxm5/ (README.md there;
// stage-A/probe-info.json, stage-A/probe-metrics.json). So by default:
//   - the driver version is "580.159.04" and a device's name "NVIDIA H100 80GB HBM3";
//   - GPM metric ids 1-209 answer as the scenario's "gpm" windows say (an id
//     a window does not list: NOT_SUPPORTED, in its own nvmlReturn), and
//     every id >= 210 answers INVALID_ARGUMENT in its own nvmlReturn while the
//     call as a whole succeeds, listed or not. That is what the H100 did for
//     ids 210-400, 248-250 (SM_CYCLES_ELAPSED, SM_ACTIVE_CYCLES,
//     MMA_CYCLES_ACTIVE) among them: probe-metrics.json "refused"
//     {"INVALID_ARGUMENT (2)": [210 .. 400]}, "whole_call_failures": [].
//     So ofu's exact-cycle path (src/ofu/sources/exact_cycles.h) does not
//     run by default: the NVML source keeps the sampled clock, as it did there;
//   - a device without "clocks" reads its SM clock by the load rule below.
// "driver_profile": "newer-gpm-cycles" stands for a later driver, not yet
// measured, that answers ids >= 210 like the others (248-250 included);
// tests of the exact-cycle path opt in with it. Its default driver version
// is "newer-gpm-cycles (synthetic)": no version number is claimed for it.
//
// The load rule for the SM clock (a device without "clocks"): every read
// sees GPM metric 5 (ANY_TENSOR_UTIL, percent) of the device's current
// window (the window its next GPM sample will close; the last repeats).
// Below 50 % it reads the device's "max_sm_clock_mhz" (1980 when not
// given); at 50 % or more, 1368 MHz. Both figures are the H100's, measured
// in stage A (README.md's table, stage-A/stage-a-phases.csv clock_rec):
// idle, the 2 GiB copy and bf16 4097^3 (30.6 % tensor activity) ran at
// 1980 MHz; the bf16 8192^3 loop at 1368 MHz mean (the 8192^3 loops: 91.5-
// 93.8 % tensor activity, 1237-1411 MHz, under the 700 W power limit). 50 %
// lies between 30.6 % and those loops' windows (>= 90 %, stage-A/pass-1s/probe.csv).
// `"clocks": []` makes every SM-clock read NOT_SUPPORTED.
//
// Scenario (JSON; every key optional):
// {
//   "driver_profile": "580.159.04",  // the default, above; or "newer-gpm-cycles"
//   "driver_version": "550.54.15",
//   "init_error": 9,              // every nvmlInit fails with this code
//   "driver_gone": {              // from the Nth SM-clock read on (1-based,
//     "at_clock_read": 12,        //   counted over all GPUs), every device
//     "error": 9,                 //   call returns "error" (default 9,
//     "init_failures": 2          //   DRIVER_NOT_LOADED) until an nvmlInit
//   },                            //   succeeds; the first init_failures
//                                 //   nvmlInit calls after that fail too
//   "devices": [{
//     "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-0", "pci_bus_id": "00000000:18:00.0",
//     "architecture": 9, "sm_count": 132, "max_sm_clock_mhz": 1980,
//     "gpm_supported": true,      // nvmlGpmQueryDeviceSupport's answer
//     "gpm_query_error": 0,       // its return code instead (e.g. 4)
//     "gpm_sample_error": 0,      // nvmlGpmSampleGet always returns this
//     "clocks": [1830, 1200],     // SM clock per read, in call order; the last
//                                 // repeats (absent: the load rule above)
//     "power_mw": [700000],       // per read, last repeats (likewise below)
//     "energy_mj": [5000],
//     "clock_event_reasons": [0],
//     "gpm": [ {"5": 50.0, "7": 49.0} ],
//                                 // per metrics window k (sample k+1 against
//                                 // sample k of this GPU; the last repeats):
//                                 // metric id -> value; an id not listed
//                                 // answers NOT_SUPPORTED in its own nvmlReturn
//                                 // (ids >= 210: see driver_profile above)
//     "processes": [{"pid": 4242, "used_memory": 1048576, "gi": 1}],
//                                 // "pid": "child" lists a child process of
//                                 // the process calling NVML, read from /proc
//                                 // at each call (none while it has none):
//                                 // `ofu run`'s command, whose pid no
//                                 // scenario can know beforehand
//     "lost_after_gpm_samples": 3, // once this GPU has had 3 successful GPM
//                                  // samples, every call for it returns
//                                  // GPU_IS_LOST
//     "mig": [{"gi": 1, "profile": "3g.40gb", "sm_count": 60, "gpm": [...]}]
//   }]
// }
//
// All state lives in one file-static object: this is a test double, loaded
// once per process.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "ofu/platform/process_tree.h"
#include "ofu/sources/nvml/nvml_api.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using nlohmann::json;

struct FakeMig {
  unsigned gi = 0;
  std::string profile;
  unsigned sm_count = 0;
  json gpm = json::array();
  int samples = 0;
};

struct FakeDevice {
  json spec;
  int clock_reads = 0;
  int power_reads = 0;
  int energy_reads = 0;
  int reason_reads = 0;
  int gpm_samples = 0;
  bool lost = false;
  std::vector<std::unique_ptr<FakeMig>> migs;
};

struct FakeSample {
  const void* owner = nullptr;  // FakeDevice or FakeMig
  int seq = 0;                  // 1-based sample number of its owner
};

// The measured driver's defaults (see the top of this file).
constexpr const char* kMeasuredDriverVersion = "580.159.04";
constexpr const char* kMeasuredDeviceName = "NVIDIA H100 80GB HBM3";
constexpr const char* kNewerProfile = "newer-gpm-cycles";
constexpr const char* kNewerDriverVersion = "newer-gpm-cycles (synthetic)";
constexpr unsigned kFirstRefusedGpmMetricId = 210;  // 580.159.04 answered 1-209
constexpr unsigned kGpmAnyTensorUtil = 5;
constexpr double kLoadedTensorPercent = 50;
constexpr unsigned kMeasuredMaxSmClockMhz = 1980;     // probe-info.json; idle in stage-a-phases.csv
constexpr unsigned kMeasuredLoadedSmClockMhz = 1368;  // bf16 8192^3, README.md's stage A table

struct State {
  bool loaded = false;
  bool newer_driver = false;  // "driver_profile": "newer-gpm-cycles"
  json scenario = json::object();
  std::vector<std::unique_ptr<FakeDevice>> devices;
  bool initialized = false;
  int init_calls = 0;
  int shutdown_calls = 0;
  int gpm_sample_calls = 0;
  int metrics_calls = 0;
  int clock_calls = 0;
  int process_calls = 0;
  int samples_live = 0;
  // Every call of an exported NVML function, by name, counted on entry: the
  // deterministic proxy of the driver's cost (tests/sources/nvml_call_count_test.cc).
  std::map<std::string, int> calls;
  int all_calls = 0;
  int gpm_metrics_asked = 0;
  bool driver_gone = false;
  int gone_init_failures_left = 0;
};

State& S() {
  static State state;
  return state;
}

// Called first thing by every exported NVML function with its own __func__.
void Counted(const char* function) {
  ++S().calls[function];
  ++S().all_calls;
}

// False (nothing loaded) for a driver_profile this double does not know.
bool Load(const json& scenario) {
  const json profile = scenario.value("driver_profile", json(kMeasuredDriverVersion));
  if (profile != kMeasuredDriverVersion && profile != kNewerProfile) return false;
  State& s = S();
  s = State{};
  s.loaded = true;
  s.scenario = scenario;
  s.newer_driver = profile == kNewerProfile;
  for (const auto& spec : scenario.value("devices", json::array())) {
    auto device = std::make_unique<FakeDevice>();
    device->spec = spec;
    for (const auto& m : spec.value("mig", json::array())) {
      auto mig = std::make_unique<FakeMig>();
      mig->gi = m.value("gi", 0u);
      mig->profile = m.value("profile", "");
      mig->sm_count = m.value("sm_count", 0u);
      mig->gpm = m.value("gpm", json::array());
      device->migs.push_back(std::move(mig));
    }
    s.devices.push_back(std::move(device));
  }
  return true;
}

void LoadFromEnvironment() {
  if (S().loaded) return;
  const char* path = std::getenv("OFU_FAKE_NVML_SCENARIO");
  if (path == nullptr) {
    Load(json::object());
    return;
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  json scenario = json::parse(text.str(), nullptr, false);
  if (!scenario.is_object() || !Load(scenario)) {
    std::fprintf(stderr, "fake_nvml: %s is not a scenario this double reads: no GPUs\n", path);
    Load(json::object());  // a machine without GPUs
  }
}

// The value of a per-call sequence: element i, the last repeating.
template <typename T>
bool Sequence(const json& spec, const char* key, int index, T& out) {
  const auto it = spec.find(key);
  if (it == spec.end() || !it->is_array() || it->empty()) return false;
  const std::size_t i = std::min<std::size_t>(static_cast<std::size_t>(index), it->size() - 1);
  out = (*it)[i].get<T>();
  return true;
}

// Metrics window k of a "gpm" list (the last repeats); null when there is none.
const json* Window(const json& windows, int k) {
  if (!windows.is_array() || windows.empty()) return nullptr;
  return &windows[std::min<std::size_t>(static_cast<std::size_t>(std::max(k, 0)), windows.size() - 1)];
}

// The SM clock of a device without "clocks" (the load rule at the top):
// its current window is the one its next GPM sample will close.
unsigned RuleSmClockMhz(const FakeDevice& device) {
  double tensor_percent = 0;
  const auto gpm = device.spec.find("gpm");
  if (gpm != device.spec.end()) {
    if (const json* window = Window(*gpm, device.gpm_samples - 1)) {
      tensor_percent = window->value(std::to_string(kGpmAnyTensorUtil), 0.0);
    }
  }
  if (tensor_percent >= kLoadedTensorPercent) return kMeasuredLoadedSmClockMhz;
  return device.spec.value("max_sm_clock_mhz", kMeasuredMaxSmClockMhz);
}

FakeDevice* AsDevice(nvmlDevice_t handle) {
  for (auto& d : S().devices) {
    if (reinterpret_cast<nvmlDevice_t>(d.get()) == handle) return d.get();
  }
  return nullptr;
}

FakeMig* AsMig(nvmlDevice_t handle, FakeDevice** parent) {
  for (auto& d : S().devices) {
    for (auto& m : d->migs) {
      if (reinterpret_cast<nvmlDevice_t>(m.get()) == handle) {
        if (parent != nullptr) *parent = d.get();
        return m.get();
      }
    }
  }
  return nullptr;
}

// The common gate of every device call: library state, then GPU state.
nvmlReturn_t Gate(FakeDevice* device) {
  if (!S().initialized) return NVML_ERROR_UNINITIALIZED;
  if (S().driver_gone) return S().scenario["driver_gone"].value("error", NVML_ERROR_DRIVER_NOT_LOADED);
  if (device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (device->lost) return NVML_ERROR_GPU_IS_LOST;
  return NVML_SUCCESS;
}

void CopyString(const std::string& text, char* out, unsigned length) {
  if (length == 0) return;
  std::snprintf(out, length, "%s", text.c_str());
}

}  // namespace

FAKE_EXPORT int ofu_fake_nvml_load_scenario(const char* text) {
  json scenario = json::parse(text, nullptr, false);
  if (!scenario.is_object() || !Load(scenario)) return -1;
  return 0;
}

FAKE_EXPORT int ofu_fake_nvml_count(const char* what) {
  const State& s = S();
  const std::string w = what;
  if (w == "init") return s.init_calls;
  if (w == "shutdown") return s.shutdown_calls;
  if (w == "gpm_sample") return s.gpm_sample_calls;
  if (w == "metrics_get") return s.metrics_calls;
  if (w == "clock") return s.clock_calls;
  if (w == "processes") return s.process_calls;
  if (w == "samples_live") return s.samples_live;
  if (w == "nvml_calls") return s.all_calls;
  if (w == "gpm_metrics_asked") return s.gpm_metrics_asked;
  if (w.rfind("nvml", 0) == 0) {
    const auto it = s.calls.find(w);
    return it != s.calls.end() ? it->second : 0;
  }
  return -1;
}

FAKE_EXPORT nvmlReturn_t nvmlInit_v2() {
  Counted(__func__);
  LoadFromEnvironment();
  State& s = S();
  ++s.init_calls;
  const int error = s.scenario.value("init_error", 0);
  if (error != 0) return error;
  if (s.driver_gone) {
    if (s.gone_init_failures_left > 0) {
      --s.gone_init_failures_left;
      return s.scenario["driver_gone"].value("error", NVML_ERROR_DRIVER_NOT_LOADED);
    }
    s.driver_gone = false;
  }
  s.initialized = true;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlShutdown() {
  Counted(__func__);
  ++S().shutdown_calls;
  S().initialized = false;
  return NVML_SUCCESS;
}

FAKE_EXPORT const char* nvmlErrorString(nvmlReturn_t code) {
  Counted(__func__);
  switch (code) {
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    default: return "fake error";
  }
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* out, unsigned length) {
  Counted(__func__);
  if (!S().initialized) return NVML_ERROR_UNINITIALIZED;
  CopyString(S().scenario.value("driver_version", S().newer_driver ? kNewerDriverVersion : kMeasuredDriverVersion), out,
             length);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  Counted(__func__);
  if (!S().initialized) return NVML_ERROR_UNINITIALIZED;
  if (S().driver_gone) return NVML_ERROR_DRIVER_NOT_LOADED;
  *count = static_cast<unsigned>(S().devices.size());
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* handle) {
  Counted(__func__);
  if (!S().initialized) return NVML_ERROR_UNINITIALIZED;
  if (index >= S().devices.size()) return NVML_ERROR_INVALID_ARGUMENT;
  FakeDevice* device = S().devices[index].get();
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  *handle = reinterpret_cast<nvmlDevice_t>(device);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t handle, char* out, unsigned length) {
  Counted(__func__);
  FakeDevice* parent = nullptr;
  if (FakeMig* mig = AsMig(handle, &parent)) {
    if (const nvmlReturn_t gate = Gate(parent); gate != NVML_SUCCESS) return gate;
    CopyString(parent->spec.value("name", kMeasuredDeviceName) + " MIG " + mig->profile, out, length);
    return NVML_SUCCESS;
  }
  FakeDevice* device = AsDevice(handle);
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  CopyString(device->spec.value("name", kMeasuredDeviceName), out, length);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t handle, char* out, unsigned length) {
  Counted(__func__);
  FakeDevice* device = AsDevice(handle);
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  CopyString(device->spec.value("uuid", ""), out, length);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t handle, nvmlPciInfo_t* pci) {
  Counted(__func__);
  FakeDevice* device = AsDevice(handle);
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  *pci = nvmlPciInfo_t{};
  CopyString(device->spec.value("pci_bus_id", ""), pci->busId, sizeof(pci->busId));
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t handle, unsigned* arch) {
  Counted(__func__);
  FakeDevice* device = AsDevice(handle);
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  *arch = device->spec.value("architecture", 9u);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t handle, nvmlDeviceAttributes_t* attributes) {
  Counted(__func__);
  FakeDevice* parent = nullptr;
  if (FakeMig* mig = AsMig(handle, &parent)) {
    if (const nvmlReturn_t gate = Gate(parent); gate != NVML_SUCCESS) return gate;
    *attributes = nvmlDeviceAttributes_t{};
    attributes->multiprocessorCount = mig->sm_count;
    return NVML_SUCCESS;
  }
  FakeDevice* device = AsDevice(handle);
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  if (!device->spec.contains("sm_count")) return NVML_ERROR_NOT_SUPPORTED;
  *attributes = nvmlDeviceAttributes_t{};
  attributes->multiprocessorCount = device->spec["sm_count"].get<unsigned>();
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t handle, int type, unsigned* mhz) {
  Counted(__func__);
  FakeDevice* device = AsDevice(handle);
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  if (type != NVML_CLOCK_SM || !device->spec.contains("max_sm_clock_mhz")) return NVML_ERROR_NOT_SUPPORTED;
  *mhz = device->spec["max_sm_clock_mhz"].get<unsigned>();
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t handle, int type, unsigned* mhz) {
  Counted(__func__);
  State& s = S();
  if (s.initialized && !s.driver_gone && s.scenario.contains("driver_gone")) {
    const int at = s.scenario["driver_gone"].value("at_clock_read", 0);
    if (at > 0 && s.clock_calls + 1 >= at && !s.scenario["driver_gone"].value("fired", false)) {
      s.driver_gone = true;
      s.scenario["driver_gone"]["fired"] = true;
      s.gone_init_failures_left = s.scenario["driver_gone"].value("init_failures", 0);
    }
  }
  ++s.clock_calls;
  FakeDevice* device = AsDevice(handle);
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  if (type != NVML_CLOCK_SM) return NVML_ERROR_NOT_SUPPORTED;
  if (!device->spec.contains("clocks")) {
    *mhz = RuleSmClockMhz(*device);
    return NVML_SUCCESS;
  }
  unsigned value = 0;
  if (!Sequence(device->spec, "clocks", device->clock_reads++, value)) return NVML_ERROR_NOT_SUPPORTED;
  *mhz = value;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t handle, unsigned* milliwatts) {
  Counted(__func__);
  FakeDevice* device = AsDevice(handle);
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  return Sequence(device->spec, "power_mw", device->power_reads++, *milliwatts) ? NVML_SUCCESS
                                                                                : NVML_ERROR_NOT_SUPPORTED;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t handle, unsigned long long* mj) {
  Counted(__func__);
  FakeDevice* device = AsDevice(handle);
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  return Sequence(device->spec, "energy_mj", device->energy_reads++, *mj) ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t handle, unsigned long long* reasons) {
  Counted(__func__);
  FakeDevice* device = AsDevice(handle);
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  return Sequence(device->spec, "clock_event_reasons", device->reason_reads++, *reasons) ? NVML_SUCCESS
                                                                                         : NVML_ERROR_NOT_SUPPORTED;
}

// The lowest pid whose parent is this process, from /proc; 0 when none.
static unsigned ChildOfCaller() {
  const std::vector<int> children = ofu::platform::ChildrenOf(::getpid());
  return children.empty() ? 0u : static_cast<unsigned>(children.front());
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t handle, unsigned* count,
                                                                 nvmlProcessInfo_t* infos) {
  Counted(__func__);
  FakeDevice* device = AsDevice(handle);
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  ++S().process_calls;
  json processes = json::array();
  for (const json& process : device->spec.value("processes", json::array())) {
    if (!process.contains("pid") || !process["pid"].is_string() || process["pid"] != "child") {
      processes.push_back(process);
      continue;
    }
    if (const unsigned child = ChildOfCaller(); child != 0) {
      json resolved = process;
      resolved["pid"] = child;
      processes.push_back(resolved);
    }
  }
  if (*count < processes.size()) {
    *count = static_cast<unsigned>(processes.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  *count = static_cast<unsigned>(processes.size());
  for (std::size_t i = 0; i < processes.size(); ++i) {
    infos[i] = nvmlProcessInfo_t{};
    infos[i].pid = processes[i].value("pid", 0u);
    infos[i].usedGpuMemory = processes[i].value("used_memory", NVML_VALUE_NOT_AVAILABLE_ULL);
    infos[i].gpuInstanceId = processes[i].value("gi", 0xFFFFFFFFu);
    infos[i].computeInstanceId = 0xFFFFFFFFu;
  }
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t handle, unsigned* current, unsigned* pending) {
  Counted(__func__);
  FakeDevice* device = AsDevice(handle);
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  *current = device->migs.empty() ? NVML_DEVICE_MIG_DISABLE : NVML_DEVICE_MIG_ENABLE;
  *pending = *current;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t handle, unsigned* count) {
  Counted(__func__);
  FakeDevice* device = AsDevice(handle);
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  *count = static_cast<unsigned>(device->migs.size());
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t handle, unsigned index, nvmlDevice_t* mig) {
  Counted(__func__);
  FakeDevice* device = AsDevice(handle);
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  if (index >= device->migs.size()) return NVML_ERROR_NOT_FOUND;
  *mig = reinterpret_cast<nvmlDevice_t>(device->migs[index].get());
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t handle, unsigned* gi) {
  Counted(__func__);
  FakeDevice* parent = nullptr;
  FakeMig* mig = AsMig(handle, &parent);
  if (mig == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (const nvmlReturn_t gate = Gate(parent); gate != NVML_SUCCESS) return gate;
  *gi = mig->gi;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t handle, nvmlGpmSupport_t* support) {
  Counted(__func__);
  FakeDevice* device = AsDevice(handle);
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  if (support->version != NVML_GPM_SUPPORT_VERSION) return NVML_ERROR_INVALID_ARGUMENT;
  if (const int error = device->spec.value("gpm_query_error", 0); error != 0) return error;
  support->isSupportedDevice = device->spec.value("gpm_supported", true) ? 1u : 0u;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* sample) {
  Counted(__func__);
  if (!S().initialized) return NVML_ERROR_UNINITIALIZED;
  *sample = reinterpret_cast<nvmlGpmSample_t>(new FakeSample);
  ++S().samples_live;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
  Counted(__func__);
  delete reinterpret_cast<FakeSample*>(sample);
  --S().samples_live;
  return NVML_SUCCESS;
}

namespace {

nvmlReturn_t TakeSample(FakeDevice* device, const void* owner, int& counter, nvmlGpmSample_t sample) {
  ++S().gpm_sample_calls;
  if (const nvmlReturn_t gate = Gate(device); gate != NVML_SUCCESS) return gate;
  // Gate refused a null device; clang 14's analyzer does not see it.
  if (const int error = device->spec.value("gpm_sample_error", 0); error != 0) return error;  // NOLINT
  auto* fake = reinterpret_cast<FakeSample*>(sample);
  fake->owner = owner;
  fake->seq = ++counter;
  if (owner == device) {  // `counter` is device->gpm_samples
    const int lost_after = device->spec.value("lost_after_gpm_samples", 0);
    if (lost_after > 0 && device->gpm_samples >= lost_after) device->lost = true;
  }
  return NVML_SUCCESS;
}

}  // namespace

FAKE_EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t handle, nvmlGpmSample_t sample) {
  Counted(__func__);
  FakeDevice* device = AsDevice(handle);
  int unused = 0;
  return TakeSample(device, device, device != nullptr ? device->gpm_samples : unused, sample);
}

FAKE_EXPORT nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t handle, unsigned gi, nvmlGpmSample_t sample) {
  Counted(__func__);
  FakeDevice* device = AsDevice(handle);
  if (device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  for (auto& mig : device->migs) {
    if (mig->gi == gi) return TakeSample(device, mig.get(), mig->samples, sample);
  }
  return NVML_ERROR_NOT_FOUND;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* request) {
  Counted(__func__);
  State& s = S();
  ++s.metrics_calls;
  s.gpm_metrics_asked += static_cast<int>(request->numMetrics);
  if (!s.initialized) return NVML_ERROR_UNINITIALIZED;
  if (s.driver_gone) return NVML_ERROR_DRIVER_NOT_LOADED;
  if (request->version != NVML_GPM_METRICS_GET_VERSION) return NVML_ERROR_INVALID_ARGUMENT;
  const auto* first = reinterpret_cast<const FakeSample*>(request->sample1);
  const auto* second = reinterpret_cast<const FakeSample*>(request->sample2);
  if (first == nullptr || second == nullptr || first->owner != second->owner || first->seq >= second->seq) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  json windows = json::array();
  for (auto& d : s.devices) {
    if (d.get() == second->owner) windows = d->spec.value("gpm", json::array());
    for (auto& m : d->migs) {
      if (m.get() == second->owner) windows = m->gpm;
    }
  }
  const json* found = Window(windows, second->seq - 2);
  const json values = found != nullptr ? *found : json::object();
  for (unsigned i = 0; i < request->numMetrics; ++i) {
    nvmlGpmMetric_t& metric = request->metrics[i];
    const std::string id = std::to_string(metric.metricId);
    if (metric.metricId >= kFirstRefusedGpmMetricId && !s.newer_driver) {
      metric.nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;  // as 580.159.04 did, listed or not
      metric.value = 0;
    } else if (values.contains(id)) {
      metric.nvmlReturn = NVML_SUCCESS;
      metric.value = values[id].get<double>();
    } else {
      metric.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      metric.value = 0;
    }
  }
  return NVML_SUCCESS;
}

// Tells the product's loader that this library is a test double, so that
// everything read through it is labelled synthetic (DynamicLibrary::IsTestDouble).
extern "C" __attribute__((visibility("default"))) int ofu_test_double_marker() { return 1; }
