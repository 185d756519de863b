// The NVML GPM source against the scripted double tests/doubles/fake_nvml.cc,
// loaded through the same dlopen path as the real libnvidia-ml.so.1. Time is
// a FakeClock, so no test sleeps; every expected number is worked out by hand
// in the test from the scenario.
#include "ofu/sources/nvml/nvml_source.h"

#include <dlfcn.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ofu/sources/nvml/nvml_library.h"

namespace ofu::sources {
namespace {

using ::testing::HasSubstr;

class NvmlSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The same path as the source opens, hence the same loaded object and
    // the same scenario state.
    handle_ = dlopen(OFU_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    load_ = reinterpret_cast<int (*)(const char*)>(dlsym(handle_, "ofu_fake_nvml_load_scenario"));
    count_ = reinterpret_cast<int (*)(const char*)>(dlsym(handle_, "ofu_fake_nvml_count"));
    ASSERT_NE(load_, nullptr);
    ASSERT_NE(count_, nullptr);
  }
  void TearDown() override {
    if (handle_ != nullptr) dlclose(handle_);
  }

  void Load(const std::string& scenario) { ASSERT_EQ(load_(scenario.c_str()), 0) << scenario; }
  int Count(const char* what) { return count_(what); }

  Result<std::unique_ptr<Source>> Open(SourceOptions options = {}) {
    if (options.nvml_library.empty()) options.nvml_library = OFU_FAKE_NVML_PATH;
    return OpenNvmlSource(options, clock_);
  }
  std::unique_ptr<Source> OpenOk(SourceOptions options = {}) {
    auto source = Open(std::move(options));
    EXPECT_TRUE(source.ok()) << (source.ok() ? "" : source.error().message);
    return source.ok() ? std::move(source).value() : nullptr;
  }
  static Snapshot NextOk(Source& source) {
    auto next = source.Next();
    EXPECT_TRUE(next.ok());
    EXPECT_TRUE(next.ok() && next->has_value());
    return next.ok() && next->has_value() ? std::move(**next) : Snapshot{};
  }

  FakeClock clock_{1000};
  void* handle_ = nullptr;
  int (*load_)(const char*) = nullptr;
  int (*count_)(const char*) = nullptr;
};

constexpr const char* kSteady = R"({
  "driver_version": "550.54.15",
  "devices": [{
    "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-aaaa", "pci_bus_id": "00000000:18:00.0",
    "architecture": 9, "sm_count": 132, "max_sm_clock_mhz": 1980,
    "clocks": [1830], "power_mw": [700500], "energy_mj": [123456789], "clock_event_reasons": [4],
    "gpm": [{"1": 100, "2": 90, "3": 40, "5": 50, "6": 0, "7": 45, "8": 0, "9": 5,
             "10": 30, "11": 1, "12": 10, "13": 2}]
  }]})";

TEST_F(NvmlSourceTest, SteadyLoadGivesExactRatiosPowerAndEnergy) {
  Load(kSteady);
  SourceOptions options;
  options.window_s = 1;
  options.clock_readings = 10;
  auto source = OpenOk(options);
  ASSERT_NE(source, nullptr);
  EXPECT_TRUE(source->live());
  EXPECT_THAT(source->Describe(), HasSubstr("driver 550.54.15"));
  EXPECT_EQ(source->kind(), "nvml");
  EXPECT_EQ(Count("gpm_sample"), 0);

  const Snapshot s = NextOk(*source);
  // The first window starts at the call: one sample then, one at its end.
  EXPECT_EQ(Count("gpm_sample"), 2);
  EXPECT_EQ(Count("clock"), 10);
  EXPECT_DOUBLE_EQ(s.time_s, 1001.0);
  EXPECT_DOUBLE_EQ(s.window_s, 1.0);
  ASSERT_EQ(s.gpus.size(), 1u);
  const GpuReading& g = s.gpus[0];
  EXPECT_EQ(g.health, GpuHealth::kOk);
  EXPECT_EQ(g.problem, "");
  EXPECT_EQ(g.identity.key, "GPU-aaaa");
  EXPECT_EQ(g.identity.uuid, "GPU-aaaa");
  EXPECT_EQ(g.identity.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.identity.pci_bus_id, "00000000:18:00.0");
  EXPECT_EQ(g.identity.gpu_index, "0");
  EXPECT_EQ(g.sm_count, 132);
  EXPECT_DOUBLE_EQ(g.sample.time_s, 1001.0);
  // Percent -> 0..1.
  EXPECT_EQ(g.sample.tensor_active, 0.5);
  EXPECT_EQ(g.sample.gr_engine_active, 1.0);
  EXPECT_DOUBLE_EQ(*g.sample.sm_active, 0.9);
  EXPECT_DOUBLE_EQ(*g.sample.sm_occupancy, 0.4);
  EXPECT_DOUBLE_EQ(*g.sample.hmma_active, 0.45);
  EXPECT_DOUBLE_EQ(*g.sample.imma_active, 0.05);
  EXPECT_DOUBLE_EQ(*g.sample.dram_active, 0.3);
  EXPECT_DOUBLE_EQ(*g.sample.fp64_active, 0.01);
  EXPECT_DOUBLE_EQ(*g.sample.fp32_active, 0.1);
  EXPECT_DOUBLE_EQ(*g.sample.fp16_active, 0.02);
  // A delivered 0 is a value, not an absence.
  ASSERT_TRUE(g.sample.dfma_active.has_value());
  EXPECT_EQ(*g.sample.dfma_active, 0.0);
  ASSERT_TRUE(g.sample.dmma_active.has_value());
  EXPECT_EQ(*g.sample.dmma_active, 0.0);
  EXPECT_EQ(g.sample.sm_clock_mhz, 1830.0);
  EXPECT_EQ(g.sm_clock_min_mhz, 1830.0);
  EXPECT_EQ(g.sm_clock_max_mhz, 1830.0);
  EXPECT_EQ(g.clock_readings, 10);
  EXPECT_EQ(g.clock_basis, ClockBasis::kOversampled);
  EXPECT_EQ(g.sample.max_sm_clock_mhz, 1980.0);
  EXPECT_EQ(g.sample.power_w, 700.5);  // 700500 mW
  EXPECT_EQ(g.sample.energy_mj, 123456789.0);
  EXPECT_EQ(g.sample.clock_event_reasons, 4u);
  EXPECT_TRUE(s.notes.empty());

  const Snapshot second = NextOk(*source);
  EXPECT_DOUBLE_EQ(second.time_s, 1002.0);
  EXPECT_EQ(Count("gpm_sample"), 3);
  EXPECT_EQ(Count("metrics_get"), 2);
  EXPECT_EQ(second.gpus[0].sample.tensor_active, 0.5);
}

