// `ofu run -- COMMAND` end to end on the NVML double (SYNTHETIC GPUs and
// counters): the command's output passes through, ofu exits with its status,
// the report names the job's GPUs by each rule, the MFU it printed, and the
// phases and stalls, which are counted here by hand from the scenario's GPM
// windows (the double's values advance per window, not with wall time).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "html/html_test_support.h"
#include "support/cli_runner.h"

namespace ofu::testing {
namespace {

class RunCli : public CliTest {
 protected:
  // `ofu run` on the NVML double with 100 ms windows; `env` goes before it.
  CommandResult Run(const std::string& scenario, const std::string& args, const std::string& env = "") {
    const auto path = Write("scenario.json", scenario);
    return RunShell(fmt::format("cd '{}' && env -u CUDA_VISIBLE_DEVICES {} OFU_FAKE_NVML_SCENARIO='{}' '{}' run "
                                "--source nvml --nvml-library '{}' --window 0.1 {}",
                                dir_.string(), env, path.string(), OFU_BINARY, OFU_FAKE_NVML_PATH, args),
                    dir_);
  }
  nlohmann::json Report() { return nlohmann::json::parse(Slurp(dir_ / "run.json")); }
};

// One H100: GPM windows 1-3 idle, 4-8 busy (tensor 60 %), 9-12 idle, 13-16
// busy, then idle to the end. The command prints two frameworks' lines.
std::string PhasedScenario(const std::string& processes) {
  const std::string idle = R"({"1": 2, "2": 2, "5": 0})", busy = R"({"1": 95, "2": 95, "5": 60})";
  std::string gpm = idle + "," + idle + "," + idle;
  for (int i = 0; i < 5; ++i) gpm += "," + busy;
  for (int i = 0; i < 4; ++i) gpm += "," + idle;
  for (int i = 0; i < 4; ++i) gpm += "," + busy;
  gpm += "," + idle;
  return R"({"devices": [{"uuid": "GPU-0", "name": "NVIDIA H100 80GB HBM3", "processes": )" + processes +
         R"(, "gpm": [)" + gpm + "]}]}";
}

constexpr const char* kTwoFrameworks =
    "-- sh -c 'echo \"iter 10: loss 5.4, time 30.1ms, mfu 40.00%\"; "
    "echo \"step:  4  loss:  7.8  memory: 1GiB(1%)  tps: 8  tflops: 270.19  mfu: 12.01%\" >&2; sleep 4; "
    "echo \"iter 20: loss 5.3, time 30.2ms, mfu 42.00%\"; exit 3'";

TEST_F(RunCli, PassesOutputAndExitStatusThroughAndReportsPhasesAndMfu) {
  const auto result = Run(PhasedScenario(R"([{"pid": "child"}])"),
                          std::string("--report run.json --html run.html ") + kTwoFrameworks);
  EXPECT_EQ(result.exit_code, 3) << result.err;
  // The command's stdout, unchanged and alone; its stderr line, then ofu's report.
  EXPECT_EQ(result.out, "iter 10: loss 5.4, time 30.1ms, mfu 40.00%\niter 20: loss 5.3, time 30.2ms, mfu 42.00%\n");
  EXPECT_EQ(result.err.rfind("step:  4  loss:  7.8", 0), 0u) << result.err;
  EXPECT_NE(result.err.find("ofu run: "), std::string::npos) << result.err;

  const nlohmann::json run = Report()["run"];
  EXPECT_EQ(run["exit_status"], 3);
  EXPECT_EQ(run["gpus"]["rule"], "processes");
  EXPECT_EQ(run["gpus"]["keys"], nlohmann::json::array({"GPU-0"}));
  EXPECT_TRUE(run["gpus"]["shared"].empty());
  // Phases, by windows: 3 idle (start-up), 5 busy, 4 idle (a stall), 4 busy, the rest idle (tail).
  const nlohmann::json& phases = run["per_gpu"][0]["phases"];
  ASSERT_EQ(phases.size(), 5u) << phases;
  const char* kinds[] = {"startup", "steady", "stall", "steady", "tail"};
  const int windows[] = {3, 5, 4, 4};
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(phases[i]["kind"], kinds[i]) << phases;
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(phases[i]["windows"], windows[i]) << phases;
  EXPECT_EQ(phases[2]["ofu"].get<double>(), 0.0);
  EXPECT_GT(phases[1]["ofu"].get<double>(), 0.3);
  // The stall share: the stall's seconds over every phase's.
  double seconds = 0;
  for (const auto& phase : phases) seconds += phase["seconds"].get<double>();
  EXPECT_NEAR(run["stall_share"].get<double>(), phases[2]["seconds"].get<double>() / seconds, 1e-9);
  EXPECT_NEAR(run["stall_s"].get<double>(), phases[2]["seconds"].get<double>(), 1e-9);
  // The first framework's lines fix the framework (nanoGPT): steps 10 and 20,
  // median 41 % of the A100's 312 TFLOPS, over the H100's 989.4.
  const nlohmann::json& mfu = run["mfu"];
  EXPECT_EQ(mfu["framework"], "nanoGPT");
  EXPECT_EQ(mfu["steps"], 2);
  EXPECT_NEAR(mfu["mfu"].get<double>(), 0.41 * 312.0 / 989.4, 1e-9);
  EXPECT_EQ(mfu["ofu_basis"], "steady phases");
  EXPECT_FALSE(mfu["verdict"].is_null());
  // Each step line in the phase it was printed in: the first in the first
  // windows (start-up, unless the shell took over 0.3 s to start), the
  // second after the 4 s sleep, in the tail (from window 17, 1.7 s): MFU
  // 42 % of the A100's peak over the H100's.
  int placed = 0;
  for (const auto& phase : phases) placed += phase["mfu_steps"].get<int>();
  EXPECT_EQ(placed, 2) << phases;
  EXPECT_EQ(phases[4]["mfu_steps"], 1) << phases;
  EXPECT_NEAR(phases[4]["mfu"].get<double>(), 0.42 * 312.0 / 989.4, 1e-9);
  // The rest of the JSON is the report's contract.
  EXPECT_TRUE(Report().contains("overall"));
  EXPECT_EQ(Report()["gpus"].size(), 1u);

  // The run's page: a point per window, the found phases with the MFU
  // printed in each, and the run's summary.
  const nlohmann::json page = DataOf(Slurp(dir_ / "run.html"));
  ASSERT_TRUE(page.is_object());
  EXPECT_EQ(page["bucket_s"], 0.1);
  const nlohmann::json& run_page = page["run_page"];
  EXPECT_EQ(run_page["phases_basis"], "found");
  ASSERT_EQ(run_page["phases"].size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(run_page["phases"][i]["kind"], kinds[i]);
    EXPECT_EQ(run_page["phases"][i]["ofu"], phases[i]["ofu"]);
    EXPECT_EQ(run_page["phases"][i]["mfu"], phases[i]["mfu"]);
  }
  EXPECT_EQ(run_page["run"]["exit_status"], 3);
  EXPECT_EQ(run_page["run"]["gpu_rule"], "processes");
  EXPECT_EQ(run_page["run"]["framework"], "nanoGPT");
  EXPECT_NEAR(run_page["run"]["mfu"].get<double>(), 0.41 * 312.0 / 989.4, 1e-9);
}

TEST_F(RunCli, ChoosesGpusByVisibleDevicesThenProcessesThenAll) {
  const std::string two = R"({"devices": [{"uuid": "GPU-0", "processes": [{"pid": "child"}]},
                                         {"uuid": "GPU-1", "processes": [{"pid": 4242}]}]})";
  auto by_processes = Run(two, "--report run.json -- sleep 0.5");
  EXPECT_EQ(by_processes.exit_code, 0) << by_processes.err;
  EXPECT_EQ(Report()["run"]["gpus"]["rule"], "processes");
  EXPECT_EQ(Report()["run"]["gpus"]["keys"], nlohmann::json::array({"GPU-0"}));

  auto visible = Run(two, "--report run.json -- sleep 0.5", "CUDA_VISIBLE_DEVICES=1");
  EXPECT_EQ(visible.exit_code, 0) << visible.err;
  EXPECT_EQ(Report()["run"]["gpus"]["rule"], "CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(Report()["run"]["gpus"]["keys"], nlohmann::json::array({"GPU-1"}));
  EXPECT_EQ(Report()["run"]["gpus"]["shared"], nlohmann::json::array({"GPU-1 (pid 4242)"}));
  EXPECT_NE(visible.err.find("shared with other processes: GPU-1 (pid 4242)"), std::string::npos) << visible.err;

  auto by_uuid = Run(two, "--report run.json -- sleep 0.5", "CUDA_VISIBLE_DEVICES=GPU-0");
  EXPECT_EQ(Report()["run"]["gpus"]["keys"], nlohmann::json::array({"GPU-0"}));

  const std::string nobody = R"({"devices": [{"uuid": "GPU-0"}, {"uuid": "GPU-1"}]})";
  auto all = Run(nobody, "--report run.json -- sleep 0.5");
  EXPECT_EQ(Report()["run"]["gpus"]["rule"], "all");
  EXPECT_EQ(Report()["run"]["gpus"]["keys"], nlohmann::json::array({"GPU-0", "GPU-1"}));
}

