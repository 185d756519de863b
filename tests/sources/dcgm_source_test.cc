// The DCGM source against the scripted libdcgm in tests/doubles/fake_dcgm.cc,
// loaded through the product's own dlopen path. The test dlopens the same
// file to script it and to read back what the source asked of it; a
// FakeClock makes every window and back-off exact and instant.
#include <dlfcn.h>

#include <map>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "ofu/core/gpu_spec.h"
#include "ofu/sources/call_accounting.h"
#include "ofu/sources/dcgm/dcgm_library.h"
#include "ofu/sources/dcgm/dcgm_source.h"

namespace ofu::sources {
namespace {

using nlohmann::json;

class FakeDcgm {
 public:
  explicit FakeDcgm(const char* path = OFU_FAKE_DCGM_PATH) {
    handle_ = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) return;
    load_ = reinterpret_cast<int (*)(const char*)>(dlsym(handle_, "ofu_fake_dcgm_load_scenario"));
    state_ = reinterpret_cast<const char* (*)()>(dlsym(handle_, "ofu_fake_dcgm_state"));
  }
  ~FakeDcgm() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  bool ok() const { return load_ != nullptr && state_ != nullptr; }
  int Load(const json& scenario) { return load_(scenario.dump().c_str()); }
  json State() { return json::parse(state_()); }

 private:
  void* handle_ = nullptr;
  int (*load_)(const char*) = nullptr;
  const char* (*state_)() = nullptr;
};

class DcgmSourceTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fake_.ok()) << "cannot dlopen " << OFU_FAKE_DCGM_PATH << ": " << dlerror(); }

  void Load(const json& scenario) { ASSERT_EQ(fake_.Load(scenario), 0); }

  std::unique_ptr<Source> Open(std::string_view address = "") {
    auto source = OpenDcgmSource(address, options_, clock_);
    EXPECT_TRUE(source.ok()) << source.error().message;
    return source.ok() ? std::move(*source) : nullptr;
  }

  Snapshot Next(Source& source) {
    auto next = source.Next();
    EXPECT_TRUE(next.ok());
    EXPECT_TRUE(next.ok() && next->has_value());
    return next.ok() && next->has_value() ? **next : Snapshot{};
  }

  static json TwoGpus() {
    return json::array({{{"name", "NVIDIA H100 80GB HBM3"}, {"uuid", "GPU-aaaa"}, {"pci_bus_id", "00000000:18:00.0"}},
                        {{"name", "NVIDIA H100 80GB HBM3"}, {"uuid", "GPU-bbbb"}, {"pci_bus_id", "00000000:2A:00.0"}}});
  }

  static bool HasNote(const Snapshot& s, std::string_view text) {
    for (const auto& note : s.notes) {
      if (note.find(text) != std::string::npos) return true;
    }
    return false;
  }

  FakeDcgm fake_;
  FakeClock clock_{1000};
  SourceOptions options_ = Options();

 private:
  static SourceOptions Options() {
    SourceOptions options;
    options.window_s = 1;
    options.dcgm_library = OFU_FAKE_DCGM_PATH;
    return options;
  }
};