TEST_F(NvmlSourceTest, ClockThrottlingMidWindowIsOversampled) {
  Load(R"({"devices": [{"uuid": "GPU-t", "sm_count": 132,
            "clocks": [1830, 1830, 1830, 1830, 1830, 1200, 1200, 1200, 1200, 1200],
            "gpm": [{"5": 50}]}]})");
  SourceOptions options;
  options.window_s = 1;
  options.clock_readings = 10;
  auto source = OpenOk(options);
  ASSERT_NE(source, nullptr);
  const Snapshot s = NextOk(*source);
  const GpuReading& g = s.gpus.at(0);
  // (5 x 1830 + 5 x 1200) / 10 = 15150 / 10.
  EXPECT_EQ(g.sample.sm_clock_mhz, 1515.0);
  EXPECT_EQ(g.sm_clock_min_mhz, 1200.0);
  EXPECT_EQ(g.sm_clock_max_mhz, 1830.0);
  EXPECT_EQ(g.clock_readings, 10);
  EXPECT_EQ(g.clock_basis, ClockBasis::kOversampled);
}

TEST_F(NvmlSourceTest, WindowsEndOnTheGridWhateverTheCallerSpends) {
  Load(R"({"devices": [{"uuid": "GPU-w", "clocks": [1500], "gpm": [{"5": 10}]}]})");
  SourceOptions options;
  options.window_s = 1;
  options.clock_readings = 4;
  auto source = OpenOk(options);
  ASSERT_NE(source, nullptr);
  EXPECT_DOUBLE_EQ(NextOk(*source).time_s, 1001.0);
  clock_.SleepS(0.25);  // the caller renders: the next window is shortened
  const Snapshot shortened = NextOk(*source);
  EXPECT_DOUBLE_EQ(shortened.time_s, 1002.0);
  EXPECT_DOUBLE_EQ(shortened.window_s, 1.0);  // GPM covers 1001..1002
  clock_.SleepS(2.5);                         // 1004.5: two whole windows missed
  const Snapshot late = NextOk(*source);
  EXPECT_DOUBLE_EQ(late.time_s, 1005.0);
  EXPECT_DOUBLE_EQ(late.window_s, 3.0);
}

