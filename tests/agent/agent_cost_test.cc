// What the agent costs, as it exports it on /metrics (issue 29): agent::Run
// on the NVML double with a FakeClock, scraped on loopback. The double
// counts every NVML function it receives (tests/doubles/fake_nvml.cc), so
// the agent's ofu_source_calls_total must equal those counts exactly; the
// process_* figures are read from SYNTHETIC /proc files whose values are
// known.
#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "ofu/agent/run.h"

namespace ofu::agent {
namespace {

namespace fs = std::filesystem;

// SYNTHETIC: two GPUs that answer every GPM metric the source asks for.
constexpr const char* kScenario = R"({"devices": [
  {"uuid": "GPU-cost-0", "sm_count": 132, "max_sm_clock_mhz": 1980, "power_mw": [650000],
   "gpm": [{"1": 100, "2": 95, "3": 40, "5": 50, "6": 0, "7": 45, "8": 0, "9": 5, "10": 30, "11": 1, "12": 10, "13": 2}]},
  {"uuid": "GPU-cost-1", "sm_count": 132, "max_sm_clock_mhz": 1980, "power_mw": [640000],
   "gpm": [{"1": 100, "2": 95, "3": 40, "5": 50, "6": 0, "7": 45, "8": 0, "9": 5, "10": 30, "11": 1, "12": 10, "13": 2}]}
]})";

