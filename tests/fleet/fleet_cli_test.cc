// `ofu reconcile` and `ofu regress` as programs: on a SYNTHETIC fleet from
// ofu-fleet-sim, read from the embedded store and from a real Prometheus
// server (the Debian package) into which promtool backfilled the fleet's
// OpenMetrics; both must give the same answers, and those must be the
// planted ones. Skipped with the reason when prometheus or promtool is missing.
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/backfilled_prometheus.h"
#include "support/background_process.h"
#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ofu::testing::BackgroundProcess;
using ofu::testing::RunShell;
using ofu::testing::Slurp;

class FleetCli : public ofu::testing::CliTest {
 protected:
  // A small fleet: 2 groups of 2 GPUs, 12 jobs of 40 one-minute windows.
  json Simulate() {
    auto sim = RunShell(fmt::format("'{}' --out '{}' --gpus 4 --gpus-per-job 2 --jobs 12 --windows-per-job 40 --seed 3",
                                    OFU_FLEET_SIM, (dir_ / "fleet").string()),
                        dir_);
    EXPECT_EQ(sim.exit_code, 0) << sim.err;
    EXPECT_NE(sim.out.find("SYNTHETIC"), std::string::npos);
    return json::parse(Slurp(dir_ / "fleet" / "ground_truth.json"));
  }
  json RunJson(const std::string& args) {
    auto result = RunShell(fmt::format("'{}' {} --format json", OFU_BINARY, args), dir_);
    EXPECT_EQ(result.exit_code, 0) << args << "\n" << result.err;
    return json::parse(result.out, nullptr, false);
  }
};