TEST_F(NvmlSourceTest, LostGpuStaysLostWhileTheOtherGoesOn) {
  Load(R"({"devices": [
    {"uuid": "GPU-0", "clocks": [1700], "power_mw": [500000], "gpm": [{"5": 40}]},
    {"uuid": "GPU-1", "clocks": [1600], "power_mw": [400000], "gpm": [{"5": 60}],
     "lost_after_gpm_samples": 4}]})");
  SourceOptions options;
  options.window_s = 1;
  options.clock_readings = 2;
  auto source = OpenOk(options);
  ASSERT_NE(source, nullptr);
  for (int window = 1; window <= 2; ++window) {
    const Snapshot s = NextOk(*source);
    ASSERT_EQ(s.gpus.size(), 2u);
    EXPECT_EQ(s.gpus[1].health, GpuHealth::kOk) << window;
    EXPECT_EQ(s.gpus[1].sample.tensor_active, 0.6) << window;
  }
  // GPU-1's 4th sample (the end of window 3) is its last good call: the
  // calls after it in window 3 find it lost.
  for (int window = 3; window <= 4; ++window) {
    const Snapshot s = NextOk(*source);
    ASSERT_EQ(s.gpus.size(), 2u);
    const GpuReading& ok = s.gpus[0];
    EXPECT_EQ(ok.identity.key, "GPU-0");
    EXPECT_EQ(ok.health, GpuHealth::kOk) << window;
    EXPECT_EQ(ok.sample.tensor_active, 0.4) << window;
    EXPECT_EQ(ok.sample.sm_clock_mhz, 1700.0) << window;
    EXPECT_EQ(ok.sample.power_w, 500.0) << window;
    const GpuReading& lost = s.gpus[1];
    EXPECT_EQ(lost.identity.key, "GPU-1");
    EXPECT_EQ(lost.health, GpuHealth::kLost) << window;
    EXPECT_THAT(lost.problem, HasSubstr("Xid 79"));
    EXPECT_THAT(lost.problem, HasSubstr("reset"));
    EXPECT_FALSE(lost.sample.tensor_active.has_value());
    EXPECT_FALSE(lost.sample.sm_clock_mhz.has_value());
    EXPECT_FALSE(lost.sample.power_w.has_value());
    EXPECT_EQ(lost.clock_basis, ClockBasis::kNone);
  }
}

TEST_F(NvmlSourceTest, NoGpuWithGpmFailsOpenAndPointsToDcgm) {
  Load(R"({"devices": [
    {"uuid": "GPU-a100-0", "architecture": 7, "gpm_supported": false, "clocks": [1410]},
    {"uuid": "GPU-a100-1", "architecture": 7, "gpm_supported": false, "clocks": [1410]}]})");
  auto source = Open();
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(source.error().message, HasSubstr("Hopper"));
  EXPECT_THAT(source.error().message, HasSubstr("use --source dcgm"));
  EXPECT_EQ(Count("shutdown"), 1);  // NVML is not left initialised
}

TEST_F(NvmlSourceTest, MixedNodeReportsTheGpuWithoutGpmAsNotSupported) {
  Load(R"({"devices": [
    {"uuid": "GPU-h100", "architecture": 9, "clocks": [1980], "gpm": [{"5": 50}]},
    {"uuid": "GPU-a100", "architecture": 7, "gpm_supported": false, "clocks": [1410],
     "power_mw": [250000]}]})");
  SourceOptions options;
  options.window_s = 1;
  options.clock_readings = 2;
  auto source = OpenOk(options);
  ASSERT_NE(source, nullptr);
  const Snapshot s = NextOk(*source);
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_EQ(s.gpus[0].health, GpuHealth::kOk);
  EXPECT_EQ(s.gpus[0].sample.tensor_active, 0.5);
  const GpuReading& a100 = s.gpus[1];
  EXPECT_EQ(a100.health, GpuHealth::kNotSupported);
  EXPECT_THAT(a100.problem, HasSubstr("--source dcgm"));
  EXPECT_THAT(a100.problem, HasSubstr("Ampere"));
  EXPECT_FALSE(a100.sample.tensor_active.has_value());
  EXPECT_FALSE(a100.sample.sm_active.has_value());
  EXPECT_EQ(a100.sample.sm_clock_mhz, 1410.0);
  EXPECT_EQ(a100.sample.power_w, 250.0);
}

TEST_F(NvmlSourceTest, NoPermissionSaysHowToGetIt) {
  Load(R"({"devices": [{"uuid": "GPU-p", "clocks": [1755], "power_mw": [300000],
            "gpm_sample_error": 4, "gpm": [{"5": 50}]}]})");
  SourceOptions options;
  options.window_s = 1;
  options.clock_readings = 1;
  auto source = OpenOk(options);
  ASSERT_NE(source, nullptr);
  for (int window = 0; window < 2; ++window) {
    const Snapshot s = NextOk(*source);
    const GpuReading& g = s.gpus.at(0);
    EXPECT_EQ(g.health, GpuHealth::kNoPermission);
    EXPECT_THAT(g.problem, HasSubstr("root"));
    EXPECT_THAT(g.problem, HasSubstr("NVreg_RestrictProfilingToAdminUsers=0"));
    EXPECT_FALSE(g.sample.tensor_active.has_value());
    EXPECT_EQ(g.sample.sm_clock_mhz, 1755.0);
    EXPECT_EQ(g.clock_basis, ClockBasis::kPointReading);
    EXPECT_EQ(g.sample.power_w, 300.0);
  }
  EXPECT_EQ(Count("metrics_get"), 0);
}

