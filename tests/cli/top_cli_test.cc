// End-to-end tests of `ofu top`: --once on small synthetic recordings with
// hand-computed OFU, and the interactive view driven through tmux.
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using ofu::testing::CommandResult;
using ofu::testing::RunShell;

const std::string kBundled = std::string(OFU_SOURCE_DIR) + "/data/recordings/synthetic-2xh100-bf16-matmul.om";

// Synthetic: GPU 0 at tensor 0.5 and 1830 MHz, power 650 W, throttled by the
// SW power cap (0x4); GPU 1 with tensor activity but no clock. Three seconds.
std::string TwoGpus() {
  std::string text =
      "# TYPE ofu_recording info\nofu_recording_info{synthetic=\"true\",description=\"top test\"} 1 1700000001\n";
  const std::string a = R"(gpu="0",UUID="GPU-a",modelName="NVIDIA H100 80GB HBM3")";
  const std::string b = R"(gpu="1",UUID="GPU-b",modelName="NVIDIA H100 80GB HBM3")";
  for (int t = 1; t <= 3; ++t) {
    text += fmt::format("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{}}} 0.5 {}\n", a, 1700000000 + t);
    text += fmt::format("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{}}} 0.25 {}\n", b, 1700000000 + t);
  }
  for (int t = 1; t <= 3; ++t) text += fmt::format("DCGM_FI_DEV_SM_CLOCK{{{}}} 1830 {}\n", a, 1700000000 + t);
  for (int t = 1; t <= 3; ++t) text += fmt::format("DCGM_FI_DEV_POWER_USAGE{{{}}} 650 {}\n", a, 1700000000 + t);
  for (int t = 1; t <= 3; ++t) {
    text += fmt::format("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{{{}}} 4 {}\n", a, 1700000000 + t);
  }
  return text + "# EOF\n";
}

class TopCli : public ofu::testing::CliTest {};

TEST_F(TopCli, OncePrintsHandComputedOfuAsPlainText) {
  const fs::path input = Write("two.om", TwoGpus());
  const CommandResult run = Ofu(fmt::format("top --once --source 'replay:{}'", input.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string& out = run.out;
  // The H100 80GB HBM3's measured clock model (docs/metrics.md#the-sm-clock):
  // tensor 0.5 at the power cap (sw_power_cap) is 1/6 of the way from the
  // measured bursts (<= 0.45: 1830 / (0.5 + 0.5 x 1.202) = 1662.125 MHz) to
  // steady work (>= 0.75: 1830 / 0.998 = 1833.667 MHz): 1690.716 MHz, and
  // 0.5 x 1690.716 / 1829.945 = 0.46196 -> 46.2 %.
  EXPECT_NE(out.find("]   46.2 %\n"), std::string::npos) << out;
  EXPECT_NE(out.find("run      1691 MHz"), std::string::npos) << out;
  EXPECT_NE(out.find("tensor     50.0 %   SM clock 1830/1830 MHz   power 650 W"), std::string::npos) << out;
  EXPECT_NE(out.find("throttle sw_power_cap"), std::string::npos) << out;
  // GPU 1: tensor but no clock, so OFU is unknown — not 0.
  EXPECT_NE(out.find("░]        —\n"), std::string::npos) << out;
  EXPECT_NE(out.find("SM clock —/1830 MHz   power — W"), std::string::npos) << out;
  EXPECT_NE(out.find("SYNTHETIC"), std::string::npos) << out;
  EXPECT_NE(out.find("3 windows seen — end of recording"), std::string::npos) << out;
  // The history of all three windows: 0.46196 -> level round(3.23) = 3.
  EXPECT_NE(out.find("history  ▄▄▄\n"), std::string::npos) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << "escape codes in --once output";
  // Sorted by OFU: GPU 0 (46 %) before GPU 1 (absent).
  EXPECT_LT(out.find("GPU 0"), out.find("GPU 1"));
}

TEST_F(TopCli, OnceSortsByGpuIndexWhenAsked) {
  const fs::path input = Write("two.om", TwoGpus());
  const CommandResult run = Ofu(fmt::format("top --once --sort gpu --source 'replay:{}'", input.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("sort: GPU"), std::string::npos) << run.out;
}

TEST_F(TopCli, OnceOnUnavailableSourceExitsFive) {
  const CommandResult run = Ofu("top --once --source nvml --nvml-library /nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(run.exit_code, 5) << run.err;
}

// The interactive view in a real terminal: tmux with its own server.
class TopTmux : public ofu::testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    if (!ofu::testing::ProgramFound(OFU_TMUX)) GTEST_SKIP() << "tmux not found";
    socket_ = fmt::format("ofu-top-test-{}", ::getpid());
  }
  void TearDown() override {
    if (!socket_.empty()) Tmux("kill-server");
    CliTest::TearDown();
  }

  CommandResult Tmux(const std::string& args) {
    return RunShell(fmt::format("'{}' -L '{}' -f /dev/null {}", OFU_TMUX, socket_, args), dir_);
  }
  std::string Screen() { return Tmux("capture-pane -p -t ofu").out; }

  // Polls until `done` holds, for at most 10 s.
  template <typename Done>
  bool WaitFor(Done done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  std::string socket_;
};

TEST_F(TopTmux, ShowsTheHeaderCyclesTheSortAndQuits) {
  const CommandResult start = Tmux(fmt::format(
      "new-session -d -s ofu -x 120 -y 40 \"env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen '{}' top --source 'replay:{}'\"",
      OFU_BINARY, kBundled));
  ASSERT_EQ(start.exit_code, 0) << start.err;
  // The header is drawn before the source has given its first window; wait
  // for the first GPU row, which comes with the source's description.
  ASSERT_TRUE(WaitFor([&] {
    const std::string screen = Screen();
    return screen.find("sort: OFU") != std::string::npos && screen.find("GPU 0") != std::string::npos;
  })) << Screen();
  const std::string first = Screen();
  EXPECT_NE(first.find("ofu top — sort: OFU (s: sort, q: quit) — replay of"), std::string::npos) << first;
  EXPECT_NE(first.find("SYNTHETIC"), std::string::npos) << first;
  EXPECT_NE(first.find("GPU 0"), std::string::npos) << first;

  Tmux("send-keys -t ofu s");
  EXPECT_TRUE(WaitFor([&] { return Screen().find("sort: tensor") != std::string::npos; })) << Screen();
  Tmux("send-keys -t ofu g");
  EXPECT_TRUE(WaitFor([&] { return Screen().find("sort: GPU") != std::string::npos; })) << Screen();

  Tmux("send-keys -t ofu q");
  EXPECT_TRUE(WaitFor([&] { return Tmux("has-session -t ofu").exit_code != 0; })) << Screen();
}

TEST_F(TopTmux, CtrlCEndsTheViewToo) {
  ASSERT_EQ(Tmux(fmt::format("new-session -d -s ofu -x 100 -y 30 \"env LANG=C.UTF-8 TERM=screen '{}' top "
                             "--source 'replay:{}'\"",
                             OFU_BINARY, kBundled))
                .exit_code,
            0);
  ASSERT_TRUE(WaitFor([&] { return Screen().find("sort: OFU") != std::string::npos; })) << Screen();
  Tmux("send-keys -t ofu C-c");
  EXPECT_TRUE(WaitFor([&] { return Tmux("has-session -t ofu").exit_code != 0; })) << Screen();
}

}  // namespace
