// `ofu agent` as a process: systemd's notify protocol (READY, WATCHDOG,
// RELOADING, STOPPING) on a socket the test owns, SIGHUP reloading the
// config file, a bad reload keeping the running config, and /metrics
// answering while slow clients hold connections. The agent reads the
// in-tree NVML double (synthetic).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "support/background_process.h"
#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using ofu::testing::BackgroundProcess;

constexpr const char* kNvmlScenario = R"({
  "devices": [{"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-agent-0", "architecture": 9, "sm_count": 132,
               "clocks": [1830], "gpm": [{"1": 90, "5": 50}]}]})";

std::string ConfigWithJob(const std::string& job) {
  return fmt::format(
      "[attribution]\nmethods = [\"static\"]\ninterval = 0.1\n"
      "[[attribution.static]]\ngpu = \"0\"\njob_id = \"{}\"\n",
      job);
}

// A unix datagram socket standing in for systemd's NOTIFY_SOCKET.
class NotifySocket {
 public:
  explicit NotifySocket(const fs::path& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0) << path;
    timeval timeout{0, 100000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  ~NotifySocket() { ::close(fd_); }

  // Everything received until `wanted` appears or `seconds` pass.
  std::string ReceiveUntil(const std::string& wanted, double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline && received_.find(wanted) == std::string::npos) {
      char buffer[4096];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n > 0) received_.append(buffer, static_cast<size_t>(n)).push_back('\n');
    }
    return received_;
  }

 private:
  fs::path path_;
  int fd_ = -1;
  std::string received_;
};

class AgentCli : public ofu::testing::CliTest {
 protected:
  std::string Metrics(int port) {
    httplib::Client client("127.0.0.1", port);
    auto response = client.Get("/metrics");
    return response && response->status == 200 ? response->body : "";
  }

  // Polls /metrics until it contains `text`.
  bool WaitForMetric(int port, const std::string& text, double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      if (Metrics(port).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
};

TEST_F(AgentCli, NotifiesSystemdAndReloadsItsConfigOnSighup) {
  const fs::path scenario = Write("nvml.json", kNvmlScenario);
  const fs::path config = Write("agent.toml", ConfigWithJob("first"));
  NotifySocket notify(dir_ / "notify.sock");
  const int port = ofu::testing::FreeLoopbackPort();
  BackgroundProcess agent;
  ASSERT_TRUE(agent.Start({OFU_BINARY, "agent", "--config", config.string(), "--source", "nvml", "--nvml-library",
                           OFU_FAKE_NVML_PATH, "--listen", fmt::format("127.0.0.1:{}", port), "--no-store", "--window",
                           "0.2"},
                          {"OFU_FAKE_NVML_SCENARIO=" + scenario.string(),
                           "NOTIFY_SOCKET=" + (dir_ / "notify.sock").string(), "WATCHDOG_USEC=2000000"},
                          (dir_ / "agent.log").string()));
  std::string messages = notify.ReceiveUntil("READY=1", 10);
  ASSERT_NE(messages.find("READY=1"), std::string::npos) << messages << ofu::testing::Slurp(dir_ / "agent.log");
  ASSERT_TRUE(WaitForMetric(port, "job_id=\"first\"", 10)) << ofu::testing::Slurp(dir_ / "agent.log");
  messages = notify.ReceiveUntil("WATCHDOG=1", 5);
  EXPECT_NE(messages.find("WATCHDOG=1"), std::string::npos) << messages;
  const std::string before = Metrics(port);

  // A new job in the file, then SIGHUP: the agent reloads, the counters go on.
  Write("agent.toml", ConfigWithJob("second"));
  ASSERT_TRUE(agent.Signal(SIGHUP));
  EXPECT_TRUE(WaitForMetric(port, "job_id=\"second\"", 10)) << ofu::testing::Slurp(dir_ / "agent.log");
  messages = notify.ReceiveUntil("RELOADING=1", 5);
  EXPECT_NE(messages.find("RELOADING=1"), std::string::npos) << messages;
  EXPECT_EQ(Metrics(port).find("job_id=\"first\""), std::string::npos);

  // A broken file: the reload is refused and the running config stays.
  Write("agent.toml", "[agent]\nwindwo = 1\n");
  ASSERT_TRUE(agent.Signal(SIGHUP));
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  EXPECT_NE(Metrics(port).find("job_id=\"second\""), std::string::npos);
  EXPECT_EQ(agent.Stop(), 0);
  const std::string log = ofu::testing::Slurp(dir_ / "agent.log");
  EXPECT_NE(log.find("configuration reloaded"), std::string::npos) << log;
  EXPECT_NE(log.find("reload failed, keeping the running configuration: "), std::string::npos) << log;
  EXPECT_NE(log.find("unknown key agent.windwo"), std::string::npos) << log;
  EXPECT_NE(notify.ReceiveUntil("STOPPING=1", 2).find("STOPPING=1"), std::string::npos);
  EXPECT_FALSE(before.empty());
}

TEST_F(AgentCli, CheckConfigAndBadFlags) {
  const fs::path config = Write("agent.toml", ConfigWithJob("x"));
  auto result = Ofu(fmt::format("agent --check-config --config '{}'", config.string()));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("config ok: source auto, window 1 s, listen 127.0.0.1:9477"), std::string::npos)
      << result.out;
  Write("bad.toml", "[agent]\nwindow = 0.01\n");
  result = Ofu(fmt::format("agent --check-config --config '{}'", (dir_ / "bad.toml").string()));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("bad.toml: window 0.01 s is not in 0.1..3600 s"), std::string::npos) << result.err;
  result = Ofu("agent --check-config --config /nonexistent/agent.toml");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("/nonexistent/agent.toml: cannot open"), std::string::npos) << result.err;
  result = Ofu("agent --check-config --listen nowhere");
  EXPECT_EQ(result.exit_code, 1);
  // No GPU source at all: exit 5 with what was tried.
  result = Ofu("agent --source nvml --nvml-library /nonexistent/libnvidia-ml.so.1 --no-store --listen 127.0.0.1:0");
  EXPECT_EQ(result.exit_code, 5) << result.err;
  EXPECT_NE(result.err.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << result.err;
}