TEST_F(NvmlSourceTest, DriverGoneRetriesOnBackoffAndRecovers) {
  // The 2nd SM-clock read (window 2, one reading per window at its end,
  // t = 1002) finds the driver gone; the next two nvmlInit calls fail.
  Load(R"({"devices": [{"uuid": "GPU-d", "sm_count": 132, "clocks": [1800], "gpm": [{"5": 25}]}],
           "driver_gone": {"at_clock_read": 2, "error": 9, "init_failures": 2}})");
  SourceOptions options;
  options.window_s = 1;
  options.clock_readings = 1;
  auto source = OpenOk(options);
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(Count("init"), 1);

  const Snapshot first = NextOk(*source);
  EXPECT_EQ(first.gpus.at(0).health, GpuHealth::kOk);

  // Failure at 1002: retries allowed at 1003 (+1 s), then after failures at
  // 1003 (+2 s -> 1005) and 1005 (+4 s -> 1009); 1009 succeeds.
  const int expected_inits[] = {1, 2, 2, 3, 3, 3, 3, 4};  // after windows ending 1002 .. 1009
  for (int i = 0; i < 8; ++i) {
    const Snapshot s = NextOk(*source);
    const double end = 1002.0 + i;
    EXPECT_DOUBLE_EQ(s.time_s, end);  // never blocks past the window
    EXPECT_EQ(Count("init"), expected_inits[i]) << "window ending " << end;
    ASSERT_EQ(s.gpus.size(), 1u);
    EXPECT_EQ(s.gpus[0].identity.key, "GPU-d");
    EXPECT_EQ(s.gpus[0].health, GpuHealth::kUnavailable) << end;
    EXPECT_THAT(s.gpus[0].problem, HasSubstr("DRIVER_NOT_LOADED"));
    EXPECT_FALSE(s.gpus[0].sample.tensor_active.has_value());
    EXPECT_FALSE(s.gpus[0].sample.sm_clock_mhz.has_value());
    if (i == 0) {
      EXPECT_EQ(Count("shutdown"), 1);
      EXPECT_EQ(Count("samples_live"), 0);  // sample buffers released
      ASSERT_EQ(s.notes.size(), 1u);
      EXPECT_THAT(s.notes[0], HasSubstr("NVML stopped working"));
    }
    if (i == 7) {
      ASSERT_EQ(s.notes.size(), 1u);
      EXPECT_THAT(s.notes[0], HasSubstr("NVML is back after 3 failed attempts"));
    }
  }
  const Snapshot recovered = NextOk(*source);
  EXPECT_DOUBLE_EQ(recovered.time_s, 1010.0);
  ASSERT_EQ(recovered.gpus.size(), 1u);
  EXPECT_EQ(recovered.gpus[0].health, GpuHealth::kOk);
  EXPECT_EQ(recovered.gpus[0].sample.tensor_active, 0.25);
  EXPECT_EQ(recovered.gpus[0].sample.sm_clock_mhz, 1800.0);
  EXPECT_EQ(Count("init"), 4);
}

TEST_F(NvmlSourceTest, MissingLibraryNamesThePath) {
  SourceOptions options;
  options.nvml_library = "/nonexistent/dir/libnvidia-ml.so.1";
  auto source = Open(options);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(source.error().message, HasSubstr("/nonexistent/dir/libnvidia-ml.so.1"));
  EXPECT_THAT(source.error().message, HasSubstr("install the NVIDIA driver"));
  EXPECT_THAT(source.error().message, HasSubstr("--nvml-library"));
}

TEST_F(NvmlSourceTest, InitFailureCarriesNvmlError) {
  Load(R"({"init_error": 9, "devices": [{"uuid": "GPU-x"}]})");
  auto source = Open();
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(source.error().message, HasSubstr("nvmlInit"));
  EXPECT_THAT(source.error().message, HasSubstr("DRIVER_NOT_LOADED"));
}

TEST_F(NvmlSourceTest, NoGpuFailsOpen) {
  Load(R"({"devices": []})");
  auto source = Open();
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(source.error().message, HasSubstr("no GPU"));
}

// The exact-cycle tests need a driver that answers GPM 248 and 250, which
// the one measured (580.159.04) does not: they opt in to the double's
// "newer-gpm-cycles" profile (tests/doubles/fake_nvml.cc).
//
// 132 SMs at 1700 MHz for 1 s: 132 x 1.7e9 = 2.244e11 elapsed cycles summed
// over SMs; the oversampled clock (1800 MHz) is within a factor 2 of 1700.
TEST_F(NvmlSourceTest, ExactCyclesSummedOverSms) {
  Load(R"({"driver_profile": "newer-gpm-cycles", "devices": [{"uuid": "GPU-s", "sm_count": 132, "clocks": [1800],
            "gpm": [{"5": 20, "248": 2.244e11, "250": 5.61e10}]}]})");
  SourceOptions options;
  options.window_s = 1;
  options.clock_readings = 10;
  auto source = OpenOk(options);
  ASSERT_NE(source, nullptr);
  for (int window = 0; window < 2; ++window) {
    const Snapshot s = NextOk(*source);
    const GpuReading& g = s.gpus.at(0);
    EXPECT_EQ(g.clock_basis, ClockBasis::kExactCycles);
    EXPECT_DOUBLE_EQ(*g.sample.tensor_active, 0.25);  // 5.61e10 / 2.244e11, not GPM's 20 %
    EXPECT_DOUBLE_EQ(*g.sample.sm_clock_mhz, 1700.0);
    EXPECT_EQ(g.sm_clock_min_mhz, 1800.0);  // the readings stay as measured
    EXPECT_EQ(g.clock_readings, 10);
    EXPECT_TRUE(s.notes.empty());
  }
}