TEST_F(DcgmSourceTest, SteadyLoadMapsEveryFieldWithItsUnit) {
  Load({{"gpus", TwoGpus()},
        {"reads", json::array({json::array({{{"1001", 0.9},
                                             {"1002", 0.8},
                                             {"1003", 0.4},
                                             {"1004", 0.5},
                                             {"1005", 0.3},
                                             {"1006", 0.0},
                                             {"1007", 0.1},
                                             {"1008", 0.02},
                                             {"1013", 0.01},
                                             {"1014", 0.45},
                                             {"1015", 0.0},
                                             {"100", 1755},
                                             {"113", 1980},
                                             {"155", 612.5},
                                             {"156", 123456789},
                                             {"112", 4}},
                                            {{"1004", 0.25}, {"100", 1410}}})})}});
  auto source = Open();
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->Describe(), std::string("dcgm (") + OFU_FAKE_DCGM_PATH +
                                    ", hostengine at 127.0.0.1:5555, TEST DOUBLE: synthetic data)");
  EXPECT_EQ(source->kind(), "dcgm");
  const json state = fake_.State();
  EXPECT_EQ(state["last_address"], "127.0.0.1:5555");
  EXPECT_EQ(state["last_unix_socket"], 0);
  EXPECT_EQ(state["embedded_starts"], 0);
  EXPECT_EQ(state["watch_update_us"], 1000000);
  EXPECT_EQ(state["watch_keep_age_s"], 4.0);
  EXPECT_EQ(state["group_gpus"], json::array({0, 1}));
  // Every field ofu reads: the 5 device fields, the 11 profiling fields of
  // 1001-1015 it maps (not the PCIe and NVLink bytes, 1009-1012), and of the
  // cycle counters the two it reads.
  EXPECT_EQ(state["watched_fields"].size(), 5u + 11u + 2u);

  Snapshot s = Next(*source);
  EXPECT_EQ(s.time_s, 1001);
  EXPECT_EQ(s.window_s, 1);
  EXPECT_TRUE(s.notes.empty());
  ASSERT_EQ(s.gpus.size(), 2u);
  const GpuReading& g0 = s.gpus[0];
  EXPECT_EQ(g0.identity.key, "GPU-aaaa");
  EXPECT_EQ(g0.identity.uuid, "GPU-aaaa");
  EXPECT_EQ(g0.identity.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g0.identity.pci_bus_id, "00000000:18:00.0");
  EXPECT_EQ(g0.identity.gpu_index, "0");
  EXPECT_EQ(g0.sm_count, 132);
  EXPECT_EQ(g0.health, GpuHealth::kOk);
  EXPECT_EQ(g0.sample.time_s, 1001);
  EXPECT_EQ(g0.sample.gr_engine_active, 0.9);
  EXPECT_EQ(g0.sample.sm_active, 0.8);
  EXPECT_EQ(g0.sample.sm_occupancy, 0.4);
  EXPECT_EQ(g0.sample.tensor_active, 0.5);
  EXPECT_EQ(g0.sample.dram_active, 0.3);
  EXPECT_EQ(g0.sample.fp64_active, 0.0);  // a real 0 stays 0
  EXPECT_EQ(g0.sample.fp32_active, 0.1);
  EXPECT_EQ(g0.sample.fp16_active, 0.02);
  EXPECT_EQ(g0.sample.imma_active, 0.01);
  EXPECT_EQ(g0.sample.hmma_active, 0.45);
  EXPECT_EQ(g0.sample.dfma_active, 0.0);
  EXPECT_FALSE(g0.sample.dmma_active);  // DCGM has no DMMA ratio field
  EXPECT_EQ(g0.sample.sm_clock_mhz, 1755);
  EXPECT_EQ(g0.sample.max_sm_clock_mhz, 1980);
  EXPECT_EQ(g0.sample.power_w, 612.5);
  EXPECT_EQ(g0.sample.energy_mj, 123456789);
  EXPECT_EQ(g0.sample.clock_event_reasons, 4u);
  EXPECT_EQ(g0.clock_basis, ClockBasis::kPointReading);
  EXPECT_EQ(g0.clock_readings, 1);

  const GpuReading& g1 = s.gpus[1];
  EXPECT_EQ(g1.identity.key, "GPU-bbbb");
  EXPECT_EQ(g1.sample.tensor_active, 0.25);
  EXPECT_EQ(g1.sample.sm_clock_mhz, 1410);
  EXPECT_FALSE(g1.sample.power_w);  // blank: absent, not 0
  EXPECT_FALSE(g1.sample.clock_event_reasons);
  EXPECT_FALSE(g1.sample.sm_active);

  // Windows follow the previous end; a late call makes a longer window.
  EXPECT_EQ(Next(*source).time_s, 1002);
  clock_.SleepS(2.5);
  Snapshot late = Next(*source);
  EXPECT_EQ(late.time_s, 1004.5);
  EXPECT_EQ(late.window_s, 2.5);
  EXPECT_EQ(fake_.State()["reads"], 3);
  EXPECT_EQ(fake_.State()["update_all_fields"], 0);  // the hostengine samples by itself
}

// Every DCGM call is accounted under the library's own name (issue 29):
// one connection (dcgmInit once), then one dcgmEntitiesGetLatestValues per
// window for two GPUs without MIG.
TEST_F(DcgmSourceTest, EveryLibraryCallIsAccountedUnderItsName) {
  Load({{"gpus", TwoGpus()}, {"reads", json::array({json::array({{{"1004", 0.5}, {"100", 1755}}})})}});
  CallAccounting accounting;
  options_.call_accounting = &accounting;
  auto source = Open();
  ASSERT_NE(source, nullptr);
  const auto before = accounting.Snapshot();
  for (int i = 0; i < 3; ++i) Next(*source);
  std::map<std::string, std::uint64_t> calls, setup;
  for (const CallTotals& t : before) setup[t.call] = t.calls;
  for (const CallTotals& t : accounting.Snapshot()) calls[t.call] = t.calls;
  EXPECT_EQ(setup["dcgmInit"], 1u);
  EXPECT_EQ(calls["dcgmInit"], 1u);
  EXPECT_EQ(calls["dcgmEntitiesGetLatestValues"] - setup["dcgmEntitiesGetLatestValues"], 3u);
  EXPECT_TRUE(calls.count("dcgmShutdown"));  // resolved, not yet called: listed at 0
  EXPECT_EQ(calls["dcgmShutdown"], 0u);
}