// The value of every sample of `family` with the single label `label`, by that label's value.
std::map<std::string, double> SamplesBy(const std::string& metrics, const std::string& family,
                                        const std::string& label) {
  std::map<std::string, double> out;
  const std::regex line("^" + family + R"re(\{)re" + label + R"re(="([^"]+)"\} (\S+)$)re");
  std::istringstream in(metrics);
  std::string text;
  std::smatch m;
  while (std::getline(in, text)) {
    if (std::regex_match(text, m, line)) out[m[1]] = std::stod(m[2]);
  }
  return out;
}

class AgentCostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_ = dlopen(OFU_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    const auto load = reinterpret_cast<int (*)(const char*)>(dlsym(handle_, "ofu_fake_nvml_load_scenario"));
    count_ = reinterpret_cast<int (*)(const char*)>(dlsym(handle_, "ofu_fake_nvml_count"));
    ASSERT_NE(load, nullptr);
    ASSERT_NE(count_, nullptr);
    ASSERT_EQ(load(kScenario), 0);

    dir_ = fs::temp_directory_path() / fmt::format("ofu-agent-cost-{}-{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    // SYNTHETIC /proc: utime 150 and stime 1830 ticks (19.8 s at 100 a
    // second), starttime 12345 ticks after boot at 1764180000, vsize 1 GiB,
    // rss 8192 pages of 4096 bytes, five open descriptors, soft limit 1024.
    fs::create_directories(dir_ / "proc" / "self" / "fd");
    std::ofstream(dir_ / "proc" / "self" / "stat")
        << "4242 (ofu) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 1830 0 0 20 0 5 0 12345 1073741824 8192 "
           "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n";
    std::ofstream(dir_ / "proc" / "stat") << "btime 1764180000\n";
    std::ofstream(dir_ / "proc" / "self" / "limits")
        << "Max open files            1024                 4096      files\n";
    for (int fd = 0; fd < 5; ++fd) std::ofstream(dir_ / "proc" / "self" / "fd" / std::to_string(fd));

    environment_.version = "test";
    environment_.executable = dir_ / "bin" / "ofu";
    environment_.log = [this](std::string_view line) { log_.emplace_back(line); };
    environment_.notify = [this](const std::string& state) {
      if (state == "WATCHDOG=1") ++windows_;
    };
    environment_.watchdog = true;
    environment_.proc_files = sources::ProcFiles{dir_ / "proc", 100, 4096};
  }
  void TearDown() override {
    fs::remove_all(dir_);
    if (handle_ != nullptr) dlclose(handle_);
  }

  AgentConfig Config() const {
    AgentConfig config;
    config.source = "nvml";
    config.source_options.nvml_library = OFU_FAKE_NVML_PATH;
    config.store_path.clear();
    config.listen_port = 0;
    config.attribution_methods = {"static"};
    return config;
  }

  std::string Scrape() const {
    int port = 0;
    for (const std::string& line : log_) {
      const std::string prefix = "serving /metrics on http://127.0.0.1:";
      if (line.rfind(prefix, 0) == 0) port = std::stoi(line.substr(prefix.size()));
    }
    httplib::Client client("127.0.0.1", port);
    auto response = client.Get("/metrics");
    return response && response->status == 200 ? response->body : "";
  }

  void* handle_ = nullptr;
  int (*count_)(const char*) = nullptr;
  fs::path dir_;
  GpuSpecDatabase specs_ = *GpuSpecDatabase::Embedded();
  sources::FakeClock clock_{1000};
  RunEnvironment environment_;
  std::vector<std::string> log_;
  int windows_ = 0;
};

TEST_F(AgentCostTest, CallCountsOnMetricsAreTheCallsTheDriverReceived) {
  // The double's counts are process-wide and cumulative: what this agent
  // caused is the difference across the run. Both sides are read on the
  // agent's thread between windows (stop_requested), so no call is in flight.
  const int before_all = count_("nvml_calls");
  std::map<std::string, int> before;
  std::string metrics;
  std::map<std::string, int> received;
  int received_all = 0;
  environment_.stop_requested = [&] {
    if (windows_ < 5) return false;
    metrics = Scrape();
    for (const auto& [call, calls] : SamplesBy(metrics, "ofu_source_calls_total", "call")) {
      received[call] = count_(call.c_str());
    }
    received_all = count_("nvml_calls") - before_all;
    return true;
  };
  // Every NVML function's count before the agent loaded the library.
  for (const char* name : {"nvmlInit_v2", "nvmlDeviceGetCount_v2", "nvmlDeviceGetClockInfo", "nvmlGpmSampleGet",
                           "nvmlGpmMetricsGet", "nvmlDeviceGetPowerUsage", "nvmlGpmSampleAlloc"}) {
    before[name] = count_(name);
  }
  auto ended = agent::Run(Config(), specs_, clock_, environment_);
  ASSERT_TRUE(ended.ok()) << ended.error().message << "\n" << fmt::format("{}", fmt::join(log_, "\n"));
  ASSERT_FALSE(metrics.empty());

  const auto exported = SamplesBy(metrics, "ofu_source_calls_total", "call");
  ASSERT_FALSE(exported.empty()) << metrics;
  double exported_all = 0;
  for (const auto& [call, calls] : exported) {
    EXPECT_EQ(calls, received[call] - before[call]) << call;
    exported_all += calls;
  }
  // Nothing the double received went uncounted: the sums agree too.
  EXPECT_EQ(exported_all, received_all);
  // The calls that matter most are there, under the library's own names,
  // and were made: the GPM metrics get at least once per GPU per window
  // after the first (5 windows, 2 GPUs).
  EXPECT_EQ(exported.at("nvmlInit_v2"), 1);
  EXPECT_GE(exported.at("nvmlGpmMetricsGet"), 8);
  EXPECT_GE(exported.at("nvmlDeviceGetClockInfo"), 10);
  // A resolved function never called is listed at 0, not left out.
  EXPECT_EQ(exported.at("nvmlShutdown"), 0);

  // Time is exported per call and kind; wall and CPU for each call counted.
  for (const auto& [call, calls] : exported) {
    EXPECT_NE(metrics.find(fmt::format("ofu_source_call_seconds_total{{call=\"{}\",kind=\"wall\"}}", call)),
              std::string::npos)
        << call;
    EXPECT_NE(metrics.find(fmt::format("ofu_source_call_seconds_total{{call=\"{}\",kind=\"cpu\"}}", call)),
              std::string::npos)
        << call;
  }
  EXPECT_NE(metrics.find("# TYPE ofu_source_calls_total counter"), std::string::npos) << metrics;

  // The process figures, from the synthetic /proc, by hand.
  EXPECT_NE(metrics.find("\nprocess_cpu_seconds_total 19.8\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\nprocess_resident_memory_bytes 33554432\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\nprocess_virtual_memory_bytes 1073741824\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\nprocess_start_time_seconds 1764180123.45\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\nprocess_open_fds 5\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\nprocess_max_fds 1024\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("# TYPE process_cpu_seconds_total counter"), std::string::npos) << metrics;
}

}  // namespace
}  // namespace ofu::agent