TEST_F(NvmlSourceTest, ExactCyclesPerSmAverage) {
  Load(R"({"driver_profile": "newer-gpm-cycles", "devices": [{"uuid": "GPU-p", "sm_count": 132, "clocks": [1800],
            "gpm": [{"5": 20, "248": 1.7e9, "250": 1.02e9}]}]})");
  SourceOptions options;
  options.window_s = 1;
  auto source = OpenOk(options);
  ASSERT_NE(source, nullptr);
  const GpuReading g = NextOk(*source).gpus.at(0);
  EXPECT_EQ(g.clock_basis, ClockBasis::kExactCycles);
  EXPECT_DOUBLE_EQ(*g.sample.tensor_active, 0.6);
  EXPECT_DOUBLE_EQ(*g.sample.sm_clock_mhz, 1700.0);
}

TEST_F(NvmlSourceTest, InconsistentCyclesFallBackWithOneNote) {
  // 1e7 cycles in 1 s fits neither 132 x 1800 MHz nor 1800 MHz.
  Load(R"({"driver_profile": "newer-gpm-cycles", "devices": [{"uuid": "GPU-i", "sm_count": 132, "clocks": [1800],
            "gpm": [{"5": 20, "248": 1e7, "250": 5e6}]}]})");
  SourceOptions options;
  options.window_s = 1;
  options.clock_readings = 10;
  auto source = OpenOk(options);
  ASSERT_NE(source, nullptr);
  const Snapshot first = NextOk(*source);
  const GpuReading& g = first.gpus.at(0);
  EXPECT_EQ(g.clock_basis, ClockBasis::kOversampled);
  EXPECT_EQ(g.sample.tensor_active, 0.2);
  EXPECT_EQ(g.sample.sm_clock_mhz, 1800.0);
  ASSERT_EQ(first.notes.size(), 1u);
  EXPECT_THAT(first.notes[0], HasSubstr("GPU-i"));
  EXPECT_THAT(first.notes[0], HasSubstr("fits neither"));
  const Snapshot second = NextOk(*source);
  EXPECT_TRUE(second.notes.empty());  // said once, not every window
  EXPECT_EQ(second.gpus.at(0).sample.tensor_active, 0.2);
}

// ---- The double's defaults are the driver measured on an H100 SXM5
// (580.159.04, docs/results/2026-11-26-h100-sxm5/, README.md there): the
// values below are SYNTHETIC, the behaviour is the measured one.

// Asks the double, through the product's own loader, for GPM `ids` over
// its first device's first window; each id's own return code and value.
struct GpmAnswer {
  nvmlReturn_t code = NVML_SUCCESS;
  double value = 0;
  bool operator==(const GpmAnswer&) const = default;
};
std::vector<GpmAnswer> AskGpm(const NvmlFunctions& fn, nvmlDevice_t device, const std::vector<unsigned>& ids) {
  std::array<nvmlGpmSample_t, 2> samples{};
  for (auto& sample : samples) {
    EXPECT_EQ(fn.GpmSampleAlloc(&sample), NVML_SUCCESS);
    EXPECT_EQ(fn.GpmSampleGet(device, sample), NVML_SUCCESS);
  }
  auto request = std::make_unique<nvmlGpmMetricsGet_t>();
  request->version = NVML_GPM_METRICS_GET_VERSION;
  request->sample1 = samples[0];
  request->sample2 = samples[1];
  request->numMetrics = static_cast<unsigned>(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) request->metrics[i].metricId = ids[i];
  // The call as a whole succeeds; each id answers in its own nvmlReturn.
  EXPECT_EQ(fn.GpmMetricsGet(request.get()), NVML_SUCCESS);
  std::vector<GpmAnswer> answers;
  for (std::size_t i = 0; i < ids.size(); ++i)
    answers.push_back({request->metrics[i].nvmlReturn, request->metrics[i].value});
  for (auto& sample : samples) fn.GpmSampleFree(sample);
  return answers;
}