TEST_F(DcgmSourceTest, ProfilingPausedLeavesTensorAbsentAndNotesOnce) {
  Load({{"reads", json::array({json::array({{{"1004", 0.5}, {"1014", 0.5}, {"100", 1755}}})})},
        {"paused_reads", {1, 2}}});
  auto source = Open();
  ASSERT_NE(source, nullptr);

  Snapshot before = Next(*source);
  EXPECT_EQ(before.gpus[0].sample.tensor_active, 0.5);
  EXPECT_TRUE(before.notes.empty());

  Snapshot paused = Next(*source);
  EXPECT_FALSE(paused.gpus[0].sample.tensor_active);
  EXPECT_FALSE(paused.gpus[0].sample.hmma_active);
  EXPECT_EQ(paused.gpus[0].sample.sm_clock_mhz, 1755);
  EXPECT_EQ(paused.gpus[0].health, GpuHealth::kOk);
  ASSERT_EQ(paused.notes.size(), 1u);
  EXPECT_NE(paused.notes[0].find("profiling paused on GPU GPU-fake-0"), std::string::npos) << paused.notes[0];
  EXPECT_NE(paused.notes[0].find("Nsight"), std::string::npos);

  Snapshot still = Next(*source);
  EXPECT_FALSE(still.gpus[0].sample.tensor_active);
  EXPECT_TRUE(still.notes.empty());  // once per pause

  Snapshot resumed = Next(*source);
  EXPECT_EQ(resumed.gpus[0].sample.tensor_active, 0.5);
  EXPECT_TRUE(HasNote(resumed, "profiling resumed on GPU GPU-fake-0"));
}

TEST_F(DcgmSourceTest, HostengineRestartIsUnavailableThenReconnectsWithBackoff) {
  // Reads 0, 1 succeed; read 2 loses the connection; the first 2 connects
  // after that fail. Values per read tell which read a window got.
  Load({{"reads",
         json::array({json::array({{{"1004", 0.1}, {"100", 1000}}}), json::array({{{"1004", 0.2}, {"100", 1000}}}),
                      json::array({{{"1004", 0.3}, {"100", 1000}}})})},
        {"drop_at_read", 2},
        {"failed_connects", 2}});
  auto source = Open();
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(fake_.State()["connect_attempts"], 1);

  EXPECT_EQ(Next(*source).gpus[0].sample.tensor_active, 0.1);  // t=1001
  EXPECT_EQ(Next(*source).gpus[0].sample.tensor_active, 0.2);  // t=1002

  Snapshot lost = Next(*source);  // t=1003: the read fails
  EXPECT_EQ(lost.time_s, 1003);
  ASSERT_EQ(lost.gpus.size(), 1u);
  EXPECT_EQ(lost.gpus[0].identity.key, "GPU-fake-0");
  EXPECT_EQ(lost.gpus[0].health, GpuHealth::kUnavailable);
  EXPECT_FALSE(lost.gpus[0].sample.tensor_active);
  EXPECT_NE(lost.gpus[0].problem.find("lost the connection to the DCGM hostengine at 127.0.0.1:5555"),
            std::string::npos)
      << lost.gpus[0].problem;
  EXPECT_NE(lost.gpus[0].problem.find("Host engine connection invalid"), std::string::npos);
  EXPECT_NE(lost.gpus[0].problem.find("next attempt in 1 s"), std::string::npos);
  EXPECT_EQ(fake_.State()["connect_attempts"], 1);

  // Back-off from the failure at 1003: retry at 1004 (fails, +2 s), 1006
  // (fails, +4 s), 1010 (succeeds). No attempt in between.
  const int expected_attempts[] = {/*1004*/ 2, /*1005*/ 2, /*1006*/ 3, /*1007*/ 3, /*1008*/ 3, /*1009*/ 3};
  for (int i = 0; i < 6; ++i) {
    Snapshot s = Next(*source);
    EXPECT_EQ(s.time_s, 1004 + i);
    EXPECT_EQ(s.gpus[0].health, GpuHealth::kUnavailable) << s.time_s;
    EXPECT_TRUE(s.notes.empty());
    EXPECT_EQ(fake_.State()["connect_attempts"], expected_attempts[i]) << s.time_s;
  }
  Snapshot back = Next(*source);  // t=1010
  EXPECT_EQ(back.time_s, 1010);
  EXPECT_EQ(fake_.State()["connect_attempts"], 4);
  EXPECT_TRUE(HasNote(back, "reconnected to the DCGM hostengine at 127.0.0.1:5555"));
  EXPECT_EQ(back.gpus[0].health, GpuHealth::kOk);
  EXPECT_EQ(back.gpus[0].sample.tensor_active, 0.3);  // read 2, retried
  // Group and every watch were made again on the new connection.
  EXPECT_EQ(fake_.State()["watched_fields"].size(), 2u * (5 + 11 + 2));
  EXPECT_EQ(fake_.State()["group_gpus"], json::array({0}));

  Snapshot after = Next(*source);
  EXPECT_TRUE(after.notes.empty());
  EXPECT_EQ(after.gpus[0].health, GpuHealth::kOk);
}