TEST_F(FleetCli, StoreAndPrometheusGiveTheSameAnswersAndTheyAreThePlantedOnes) {
  if (!ofu::testing::ProgramFound(OFU_PROMETHEUS) || !ofu::testing::ProgramFound(OFU_PROMTOOL)) {
    GTEST_SKIP() << "no prometheus or promtool binary (scripts/install-deps.sh installs the Debian packages)";
  }
  const json truth = Simulate();
  const fs::path fleet = dir_ / "fleet";
  BackgroundProcess prometheus;
  int port = 0;
  ASSERT_TRUE(ofu::testing::ServeBackfilled(prometheus, dir_, fleet / "metrics.om", port));

  const double start = truth["options"]["start_s"].get<double>(), end = truth["end_s"].get<double>();
  const std::string range = fmt::format("--since {:.0f} --until {:.0f}", start - 1, end + 1);
  const std::string store = fmt::format("--store '{}'", (fleet / "history.sqlite").string());
  const std::string prom = fmt::format("--prometheus http://127.0.0.1:{}", port);
  const std::string inputs = fmt::format("--mfu '{}' --corrections '{}'", (fleet / "mfu.csv").string(),
                                         (fleet / "corrections").string());

  const json r_store = RunJson(fmt::format("reconcile {} {} {}", store, inputs, range));
  const json r_prom = RunJson(fmt::format("reconcile {} {} {}", prom, inputs, range));
  ASSERT_FALSE(r_store.is_discarded());
  ASSERT_FALSE(r_prom.is_discarded());
  ASSERT_EQ(r_store["jobs"].size(), truth["jobs"].size());
  ASSERT_EQ(r_prom["jobs"].size(), truth["jobs"].size()) << r_prom.dump(1);
  for (size_t i = 0; i < truth["jobs"].size(); ++i) {
    const json& want = truth["jobs"][i];
    const std::string plant = want["plant"];
    EXPECT_EQ(r_store["jobs"][i]["flag"], plant == "none" ? "ok" : plant) << want["job_id"];
    EXPECT_EQ(r_prom["jobs"][i]["flag"], r_store["jobs"][i]["flag"]) << want["job_id"];
    EXPECT_EQ(r_prom["jobs"][i]["gpus"], r_store["jobs"][i]["gpus"]) << want["job_id"];
    // Counters' running sums differ from the rows by float rounding only.
    EXPECT_NEAR(r_prom["jobs"][i]["ofu"].get<double>(), r_store["jobs"][i]["ofu"].get<double>(), 1e-9);
    EXPECT_NEAR(r_store["jobs"][i]["expected_mfu"].get<double>(), want["expected_mfu"].get<double>(), 1e-9);
  }
  for (const char* set : {"all", "unflagged"}) {
    for (const char* stat : {"pearson_r", "spearman_rho", "mean_absolute_error"}) {
      ASSERT_TRUE(r_store["statistics"][set][stat].is_number()) << set << " " << stat;
      EXPECT_NEAR(r_prom["statistics"][set][stat].get<double>(), r_store["statistics"][set][stat].get<double>(), 1e-9);
    }
  }

  const json g_store = RunJson(fmt::format("regress {} {}", store, range));
  const json g_prom = RunJson(fmt::format("regress {} {}", prom, range));
  ASSERT_FALSE(g_store.is_discarded());
  ASSERT_FALSE(g_prom.is_discarded());
  EXPECT_EQ(g_store["windows"], g_prom["windows"]);
  ASSERT_EQ(g_store["changes"].size(), truth["regressions"].size()) << g_store.dump(1);
  ASSERT_EQ(g_prom["changes"].size(), g_store["changes"].size()) << g_prom.dump(1);
  for (size_t i = 0; i < g_store["changes"].size(); ++i) {
    EXPECT_EQ(g_store["changes"][i]["job_id"], truth["regressions"][i]["job_id"]);
    EXPECT_EQ(g_store["changes"][i]["gpus"], truth["regressions"][i]["gpus"]);
    EXPECT_EQ(g_prom["changes"][i]["job_id"], g_store["changes"][i]["job_id"]);
    EXPECT_EQ(g_prom["changes"][i]["gpus"], g_store["changes"][i]["gpus"]);
    EXPECT_EQ(g_prom["changes"][i]["time_s"], g_store["changes"][i]["time_s"]);
    EXPECT_NEAR(g_prom["changes"][i]["ratio"].get<double>(), g_store["changes"][i]["ratio"].get<double>(), 1e-9);
  }
  ASSERT_EQ(g_store["precision_shifts"].size(), truth["precision_shifts"].size());
  ASSERT_EQ(g_prom["precision_shifts"].size(), g_store["precision_shifts"].size()) << g_prom.dump(1);
  for (size_t i = 0; i < g_store["precision_shifts"].size(); ++i) {
    EXPECT_EQ(g_store["precision_shifts"][i]["job_id"], truth["precision_shifts"][i]["job_id"]);
    EXPECT_EQ(g_prom["precision_shifts"][i]["job_id"], g_store["precision_shifts"][i]["job_id"]);
    EXPECT_EQ(g_prom["precision_shifts"][i]["time_s"], g_store["precision_shifts"][i]["time_s"]);
    EXPECT_EQ(g_prom["precision_shifts"][i]["gpus"], g_store["precision_shifts"][i]["gpus"]);
  }
  ASSERT_EQ(g_store["run_changes"].size(), truth["run_regressions"].size());
  ASSERT_EQ(g_prom["run_changes"].size(), g_store["run_changes"].size());
  for (size_t i = 0; i < g_store["run_changes"].size(); ++i) {
    EXPECT_EQ(g_store["run_changes"][i]["first_job_id"], truth["run_regressions"][i]["first_job_id"]);
    EXPECT_EQ(g_prom["run_changes"][i]["first_job_id"], g_store["run_changes"][i]["first_job_id"]);
  }
  // One job: the same scan limited to the regressed job.
  const std::string job = truth["regressions"][0]["job_id"];
  const json one = RunJson(fmt::format("regress {} --job {} {}", prom, job, range));
  ASSERT_EQ(one["changes"].size(), 1u) << one.dump(1);
  EXPECT_EQ(one["changes"][0]["job_id"], job);

  // A range that starts on a scrape, the last of the first jobs: Prometheus 2
  // gives that scrape to its closed ranges, while the range is (since,
  // until], where those jobs have no window. ofu once asked PromQL for a 0 ms
  // range there and failed; now both sources list the same jobs.
  const double boundary = truth["jobs"][0]["end_s"].get<double>();
  const std::string from_boundary = fmt::format("--since {:.0f} --until {:.0f}", boundary, end + 1);
  const json b_store = RunJson(fmt::format("report {} {}", store, from_boundary));
  const json b_prom = RunJson(fmt::format("report {} {}", prom, from_boundary));
  ASSERT_FALSE(b_prom.is_discarded());
  ASSERT_FALSE(b_store.is_discarded());
  ASSERT_EQ(b_prom["jobs"].size(), b_store["jobs"].size()) << b_prom["jobs"].dump(1);
  EXPECT_LT(b_store["jobs"].size(), truth["jobs"].size());  // the first jobs are out
  for (size_t i = 0; i < b_store["jobs"].size(); ++i) {
    EXPECT_EQ(b_prom["jobs"][i]["job_id"], b_store["jobs"][i]["job_id"]);
    EXPECT_NEAR(b_prom["jobs"][i]["ofu"].get<double>(), b_store["jobs"][i]["ofu"].get<double>(), 1e-9);
  }
  EXPECT_NEAR(b_prom["overall"]["ofu"].get<double>(), b_store["overall"]["ofu"].get<double>(), 1e-9);
  prometheus.Stop();
}

