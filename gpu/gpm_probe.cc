// ofu-gpm-probe: what a driver's NVML GPM gives, read raw, for the GPU
// validation (docs/gpu-validation.md, Stage A). It loads NVML through ofu's
// own loader (src/ofu/sources/nvml/nvml_library.h), so it exercises the same
// declarations and struct layouts as `ofu`, and it runs against the in-tree
// NVML double (tests/doubles/fake_nvml.cc) like every other NVML test.
//
//   info      driver, device name, UUID, SMs, clocks, GPM support (JSON)
//   metrics   which GPM metric ids the driver answers, with their values
//             over one interval and the names NVML gives them (JSON)
//   cost      microseconds per call, for every call the NVML source makes
//             per window: SM clock, GPM sample, GPM metrics get (14, 12
//             and 1 metrics), power, energy, clock event reasons,
//             process list (JSON)
//   log       one CSV row per interval: tensor utilization (5), SM cycles
//             elapsed / active and MMA cycles active (248/249/250) as NVML
//             returns them, and the SM clock read every 10 ms over the
//             interval. Whether 248/250 are counts or rates, summed over SMs
//             or per SM, is decided from these rows against the clock, by
//             scripts/gpu-validate/gpuval.py, not assumed here.
//
// Needs no CUDA; built everywhere (gpu/gpu.cmake) and tested on the double
// (tests/gpu_validate). Exit status: 0 ok, 1 usage, 5 NVML, the device or
// GPM unavailable.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ofu/cli/exit_codes.h"
#include "ofu/cli/parse_command_line.h"
#include "ofu/cli/stop_signal.h"
#include "ofu/core/sample.h"
#include "ofu/core/version.h"
#include "ofu/sources/nvml/nvml_library.h"

namespace {

using nlohmann::ordered_json;
using ofu::sources::NvmlLibrary;
using ofu::sources::NvmlReturnName;

constexpr const char* kAbout = R"(ofu-gpm-probe -- read NVML GPM raw, for the GPU validation.

Commands:
  info      driver, device, SM count, clocks, GPM support (JSON)
  metrics   the GPM metric ids the driver answers over one interval (JSON)
  cost      microseconds per call, for every call the NVML source makes per
            window: SM clock, GPM sample and metrics get, power, energy,
            clock event reasons, process list (JSON)
  log       one CSV row per interval: GPM 5, 248, 249, 250 and the SM clock
            read every 10 ms; stops at --duration or on SIGINT/SIGTERM

Exit status: 0 ok, 1 usage, 5 NVML, the device or GPM unavailable.
See docs/gpu-validation.md.)";

// The metrics `log` asks for every interval.
// 170-174 (graphics engine 0's context-switch cycles): is 170 an exact
// clock on drivers that refuse 248 (issue 39)? Logged beside the clock.
constexpr unsigned kLogMetrics[] = {NVML_GPM_METRIC_ANY_TENSOR_UTIL,          NVML_GPM_METRIC_HMMA_TENSOR_UTIL,
                                    NVML_GPM_METRIC_IMMA_TENSOR_UTIL,         NVML_GPM_METRIC_SM_UTIL,
                                    NVML_GPM_METRIC_SM_CYCLES_ELAPSED,        NVML_GPM_METRIC_SM_CYCLES_ACTIVE,
                                    NVML_GPM_METRIC_MMA_CYCLES_ACTIVE,        NVML_GPM_METRIC_GR0_CTXSW_CYCLES_ELAPSED,
                                    NVML_GPM_METRIC_GR0_CTXSW_CYCLES_ACTIVE,  NVML_GPM_METRIC_GR0_CTXSW_REQUESTS,
                                    NVML_GPM_METRIC_GR0_CTXSW_CYCLES_PER_REQ, NVML_GPM_METRIC_GR0_CTXSW_ACTIVE_PCT};
constexpr const char* kLogMetricColumns[] = {"gpm5_any_tensor_pct",
                                             "gpm7_hmma_pct",
                                             "gpm9_imma_pct",
                                             "gpm2_sm_util_pct",
                                             "gpm248_sm_cycles_elapsed",
                                             "gpm249_sm_cycles_active",
                                             "gpm250_mma_cycles_active",
                                             "gpm170_ctxsw_cycles_elapsed",
                                             "gpm171_ctxsw_cycles_active",
                                             "gpm172_ctxsw_requests",
                                             "gpm173_ctxsw_cycles_per_req",
                                             "gpm174_ctxsw_active_pct"};
static_assert(std::size(kLogMetrics) == std::size(kLogMetricColumns));
constexpr double kClockReadSpacingS = 0.01;