TEST_F(DcgmSourceTest, LostGpuIsMarkedWhileOthersContinue) {
  Load({{"gpus", TwoGpus()},
        {"reads", json::array({json::array({{{"1004", 0.5}, {"100", 1700}}, {{"1004", 0.6}, {"100", 1800}}})})},
        {"lost_gpu", 1},
        {"lost_from_read", 1}});
  auto source = Open();
  ASSERT_NE(source, nullptr);
  Snapshot first = Next(*source);
  EXPECT_EQ(first.gpus[1].health, GpuHealth::kOk);
  EXPECT_EQ(first.gpus[1].sample.tensor_active, 0.6);

  Snapshot second = Next(*source);
  ASSERT_EQ(second.gpus.size(), 2u);
  EXPECT_EQ(second.gpus[0].health, GpuHealth::kOk);
  EXPECT_EQ(second.gpus[0].sample.tensor_active, 0.5);
  EXPECT_EQ(second.gpus[0].sample.sm_clock_mhz, 1700);
  EXPECT_EQ(second.gpus[1].identity.key, "GPU-bbbb");
  EXPECT_EQ(second.gpus[1].health, GpuHealth::kLost);
  EXPECT_NE(second.gpus[1].problem.find("GPU_IS_LOST"), std::string::npos);
  EXPECT_FALSE(second.gpus[1].sample.tensor_active);
  EXPECT_FALSE(second.gpus[1].sample.sm_clock_mhz);
  EXPECT_EQ(second.gpus[1].clock_basis, ClockBasis::kNone);
}

// The agent's counters (agent::AgentCounterFields): only their fields are
// watched, the SM clock always, and a field not watched is absent even when
// the hostengine would have a value for it.
TEST_F(DcgmSourceTest, WatchesOnlyTheFieldsAsked) {
  Load({{"reads", json::array({json::array({{{"1004", 0.5}, {"1005", 0.3}, {"100", 1755}, {"155", 500}}})})}});
  options_.fields = {CounterField::kTensorActive, CounterField::kGrEngineActive, CounterField::kFp64Active,
                     CounterField::kFp32Active,   CounterField::kFp16Active,     CounterField::kImmaActive,
                     CounterField::kHmmaActive,   CounterField::kDfmaActive,     CounterField::kSmClockMhz,
                     CounterField::kMaxSmClockMhz};
  auto source = Open();
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(fake_.State()["watched_fields"],
            json::array({100, 113, 1001, 1004, 1006, 1007, 1008, 1013, 1014, 1015, 1084, 1086}));
  Snapshot s = Next(*source);
  EXPECT_EQ(s.gpus[0].sample.tensor_active, 0.5);
  EXPECT_EQ(s.gpus[0].sample.sm_clock_mhz, 1755);
  EXPECT_FALSE(s.gpus[0].sample.dram_active);  // 1005 not watched: absent, not 0
  EXPECT_FALSE(s.gpus[0].sample.power_w);      // 155 not watched
}

// Power alone: the clock is still watched (it tells a GPU that answers),
// no profiling field and no cycle counter.
TEST_F(DcgmSourceTest, PowerAloneWatchesNoProfilingField) {
  Load({{"reads", json::array({json::array({{{"100", 1755}, {"155", 500}}})})}});
  options_.fields = {CounterField::kPowerW};
  auto source = Open();
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(fake_.State()["watched_fields"], json::array({100, 155}));
  Snapshot s = Next(*source);
  EXPECT_EQ(s.gpus[0].sample.power_w, 500);
  EXPECT_FALSE(s.gpus[0].sample.tensor_active);
}

TEST_F(DcgmSourceTest, NoPermissionOnProfilingKeepsDeviceFieldsFlowing) {
  Load({{"reads", json::array({json::array({{{"1004", 0.5}, {"100", 1755}, {"155", 500}}})})},
        {"watch_profiling_error", -17}});
  auto source = Open();
  ASSERT_NE(source, nullptr);
  const json watched = fake_.State()["watched_fields"];
  EXPECT_EQ(watched, json::array({100, 112, 113, 155, 156}));  // neither 1001-1015 nor 1084-1090

  Snapshot s = Next(*source);
  EXPECT_EQ(s.gpus[0].health, GpuHealth::kNoPermission);
  EXPECT_NE(s.gpus[0].problem.find("run nv-hostengine as root"), std::string::npos) << s.gpus[0].problem;
  EXPECT_NE(s.gpus[0].problem.find("No permission"), std::string::npos);
  EXPECT_FALSE(s.gpus[0].sample.tensor_active);
  EXPECT_EQ(s.gpus[0].sample.sm_clock_mhz, 1755);
  EXPECT_EQ(s.gpus[0].sample.power_w, 500);
  EXPECT_FALSE(HasNote(s, "profiling paused"));  // not watched is not paused
}

TEST_F(DcgmSourceTest, ProfilingNotSupportedSaysWhatIsNeeded) {
  Load({{"reads", json::array({json::array({{{"100", 1410}}})})}, {"watch_profiling_error", -36}});
  auto source = Open();
  ASSERT_NE(source, nullptr);
  Snapshot s = Next(*source);
  EXPECT_EQ(s.gpus[0].health, GpuHealth::kNotSupported);
  EXPECT_NE(s.gpus[0].problem.find("DCGM 2 or newer and a data-center GPU"), std::string::npos);
  EXPECT_EQ(s.gpus[0].sample.sm_clock_mhz, 1410);
}

