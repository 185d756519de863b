// End-to-end tests of `ofu record`: record a replay, then read the file back
// with `ofu report` and import it with promtool.
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/background_process.h"
#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using ofu::testing::CommandResult;
using ofu::testing::RunShell;

const std::string kBundled = std::string(OFU_SOURCE_DIR) + "/data/recordings/synthetic-2xh100-bf16-matmul.om";

std::size_t Count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// Synthetic: one H100 SXM5 at tensor 0.5 and 1830 MHz for `seconds` s, from
// an instant that is a multiple of 60 s.
std::string SteadyH100(int seconds) {
  std::string text =
      "# TYPE ofu_recording info\nofu_recording_info{synthetic=\"true\",description=\"steady\"} 1 1699999981\n";
  const std::string labels = R"(gpu="0",UUID="GPU-test-0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-a")";
  for (int t = 1; t <= seconds; ++t) {
    text += fmt::format("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{}}} 0.5 {}\n", labels, 1699999980 + t);
  }
  for (int t = 1; t <= seconds; ++t)
    text += fmt::format("DCGM_FI_DEV_SM_CLOCK{{{}}} 1830 {}\n", labels, 1699999980 + t);
  return text + "# EOF\n";
}

class RecordCli : public ofu::testing::CliTest {};

TEST_F(RecordCli, SixtySecondsOfTheBundledRecordingImportIntoPromtool) {
  const fs::path out = dir_ / "rec.om";
  const CommandResult run = Ofu(fmt::format("record --source 'replay:{}' --duration 1m --out '{}' --format json",
                                            kBundled, out.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto summary = nlohmann::json::parse(run.out);
  EXPECT_EQ(summary["windows"], 60);  // 1 s apart: 60 windows cover 60 s
  EXPECT_EQ(summary["gpus"], 2);
  EXPECT_EQ(summary["seconds"], 60.0);
  EXPECT_EQ(summary["synthetic"], true);
  EXPECT_EQ(summary["interrupted"], false);
  EXPECT_FALSE(fs::exists(out.string() + fmt::format(".tmp-{}", ::getpid())));

  if (!ofu::testing::ProgramFound(OFU_PROMTOOL))
    GTEST_SKIP() << "promtool not found; scripts/install-deps.sh installs it";
  const fs::path tsdb = dir_ / "tsdb";
  const CommandResult import = RunShell(fmt::format("'{}' tsdb create-blocks-from openmetrics '{}' '{}'", OFU_PROMTOOL,
                                                    out.string(), tsdb.string()),
                                        dir_);
  ASSERT_EQ(import.exit_code, 0) << import.out << import.err;
  fs::create_directories(tsdb / "wal");  // `promtool tsdb dump` wants one
  const CommandResult dump = RunShell(fmt::format("'{}' tsdb dump '{}'", OFU_PROMTOOL, tsdb.string()), dir_);
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  // 60 windows x 2 GPUs, each with a tensor sample.
  EXPECT_EQ(Count(dump.out, "__name__=\"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE\""), 120u) << dump.out.substr(0, 2000);
  EXPECT_EQ(Count(dump.out, "__name__=\"ofu_recording_info\""), 1u);
}

TEST_F(RecordCli, TheWholeRecordingReportsTheSameOverallOfuAsTheOriginal) {
  const fs::path out = dir_ / "all.om";
  const CommandResult run = Ofu(fmt::format("record --source 'replay:{}' --duration 1h --out '{}'", kBundled,
                                            out.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // The replay ends long before an hour; the summary says so.
  EXPECT_NE(run.err.find("the source ended after"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("SYNTHETIC"), std::string::npos) << run.err;

  const CommandResult original = Ofu(fmt::format("report --input '{}' --format json", kBundled));
  const CommandResult copy = Ofu(fmt::format("report --input '{}' --format json", out.string()));
  ASSERT_EQ(original.exit_code, 0) << original.err;
  ASSERT_EQ(copy.exit_code, 0) << copy.err;
  const auto a = nlohmann::json::parse(original.out), b = nlohmann::json::parse(copy.out);
  EXPECT_EQ(a["overall"]["ofu"], b["overall"]["ofu"]);
  EXPECT_EQ(a["overall"]["active_ofu"], b["overall"]["active_ofu"]);
  EXPECT_EQ(a["overall"]["seconds"], b["overall"]["seconds"]);
}

TEST_F(RecordCli, HandComputedOfuSurvivesTheRecording) {
  const fs::path input = Write("steady.om", SteadyH100(120));
  const fs::path out = dir_ / "steady-copy.om";
  ASSERT_EQ(
      Ofu(fmt::format("record --source 'replay:{}' --duration 120 --out '{}'", input.string(), out.string())).exit_code,
      0);
  // The recording keeps the reported clock: read as reported, the hand value
  // survives (the measured clock model is applied when a report is made).
  const CommandResult report = Ofu(fmt::format("report --input '{}' --format json --clock reported", out.string()));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  // f_spec = 989.4 TFLOPS / (132 SMs x 4096 FLOP/clk) = 1829.945 MHz, so
  // 0.5 x 1830 / 1829.945 = 0.5000150.
  const double f_spec_mhz = 989.4e12 / (132 * 4096.0) / 1e6;
  EXPECT_NEAR(nlohmann::json::parse(report.out)["overall"]["ofu"].get<double>(), 0.5 * 1830 / f_spec_mhz, 1e-9);
  const std::string text = ofu::testing::Slurp(out);
  EXPECT_NE(text.find("ofu_recording_info{synthetic=\"true\",description=\"ofu record from replay of"),
            std::string::npos)
      << text.substr(0, 500);
  EXPECT_EQ(Count(text, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{"), 120u);
  EXPECT_EQ(text.substr(text.size() - 6), "# EOF\n");
}

TEST_F(RecordCli, ADescriptionIsStored) {
  const fs::path input = Write("steady.om", SteadyH100(5));
  const fs::path out = dir_ / "d.om";
  ASSERT_EQ(Ofu(fmt::format("record --source 'replay:{}' --duration 5s --out '{}' --description 'GEMM sweep'",
                            input.string(), out.string()))
                .exit_code,
            0);
  EXPECT_NE(ofu::testing::Slurp(out).find("description=\"GEMM sweep\"} 1 1699999981\n"), std::string::npos);
}

TEST_F(RecordCli, BadDurationIsAUsageErrorThatSaysTheForms) {
  for (const char* bad : {"5x", "0", "-3s", "m", ""}) {
    const CommandResult run = Ofu(fmt::format("record --source 'replay:{}' --duration '{}' --out '{}'", kBundled, bad,
                                              (dir_ / "x.om").string()));
    EXPECT_EQ(run.exit_code, 1) << bad;
    EXPECT_NE(run.err.find("30s, 5m, 1.5h"), std::string::npos) << bad << ": " << run.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "x.om"));
}

TEST_F(RecordCli, UnknownSourceIsAUsageError) {
  const CommandResult run = Ofu(fmt::format("record --source bogus --duration 5 --out '{}'", (dir_ / "x.om").string()));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("unknown source 'bogus'"), std::string::npos) << run.err;
}

TEST_F(RecordCli, UnavailableSourceExitsFive) {
  const CommandResult run =
      Ofu(fmt::format("record --source nvml --nvml-library /nonexistent/libnvidia-ml.so.1 "
                      "--duration 5 --out '{}'",
                      (dir_ / "x.om").string()));
  EXPECT_EQ(run.exit_code, 5) << run.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.om"));
}

TEST_F(RecordCli, MissingReplayFileIsBadInput) {
  const CommandResult run = Ofu(fmt::format("record --source 'replay:{}' --duration 5 --out '{}'",
                                            (dir_ / "nope.om").string(), (dir_ / "x.om").string()));
  EXPECT_EQ(run.exit_code, 2) << run.err;
}

// A live source (a scrape of a static file served on localhost) recorded for
// an hour, stopped by SIGINT once two windows are in: the file is still
// written, with every window recorded. The server counts the scrapes it
// was asked for, so the test waits for those, not for wall time, and the
// count says how many windows there must be: one scrape when the source
// opens, then one per window.
TEST_F(RecordCli, SigintStopsEarlyAndStillWritesTheFile) {
  if (RunShell("command -v python3", dir_).exit_code != 0) GTEST_SKIP() << "python3 not found";
  Write("metrics",
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"0\",UUID=\"GPU-x\",modelName=\"NVIDIA H100 80GB HBM3\"} 0.5\n"
        "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",UUID=\"GPU-x\",modelName=\"NVIDIA H100 80GB HBM3\"} 1830\n");
  // Serves the directory it is given on a free loopback port, which it
  // writes to `port`; appends a line to `scrapes` for each GET before
  // answering it, so once ofu has exited every request it made is there.
  constexpr const char* kServer = R"(
import http.server, os, socketserver, sys
os.chdir(sys.argv[1])
class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        with open('scrapes', 'a') as f:
            f.write(self.path + '\n')
        super().do_GET()
    def log_message(self, *args):
        pass
server = socketserver.TCPServer(('127.0.0.1', 0), Handler)
with open('port.tmp', 'w') as f:
    f.write(str(server.server_address[1]))
os.rename('port.tmp', 'port')
server.serve_forever()
)";
  // Stopped (SIGTERM, then SIGKILL) and reaped when the test ends, pass or fail.
  ofu::testing::BackgroundProcess server;
  ASSERT_TRUE(server.Start({"python3", "-c", kServer, dir_.string()}, {}, (dir_ / "server.log").string()));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(dir_ / "port") && server.running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(fs::exists(dir_ / "port")) << ofu::testing::Slurp(dir_ / "server.log");
  const std::string port = ofu::testing::Slurp(dir_ / "port");
  const fs::path out = dir_ / "live.om";
  // SIGINT once the server saw 3 scrapes: the opening one and windows 1 and
  // 2 (gives up waiting after 60 s). ofu has its handler by then: it
  // installs it before it opens the source.
  const CommandResult run = RunShell(
      fmt::format("('{}' record --source scrape:http://127.0.0.1:{}/metrics --window 0.5 --duration 1h --out '{}' "
                  "--format json & pid=$!; n=0; "
                  "while [ \"$(cat '{}' 2>/dev/null | wc -l)\" -lt 3 ] && [ $n -lt 1200 ]; do "
                  "sleep 0.05; n=$((n+1)); done; "
                  "kill -INT $pid; wait $pid)",
                  OFU_BINARY, port, out.string(), (dir_ / "scrapes").string()),
      dir_);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::size_t scrapes = Count(ofu::testing::Slurp(dir_ / "scrapes"), "/metrics\n");
  ASSERT_GE(scrapes, 3u) << "the recording made too few scrapes within 60 s";
  const auto summary = nlohmann::json::parse(run.out);
  EXPECT_EQ(summary["interrupted"], true);
  EXPECT_EQ(summary["synthetic"], false);
  const auto windows = summary["windows"].get<std::size_t>();
  EXPECT_GE(windows, 2u);
  EXPECT_EQ(windows, scrapes - 1);
  EXPECT_DOUBLE_EQ(summary["seconds"].get<double>(), 0.5 * static_cast<double>(windows));
  const std::string text = ofu::testing::Slurp(out);
  EXPECT_NE(text.find("ofu_recording_info{synthetic=\"false\""), std::string::npos) << text;
  // Every window holds the served values.
  EXPECT_EQ(Count(text, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{"), windows) << text;
  EXPECT_EQ(Count(text, "} 0.5 "), windows) << text;
  EXPECT_EQ(Count(text, "DCGM_FI_DEV_SM_CLOCK{"), windows) << text;
  EXPECT_EQ(Count(text, "} 1830 "), windows) << text;
  EXPECT_EQ(text.substr(text.size() - 6), "# EOF\n");
}

}  // namespace
