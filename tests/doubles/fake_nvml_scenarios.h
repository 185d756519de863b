// Scenarios of the NVML double (fake_nvml.cc) shared by the call-count test
// (tests/sources/nvml_call_count_test.cc) and the cost model
// (bench/nvml_cost_model.cc), so that both count the calls of the same
// machine. SYNTHETIC values.
#pragma once

#include <string>
#include <vector>

namespace ofu::testing {

// The NVML functions the source calls per window or per attribution
// interval, by the names the double counts them under.
inline const std::vector<std::string>& PerWindowNvmlFunctions() {
  static const std::vector<std::string> functions = {
      "nvmlDeviceGetClockInfo",
      "nvmlGpmSampleGet",
      "nvmlGpmMetricsGet",
      "nvmlDeviceGetPowerUsage",
      "nvmlDeviceGetTotalEnergyConsumption",
      "nvmlDeviceGetCurrentClocksEventReasons",
      "nvmlDeviceGetComputeRunningProcesses_v3",
  };
  return functions;
}

// `gpus` H100-like GPUs that answer every counter the source can ask for.
inline std::string EveryCounterScenario(int gpus) {
  std::string devices;
  for (int i = 0; i < gpus; ++i) {
    devices += (i == 0 ? "" : ",") + std::string(R"({"uuid": "GPU-)") + std::to_string(i) +
               R"(", "sm_count": 132, "max_sm_clock_mhz": 1980,
                  "power_mw": [650000], "energy_mj": [1000000], "clock_event_reasons": [4],
                  "processes": [{"pid": 4242, "used_memory": 1048576}],
                  "gpm": [{"1": 100, "2": 95, "3": 40, "5": 50, "6": 0, "7": 45, "8": 0, "9": 5,
                           "10": 30, "11": 1, "12": 10, "13": 2}]})";
  }
  return R"({"devices": [)" + devices + "]}";
}

}  // namespace ofu::testing