TEST_F(FleetCli, ExitCodesAndErrorsThatNameTheLine) {
  Simulate();
  const fs::path fleet = dir_ / "fleet";
  const std::string store = fmt::format("--store '{}'", (fleet / "history.sqlite").string());
  // No source: usage.
  auto none = RunShell(fmt::format("'{}' reconcile --mfu '{}'", OFU_BINARY, (fleet / "mfu.csv").string()), dir_);
  EXPECT_EQ(none.exit_code, 1) << none.err;
  // A malformed MFU log: 2, naming file, line and field.
  const fs::path bad = Write("bad.csv", "job_id,mfu,reference_precision\nsim-00001,0.3,bf16\nsim-00002,lots,bf16\n");
  auto malformed = RunShell(fmt::format("'{}' reconcile {} --mfu '{}'", OFU_BINARY, store, bad.string()), dir_);
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_NE(malformed.err.find("bad.csv:3: field 'mfu': 'lots' is not a number"), std::string::npos) << malformed.err;
  // No job of the log in the data: 4.
  const fs::path other = Write("other.csv", "job_id,mfu,reference_precision\nnot-here,0.3,bf16\n");
  auto nodata = RunShell(fmt::format("'{}' reconcile {} --mfu '{}'", OFU_BINARY, store, other.string()), dir_);
  EXPECT_EQ(nodata.exit_code, 4) << nodata.err;
  // Table output names the flags; --fail-on-finding turns findings into 6.
  auto table = RunShell(fmt::format("'{}' reconcile {} --mfu '{}'", OFU_BINARY, store, (fleet / "mfu.csv").string()),
                        dir_);
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("moe_total_params"), std::string::npos);
  EXPECT_NE(table.out.find("Spearman rho"), std::string::npos);
  auto regress = RunShell(fmt::format("'{}' regress {} --fail-on-finding", OFU_BINARY, store), dir_);
  EXPECT_EQ(regress.exit_code, 6) << regress.err;
  EXPECT_NE(regress.out.find("2.5"), std::string::npos) << regress.out;
  auto csv = RunShell(fmt::format("'{}' regress {} --format csv", OFU_BINARY, store), dir_);
  EXPECT_EQ(csv.exit_code, 0);
  EXPECT_EQ(csv.out.rfind("kind,job_id,job_name,time_s,what,before,after,ratio,gpus\n", 0), 0u);
}

// ofu-fleet-sim's exit statuses are every ofu program's (ofu/cli/exit_codes.h):
// help 0, a usage error 1, options the simulation refuses 1, a folder it
// cannot write 2.
TEST_F(FleetCli, SimulatorExitsAsEveryOfuProgramDoes) {
  const auto sim = [&](const std::string& args) { return RunShell(fmt::format("'{}' {}", OFU_FLEET_SIM, args), dir_); };
  auto help = sim("--help");
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("SYNTHETIC"), std::string::npos);
  auto usage = sim("--out x --no-such-flag");
  EXPECT_EQ(usage.exit_code, 1);
  EXPECT_NE(usage.err.find("--no-such-flag"), std::string::npos) << usage.err;
  EXPECT_EQ(sim("").exit_code, 1);  // --out is required
  auto refused = sim(fmt::format("--out '{}' --gpus 3 --gpus-per-job 2", (dir_ / "odd").string()));
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("ofu-fleet-sim: fleet simulation: gpus must be a multiple of gpus_per_job"),
            std::string::npos)
      << refused.err;
  const fs::path file = Write("a-file", "not a folder\n");
  auto unwritable = sim(fmt::format("--out '{}' --jobs 2 --windows-per-job 4", (file / "fleet").string()));
  EXPECT_EQ(unwritable.exit_code, 2) << unwritable.err;
  EXPECT_NE(unwritable.err.find("cannot create"), std::string::npos) << unwritable.err;
}