TEST_F(NvmlSourceTest, DoubleRefusesGpmIdsFrom210AsDriver580Did) {
  // The scenario gives values for 248-250: the measured driver refuses them all the same.
  const std::string gpm = R"("gpm": [{"5": 93.8, "209": 1.5, "248": 2.244e11, "249": 2.2e11, "250": 5.61e10}])";
  Load(R"({"devices": [{"uuid": "GPU-r", )" + gpm + "}]}");
  auto nvml = NvmlLibrary::Load(OFU_FAKE_NVML_PATH);
  ASSERT_TRUE(nvml.ok()) << nvml.error().message;
  const NvmlFunctions& fn = (*nvml)->fn();
  ASSERT_EQ(fn.Init(), NVML_SUCCESS);
  char text[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  ASSERT_EQ(fn.SystemGetDriverVersion(text, sizeof(text)), NVML_SUCCESS);
  EXPECT_STREQ(text, "580.159.04");  // stage-A/probe-info.json
  nvmlDevice_t device = nullptr;
  ASSERT_EQ(fn.DeviceGetHandleByIndex(0, &device), NVML_SUCCESS);
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  ASSERT_EQ(fn.DeviceGetName(device, name, sizeof(name)), NVML_SUCCESS);
  EXPECT_STREQ(name, "NVIDIA H100 80GB HBM3");  // the scenario names none

  // stage-A/probe-metrics.json: 1-209 answered, 210-400 INVALID_ARGUMENT (2).
  const std::vector<unsigned> ids = {5, 7, 209, 210, 248, 249, 250, 400};
  const GpmAnswer refused{NVML_ERROR_INVALID_ARGUMENT, 0};
  const GpmAnswer not_listed{NVML_ERROR_NOT_SUPPORTED, 0};  // an id the scenario does not give
  EXPECT_EQ(AskGpm(fn, device, ids),
            (std::vector<GpmAnswer>{
                {NVML_SUCCESS, 93.8}, not_listed, {NVML_SUCCESS, 1.5}, refused, refused, refused, refused, refused}));
  EXPECT_EQ(fn.Shutdown(), NVML_SUCCESS);

  // The profile of a newer driver answers them; it claims no version number.
  Load(R"({"driver_profile": "newer-gpm-cycles", "devices": [{"uuid": "GPU-r", )" + gpm + "}]}");
  ASSERT_EQ(fn.Init(), NVML_SUCCESS);
  ASSERT_EQ(fn.SystemGetDriverVersion(text, sizeof(text)), NVML_SUCCESS);
  EXPECT_STREQ(text, "newer-gpm-cycles (synthetic)");
  ASSERT_EQ(fn.DeviceGetHandleByIndex(0, &device), NVML_SUCCESS);
  EXPECT_EQ(AskGpm(fn, device, ids), (std::vector<GpmAnswer>{{NVML_SUCCESS, 93.8},
                                                             not_listed,
                                                             {NVML_SUCCESS, 1.5},
                                                             not_listed,
                                                             {NVML_SUCCESS, 2.244e11},
                                                             {NVML_SUCCESS, 2.2e11},
                                                             {NVML_SUCCESS, 5.61e10},
                                                             not_listed}));
  EXPECT_EQ(fn.Shutdown(), NVML_SUCCESS);

  EXPECT_EQ(load_(R"({"driver_profile": "999.99"})"), -1);  // a profile nobody wrote is an error
  EXPECT_EQ(load_(R"({"driver_profile": 580})"), -1);
}

// The double's load rule: without "clocks", the SM clock is 1980 MHz (or the
// device's max) while the current GPM window's tensor activity (metric 5) is
// under 50 %, and 1368 MHz (the H100's bf16 8192^3 mean) from 50 % on.
TEST_F(NvmlSourceTest, DoubleSmClockFallsUnderTensorLoad) {
  Load(R"({"devices": [{"uuid": "GPU-c", "gpm": [{"5": 0}, {"5": 93.8}, {"5": 30.6}]},
                       {"uuid": "GPU-m", "max_sm_clock_mhz": 1755, "gpm": [{"5": 0}]},
                       {"uuid": "GPU-n", "clocks": [], "gpm": [{"5": 93.8}]}]})");
  auto nvml = NvmlLibrary::Load(OFU_FAKE_NVML_PATH);
  ASSERT_TRUE(nvml.ok()) << nvml.error().message;
  const NvmlFunctions& fn = (*nvml)->fn();
  ASSERT_EQ(fn.Init(), NVML_SUCCESS);
  std::array<nvmlDevice_t, 3> devices{};
  for (unsigned i = 0; i < devices.size(); ++i) ASSERT_EQ(fn.DeviceGetHandleByIndex(i, &devices[i]), NVML_SUCCESS);
  const auto clock = [&](nvmlDevice_t device) {
    unsigned mhz = 0;
    EXPECT_EQ(fn.DeviceGetClockInfo(device, NVML_CLOCK_SM, &mhz), NVML_SUCCESS);
    return mhz;
  };
  // Window k runs from GPM sample k+1 to sample k+2.
  std::vector<unsigned> read;
  read.push_back(clock(devices[0]));  // before any sample: window 0
  nvmlGpmSample_t sample = nullptr;
  ASSERT_EQ(fn.GpmSampleAlloc(&sample), NVML_SUCCESS);
  for (int taken = 1; taken <= 4; ++taken) {
    ASSERT_EQ(fn.GpmSampleGet(devices[0], sample), NVML_SUCCESS);
    read.push_back(clock(devices[0]));  // window taken - 1 (the last repeats)
  }
  fn.GpmSampleFree(sample);
  EXPECT_EQ(read, (std::vector<unsigned>{1980, 1980, 1368, 1980, 1980}));
  EXPECT_EQ(clock(devices[1]), 1755u);
  unsigned mhz = 0;
  EXPECT_EQ(fn.DeviceGetClockInfo(devices[2], NVML_CLOCK_SM, &mhz), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(fn.Shutdown(), NVML_SUCCESS);
}