double WallS() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }
double SteadyS() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Failure {
  int exit_code;
  std::string message;
};

// NVML opened and initialized, one device chosen; shut down on destruction.
class Probe {
 public:
  static std::unique_ptr<Probe> Open(const std::string& library, unsigned index, Failure& failure) {
    auto loaded = NvmlLibrary::Load(library);
    if (!loaded.ok()) {
      failure = {ofu::cli::kExitUnavailable, loaded.error().message};
      return nullptr;
    }
    std::unique_ptr<Probe> probe(new Probe(std::move(loaded).value()));
    const auto& fn = probe->fn();
    if (const nvmlReturn_t init = fn.Init(); init != NVML_SUCCESS) {
      failure = {ofu::cli::kExitUnavailable,
                 fmt::format("nvmlInit failed in {}: {}", probe->nvml_->path(), probe->nvml_->ErrorString(init))};
      return nullptr;
    }
    probe->initialized_ = true;
    unsigned count = 0;
    if (const nvmlReturn_t got = fn.DeviceGetCount(&count); got != NVML_SUCCESS || index >= count) {
      failure = {ofu::cli::kExitUnavailable, got != NVML_SUCCESS
                                                 ? fmt::format("nvmlDeviceGetCount: {}", probe->nvml_->ErrorString(got))
                                                 : fmt::format("no NVML device {} ({} found)", index, count)};
      return nullptr;
    }
    probe->count_ = count;
    if (const nvmlReturn_t got = fn.DeviceGetHandleByIndex(index, &probe->device_); got != NVML_SUCCESS) {
      failure = {ofu::cli::kExitUnavailable,
                 fmt::format("nvmlDeviceGetHandleByIndex({}): {}", index, probe->nvml_->ErrorString(got))};
      return nullptr;
    }
    return probe;
  }

  ~Probe() {
    for (nvmlGpmSample_t sample : samples_) fn().GpmSampleFree(sample);
    if (initialized_) fn().Shutdown();
  }
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;

  const ofu::sources::NvmlFunctions& fn() const { return nvml_->fn(); }
  const NvmlLibrary& nvml() const { return *nvml_; }
  nvmlDevice_t device() const { return device_; }
  unsigned device_count() const { return count_; }
  std::string Error(nvmlReturn_t code) const { return nvml_->ErrorString(code); }

  // A sample owned by the probe (freed with it).
  std::optional<nvmlGpmSample_t> AllocSample(std::string& error) {
    nvmlGpmSample_t sample = nullptr;
    if (const nvmlReturn_t got = fn().GpmSampleAlloc(&sample); got != NVML_SUCCESS) {
      error = fmt::format("nvmlGpmSampleAlloc: {}", Error(got));
      return std::nullopt;
    }
    samples_.push_back(sample);
    return sample;
  }

  // GPM must be supported before anything samples it.
  bool CheckGpm(Failure& failure) const {
    nvmlGpmSupport_t support{};
    support.version = NVML_GPM_SUPPORT_VERSION;
    const nvmlReturn_t got = fn().GpmQueryDeviceSupport(device_, &support);
    if (got != NVML_SUCCESS) {
      failure = {ofu::cli::kExitUnavailable, fmt::format("nvmlGpmQueryDeviceSupport: {}", Error(got))};
      return false;
    }
    if (support.isSupportedDevice == 0) {
      failure = {ofu::cli::kExitUnavailable, "this device has no NVML GPM (it needs Hopper or later)"};
      return false;
    }
    return true;
  }

  std::optional<unsigned> SmClock() const {
    unsigned mhz = 0;
    if (fn().DeviceGetClockInfo(device_, NVML_CLOCK_SM, &mhz) != NVML_SUCCESS) return std::nullopt;
    return mhz;
  }

  // Board power (W) and the clock event reasons (bitmask), once a log row;
  // absent where the library lacks the call or it fails.
  std::optional<double> PowerW() const {
    unsigned milliwatts = 0;
    if (fn().DeviceGetPowerUsage == nullptr || fn().DeviceGetPowerUsage(device_, &milliwatts) != NVML_SUCCESS) {
      return std::nullopt;
    }
    return milliwatts / 1000.0;
  }
  std::optional<unsigned long long> ClockEventReasons() const {
    unsigned long long reasons = 0;
    if (fn().DeviceGetClockEventReasons == nullptr ||
        fn().DeviceGetClockEventReasons(device_, &reasons) != NVML_SUCCESS) {
      return std::nullopt;
    }
    return reasons;
  }