// A job's own training log instead of an MFU log: a real nanoGPT excerpt
// (karpathy/nanoGPT#178; tests/data/training-logs) given to a SYNTHETIC job
// on an H100 SXM5. nanoGPT divides by the A100's 312 TFLOPS, so its median
// 16.605 % is 0.16605 x 312 / 989.4 of the H100's bf16 peak.
TEST_F(FleetCli, ReconcileReadsATrainingLogAndRescalesItsPeak) {
  Simulate();
  const std::string store = fmt::format("--store '{}'", (dir_ / "fleet" / "history.sqlite").string());
  const std::string logs = std::string(OFU_TEST_DATA_DIR) + "/training-logs/";
  const json r = RunJson(fmt::format("reconcile {} --training-log 'sim-00001={}nanogpt-178.log'", store, logs));
  ASSERT_EQ(r["jobs"].size(), 1u) << r.dump(1);
  const json& job = r["jobs"][0];
  EXPECT_EQ(job["job_id"], "sim-00001");
  EXPECT_NEAR(job["logged_mfu"].get<double>(), 0.16605, 1e-12);
  EXPECT_DOUBLE_EQ(job["peak_flops"].get<double>(), 312e12);
  EXPECT_NEAR(job["reported_mfu"].get<double>(), 0.16605 * 312 / 989.4, 1e-12);
  EXPECT_NE(job["notes"].dump().find("nanoGPT, median of 24 step(s)"), std::string::npos) << job["notes"];

  // JOB=PATH is required; a job named twice, a log with no MFU (llm.c on a
  // GPU it does not know) and no reported MFU at all are errors.
  auto no_job = RunShell(fmt::format("'{}' reconcile {} --training-log '{}nanogpt-178.log'", OFU_BINARY, store, logs),
                         dir_);
  EXPECT_EQ(no_job.exit_code, 1) << no_job.err;
  EXPECT_NE(no_job.err.find("expected JOB=PATH"), std::string::npos) << no_job.err;
  auto twice = RunShell(fmt::format("'{}' reconcile {} --training-log 'a={}nanogpt-178.log' --training-log "
                                    "'a={}nanogpt-466-titanxp.log'",
                                    OFU_BINARY, store, logs, logs),
                        dir_);
  EXPECT_EQ(twice.exit_code, 1) << twice.err;
  auto absent = RunShell(fmt::format("'{}' reconcile {} --training-log 'sim-00001={}llmc-796-blackwell.log'",
                                     OFU_BINARY, store, logs),
                         dir_);
  EXPECT_EQ(absent.exit_code, 2) << absent.err;
  EXPECT_NE(absent.err.find("llmc-796-blackwell.log: every MFU the log prints"), std::string::npos) << absent.err;
  auto nothing = RunShell(fmt::format("'{}' reconcile {}", OFU_BINARY, store), dir_);
  EXPECT_EQ(nothing.exit_code, 1) << nothing.err;
}

// Megatron-LM prints TFLOP/s per GPU (NVIDIA/Megatron-LM#756, median 228.3
// over iterations 29-31), given to a SYNTHETIC job on an H100 SXM5: its MFU
// is 228.3 / 989.4 over the H100's bf16 peak, and the notes name the GPU,
// precision and peak. A refused log beside it (llm.c#796, no MFU) leaves
// its job out with a note and does not hide the other job: exit 2 after the
// report.
TEST_F(FleetCli, ReconcileDividesTflopsPerGpuAndKeepsAnswersBesideARefusedLog) {
  Simulate();
  const std::string store = fmt::format("--store '{}'", (dir_ / "fleet" / "history.sqlite").string());
  const std::string logs = std::string(OFU_TEST_DATA_DIR) + "/training-logs/";
  auto run = RunShell(fmt::format("'{}' reconcile {} --format json --training-log 'sim-00001={}megatron-756-h100.log' "
                                  "--training-log 'sim-00002={}llmc-796-blackwell.log'",
                                  OFU_BINARY, store, logs, logs),
                      dir_);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("llmc-796-blackwell.log: every MFU the log prints"), std::string::npos) << run.err;
  const json r = json::parse(run.out);
  ASSERT_EQ(r["jobs"].size(), 1u) << r.dump(1);
  const json& job = r["jobs"][0];
  EXPECT_EQ(job["job_id"], "sim-00001");
  EXPECT_DOUBLE_EQ(job["flops_per_gpu"].get<double>(), 228.3e12);
  EXPECT_NEAR(job["reported_mfu"].get<double>(), 228.3 / 989.4, 1e-12);
  EXPECT_NE(job["notes"].dump().find("the log prints 228.3 TFLOP/s per GPU; over h100-sxm5 (the job's GPUs in the OFU "
                                     "data)'s bf16 peak (989.4 TFLOPS) that is MFU 0.2307"),
            std::string::npos)
      << job["notes"];
  ASSERT_EQ(r["notes"].size(), 1u);
  EXPECT_NE(r["notes"][0].get<std::string>().find("refused, its job left out: --training-log sim-00002="),
            std::string::npos)
      << r["notes"];

  // fp8: the H100 SXM5's fp8 peak (1979 TFLOPS) divides the same figure.
  const json fp8 =
      RunJson(fmt::format("reconcile {} --reference-precision fp8 --training-log "
                          "'sim-00001={}megatron-756-h100.log'",
                          store, logs));
  EXPECT_EQ(fp8["jobs"][0]["reference_precision"], "fp8");
  EXPECT_NEAR(fp8["jobs"][0]["reported_mfu"].get<double>(), 228.3 / 1979, 1e-12);
}

}  // namespace
