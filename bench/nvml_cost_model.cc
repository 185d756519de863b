// The agent's predicted CPU on a real driver (issue 29): the NVML source's
// driver calls per window, counted by the test double, times what each call
// cost on the H100 (docs/results/2026-11-26-h100-sxm5/stage-A/probe-cost.json,
// `ofu-gpm-probe cost`, driver 580.159.04), beside the CPU the same windows
// take on the double here.
//
// Only calls the probe timed enter the sum: the SM clock read, the GPM
// sample and nvmlGpmMetricsGet. Every other call is listed with its count
// as "not measured" and left out, so the prediction is a lower bound: on
// the H100 the agent used 6.5 ms of CPU per 0.1 s window
// (stage-C/agent/agent-cost.json) where these three calls explain ~1.5 ms.
// nvmlGpmMetricsGet was timed asking 14 metrics; the agent asks 8, and
// whether fewer metrics cost less was not measured, so its 14-metric time is
// used as it is (no saving assumed).
//
// Usage: nvml_cost_model [probe-cost.json]. Prints a table; records go to
// docs/BENCHMARKS.md. The double's figures are this machine's, not a GPU's.
#include <dlfcn.h>
#include <time.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "doubles/fake_nvml_scenarios.h"
#include "ofu/agent/config.h"
#include "ofu/agent/run.h"
#include "ofu/sources/nvml/nvml_source.h"

namespace {

// NVML function -> its entry in probe-cost.json; absent: not measured.
const std::map<std::string, std::string> kTimedBy = {
    {"nvmlDeviceGetClockInfo", "sm_clock_read"},
    {"nvmlGpmSampleGet", "gpm_sample"},
    {"nvmlGpmMetricsGet", "gpm_metrics_get_14"},
};

const std::vector<std::string>& kFunctions = ofu::testing::PerWindowNvmlFunctions();

double ThreadCpuS() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

struct Measured {
  std::map<std::string, double> calls_per_window;  // for the whole node
  double double_cpu_us_per_window = 0;
};

// Runs `windows` windows after a first one on the double and counts.
bool Measure(void* fake, ofu::sources::SourceOptions options, int gpus, int windows, Measured& out) {
  auto load = reinterpret_cast<int (*)(const char*)>(dlsym(fake, "ofu_fake_nvml_load_scenario"));
  auto count = reinterpret_cast<int (*)(const char*)>(dlsym(fake, "ofu_fake_nvml_count"));
  if (load == nullptr || count == nullptr || load(ofu::testing::EveryCounterScenario(gpus).c_str()) != 0) return false;
  ofu::sources::FakeClock clock(1789999980.0);
  options.nvml_library = OFU_FAKE_NVML_PATH;
  auto source = ofu::sources::OpenNvmlSource(options, clock);
  if (!source.ok() || !(*source)->Next().ok()) return false;
  std::map<std::string, int> before;
  for (const std::string& f : kFunctions) before[f] = count(f.c_str());
  const double cpu0 = ThreadCpuS();
  for (int k = 0; k < windows; ++k) {
    if (!(*source)->Next().ok()) return false;
  }
  out.double_cpu_us_per_window = (ThreadCpuS() - cpu0) / windows * 1e6;
  for (const std::string& f : kFunctions)
    out.calls_per_window[f] = static_cast<double>(count(f.c_str()) - before[f]) / windows;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path =
      argc > 1 ? argv[1] : std::string(OFU_SOURCE_DIR) + "/docs/results/2026-11-26-h100-sxm5/stage-A/probe-cost.json";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json probe = nlohmann::json::parse(text.str(), nullptr, false);
  if (!probe.is_object()) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 2;
  }
  fmt::print("per-call CPU measured on the H100 (driver 580.159.04), {}:\n", path);
  for (const auto& [function, key] : kTimedBy) {
    fmt::print("  {:<40} p50 {:>8.2f} us  mean {:>8.2f} us  ({})\n", function, probe[key]["p50"].get<double>(),
               probe[key]["mean"].get<double>(), key);
  }
  void* fake = dlopen(OFU_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
  if (fake == nullptr) {
    std::fprintf(stderr, "cannot load the NVML double: %s\n", dlerror());
    return 2;
  }

  struct Case {
    const char* label;
    bool every_counter;  // SourceOptions::fields empty: what the agent read before issue 29
    double window_s;
    int gpus;
  };
  const std::vector<Case> cases = {
      {"agent", false, 1.0, 1}, {"agent", false, 1.0, 8},       {"agent", false, 0.1, 1},
      {"agent", false, 0.1, 8}, {"all (before)", true, 1.0, 1}, {"all (before)", true, 0.1, 1},
  };
  fmt::print("\n{:<13} {:>6} {:>4} | {:>28} | {:>22} | {:>22} | {}\n", "fields", "window", "GPUs",
             "calls/window: clock smpl met", "H100 p50: us/win  %core", "H100 mean: us/win %core",
             "double here: us/win %core; not measured on the H100 (calls/window)");
  for (const Case& c : cases) {
    ofu::sources::SourceOptions given;
    given.window_s = c.window_s;
    ofu::sources::SourceOptions options = ofu::agent::AgentSourceOptions(given);
    if (c.every_counter) options.fields.clear();
    // Ten process-list intervals of 10 s: whole lists, and enough windows
    // to time the double above the clock's noise.
    const int windows = static_cast<int>(std::lround(100.0 / c.window_s));
    Measured m;
    if (!Measure(fake, options, c.gpus, windows, m)) {
      std::fprintf(stderr, "the source did not run on the double\n");
      return 1;
    }
    double p50_us = 0;
    double mean_us = 0;
    std::string untimed;
    for (const std::string& f : kFunctions) {
      const double n = m.calls_per_window[f];
      if (auto it = kTimedBy.find(f); it != kTimedBy.end()) {
        p50_us += n * probe[it->second]["p50"].get<double>();
        mean_us += n * probe[it->second]["mean"].get<double>();
      } else if (n > 0) {
        untimed += fmt::format("{}{} {:g}", untimed.empty() ? "" : ", ", f.substr(4), n);
      }
    }
    const auto percent = [&](double us) { return us / (c.window_s * 1e6) * 100; };
    fmt::print(
        "{:<13} {:>5g}s {:>4} | {:>10g} {:>8g} {:>8g} | {:>12.1f} {:>8.3f}% | {:>12.1f} {:>8.3f}% | "
        "{:.1f} {:.4f}%; {}\n",
        c.label, c.window_s, c.gpus, m.calls_per_window["nvmlDeviceGetClockInfo"],
        m.calls_per_window["nvmlGpmSampleGet"], m.calls_per_window["nvmlGpmMetricsGet"], p50_us, percent(p50_us),
        mean_us, percent(mean_us), m.double_cpu_us_per_window, percent(m.double_cpu_us_per_window),
        untimed.empty() ? "none" : untimed);
  }
  fmt::print(
      "\nH100 columns: a lower bound (only the 3 timed calls; nvmlGpmMetricsGet at its 14-metric time). "
      "Measured there: 6.49 % of a core at 0.1 s, 1 GPU (stage-C/agent/agent-cost.json).\n");
  dlclose(fake);
  return 0;
}