// SIGINT sent to ofu by another process reaches the command, which ends as
// it chooses; the recording is written whole and ofu exits with its status.
TEST_F(RunCli, ASignalToOfuReachesTheCommandAndTheRecordingIsWhole) {
  const auto path = Write("scenario.json", PhasedScenario("[]"));
  const std::string script =
      "trap \"echo got INT; exit 7\" INT; echo ready; i=0; while [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done";
  const auto result = RunShell(
      fmt::format(
          "cd '{}' || exit 1; OFU_FAKE_NVML_SCENARIO='{}' '{}' run --source nvml --nvml-library '{}' --window 0.1 --out run.om "
          "-- sh -c '{}' > child.out 2> child.err & pid=$!; "
          "for i in $(seq 400); do grep -q ready child.out && break; sleep 0.05; done; "
          "sleep 0.3; kill -INT $pid; wait $pid; echo \"exit=$?\"",
          dir_.string(), path.string(), OFU_BINARY, OFU_FAKE_NVML_PATH, script),
      dir_);
  EXPECT_EQ(result.out, "exit=7\n") << Slurp(dir_ / "child.err");
  EXPECT_EQ(Slurp(dir_ / "child.out"), "ready\ngot INT\n");
  EXPECT_NE(Slurp(dir_ / "child.err").find("signal 2 passed to the command"), std::string::npos);
  const auto replay = Ofu(fmt::format("report --input '{}' --format json", (dir_ / "run.om").string()));
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_EQ(nlohmann::json::parse(replay.out)["gpus"].size(), 1u);
}

// A command that a signal kills still gets its report; ofu exits 128 + 9.
TEST_F(RunCli, AKilledCommandStillGetsAReport) {
  const auto result = Run(PhasedScenario("[]"), "--report run.json -- sh -c 'sleep 0.5; kill -9 $$'");
  EXPECT_EQ(result.exit_code, 137) << result.err;
  EXPECT_EQ(Report()["run"]["exit_status"], 137);
  EXPECT_NE(result.err.find("exited 137"), std::string::npos) << result.err;
  EXPECT_TRUE(Report()["run"]["mfu"].is_null());
  EXPECT_FALSE(Report()["run"]["mfu_missing"].get<std::string>().empty());
}

TEST_F(RunCli, ACommandThatCannotStartIsAnError) {
  const auto result = Run(PhasedScenario("[]"), "-- /nonexistent/program");
  EXPECT_EQ(result.exit_code, 5) << result.err;
  EXPECT_NE(result.err.find("cannot run '/nonexistent/program'"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace ofu::testing