// The agent takes the source flags `ofu top` and `ofu record` take (-s, -w,
// --clock-readings, the library paths), and a flag given overrides the
// config file's key while a flag not given leaves it.
TEST_F(AgentCli, TakesTheSharedSourceFlagsOverItsConfigFile) {
  const fs::path recording = Write("run.om", R"(# TYPE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE gauge
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu="0",UUID="GPU-cli",modelName="NVIDIA H100 80GB HBM3"} 0.5 10
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu="0",UUID="GPU-cli",modelName="NVIDIA H100 80GB HBM3"} 0.5 11
# EOF
)");
  auto result = Ofu(fmt::format("agent --check-config -s 'replay:{}' -w 0.5", recording.string()));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find(fmt::format("config ok: source replay:{}, window 0.5 s,", recording.string())),
            std::string::npos)
      << result.out;

  const fs::path config = Write("agent.toml", "[agent]\nwindow = 2\nsource = \"dcgm\"\n");
  result = Ofu(fmt::format("agent --check-config --config '{}' -w 0.5", config.string()));
  EXPECT_NE(result.out.find("config ok: source dcgm, window 0.5 s,"), std::string::npos) << result.out << result.err;
  result = Ofu(fmt::format("agent --check-config --config '{}' --source nvml", config.string()));
  EXPECT_NE(result.out.find("config ok: source nvml, window 2 s,"), std::string::npos) << result.out << result.err;
  // The shared cap on --window.
  EXPECT_EQ(Ofu("agent --check-config -w 7200").exit_code, 1);

  // And it runs on them: the two-sample replay plays for a second and ends.
  result = Ofu(fmt::format("agent -s 'replay:{}' -w 0.5 --clock-readings 2 --no-store --listen 127.0.0.1:0",
                           recording.string()));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("ofu agent: reading replay"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("ofu agent: the source has ended"), std::string::npos) << result.err;
}