TEST_F(DcgmSourceTest, MissingLibraryIsNamedAndSoname3IsTheFallback) {
  options_.dcgm_library = "/nonexistent/libdcgm.so.4";
  auto missing = OpenDcgmSource("", options_, clock_);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(missing.error().message.find("/nonexistent/libdcgm.so.4"), std::string::npos);
  EXPECT_NE(missing.error().message.find("--dcgm-library"), std::string::npos);
  EXPECT_NE(missing.error().message.find("datacenter-gpu-manager"), std::string::npos);

  EXPECT_EQ(DcgmLibrary::Candidates(""), (std::vector<std::string>{"libdcgm.so.4", "libdcgm.so.3"}));
  EXPECT_EQ(DcgmLibrary::Candidates("/opt/x.so"), (std::vector<std::string>{"/opt/x.so"}));
  auto fallback = DcgmLibrary::Load({"/nonexistent/libdcgm.so.4", OFU_FAKE_DCGM_SO3_PATH});
  ASSERT_TRUE(fallback.ok()) << fallback.error().message;
  EXPECT_EQ((*fallback)->path(), OFU_FAKE_DCGM_SO3_PATH);
  EXPECT_NE((*fallback)->start_embedded_v2, nullptr);

  // A library without DCGM's symbols is refused by name.
  auto wrong = DcgmLibrary::Load({"libm.so.6"});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("does not export dcgmInit"), std::string::npos) << wrong.error().message;
}