 private:
  explicit Probe(std::unique_ptr<NvmlLibrary> nvml) : nvml_(std::move(nvml)) {}
  std::unique_ptr<NvmlLibrary> nvml_;
  bool initialized_ = false;
  unsigned count_ = 0;
  nvmlDevice_t device_ = nullptr;
  std::vector<nvmlGpmSample_t> samples_;
};

std::string CodeText(nvmlReturn_t code) { return fmt::format("{} ({})", NvmlReturnName(code), code); }

ordered_json DeviceInfo(const Probe& probe, nvmlDevice_t device) {
  const auto& fn = probe.fn();
  ordered_json d;
  char text[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  d["name"] = fn.DeviceGetName(device, text, sizeof(text)) == NVML_SUCCESS ? ordered_json(text) : ordered_json();
  char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  d["uuid"] = fn.DeviceGetUUID(device, uuid, sizeof(uuid)) == NVML_SUCCESS ? ordered_json(uuid) : ordered_json();
  nvmlPciInfo_t pci{};
  d["pci_bus_id"] = fn.DeviceGetPciInfo != nullptr && fn.DeviceGetPciInfo(device, &pci) == NVML_SUCCESS
                        ? ordered_json(std::string(pci.busId))
                        : ordered_json();
  unsigned arch = 0;
  d["architecture"] = fn.DeviceGetArchitecture != nullptr && fn.DeviceGetArchitecture(device, &arch) == NVML_SUCCESS
                          ? ordered_json(arch)
                          : ordered_json();
  nvmlDeviceAttributes_t attributes{};
  d["sm_count"] = fn.DeviceGetAttributes != nullptr && fn.DeviceGetAttributes(device, &attributes) == NVML_SUCCESS
                      ? ordered_json(attributes.multiprocessorCount)
                      : ordered_json();
  unsigned mhz = 0;
  d["max_sm_clock_mhz"] = fn.DeviceGetMaxClockInfo != nullptr &&
                                  fn.DeviceGetMaxClockInfo(device, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS
                              ? ordered_json(mhz)
                              : ordered_json();
  d["sm_clock_mhz"] = fn.DeviceGetClockInfo(device, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS ? ordered_json(mhz)
                                                                                         : ordered_json();
  unsigned current = 0, pending = 0;
  d["mig_mode"] = fn.DeviceGetMigMode != nullptr && fn.DeviceGetMigMode(device, &current, &pending) == NVML_SUCCESS
                      ? ordered_json(current)
                      : ordered_json();
  nvmlGpmSupport_t support{};
  support.version = NVML_GPM_SUPPORT_VERSION;
  const nvmlReturn_t gpm = fn.GpmQueryDeviceSupport(device, &support);
  d["gpm_supported"] = gpm == NVML_SUCCESS ? ordered_json(support.isSupportedDevice != 0) : ordered_json();
  if (gpm != NVML_SUCCESS) d["gpm_query_error"] = probe.Error(gpm);
  return d;
}

int RunInfo(Probe& probe) {
  ordered_json out;
  out["tool"] = "ofu-gpm-probe info";
  out["library"] = probe.nvml().path();
  out["test_double"] = probe.nvml().is_test_double();
  char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  const auto& fn = probe.fn();
  out["driver_version"] = fn.SystemGetDriverVersion != nullptr &&
                                  fn.SystemGetDriverVersion(version, sizeof(version)) == NVML_SUCCESS
                              ? ordered_json(version)
                              : ordered_json();
  out["device_count"] = probe.device_count();
  out["devices"] = ordered_json::array();
  for (unsigned i = 0; i < probe.device_count(); ++i) {
    nvmlDevice_t device = nullptr;
    ordered_json d;
    if (const nvmlReturn_t got = fn.DeviceGetHandleByIndex(i, &device); got != NVML_SUCCESS) {
      d["error"] = probe.Error(got);
    } else {
      d = DeviceInfo(probe, device);
    }
    d["index"] = i;
    out["devices"].push_back(d);
  }
  fmt::print("{}\n", out.dump(2));
  return ofu::cli::kExitOk;
}

// Two GPM samples `gap_s` apart, into a and b. Returns the measured gap.
std::optional<double> TwoSamples(Probe& probe, nvmlGpmSample_t a, nvmlGpmSample_t b, double gap_s, Failure& failure) {
  const double t0 = SteadyS();
  if (const nvmlReturn_t got = probe.fn().GpmSampleGet(probe.device(), a); got != NVML_SUCCESS) {
    failure = {ofu::cli::kExitUnavailable, fmt::format("nvmlGpmSampleGet: {}", probe.Error(got))};
    return std::nullopt;
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(gap_s));
  if (const nvmlReturn_t got = probe.fn().GpmSampleGet(probe.device(), b); got != NVML_SUCCESS) {
    failure = {ofu::cli::kExitUnavailable, fmt::format("nvmlGpmSampleGet: {}", probe.Error(got))};
    return std::nullopt;
  }
  return SteadyS() - t0;
}

// Checks that GPM works and allocates the two samples every command
// compares; on failure says why on stderr and returns the exit status, else 0.
int PrepareSamples(Probe& probe, Failure& failure, std::optional<nvmlGpmSample_t>& a,
                   std::optional<nvmlGpmSample_t>& b) {
  if (!probe.CheckGpm(failure)) {
    fmt::print(stderr, "ofu-gpm-probe: {}\n", failure.message);
    return failure.exit_code;
  }
  std::string error;
  a = probe.AllocSample(error);
  b = a ? probe.AllocSample(error) : std::nullopt;
  if (!a || !b) {
    fmt::print(stderr, "ofu-gpm-probe: {}\n", error);
    return ofu::cli::kExitUnavailable;
  }
  return 0;
}

struct MetricsOptions {
  unsigned first = 1;
  unsigned last = 400;
  unsigned batch = 32;
  bool names = true;
  double gap_s = 0.5;
};

int RunMetrics(Probe& probe, const MetricsOptions& options) {
  Failure failure{0, ""};
  std::optional<nvmlGpmSample_t> a, b;
  if (const int status = PrepareSamples(probe, failure, a, b); status != 0) return status;
  const auto gap = TwoSamples(probe, *a, *b, options.gap_s, failure);
  if (!gap) {
    fmt::print(stderr, "ofu-gpm-probe: {}\n", failure.message);
    return failure.exit_code;
  }

  auto request = std::make_unique<nvmlGpmMetricsGet_t>();
  ordered_json supported = ordered_json::array();
  std::map<std::string, std::vector<unsigned>> refused;  // per return code
  ordered_json call_failures = ordered_json::array();
  // Asks for ids [from, to]; a call that fails as a whole is retried one id
  // at a time, so an id the driver rejects cannot hide its neighbours.
  const auto ask = [&](auto& self, unsigned from, unsigned to) -> void {
    *request = nvmlGpmMetricsGet_t{};
    request->version = NVML_GPM_METRICS_GET_VERSION;
    request->sample1 = *a;
    request->sample2 = *b;
    request->numMetrics = to - from + 1;
    for (unsigned id = from; id <= to; ++id) request->metrics[id - from].metricId = id;
    const nvmlReturn_t got = probe.fn().GpmMetricsGet(request.get());
    if (got != NVML_SUCCESS) {
      if (from == to) {
        refused["call: " + CodeText(got)].push_back(from);
        return;
      }
      call_failures.push_back({{"ids", fmt::format("{}-{}", from, to)}, {"return", CodeText(got)}});
      for (unsigned id = from; id <= to; ++id) self(self, id, id);
      return;
    }
    for (unsigned id = from; id <= to; ++id) {
      const nvmlGpmMetric_t& m = request->metrics[id - from];
      if (m.nvmlReturn != NVML_SUCCESS) {
        refused[CodeText(m.nvmlReturn)].push_back(id);
        continue;
      }
      ordered_json row = {{"id", id}, {"value", std::isfinite(m.value) ? ordered_json(m.value) : ordered_json()}};
      if (options.names) {
        row["short_name"] = m.metricInfo.shortName != nullptr ? ordered_json(m.metricInfo.shortName) : ordered_json();
        row["long_name"] = m.metricInfo.longName != nullptr ? ordered_json(m.metricInfo.longName) : ordered_json();
        row["unit"] = m.metricInfo.unit != nullptr ? ordered_json(m.metricInfo.unit) : ordered_json();
      }
      supported.push_back(row);
    }
  };
  for (unsigned from = options.first; from <= options.last; from += options.batch) {
    ask(ask, from, std::min(options.last, from + options.batch - 1));
  }

  ordered_json out;
  out["tool"] = "ofu-gpm-probe metrics";
  out["library"] = probe.nvml().path();
  out["test_double"] = probe.nvml().is_test_double();
  out["interval_s"] = *gap;
  out["ids_asked"] = fmt::format("{}-{}", options.first, options.last);
  out["supported_count"] = supported.size();
  out["supported"] = supported;
  out["refused"] = refused;
  out["whole_call_failures"] = call_failures;
  fmt::print("{}\n", out.dump(2));
  return ofu::cli::kExitOk;
}

ordered_json Stats(std::vector<double> us) {
  if (us.empty()) return ordered_json();
  std::sort(us.begin(), us.end());
  const auto at = [&](double q) {
    const double pos = q * static_cast<double>(us.size() - 1);
    const std::size_t i = static_cast<std::size_t>(pos);
    const double f = pos - static_cast<double>(i);
    return i + 1 < us.size() ? us[i] + f * (us[i + 1] - us[i]) : us[i];
  };
  double sum = 0;
  for (double v : us) sum += v;
  return {{"n", us.size()},  {"mean", sum / static_cast<double>(us.size())},
          {"p50", at(0.5)},  {"p90", at(0.9)},
          {"p99", at(0.99)}, {"min", us.front()},
          {"max", us.back()}};
}

// Times `call` `count` times (or until `limit_s` passed); µs per call, the
// NVML function timed, and the first failing return code, if any.
template <typename Call>
ordered_json TimeCalls(const char* function, int count, double limit_s, Call call) {
  std::vector<double> us;
  std::optional<nvmlReturn_t> failed;
  const double end = SteadyS() + limit_s;
  for (int i = 0; i < count && SteadyS() < end; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const nvmlReturn_t got = call();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    if (got != NVML_SUCCESS && !failed) failed = got;
  }
  ordered_json out = Stats(us);
  out["unit"] = "us";
  out["failed_with"] = failed ? ordered_json(CodeText(*failed)) : ordered_json();
  out["call"] = function;
  return out;
}

// The same for a function the loader treats as optional: a library without
// it gets {"call", "absent": true} rather than a crash, as the NVML source
// then skips the call.
// Slot: the function table's entry (a pointer, or anything that compares
// with nullptr as one).
template <typename Slot, typename Call>
ordered_json TimeOptionalCalls(const char* function, const Slot& slot, int count, double limit_s, Call call) {
  if (slot == nullptr) return {{"call", function}, {"absent", true}};
  return TimeCalls(function, count, limit_s, call);
}

struct CostOptions {
  int clock_reads = 2000;
  int gpm_samples = 200;
  int metrics_gets = 200;
  int other_calls = 200;
  double limit_s = 10;
};

// Every call the NVML source (src/ofu/sources/nvml/nvml_window.cc, nvml_gpm.cc) makes per
// window and GPU, timed alone on one device: the SM clock (ten reads a
// second whatever the window), a GPM sample, the GPM metrics get, power,
// energy, clock event reasons, and the process list (read once per
// attribution interval, not every window). How often each is made per
// window is the source's business; this gives the price of one.
int RunCost(Probe& probe, const CostOptions& options) {
  Failure failure{0, ""};
  std::optional<nvmlGpmSample_t> a, b;
  if (const int status = PrepareSamples(probe, failure, a, b); status != 0) return status;
  const auto& fn = probe.fn();
  nvmlDevice_t device = probe.device();
  ordered_json out;
  out["tool"] = "ofu-gpm-probe cost";
  out["library"] = probe.nvml().path();
  out["test_double"] = probe.nvml().is_test_double();
  unsigned mhz = 0;
  out["sm_clock_read"] = TimeCalls("nvmlDeviceGetClockInfo(SM)", options.clock_reads, options.limit_s,
                                   [&] { return fn.DeviceGetClockInfo(device, NVML_CLOCK_SM, &mhz); });
  int which = 0;
  out["gpm_sample"] = TimeCalls("nvmlGpmSampleGet", options.gpm_samples, options.limit_s,
                                [&] { return fn.GpmSampleGet(device, (which++ % 2 == 0) ? *a : *b); });
  // The metrics gets between two samples taken the way the source takes them.
  if (!TwoSamples(probe, *a, *b, 0.2, failure)) {
    fmt::print(stderr, "ofu-gpm-probe: {}\n", failure.message);
    return failure.exit_code;
  }
  auto request = std::make_unique<nvmlGpmMetricsGet_t>();
  const auto metrics_get = [&](const std::vector<unsigned>& ids) {
    return TimeCalls("nvmlGpmMetricsGet", options.metrics_gets, options.limit_s, [&] {
      request->version = NVML_GPM_METRICS_GET_VERSION;
      request->sample1 = *a;
      request->sample2 = *b;
      request->numMetrics = 0;
      for (unsigned id : ids) {
        request->metrics[request->numMetrics] = nvmlGpmMetric_t{};
        request->metrics[request->numMetrics++].metricId = id;
      }
      return fn.GpmMetricsGet(request.get());
    });
  };
  // The 12 utilizations the source asked every window in the first GPU run
  // and the cycle pair, asked until the driver shows it lacks the pair; then
  // the 12 alone (so every window on the H100's 580.159.04, which refuses 248
  // and 250; issue 29 asks fewer, those the outputs use); and
  // GPM 5 alone, the least OFU needs, to show how the price grows with the
  // number of metrics asked.
  const std::vector<unsigned> util = {1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13};
  std::vector<unsigned> with_cycles = util;
  with_cycles.push_back(NVML_GPM_METRIC_SM_CYCLES_ELAPSED);
  with_cycles.push_back(NVML_GPM_METRIC_MMA_CYCLES_ACTIVE);
  out["gpm_metrics_get_14"] = metrics_get(with_cycles);
  out["gpm_metrics_get_12"] = metrics_get(util);
  out["gpm_metrics_get_1"] = metrics_get({NVML_GPM_METRIC_ANY_TENSOR_UTIL});

  // Issue 39: which metrics carry the price. Each metric ofu's counters can
  // ask (every CounterField with a GPM id, in the order the NVML source asks
  // them; the agent asks the subset its outputs need, docs/gpu-validation.md)
  // and 170/171 alone, then growing sets in that order, all between the same
  // two samples. Each entry keeps every metric's own return and value of the
  // last call, so a call that "succeeds" while its metrics fail is seen.
  std::vector<unsigned> counter_ids;
  for (const ofu::CounterFieldInfo& info : ofu::AllCounterFields()) {
    if (info.gpm_metric_id > 0) counter_ids.push_back(static_cast<unsigned>(info.gpm_metric_id));
  }
  const auto with_results = [&](ordered_json timing, const std::vector<unsigned>& ids) {
    ordered_json metrics = ordered_json::array();
    for (unsigned i = 0; i < request->numMetrics && i < ids.size(); ++i) {
      const nvmlGpmMetric_t& m = request->metrics[i];
      metrics.push_back({{"id", m.metricId},
                         {"rc", CodeText(m.nvmlReturn)},
                         {"value", m.nvmlReturn == NVML_SUCCESS && std::isfinite(m.value) ? ordered_json(m.value)
                                                                                          : ordered_json()}});
    }
    timing["ids"] = ids;
    timing["metrics"] = std::move(metrics);
    return timing;
  };
  ordered_json each = ordered_json::array();
  std::vector<unsigned> alone = counter_ids;
  alone.push_back(NVML_GPM_METRIC_GR0_CTXSW_CYCLES_ELAPSED);
  alone.push_back(NVML_GPM_METRIC_GR0_CTXSW_CYCLES_ACTIVE);
  for (unsigned id : alone) each.push_back(with_results(metrics_get({id}), {id}));
  out["gpm_metrics_get_each"] = std::move(each);
  ordered_json growing = ordered_json::array();
  for (std::size_t k = 1; k <= counter_ids.size(); ++k) {
    const std::vector<unsigned> prefix(counter_ids.begin(), counter_ids.begin() + static_cast<std::ptrdiff_t>(k));
    growing.push_back(with_results(metrics_get(prefix), prefix));
  }
  out["gpm_metrics_get_growing"] = std::move(growing);

  const int n = options.other_calls;
  unsigned milliwatts = 0;
  out["power_usage"] = TimeOptionalCalls("nvmlDeviceGetPowerUsage", fn.DeviceGetPowerUsage, n, options.limit_s,
                                         [&] { return fn.DeviceGetPowerUsage(device, &milliwatts); });
  unsigned long long millijoules = 0;
  out["total_energy"] = TimeOptionalCalls("nvmlDeviceGetTotalEnergyConsumption", fn.DeviceGetTotalEnergyConsumption, n,
                                          options.limit_s,
                                          [&] { return fn.DeviceGetTotalEnergyConsumption(device, &millijoules); });
  unsigned long long reasons = 0;
  out["clock_event_reasons"] = TimeOptionalCalls("nvmlDeviceGetCurrentClocksEventReasons",
                                                 fn.DeviceGetClockEventReasons, n, options.limit_s,
                                                 [&] { return fn.DeviceGetClockEventReasons(device, &reasons); });
  // As the source reads it: a 32-slot buffer (INSUFFICIENT_SIZE with more
  // processes than that is recorded as the call's failure).
  std::vector<nvmlProcessInfo_t> infos(32);
  out["compute_processes"] = TimeOptionalCalls("nvmlDeviceGetComputeRunningProcesses",
                                               fn.DeviceGetComputeRunningProcesses, n, options.limit_s, [&] {
                                                 unsigned count = static_cast<unsigned>(infos.size());
                                                 return fn.DeviceGetComputeRunningProcesses(device, &count,
                                                                                            infos.data());
                                               });
  fmt::print("{}\n", out.dump(2));
  return ofu::cli::kExitOk;
}

struct LogOptions {
  double interval_s = 1;
  double duration_s = 60;
  std::string out = "-";
};

std::string Field(double value) { return fmt::format("{}", value); }

int RunLog(Probe& probe, const LogOptions& options) {
  Failure failure{0, ""};
  std::optional<nvmlGpmSample_t> a, b;
  if (const int status = PrepareSamples(probe, failure, a, b); status != 0) return status;
  std::ofstream file;
  if (options.out != "-") {
    file.open(options.out, std::ios::binary | std::ios::trunc);
    if (!file) {
      fmt::print(stderr, "ofu-gpm-probe: {}: cannot write\n", options.out);
      return ofu::cli::kExitBadInput;
    }
  }
  std::ostream& out = options.out == "-" ? std::cout : file;
  out << "t_end_s,dt_s";
  for (const char* column : kLogMetricColumns) out << ',' << column << ',' << column << "_rc";
  out << ",clock_mean_mhz,clock_last_mhz,clock_min_mhz,clock_max_mhz,clock_readings,power_w,clock_event_reasons,"
         "test_double\n"
      << std::flush;

  ofu::cli::InstallStopSignals();
  const auto& fn = probe.fn();
  nvmlGpmSample_t previous = *a, next = *b;
  // A sample's time is the midpoint of its call.
  const auto sample = [&](nvmlGpmSample_t s, double& at) {
    const double t0 = WallS();
    const nvmlReturn_t got = fn.GpmSampleGet(probe.device(), s);
    at = (t0 + WallS()) / 2;
    return got;
  };
  double previous_at = 0;
  if (const nvmlReturn_t got = sample(previous, previous_at); got != NVML_SUCCESS) {
    fmt::print(stderr, "ofu-gpm-probe: nvmlGpmSampleGet: {}\n", probe.Error(got));
    return ofu::cli::kExitUnavailable;
  }
  const double stop_at = previous_at + options.duration_s;
  auto request = std::make_unique<nvmlGpmMetricsGet_t>();
  const std::size_t n_metrics = std::size(kLogMetrics);
  int rows = 0;
  while (!ofu::cli::StopRequested() && WallS() < stop_at) {
    // Read the clock every 10 ms until the interval is over.
    double sum = 0, lo = 0, hi = 0, last = 0;
    int readings = 0;
    const double window_end = previous_at + options.interval_s;
    while (!ofu::cli::StopRequested()) {
      if (auto mhz = probe.SmClock()) {
        const double v = *mhz;
        lo = readings == 0 ? v : std::min(lo, v);
        hi = readings == 0 ? v : std::max(hi, v);
        sum += v;
        last = v;
        ++readings;
      }
      const double left = window_end - WallS();
      if (left <= 0) break;
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(left, kClockReadSpacingS)));
    }
    double at = 0;
    const nvmlReturn_t got = sample(next, at);
    if (got != NVML_SUCCESS) {
      fmt::print(stderr, "ofu-gpm-probe: nvmlGpmSampleGet: {}; stopping after {} rows\n", probe.Error(got), rows);
      return rows > 0 ? ofu::cli::kExitOk : ofu::cli::kExitUnavailable;
    }
    *request = nvmlGpmMetricsGet_t{};
    request->version = NVML_GPM_METRICS_GET_VERSION;
    request->sample1 = previous;
    request->sample2 = next;
    request->numMetrics = static_cast<unsigned>(n_metrics);
    for (std::size_t i = 0; i < n_metrics; ++i) request->metrics[i].metricId = kLogMetrics[i];
    const nvmlReturn_t call = fn.GpmMetricsGet(request.get());
    out << Field(at) << ',' << Field(at - previous_at);
    for (std::size_t i = 0; i < n_metrics; ++i) {
      const nvmlGpmMetric_t& m = request->metrics[i];
      const nvmlReturn_t rc = call != NVML_SUCCESS ? call : m.nvmlReturn;
      out << ',' << (rc == NVML_SUCCESS && std::isfinite(m.value) ? Field(m.value) : "") << ',' << rc;
    }
    if (readings > 0) {
      out << ',' << Field(sum / readings) << ',' << Field(last) << ',' << Field(lo) << ',' << Field(hi);
    } else {
      out << ",,,,";
    }
    out << ',' << readings;
    const std::optional<double> watts = probe.PowerW();
    const std::optional<unsigned long long> reasons = probe.ClockEventReasons();
    out << ',' << (watts ? Field(*watts) : "") << ',' << (reasons ? std::to_string(*reasons) : "");
    out << ',' << (probe.nvml().is_test_double() ? 1 : 0) << '\n' << std::flush;
    ++rows;
    std::swap(previous, next);
    previous_at = at;
  }
  fmt::print(stderr, "ofu-gpm-probe: {} rows{}\n", rows, ofu::cli::StopRequested() ? " (stopped by a signal)" : "");
  return out ? ofu::cli::kExitOk : ofu::cli::kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(kAbout, "ofu-gpm-probe");
  app.set_version_flag("--version", fmt::format("ofu-gpm-probe {}", ofu::kVersion));
  app.require_subcommand(1);
  std::string library;
  unsigned index = 0;
  app.add_option("--nvml-library", library, "Path of libnvidia-ml.so.1 (default: the loader's)");
  app.add_option("--device,-d", index, "NVML device index")->capture_default_str();

  auto* info = app.add_subcommand("info", "Driver, device, SMs, clocks, GPM support (JSON)");
  MetricsOptions metrics_options;
  bool no_names = false;
  auto* metrics = app.add_subcommand("metrics", "The GPM metric ids the driver answers (JSON)");
  metrics->add_option("--first", metrics_options.first, "First id asked")->check(CLI::Range(1u, 511u));
  metrics->add_option("--last", metrics_options.last, "Last id asked")
      ->check(CLI::Range(1u, 511u))
      ->capture_default_str();
  metrics->add_option("--batch", metrics_options.batch, "Ids per nvmlGpmMetricsGet call")
      ->check(CLI::Range(1u, 98u))
      ->capture_default_str();
  metrics->add_option("--interval", metrics_options.gap_s, "Seconds between the two samples")
      ->check(CLI::Range(0.1, 10.0))
      ->capture_default_str();
  metrics->add_flag("--no-names", no_names, "Do not read the names NVML returns with each metric");
  CostOptions cost_options;
  auto* cost = app.add_subcommand("cost",
                                  "Microseconds per call, for every call the NVML source makes per window (JSON)");
  cost->add_option("--clock-reads", cost_options.clock_reads)->check(CLI::Range(1, 1000000))->capture_default_str();
  cost->add_option("--gpm-samples", cost_options.gpm_samples)->check(CLI::Range(1, 100000))->capture_default_str();
  cost->add_option("--metrics-gets", cost_options.metrics_gets, "Calls per GPM metrics get (14, 12 and 1 metrics)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cost->add_option("--other-calls", cost_options.other_calls,
                   "Calls each of power, energy, clock event reasons, processes")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cost->add_option("--limit", cost_options.limit_s, "Seconds at most per kind of call")
      ->check(CLI::Range(0.1, 600.0))
      ->capture_default_str();
  LogOptions log_options;
  auto* log = app.add_subcommand("log", "One CSV row per interval: GPM 5/248/249/250 and the SM clock");
  log->add_option("--interval", log_options.interval_s, "Seconds per row (GPM needs >= 0.1)")
      ->check(CLI::Range(0.1, 60.0))
      ->capture_default_str();
  log->add_option("--duration", log_options.duration_s, "Seconds to log")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  log->add_option("--out,-o", log_options.out, "CSV file ('-': standard output)")->capture_default_str();
  if (auto exit_status = ofu::cli::ParseCommandLine(app, argc, argv)) return *exit_status;
  if (metrics_options.last < metrics_options.first) {
    fmt::print(stderr, "ofu-gpm-probe: --last must not be below --first\n");
    return ofu::cli::kExitUsage;
  }
  metrics_options.names = !no_names;

  Failure failure{0, ""};
  auto probe = Probe::Open(library, index, failure);
  if (!probe) {
    fmt::print(stderr, "ofu-gpm-probe: {}\n", failure.message);
    return failure.exit_code;
  }
  if (probe->nvml().is_test_double()) {
    fmt::print(stderr, "ofu-gpm-probe: TEST DOUBLE: {} is not a driver; every value is synthetic\n",
               probe->nvml().path());
  }
  if (info->parsed()) return RunInfo(*probe);
  if (metrics->parsed()) return RunMetrics(*probe, metrics_options);
  if (cost->parsed()) return RunCost(*probe, cost_options);
  if (log->parsed()) return RunLog(*probe, log_options);
  return ofu::cli::kExitUsage;
}