// What ofu did on the H100: GPM 248 and 250 refused, so the NVML source
// keeps the sampled clock (here the double's loaded 1368 MHz, read 10 times)
// and GPM 5's tensor activity. The same scenario on a newer driver takes
// the exact-cycle path: 2.244e11 cycles / (132 SMs x 1 s) = 1700 MHz,
// tensor 5.61e10 / 2.244e11 = 0.25.
TEST_F(NvmlSourceTest, DefaultDriverKeepsTheSampledClockAsOnTheH100) {
  const std::string devices =
      R"("devices": [{"uuid": "GPU-h", "sm_count": 132, "gpm": [{"5": 93.8, "248": 2.244e11, "250": 5.61e10}]}]})";
  SourceOptions options;
  options.window_s = 1;
  options.clock_readings = 10;

  Load("{" + devices);
  auto source = OpenOk(options);
  ASSERT_NE(source, nullptr);
  EXPECT_THAT(source->Describe(), HasSubstr("driver 580.159.04"));
  Snapshot s = NextOk(*source);
  GpuReading g = s.gpus.at(0);
  EXPECT_EQ(g.identity.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.clock_basis, ClockBasis::kOversampled);
  EXPECT_EQ(g.clock_readings, 10);
  EXPECT_EQ(g.sample.sm_clock_mhz, 1368.0);
  ASSERT_TRUE(g.sample.tensor_active.has_value());
  EXPECT_DOUBLE_EQ(*g.sample.tensor_active, 0.938);
  EXPECT_TRUE(s.notes.empty());  // a driver without the counters is normal, not news
  EXPECT_EQ(NextOk(*source).gpus.at(0).clock_basis, ClockBasis::kOversampled);

  source.reset();  // its nvmlShutdown must come before the next source's nvmlInit
  Load(R"({"driver_profile": "newer-gpm-cycles", )" + devices);
  source = OpenOk(options);
  ASSERT_NE(source, nullptr);
  s = NextOk(*source);
  g = s.gpus.at(0);
  EXPECT_EQ(g.clock_basis, ClockBasis::kExactCycles);
  ASSERT_TRUE(g.sample.sm_clock_mhz.has_value() && g.sample.tensor_active.has_value());
  EXPECT_DOUBLE_EQ(*g.sample.sm_clock_mhz, 1700.0);
  EXPECT_DOUBLE_EQ(*g.sample.tensor_active, 0.25);
}

TEST_F(NvmlSourceTest, ComputeProcessesAreListed) {
  std::string processes;
  for (int pid = 1000; pid < 1040; ++pid) {
    processes += (processes.empty() ? "" : ",") + std::string(R"({"pid": )") + std::to_string(pid) + "}";
  }
  Load(std::string(R"({"devices": [
    {"uuid": "GPU-0", "clocks": [1800], "gpm": [{"5": 1}],
     "processes": [{"pid": 4242, "used_memory": 1048576}, {"pid": 77}]},
    {"uuid": "GPU-1", "clocks": [1800], "gpm": [{"5": 1}], "processes": [)") +
       processes + "]}]}");
  SourceOptions options;
  options.window_s = 1;
  auto source = OpenOk(options);
  ASSERT_NE(source, nullptr);
  const Snapshot s = NextOk(*source);
  const auto& p = s.gpus.at(0).processes;
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].pid, 4242u);
  EXPECT_EQ(p[0].used_memory_bytes, 1048576u);
  EXPECT_EQ(p[1].pid, 77u);
  EXPECT_FALSE(p[1].used_memory_bytes.has_value());
  // 40 processes do not fit the first buffer of 32: asked again, all listed.
  const auto& q = s.gpus.at(1).processes;
  ASSERT_EQ(q.size(), 40u);
  EXPECT_EQ(q.front().pid, 1000u);
  EXPECT_EQ(q.back().pid, 1039u);
}

// Unless told otherwise, the clock is read every 100 ms whatever the
// window: 10 readings in a 1 s window, 2 in a 0.2 s one, 1 in a 0.1 s one.
TEST_F(NvmlSourceTest, DefaultClockReadingsFollowTheWindowLength) {
  for (const auto& [window, readings] : {std::pair{1.0, 10}, std::pair{0.2, 2}, std::pair{0.1, 1}}) {
    Load(kSteady);
    SourceOptions options;
    options.window_s = window;
    auto source = OpenOk(options);
    ASSERT_NE(source, nullptr);
    const int before = Count("clock");
    const Snapshot s = NextOk(*source);
    EXPECT_EQ(Count("clock") - before, readings) << "window " << window;
    EXPECT_EQ(s.gpus.at(0).clock_readings, readings) << "window " << window;
  }
}