TEST_F(DcgmSourceTest, AddressFormsReachTheConnectCall) {
  Load({{"reads", json::array({json::array({{{"100", 1000}}})})}});
  {
    auto source = Open("unix:/run/dcgm.sock");
    ASSERT_NE(source, nullptr);
    EXPECT_EQ(fake_.State()["last_address"], "/run/dcgm.sock");
    EXPECT_EQ(fake_.State()["last_unix_socket"], 1);
    EXPECT_EQ(fake_.State()["last_timeout_ms"], 250);
    EXPECT_NE(source->Describe().find("hostengine at unix:/run/dcgm.sock"), std::string::npos);
  }
  {
    auto source = Open("gpu-node-7:5566");
    ASSERT_NE(source, nullptr);
    EXPECT_EQ(fake_.State()["last_address"], "gpu-node-7:5566");
    EXPECT_EQ(fake_.State()["last_unix_socket"], 0);
  }
  auto empty_path = OpenDcgmSource("unix:", options_, clock_);
  ASSERT_FALSE(empty_path.ok());
  EXPECT_EQ(empty_path.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(DcgmSourceTest, ExplicitAddressNeverFallsBackToEmbedded) {
  Load({{"hostengine", false}});
  auto source = OpenDcgmSource("gpu-node-7:5566", options_, clock_);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(source.error().message.find("gpu-node-7:5566"), std::string::npos) << source.error().message;
  EXPECT_NE(source.error().message.find("start nv-hostengine"), std::string::npos);
  EXPECT_NE(source.error().message.find("Host engine connection invalid"), std::string::npos);
  EXPECT_EQ(fake_.State()["embedded_starts"], 0);
}

TEST_F(DcgmSourceTest, EmptyAddressStartsAnEmbeddedHostengineWhenNoneAnswers) {
  Load({{"hostengine", false}, {"reads", json::array({json::array({{{"1004", 0.7}, {"100", 1600}}})})}});
  auto source = Open();
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(fake_.State()["connect_attempts"], 1);
  EXPECT_EQ(fake_.State()["embedded_starts"], 1);
  EXPECT_NE(source->Describe().find("embedded hostengine"), std::string::npos);
  Snapshot s = Next(*source);
  EXPECT_EQ(s.gpus[0].sample.tensor_active, 0.7);
  EXPECT_EQ(fake_.State()["update_all_fields"], 1);  // manual mode: ofu drives sampling

  Load({{"hostengine", false}, {"embedded", false}});
  auto none = OpenDcgmSource("", options_, clock_);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no DCGM hostengine answers at 127.0.0.1:5555"), std::string::npos)
      << none.error().message;
  EXPECT_NE(none.error().message.find("DCGM initialization error"), std::string::npos);
}

TEST_F(DcgmSourceTest, ExactCyclesFromSummedCountersAndInconsistentOnes) {
  // H100 SXM: 132 SMs. Summed over SMs at 1800 MHz, one second elapses
  // 132 x 1.8e9 = 237.6e9 cycles. The point clock (1755) only selects the basis.
  auto read = [](double elapsed, double tensor) {
    return json::array({{{"1004", 0.5}, {"100", 1755}, {"1084", elapsed}, {"1086", tensor}}});
  };
  Load({{"reads", json::array({read(1e12, 2e11),                        // first: nothing to difference
                               read(1237600000000, 295040000000),       // +237.6e9, +95.04e9 -> 0.4 at 1800 MHz
                               read(1100000000000, 300000000000),       // elapsed went backwards
                               read(1337600000000, 359400000000),       // +237.6e9, +59.4e9 -> 0.25
                               read(1337700000000, 359400000000)})}});  // +1e8/s fits no basis
  auto source = Open();
  ASSERT_NE(source, nullptr);

  Snapshot first = Next(*source);
  EXPECT_EQ(first.gpus[0].clock_basis, ClockBasis::kPointReading);
  EXPECT_EQ(first.gpus[0].sample.tensor_active, 0.5);
  EXPECT_TRUE(first.notes.empty());

  Snapshot exact = Next(*source);
  EXPECT_EQ(exact.gpus[0].clock_basis, ClockBasis::kExactCycles);
  EXPECT_NEAR(*exact.gpus[0].sample.tensor_active, 0.4, 1e-12);
  EXPECT_NEAR(*exact.gpus[0].sample.sm_clock_mhz, 1800, 1e-9);
  EXPECT_TRUE(exact.notes.empty());

  Snapshot backwards = Next(*source);
  EXPECT_EQ(backwards.gpus[0].clock_basis, ClockBasis::kPointReading);
  EXPECT_EQ(backwards.gpus[0].sample.tensor_active, 0.5);
  EXPECT_EQ(backwards.gpus[0].sample.sm_clock_mhz, 1755);
  ASSERT_EQ(backwards.notes.size(), 1u);
  EXPECT_NE(backwards.notes[0].find("exact-cycle mode off"), std::string::npos);
  EXPECT_NE(backwards.notes[0].find("reset or wrapped"), std::string::npos) << backwards.notes[0];

  Snapshot again = Next(*source);
  EXPECT_EQ(again.gpus[0].clock_basis, ClockBasis::kExactCycles);
  EXPECT_NEAR(*again.gpus[0].sample.tensor_active, 0.25, 1e-12);
  EXPECT_NEAR(*again.gpus[0].sample.sm_clock_mhz, 1800, 1e-9);

  Snapshot stalled = Next(*source);
  EXPECT_EQ(stalled.gpus[0].clock_basis, ClockBasis::kPointReading);
  EXPECT_EQ(stalled.gpus[0].sample.sm_clock_mhz, 1755);
  EXPECT_TRUE(HasNote(stalled, "fits neither"));

  Snapshot stalled_again = Next(*source);  // the last read repeats: +0 elapsed
  EXPECT_EQ(stalled_again.gpus[0].clock_basis, ClockBasis::kPointReading);
  EXPECT_TRUE(stalled_again.notes.empty());  // the reason was noted once
}

// An A100 in MIG mode with a 3g.40gb and a 1g.10gb GPU instance, beside an
// H100 without MIG. DCGM numbers the instances' entities 0 and 1 (gpu 0 x 8
// + index); their NVML GPU instance ids are 2 and 9, and those name them.
json MigScenario() {
  return {
      {"gpus",
       json::array(
           {{{"name", "NVIDIA A100-SXM4-80GB"},
             {"uuid", "GPU-a100"},
             {"pci_bus_id", "00000000:07:00.0"},
             {"mig",
              json::array({{{"gi", 2},
                            {"profile", "3g.40gb"},
                            {"reads", json::array({{{"1004", 0.3}, {"1002", 0.6}}, {{"1004", 0.35}, {"1002", 0.7}}})}},
                           {{"gi", 9}, {"profile", "1g.10gb"}, {"reads", json::array({{{"1004", 0.75}}})}}})}},
            {{"name", "NVIDIA H100 80GB HBM3"}, {"uuid", "GPU-h100"}, {"pci_bus_id", "00000000:18:00.0"}}})},
      // Per read: the A100's GPU entity (its own 1004 is the whole GPU's
      // and is not reported), then the H100.
      {"reads",
       json::array({json::array({{{"100", 1410}, {"113", 1410}, {"112", 1}, {"155", 250}, {"156", 9000}, {"1004", 0.2}},
                                 {{"1004", 0.5}, {"100", 1755}, {"155", 600}}}),
                    json::array({{{"100", 1275}, {"113", 1410}, {"112", 1}, {"1004", 0.2}},
                                 {{"1004", 0.5}, {"100", 1755}, {"155", 600}}})})}};
}

TEST_F(DcgmSourceTest, MigInstancesAreDevicesOfTheirOwnWithTheParentsClock) {
  Load(MigScenario());
  auto source = Open();
  ASSERT_NE(source, nullptr);
  const json state = fake_.State();
  EXPECT_EQ(state["hierarchy_calls"], 1);
  EXPECT_EQ(state["group_gpus"], json::array({0, 1}));  // the clock and power fields, on both GPUs
  ASSERT_EQ(state["group_entities"].size(), 2u);        // the two GPU instances, in a group of their own
  const json mig_group = state["group_entities"][0]["group"];
  EXPECT_EQ(state["group_entities"][0], json({{"group", mig_group}, {"entity_group", 2}, {"id", 0}}));
  EXPECT_EQ(state["group_entities"][1], json({{"group", mig_group}, {"entity_group", 2}, {"id", 1}}));
  // On the instances' group: the profiling fields ofu maps, then the cycle counters.
  json on_mig_group = json::array();
  for (const auto& watch : state["watches"]) {
    if (watch["group"] == mig_group) on_mig_group.push_back(watch["fields"]);
  }
  ASSERT_EQ(on_mig_group.size(), 2u);
  EXPECT_EQ(on_mig_group[0], json::array({1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1013, 1014, 1015}));
  EXPECT_EQ(on_mig_group[1], json::array({1084, 1086}));

  Snapshot s = Next(*source);
  ASSERT_EQ(s.gpus.size(), 3u);  // the A100's two instances (not the A100 itself), then the H100
  EXPECT_TRUE(s.notes.empty());

  const GpuReading& gi2 = s.gpus[0];
  EXPECT_EQ(gi2.identity.key, "GPU-a100/gi2");
  EXPECT_EQ(gi2.identity.uuid, "GPU-a100");
  EXPECT_EQ(gi2.identity.mig_instance, "2");
  EXPECT_EQ(gi2.identity.mig_profile, "3g.40gb");
  EXPECT_EQ(gi2.identity.model, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(gi2.identity.gpu_index, "0");
  EXPECT_EQ(gi2.identity.pci_bus_id, "00000000:07:00.0");
  EXPECT_EQ(gi2.health, GpuHealth::kOk);
  EXPECT_TRUE(gi2.problem.empty());
  EXPECT_EQ(gi2.sample.tensor_active, 0.3);  // the instance's own, not the whole GPU's 0.2
  EXPECT_EQ(gi2.sample.sm_active, 0.6);
  EXPECT_EQ(gi2.sample.sm_clock_mhz, 1410);  // the parent's clock: one per chip
  EXPECT_EQ(gi2.sample.max_sm_clock_mhz, 1410);
  EXPECT_EQ(gi2.sample.clock_event_reasons, 1u);
  EXPECT_FALSE(gi2.sample.power_w);  // the board's, not the instance's
  EXPECT_FALSE(gi2.sample.energy_mj);
  EXPECT_EQ(gi2.clock_basis, ClockBasis::kPointReading);
  // SMs: the profile's in the spec database, absent when it does not list it.
  auto specs = GpuSpecDatabase::Embedded();
  ASSERT_TRUE(specs.ok());
  auto a100 = specs->Lookup("NVIDIA A100-SXM4-80GB");
  ASSERT_TRUE(a100.ok());
  EXPECT_EQ(gi2.sm_count, (*a100)->MigSmCount("3g.40gb"));

  const GpuReading& gi9 = s.gpus[1];
  EXPECT_EQ(gi9.identity.key, "GPU-a100/gi9");
  EXPECT_EQ(gi9.identity.uuid, "GPU-a100");
  EXPECT_EQ(gi9.identity.mig_instance, "9");
  EXPECT_EQ(gi9.identity.mig_profile, "1g.10gb");
  EXPECT_EQ(gi9.identity.gpu_index, "0");
  EXPECT_EQ(gi9.sample.tensor_active, 0.75);
  EXPECT_FALSE(gi9.sample.sm_active);  // not given for this instance: absent
  EXPECT_EQ(gi9.sample.sm_clock_mhz, 1410);
  EXPECT_EQ(gi9.sm_count, (*a100)->MigSmCount("1g.10gb"));

  // The GPU without MIG is read as before.
  const GpuReading& h100 = s.gpus[2];
  EXPECT_EQ(h100.identity.key, "GPU-h100");
  EXPECT_TRUE(h100.identity.mig_instance.empty());
  EXPECT_TRUE(h100.identity.mig_profile.empty());
  EXPECT_EQ(h100.identity.gpu_index, "1");
  EXPECT_EQ(h100.sm_count, 132);
  EXPECT_EQ(h100.sample.tensor_active, 0.5);
  EXPECT_EQ(h100.sample.sm_clock_mhz, 1755);
  EXPECT_EQ(h100.sample.power_w, 600);

  // The next window: each instance its next values, both with the parent's new clock.
  Snapshot second = Next(*source);
  ASSERT_EQ(second.gpus.size(), 3u);
  EXPECT_EQ(second.gpus[0].sample.tensor_active, 0.35);
  EXPECT_EQ(second.gpus[0].sample.sm_active, 0.7);
  EXPECT_EQ(second.gpus[0].sample.sm_clock_mhz, 1275);
  EXPECT_EQ(second.gpus[1].sample.tensor_active, 0.75);
  EXPECT_EQ(second.gpus[1].sample.sm_clock_mhz, 1275);
  EXPECT_EQ(second.gpus[2].sample.tensor_active, 0.5);
  EXPECT_EQ(fake_.State()["reads"], 2);  // one GPU read per window; the instances' read goes with it
}

TEST_F(DcgmSourceTest, MigInstancesOfALostGpuAreLostAndPausesAreNotedPerInstance) {
  json scenario = MigScenario();
  scenario["lost_gpu"] = 0;
  scenario["lost_from_read"] = 2;
  scenario["paused_reads"] = {1, 1};
  Load(scenario);
  auto source = Open();
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(Next(*source).gpus[0].sample.tensor_active, 0.3);

  Snapshot paused = Next(*source);
  EXPECT_FALSE(paused.gpus[0].sample.tensor_active);
  EXPECT_EQ(paused.gpus[0].sample.sm_clock_mhz, 1275);
  EXPECT_TRUE(HasNote(paused, "profiling paused on GPU GPU-a100/gi2"));
  EXPECT_TRUE(HasNote(paused, "profiling paused on GPU GPU-a100/gi9"));

  Snapshot lost = Next(*source);
  ASSERT_EQ(lost.gpus.size(), 3u);
  for (int i : {0, 1}) {
    EXPECT_EQ(lost.gpus[i].health, GpuHealth::kLost) << lost.gpus[i].identity.key;
    EXPECT_FALSE(lost.gpus[i].sample.tensor_active);
    EXPECT_FALSE(lost.gpus[i].sample.sm_clock_mhz);
  }
  EXPECT_EQ(lost.gpus[2].health, GpuHealth::kOk);
  EXPECT_EQ(lost.gpus[2].sample.tensor_active, 0.5);
}

TEST_F(DcgmSourceTest, LibraryWithoutTheMigHierarchyLeavesTheGpuWholeWithAProblem) {
  auto loaded = DcgmLibrary::Load({OFU_FAKE_DCGM_NO_MIG_PATH});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ((*loaded)->get_gpu_instance_hierarchy, nullptr);
  EXPECT_FALSE((*loaded)->CanEnumerateMig());

  FakeDcgm old(OFU_FAKE_DCGM_NO_MIG_PATH);
  ASSERT_TRUE(old.ok());
  ASSERT_EQ(old.Load(MigScenario()), 0);
  options_.dcgm_library = OFU_FAKE_DCGM_NO_MIG_PATH;
  auto source = Open();
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(old.State()["group_entities"], json::array());

  Snapshot s = Next(*source);
  ASSERT_EQ(s.gpus.size(), 2u);
  const GpuReading& a100 = s.gpus[0];
  EXPECT_EQ(a100.identity.key, "GPU-a100");
  EXPECT_TRUE(a100.identity.mig_instance.empty());
  EXPECT_EQ(a100.health, GpuHealth::kNotSupported);
  EXPECT_NE(a100.problem.find("MIG is on, and this DCGM library"), std::string::npos) << a100.problem;
  EXPECT_NE(a100.problem.find("cannot enumerate its GPU instances"), std::string::npos);
  EXPECT_NE(a100.problem.find("dcgmGetGpuInstanceHierarchy"), std::string::npos);
  EXPECT_FALSE(a100.sample.tensor_active);    // the whole GPU's 0.2 cannot be told apart by instance
  EXPECT_EQ(a100.sample.sm_clock_mhz, 1410);  // its device fields still flow
  EXPECT_EQ(a100.sample.power_w, 250);
  EXPECT_FALSE(HasNote(s, "profiling paused"));

  EXPECT_EQ(s.gpus[1].identity.key, "GPU-h100");
  EXPECT_EQ(s.gpus[1].health, GpuHealth::kOk);
  EXPECT_EQ(s.gpus[1].sample.tensor_active, 0.5);
}

TEST_F(DcgmSourceTest, MigWithNoInstanceOrARefusedHierarchySaysWhatToDo) {
  Load({{"gpus", json::array({{{"name", "NVIDIA H100 80GB HBM3"}, {"uuid", "GPU-mig"}, {"mig", json::array()}}})},
        {"reads", json::array({json::array({{{"100", 1980}, {"1004", 0.1}}})})}});
  {
    auto source = Open();
    ASSERT_NE(source, nullptr);
    Snapshot s = Next(*source);
    ASSERT_EQ(s.gpus.size(), 1u);
    EXPECT_EQ(s.gpus[0].identity.key, "GPU-mig");
    EXPECT_EQ(s.gpus[0].health, GpuHealth::kNotSupported);
    EXPECT_NE(s.gpus[0].problem.find("no GPU instance exists: create one (nvidia-smi mig -cgi)"), std::string::npos)
        << s.gpus[0].problem;
    EXPECT_FALSE(s.gpus[0].sample.tensor_active);
    EXPECT_EQ(s.gpus[0].sample.sm_clock_mhz, 1980);
  }

  json refused = MigScenario();
  refused["hierarchy_error"] = -29;  // REQUIRES_ROOT
  Load(refused);
  auto source = Open();
  ASSERT_NE(source, nullptr);
  Snapshot s = Next(*source);
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_EQ(s.gpus[0].identity.key, "GPU-a100");
  EXPECT_EQ(s.gpus[0].health, GpuHealth::kNoPermission);
  EXPECT_NE(s.gpus[0].problem.find("did not list its GPU instances (This operation requires root"), std::string::npos)
      << s.gpus[0].problem;
  EXPECT_NE(s.gpus[0].problem.find("runs as root"), std::string::npos);
  EXPECT_EQ(s.gpus[1].health, GpuHealth::kOk);
  EXPECT_EQ(s.gpus[1].sample.tensor_active, 0.5);
}

}  // namespace
}  // namespace ofu::sources