// A TCP connection to 127.0.0.1:port, closed on destruction.
class LoopbackSocket {
 public:
  explicit LoopbackSocket(int port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
  }
  ~LoopbackSocket() { ::close(fd_); }
  LoopbackSocket(const LoopbackSocket&) = delete;
  LoopbackSocket& operator=(const LoopbackSocket&) = delete;
  bool connected() const { return connected_; }
  // MSG_NOSIGNAL: the agent may have closed it (its caps and deadline).
  void Send(std::string_view bytes) { ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT); }

 private:
  int fd_;
  bool connected_ = false;
};

// Issue 19, with the agent's default limits: 64 connections trickle a header
// byte a second and 64 only connect, all from 127.0.0.1 like the scrapes, and
// 20 scrapes in a row each get 200 within 1 s. (tests/sinks has the same
// with the limits out of reach, and over TLS.)
TEST_F(AgentCli, ScrapesAnswerWhileSlowClientsHoldConnections) {
  const fs::path scenario = Write("nvml.json", kNvmlScenario);
  const int port = ofu::testing::FreeLoopbackPort();
  BackgroundProcess agent;
  ASSERT_TRUE(agent.Start({OFU_BINARY, "agent", "--source", "nvml", "--nvml-library", OFU_FAKE_NVML_PATH, "--listen",
                           fmt::format("127.0.0.1:{}", port), "--no-store", "--window", "0.2"},
                          {"OFU_FAKE_NVML_SCENARIO=" + scenario.string()}, (dir_ / "agent.log").string()));
  ASSERT_TRUE(WaitForMetric(port, "ofu_gpu_up", 10)) << ofu::testing::Slurp(dir_ / "agent.log");

  std::vector<std::unique_ptr<LoopbackSocket>> trickling, idle;
  for (int i = 0; i < 64; ++i) {
    trickling.push_back(std::make_unique<LoopbackSocket>(port));
    ASSERT_TRUE(trickling.back()->connected());
    trickling.back()->Send("GET /metrics HTTP/1.1\r\n");
    idle.push_back(std::make_unique<LoopbackSocket>(port));
    ASSERT_TRUE(idle.back()->connected());
  }
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    while (!stop.load()) {
      for (auto& socket : trickling) socket->Send("X");
      for (int i = 0; i < 20 && !stop.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  for (int i = 0; i < 20; ++i) {
    const auto start = std::chrono::steady_clock::now();
    httplib::Client client("127.0.0.1", port);
    client.set_connection_timeout(2, 0);
    client.set_read_timeout(2, 0);
    auto response = client.Get("/metrics");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(response) << "scrape " << i << ": " << httplib::to_string(response.error());
    EXPECT_EQ(response->status, 200) << "scrape " << i;
    EXPECT_LT(seconds, 1.0) << "scrape " << i;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  stop.store(true);
  trickle.join();
  // 128 from one peer against a cap of 32: the agent closed the excess.
  const std::string metrics = Metrics(port);
  const std::string line = "ofu_http_connections_rejected_total{reason=\"per_peer_limit\"} ";
  const std::size_t at = metrics.find(line);
  ASSERT_NE(at, std::string::npos) << metrics;
  EXPECT_GE(std::stod(metrics.substr(at + line.size())), 96);
  trickling.clear();
  idle.clear();
  EXPECT_EQ(agent.Stop(), 0);
}

}  // namespace

// The agent on a Kubernetes node: it finds libofu-kubelet.so beside itself,
// loads it once the kubelet's socket exists, and labels the GPU with the pod
// a stand-in kubelet (doubles/fake_kubelet.cc, synthetic pods) reports.
// An agent reading NVML never opens an HTTP client, so it must not carry
// one: cpp-httplib (and with it OpenSSL's error strings, brotli and zlib)
// cost ~2.8 MiB of resident memory at load. It lives in libofu-http.so,
// opened by the commands that make requests (http_client.h). And its
// threads carry names, so a per-thread CPU table can tell them apart.
TEST_F(AgentCli, CarriesNoHttpClientAndNamesItsThreads) {
  const fs::path scenario = Write("nvml.json", kNvmlScenario);
  const int port = ofu::testing::FreeLoopbackPort();
  BackgroundProcess agent;
  ASSERT_TRUE(agent.Start({OFU_BINARY, "agent", "--source", "nvml", "--nvml-library", OFU_FAKE_NVML_PATH, "--listen",
                           fmt::format("127.0.0.1:{}", port), "--store", (dir_ / "history.sqlite").string(), "--window",
                           "0.1"},
                          {"OFU_FAKE_NVML_SCENARIO=" + scenario.string()}, (dir_ / "agent.log").string()));
  ASSERT_TRUE(WaitForMetric(port, "ofu_gpu_up", 10)) << ofu::testing::Slurp(dir_ / "agent.log");
  const fs::path proc = fs::path("/proc") / std::to_string(agent.pid());
  const std::string maps = ofu::testing::Slurp(proc / "maps");
  ASSERT_NE(maps.find("libnvidia-ml"), std::string::npos);  // the maps were read
  EXPECT_EQ(maps.find("libcpp-httplib"), std::string::npos);
  EXPECT_EQ(maps.find("libofu-http"), std::string::npos);
  EXPECT_EQ(maps.find("libbrotli"), std::string::npos);
  std::vector<std::string> names;
  for (const auto& task : fs::directory_iterator(proc / "task")) {
    std::string name = ofu::testing::Slurp(task.path() / "comm");
    while (!name.empty() && name.back() == '\n') name.pop_back();
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"ofu", "ofu-http", "ofu-store"}));
  EXPECT_EQ(agent.Stop(), 0);
}

