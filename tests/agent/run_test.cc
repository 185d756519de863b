// agent::Run, the whole daemon in one thread: a replay read through a
// FakeClock, stop and reload requests scripted by the test, systemd's
// notifications recorded, /metrics scraped on a loopback port, and the
// errors that stop it before the first window.
#include "ofu/agent/run.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "ofu/history/history_reader.h"

namespace ofu::agent {
namespace {

namespace fs = std::filesystem;

// A synthetic recording: GPU 0 (an H100) at tensor activity 0.5 and
// 1830 MHz, sampled once a second from t = 10 s, `seconds` times.
std::string Recording(int seconds) {
  std::string tensor = "# TYPE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE gauge\n";
  std::string clock = "# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n";
  const char* labels = R"({gpu="0",UUID="GPU-run",modelName="NVIDIA H100 80GB HBM3"})";
  for (int t = 10; t < 10 + seconds; ++t) {
    tensor += fmt::format("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{} 0.5 {}\n", labels, t);
    clock += fmt::format("DCGM_FI_DEV_SM_CLOCK{} 1830 {}\n", labels, t);
  }
  return tensor + clock + "# EOF\n";
}

constexpr const char* kReady = "READY=1\nSTATUS=serving OFU metrics";

class RunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("ofu-run-{}-{}", ::getpid(), ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    environment_.version = "test";
    environment_.executable = dir_ / "bin" / "ofu";
    environment_.log = [this](std::string_view line) { log_.emplace_back(line); };
    environment_.notify = [this](const std::string& state) {
      notified_.push_back(state);
      if (state == "WATCHDOG=1") ++windows_;
    };
    environment_.watchdog = true;  // so that every window is seen: windows_
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A replay of `seconds` one-second windows, no store, any free port, and
  // GPU 0 labelled with `job`.
  AgentConfig Config(int seconds, const std::string& job = "first") {
    const fs::path recording = dir_ / "run.om";
    if (!fs::exists(recording)) std::ofstream(recording) << Recording(seconds);
    AgentConfig config;
    config.source = "replay:" + recording.string();
    config.store_path.clear();
    config.listen_port = 0;
    config.attribution_methods = {"static"};
    config.static_labels = {StaticLabel{"0", attribution::JobInfo{job, "", "", "static", "", "", ""}}};
    return config;
  }

  bool Logged(const std::string& line) const { return std::find(log_.begin(), log_.end(), line) != log_.end(); }
  std::string Log() const { return fmt::format("{}", fmt::join(log_, "\n")); }

  // /metrics of the running agent, at the port its log names last.
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

  // Stops the agent once `windows` windows are in, keeping its last /metrics
  // in `metrics`, scraped while the server still runs.
  void StopAfterWindowsAndScrape(int windows, std::string& metrics) {
    environment_.stop_requested = [this, windows, &metrics] {
      if (windows_ < windows) return false;
      metrics = Scrape();
      return true;
    };
  }

  fs::path dir_;
  GpuSpecDatabase specs_ = *GpuSpecDatabase::Embedded();
  sources::FakeClock clock_{1000};
  RunEnvironment environment_;
  std::vector<std::string> log_;
  std::vector<std::string> notified_;
  int windows_ = 0;
};

TEST_F(RunTest, PlaysAReplayToItsEnd) {
  auto ended = agent::Run(Config(5), specs_, clock_, environment_);
  ASSERT_TRUE(ended.ok()) << ended.error().message << "\n" << Log();
  EXPECT_EQ(*ended, RunEnd::kSourceEnded);
  EXPECT_EQ(windows_, 5);
  EXPECT_EQ(notified_.front(), kReady);
  EXPECT_EQ(std::count(notified_.begin(), notified_.end(), kReady), 1);
  EXPECT_TRUE(Logged("the source has ended")) << Log();
  // The replay is paced by the clock it was given: the first window at once,
  // each later one 1 s after the one before.
  EXPECT_DOUBLE_EQ(clock_.NowS(), 1004);
}

TEST_F(RunTest, StopsWhenAskedAndTellsSystemd) {
  environment_.stop_requested = [this] { return windows_ == 3; };
  auto ended = agent::Run(Config(10), specs_, clock_, environment_);
  ASSERT_TRUE(ended.ok()) << ended.error().message;
  EXPECT_EQ(*ended, RunEnd::kStopRequested);
  EXPECT_EQ(notified_, (std::vector<std::string>{kReady, "WATCHDOG=1", "WATCHDOG=1", "WATCHDOG=1", "STOPPING=1"}));
}

TEST_F(RunTest, StopsAfterTheDurationOnItsClock) {
  environment_.duration_s = 2.5;
  auto ended = agent::Run(Config(10), specs_, clock_, environment_);
  ASSERT_TRUE(ended.ok()) << ended.error().message;
  EXPECT_EQ(*ended, RunEnd::kDurationReached);
  // Windows at 0, 1, 2 and 3 s after the start (the first is read at once):
  // the fourth is the first at or past 2.5 s.
  EXPECT_EQ(windows_, 4);
}

// SIGHUP: the source, store and server are opened again from the new
// configuration, and the counters carry on from where they were.
TEST_F(RunTest, AReloadTakesTheNewConfigurationAndKeepsTheCounters) {
  int reloads = 0;
  environment_.take_reload_request = [&] { return windows_ == 2 && reloads++ == 0; };
  environment_.load_config = [this] { return Result<AgentConfig>(Config(10, "second")); };
  std::string metrics;
  StopAfterWindowsAndScrape(4, metrics);
  auto ended = agent::Run(Config(10), specs_, clock_, environment_);
  ASSERT_TRUE(ended.ok()) << ended.error().message;
  EXPECT_EQ(*ended, RunEnd::kStopRequested);
  EXPECT_TRUE(Logged("configuration reloaded")) << Log();
  EXPECT_EQ(notified_, (std::vector<std::string>{kReady, "WATCHDOG=1", "WATCHDOG=1", "RELOADING=1", kReady,
                                                 "WATCHDOG=1", "WATCHDOG=1", "STOPPING=1"}));
  // Two windows of 1 s before the reload and two after: 4 s observed.
  EXPECT_NE(metrics.find("ofu_observed_seconds_total{uuid=\"GPU-run\",gpu=\"0\"} 4\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("job_id=\"second\""), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("job_id=\"first\""), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("ofu_build_info{version=\"test\",source=\"replay\"} 1"), std::string::npos) << metrics;
}

TEST_F(RunTest, ABadReloadKeepsTheRunningConfiguration) {
  int reloads = 0;
  environment_.take_reload_request = [&] { return windows_ == 1 && reloads++ == 0; };
  environment_.load_config = [] {
    return Result<AgentConfig>(Error{ErrorCode::kInvalidArgument, "agent.toml:2: unknown key agent.windwo"});
  };
  std::string metrics;
  StopAfterWindowsAndScrape(2, metrics);
  auto ended = agent::Run(Config(10), specs_, clock_, environment_);
  ASSERT_TRUE(ended.ok()) << ended.error().message;
  EXPECT_TRUE(Logged("reload failed, keeping the running configuration: agent.toml:2: unknown key agent.windwo"))
      << Log();
  EXPECT_NE(metrics.find("job_id=\"first\""), std::string::npos) << metrics;
}

TEST_F(RunTest, KeepsHistoryWhereTold) {
  AgentConfig config = Config(4);
  config.store_path = (dir_ / "history.sqlite").string();
  auto ended = agent::Run(config, specs_, clock_, environment_);
  ASSERT_TRUE(ended.ok()) << ended.error().message;
  EXPECT_TRUE(Logged("keeping history in " + config.store_path)) << Log();
  auto history = history::ReadHistory(config.store_path, {});
  ASSERT_TRUE(history.ok()) << history.error().message;
  ASSERT_EQ(history->gpus.size(), 1u);
  EXPECT_EQ(history->gpus[0].key(), "GPU-run");
  EXPECT_EQ(history->windows.size(), 4u);
}

// The default store's directory is made by the package; without it the
// agent runs without history. (Skipped where /var/lib/ofu exists, so that
// the test never writes there.)
TEST_F(RunTest, RunsWithoutHistoryWhereTheDefaultStoreHasNoDirectory) {
  AgentConfig config = Config(2);
  config.store_path = AgentConfig{}.store_path;
  if (fs::exists(fs::path(config.store_path).parent_path())) GTEST_SKIP() << "/var/lib/ofu exists here";
  auto ended = agent::Run(config, specs_, clock_, environment_);
  ASSERT_TRUE(ended.ok()) << ended.error().message;
  EXPECT_TRUE(std::any_of(log_.begin(), log_.end(), [](const std::string& line) {
    return line.rfind("no history: ", 0) == 0;
  })) << Log();
}

TEST_F(RunTest, ErrorsBeforeTheFirstWindow) {
  const auto run = [this](const AgentConfig& config) {
    auto ended = agent::Run(config, specs_, clock_, environment_);
    EXPECT_FALSE(ended.ok());
    return ended.ok() ? Error{ErrorCode::kNoData, "it ran"} : ended.error();
  };
  AgentConfig config = Config(2);
  config.source = "frobnicate";
  Error error = run(config);
  EXPECT_EQ(error.code, ErrorCode::kInvalidArgument);
  EXPECT_NE(error.message.find("unknown source 'frobnicate'"), std::string::npos) << error.message;

  config = Config(2);
  config.source = "nvml";
  config.source_options.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  error = run(config);
  EXPECT_EQ(error.code, ErrorCode::kUnavailable);
  EXPECT_NE(error.message.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << error.message;

  // A store the user chose must open.
  config = Config(2);
  config.store_path = (dir_ / "missing" / "history.sqlite").string();
  error = run(config);
  EXPECT_EQ(error.code, ErrorCode::kIo);
  EXPECT_NE(error.message.find(config.store_path), std::string::npos) << error.message;

  config = Config(2);
  config.web_config = (dir_ / "missing-web.yml").string();
  error = run(config);
  EXPECT_NE(error.message.find("missing-web.yml"), std::string::npos) << error.message;

  // A model named but not resolved: Run never looks a name up itself.
  config = Config(2);
  config.gpu_model = "h100-sxm5";
  error = run(config);
  EXPECT_EQ(error.code, ErrorCode::kInvalidArgument);
  EXPECT_NE(error.message.find("gpu_model \"h100-sxm5\" was not resolved"), std::string::npos) << error.message;

  // A port another socket holds.
  const int holder = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(holder, 1), 0);
  socklen_t length = sizeof address;
  ::getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length);
  config = Config(2);
  config.listen_port = ntohs(address.sin_port);
  error = run(config);
  ::close(holder);
  EXPECT_EQ(error.code, ErrorCode::kUnavailable) << error.message;
  EXPECT_EQ(windows_, 0);
}

}  // namespace
}  // namespace ofu::agent