// With a process interval (the agent's attribution interval) the list is
// read when due and repeated in the windows between: windows of 0.5 s and
// an interval of 2 s read at the 1st, 5th and 9th window.
TEST_F(NvmlSourceTest, ProcessListsAreReadEveryIntervalAndRepeatedBetween) {
  Load(R"({"devices": [{"uuid": "GPU-0", "clocks": [1800], "gpm": [{"5": 1}], "processes": [{"pid": 4242}]}]})");
  SourceOptions options;
  options.window_s = 0.5;
  options.process_interval_s = 2;
  auto source = OpenOk(options);
  ASSERT_NE(source, nullptr);
  const int before = Count("processes");
  std::vector<int> reads_after;
  for (int window = 1; window <= 9; ++window) {
    const Snapshot s = NextOk(*source);
    reads_after.push_back(Count("processes") - before);
    ASSERT_EQ(s.gpus.at(0).processes.size(), 1u) << "window " << window;
    EXPECT_EQ(s.gpus.at(0).processes[0].pid, 4242u) << "window " << window;
  }
  EXPECT_EQ(reads_after, (std::vector<int>{1, 1, 1, 1, 2, 2, 2, 2, 3}));

  // The default reads every window.
  Load(R"({"devices": [{"uuid": "GPU-0", "clocks": [1800], "gpm": [{"5": 1}], "processes": [{"pid": 1}]}]})");
  options.process_interval_s = 0;
  auto every = OpenOk(options);
  ASSERT_NE(every, nullptr);
  const int start = Count("processes");
  for (int window = 0; window < 3; ++window) NextOk(*every);
  EXPECT_EQ(Count("processes") - start, 3);
}

TEST_F(NvmlSourceTest, MetricNotDeliveredStaysAbsent) {
  // Only ANY_TENSOR_UTIL answers; every other metric fails on its own
  // return code, and the board reports no power, energy or reasons.
  Load(R"({"devices": [{"uuid": "GPU-a", "clocks": [1800], "gpm": [{"5": 37.5}]}]})");
  SourceOptions options;
  options.window_s = 1;
  auto source = OpenOk(options);
  ASSERT_NE(source, nullptr);
  for (int window = 0; window < 2; ++window) {
    const GpuReading g = NextOk(*source).gpus.at(0);
    EXPECT_EQ(g.health, GpuHealth::kOk);
    EXPECT_EQ(g.sample.tensor_active, 0.375);
    for (const CounterFieldInfo& field : AllCounterFields()) {
      if (field.field == CounterField::kTensorActive || field.field == CounterField::kSmClockMhz) continue;
      EXPECT_FALSE(GetField(g.sample, field.field).has_value()) << field.name;
    }
    EXPECT_EQ(g.clock_basis, ClockBasis::kOversampled);
    EXPECT_FALSE(g.sm_count.has_value());
  }
}

TEST_F(NvmlSourceTest, MigInstancesAreReportedOneByOne) {
  Load(R"({"devices": [{"uuid": "GPU-m", "name": "NVIDIA H100 80GB HBM3", "sm_count": 132,
            "clocks": [1755], "power_mw": [600000],
            "processes": [{"pid": 1, "gi": 1}, {"pid": 2, "gi": 2}, {"pid": 3, "gi": 2}],
            "mig": [{"gi": 1, "profile": "3g.40gb", "sm_count": 60, "gpm": [{"5": 30}]},
                    {"gi": 2, "profile": "4g.40gb", "sm_count": 64, "gpm": [{"5": 70}]}]}]})");
  SourceOptions options;
  options.window_s = 1;
  auto source = OpenOk(options);
  ASSERT_NE(source, nullptr);
  const Snapshot s = NextOk(*source);
  ASSERT_EQ(s.gpus.size(), 2u);
  const GpuReading& a = s.gpus[0];
  const GpuReading& b = s.gpus[1];
  EXPECT_EQ(a.identity.key, "GPU-m/gi1");
  EXPECT_EQ(a.identity.uuid, "GPU-m");
  EXPECT_EQ(a.identity.mig_instance, "1");
  EXPECT_EQ(a.identity.mig_profile, "3g.40gb");
  EXPECT_EQ(a.sm_count, 60);
  EXPECT_EQ(a.sample.tensor_active, 0.3);
  EXPECT_EQ(a.sample.sm_clock_mhz, 1755.0);
  EXPECT_FALSE(a.sample.power_w.has_value());  // board power is not the instance's
  ASSERT_EQ(a.processes.size(), 1u);
  EXPECT_EQ(a.processes[0].pid, 1u);
  EXPECT_EQ(b.identity.key, "GPU-m/gi2");
  EXPECT_EQ(b.identity.mig_profile, "4g.40gb");
  EXPECT_EQ(b.sm_count, 64);
  EXPECT_EQ(b.sample.tensor_active, 0.7);
  EXPECT_EQ(b.processes.size(), 2u);
}

}  // namespace
}  // namespace ofu::sources