TEST_F(AgentCli, AttributesGpusToPodsThroughTheKubeletPlugin) {
  const fs::path scenario = Write("nvml.json", kNvmlScenario);
  const fs::path socket = dir_ / "kubelet.sock";
  const fs::path pods = Write("pods.json", R"([{"namespace": "ml", "name": "trainer-0", "containers":
      [{"name": "main", "devices": [{"resource": "nvidia.com/gpu", "ids": ["GPU-agent-0"]}]}]}])");
  const fs::path config = Write(
      "agent.toml", fmt::format("[attribution]\nmethods = [\"kubelet\"]\ninterval = 0.2\nkubelet_socket = \"{}\"\n",
                                socket.string()));
  const int port = ofu::testing::FreeLoopbackPort();
  BackgroundProcess agent;
  ASSERT_TRUE(agent.Start({OFU_BINARY, "agent", "--config", config.string(), "--source", "nvml", "--nvml-library",
                           OFU_FAKE_NVML_PATH, "--listen", fmt::format("127.0.0.1:{}", port), "--no-store", "--window",
                           "0.2"},
                          {"OFU_FAKE_NVML_SCENARIO=" + scenario.string()}, (dir_ / "agent.log").string()));
  // No kubelet yet: the reason in the log, GPU metrics, no job.
  const std::string missing = "kubelet pod-resources socket " + socket.string() + " does not exist";
  for (int i = 0; i < 200 && ofu::testing::Slurp(dir_ / "agent.log").find(missing) == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(ofu::testing::Slurp(dir_ / "agent.log").find(missing), std::string::npos)
      << ofu::testing::Slurp(dir_ / "agent.log");
  ASSERT_TRUE(WaitForMetric(port, "ofu_gpu_up", 10)) << ofu::testing::Slurp(dir_ / "agent.log");
  EXPECT_EQ(Metrics(port).find("ofu_gpu_job_info{"), std::string::npos);

  BackgroundProcess kubelet;
  ASSERT_TRUE(kubelet.Start({OFU_FAKE_KUBELET, socket.string(), pods.string()}, {}, (dir_ / "kubelet.log").string()));
  EXPECT_TRUE(WaitForMetric(port, "job_id=\"ml/trainer-0\"", 10))
      << ofu::testing::Slurp(dir_ / "agent.log") << ofu::testing::Slurp(dir_ / "kubelet.log");
  EXPECT_EQ(agent.Stop(), 0);
}
