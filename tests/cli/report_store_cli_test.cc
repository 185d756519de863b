// End to end: `ofu report --store` on stores written by the tests, and
// `ofu agent --store` killed with SIGKILL while it writes. Recordings and
// windows are synthetic (made here), with hand-computed answers.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofu/core/clock_model.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/history/history_reader.h"
#include "ofu/sinks/history_store.h"
#include "sinks/history_fixture.h"
#include "support/cli_runner.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using ofu::testing::CommandResult;
using ofu::testing::kJobT0;

constexpr double kHour = 1790280000;  // 3600 x 497300: a whole hour

class ReportStoreCli : public ofu::testing::CliTest {
 protected:
  std::string WriteJobStore() { return ofu::testing::WriteTwoGpuJobStore(dir_ / "history.sqlite"); }

  // A store `name` of `windows` windows of 60 s from kHour on; window k (1-based) holds gpus_of(k).
  std::string WriteMinuteStore(const std::string& name, int windows,
                               const std::function<std::vector<ofu::sinks::GpuWindow>(int)>& gpus_of) {
    const std::string store = (dir_ / name).string();
    ofu::sources::FakeClock clock(kHour);
    ofu::sinks::HistoryOptions options;
    options.path = store;
    auto opened = ofu::sinks::HistoryStore::Open(options, clock);
    EXPECT_TRUE(opened.ok()) << opened.error().message;
    if (!opened.ok()) return store;
    for (int k = 1; k <= windows; ++k) {
      EXPECT_TRUE((*opened)->Consume(ofu::testing::Batch(kHour + 60.0 * k, 60, gpus_of(k))).ok());
    }
    return store;
  }
};

TEST_F(ReportStoreCli, JobReportOverTwoGpusInJson) {
  const std::string store = WriteJobStore();
  const CommandResult run = Ofu(fmt::format("report --store '{}' --job J1 --format json", store));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["source"]["kind"], "store");
  EXPECT_EQ(j["source"]["path"], store);
  EXPECT_EQ(j["source"]["job_id"], "J1");
  EXPECT_TRUE(j["source"]["since_s"].is_null());
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["sku"], "h100-sxm5");
  // J1's windows only: GPU 0 (0.4 0.5 0.6 0.3), GPU 1 (0.8 lost 0.6 0.4).
  EXPECT_NEAR(j["gpus"][0]["ofu"].get<double>(), 1.8 / 4, 1e-12);
  EXPECT_NEAR(j["gpus"][1]["ofu"].get<double>(), 1.8 / 3, 1e-12);
  EXPECT_NEAR(j["overall"]["ofu"].get<double>(), 216.0 / 420, 1e-12);
  ASSERT_EQ(j["jobs"].size(), 1u);
  const auto& job = j["jobs"][0];
  for (const char* key :
       {"job_id", "user", "job_name", "scheduler", "gpus", "gpu_hours", "ofu", "active_ofu", "observed_hours"}) {
    EXPECT_TRUE(job.contains(key)) << key;
  }
  EXPECT_EQ(job["job_id"], "J1");
  EXPECT_EQ(job["user"], "alice");
  EXPECT_EQ(job["gpus"], 2);
  EXPECT_NEAR(job["gpu_hours"].get<double>(), 480.0 / 3600, 1e-12);
  EXPECT_NEAR(job["ofu"].get<double>(), 216.0 / 420, 1e-12);
  EXPECT_NEAR(job["observed_hours"].get<double>(), 420.0 / 3600, 1e-12);
}

// Three hours and a window of 60 s windows (OFU 0.2 and 0.6 in turn): the
// report reads the three closed hours as the store's rollups, and with
// --per-window every window; the OFU is 0.4 either way, and the output says
// which.
TEST_F(ReportStoreCli, ClosedHoursAreReadAsRollupsUnlessPerWindow) {
  const std::string store = WriteMinuteStore("hours.sqlite", 3 * 60 + 1, [](int k) {
    return std::vector{ofu::testing::H100Window("GPU-0", "0", k % 2 == 0 ? 0.2 : 0.6)};
  });
  ASSERT_FALSE(HasFailure());
  const CommandResult summed = Ofu(fmt::format("report --store '{}' --format json", store));
  const CommandResult each = Ofu(fmt::format("report --store '{}' --per-window --format json", store));
  ASSERT_EQ(summed.exit_code, 0) << summed.err;
  ASSERT_EQ(each.exit_code, 0) << each.err;
  const auto a = nlohmann::json::parse(summed.out), b = nlohmann::json::parse(each.out);
  EXPECT_EQ(a["source"]["rollups"], 3);
  EXPECT_EQ(a["source"]["windows_in_rollups"], 180);
  EXPECT_EQ(b["source"]["rollups"], 0);
  EXPECT_NEAR(a["overall"]["ofu"].get<double>(), (91 * 0.6 + 90 * 0.2) / 181, 1e-12);
  EXPECT_NEAR(b["overall"]["ofu"].get<double>(), (91 * 0.6 + 90 * 0.2) / 181, 1e-12);
  EXPECT_EQ(a["gpus"][0]["windows"], 181);
  const CommandResult table = Ofu(fmt::format("report --store '{}'", store));
  EXPECT_NE(table.out.find("180 windows read as 3 hourly sums"), std::string::npos) << table.out;
}

// Where each window's OFU took its clock is kept in the store (issue 38):
// GPU-0's first hour on the measured clock model, then on exact cycles;
// GPU-1 from an agent that did not say (as a store written before the
// column was kept). Read as hourly rollups and window by window alike.
TEST_F(ReportStoreCli, EachWindowsClockSourceIsStoredAndReported) {
  const std::string store = WriteMinuteStore("clocks.sqlite", 2 * 60 + 1, [](int k) {
    auto gpu0 = ofu::testing::H100Window("GPU-0", "0", 0.5);
    gpu0.window.clock_source = k <= 60 ? ofu::ClockSource::kMeasuredModel : ofu::ClockSource::kExactCycles;
    return std::vector{gpu0, ofu::testing::H100Window("GPU-1", "1", 0.5)};
  });
  ASSERT_FALSE(HasFailure());
  for (const char* per_window : {"", " --per-window"}) {
    const CommandResult run = Ofu(fmt::format("report --store '{}'{} --format json", store, per_window));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto j = nlohmann::json::parse(run.out);
    EXPECT_EQ(j["source"]["rollups"], *per_window ? 0 : 4) << per_window;
    ASSERT_EQ(j["gpus"].size(), 2u);
    EXPECT_EQ(j["gpus"][0]["clock_source"], "exact-cycles+measured-model") << per_window;
    EXPECT_TRUE(j["gpus"][1]["clock_source"].is_null()) << per_window << ": " << j["gpus"][1];
    EXPECT_EQ(j["overall"]["clock_source"], "exact-cycles+measured-model") << per_window;
  }
  // Only the second hour: exact cycles alone.
  const CommandResult late = Ofu(fmt::format("report --store '{}' --since {} --format json", store, kHour + 3600));
  ASSERT_EQ(late.exit_code, 0) << late.err;
  EXPECT_EQ(nlohmann::json::parse(late.out)["gpus"][0]["clock_source"], "exact-cycles");
}

TEST_F(ReportStoreCli, SinceAndUntilClipWindowsAndGpuHours) {
  const std::string store = WriteJobStore();
  // T0 + 120 as RFC 3339 and T0 + 240 as Unix seconds.
  const CommandResult run =
      Ofu(fmt::format("report --store '{}' --job J1 --since 2026-09-21T14:15:00Z "
                      "--until {} --format json",
                      store, kJobT0 + 240));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["source"]["since_s"].get<double>(), kJobT0 + 120);
  const auto& job = j["jobs"][0];
  EXPECT_NEAR(job["ofu"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(job["gpu_hours"].get<double>(), 240.0 / 3600, 1e-12);
  EXPECT_NEAR(j["overall"]["ofu"].get<double>(), 0.5, 1e-12);

  const CommandResult table = Ofu(fmt::format("report --store '{}' --since {}", store, kJobT0 + 120));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("History store " + store), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("J1"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("GPU-hours"), std::string::npos) << table.out;
}

TEST_F(ReportStoreCli, ExitCodes) {
  const std::string store = WriteJobStore();
  // Unreadable store: 2.
  CommandResult run = Ofu(fmt::format("report --store '{}'", (dir_ / "missing.sqlite").string()));
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("missing.sqlite"), std::string::npos) << run.err;
  const fs::path junk = Write("junk.sqlite", "not a database at all, not even close to one...........");
  run = Ofu(fmt::format("report --store '{}'", junk.string()));
  EXPECT_EQ(run.exit_code, 2) << run.err;
  // No data: 4.
  run = Ofu(fmt::format("report --store '{}' --job nobody", store));
  EXPECT_EQ(run.exit_code, 4) << run.err;
  run = Ofu(fmt::format("report --store '{}' --since {}", store, kJobT0 + 3600));
  EXPECT_EQ(run.exit_code, 4) << run.err;
  // Usage: 1.
  EXPECT_EQ(Ofu("report").exit_code, 1);
  EXPECT_EQ(Ofu(fmt::format("report --store '{}' --input x.prom", store)).exit_code, 1);
  EXPECT_EQ(Ofu("report --input x.prom --job J1").exit_code, 1);
  EXPECT_EQ(Ofu(fmt::format("report --store '{}' --since yesterday", store)).exit_code, 1);
}

// --html holds every selected window: a selection of more than --max-windows
// is refused with exit 1 before it is held, naming the store and how to
// narrow it, and no page is written; exactly that many is read.
TEST_F(ReportStoreCli, HtmlRefusesMoreWindowsThanMaxWindows) {
  const std::string store = WriteJobStore();
  auto history = ofu::history::ReadHistory(store, {});
  ASSERT_TRUE(history.ok()) << history.error().message;
  const std::size_t windows = history->windows.size();
  ASSERT_GT(windows, 2u);
  const fs::path page = dir_ / "page.html";

  CommandResult run = Ofu(fmt::format("report --store '{}' --html '{}' --max-windows {}", store, page.string(),
                                      windows - 1));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find(store), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(fmt::format("more than {} windows", windows - 1)), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("--since/--until or --job"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(page));

  run = Ofu(fmt::format("report --store '{}' --html '{}' --max-windows {}", store, page.string(), windows));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(fs::exists(page));
  // Without --html there is nothing to hold: the flag is refused.
  EXPECT_EQ(Ofu(fmt::format("report --store '{}' --max-windows 1", store)).exit_code, 1);
}

// --- MIG -----------------------------------------------------------------

// Synthetic: one A100 80GB (108 SMs) split into two 3g.40gb instances (42 SMs
// each) and one 1g.10gb instance (14 SMs; SM counts from NVIDIA's MIG user
// guide, as data/gpu_specs.json holds them), two 60 s windows each at OFU
// 0.6, 0.3 and 0.9. Job J-big runs on both 3g instances, J-small on the 1g one.
// By hand:
//   overall OFU  = (42*0.6 + 42*0.3 + 14*0.9) / 98 = 50.4 / 98
//   overall seconds = 2 * 60 * 98 / 108 GPU-equivalent seconds
//   J-big   OFU = (0.6 + 0.3) / 2, GPU-hours 2 instances * 120 s * 42/108 / 3600
//   J-small OFU = 0.9, GPU-hours 120 s * 14/108 / 3600
TEST_F(ReportStoreCli, MigInstancesWeighTheirShareOfTheGpu) {
  auto instance = [](const std::string& gi, const std::string& profile, double ofu) {
    ofu::sinks::GpuWindow w = ofu::testing::H100Window("GPU-a100/gi" + gi, "0", ofu);
    w.identity.uuid = "GPU-a100";
    w.identity.model = "NVIDIA A100-SXM4-80GB";
    w.identity.mig_profile = profile;
    w.identity.mig_instance = gi;
    w.sku = "a100";
    w.architecture = "ampere";
    return w;
  };
  const fs::path path = dir_ / "mig.sqlite";
  {
    ofu::sources::FakeClock clock(kJobT0);
    ofu::sinks::HistoryOptions options;
    options.path = path.string();
    auto store = ofu::sinks::HistoryStore::Open(options, clock);
    ASSERT_TRUE(store.ok()) << store.error().message;
    for (int k = 1; k <= 2; ++k) {
      const ofu::Status s = (*store)->Consume(ofu::testing::Batch(
          kJobT0 + 60.0 * k, 60,
          {instance("1", "3g.40gb", 0.6), instance("2", "3g.40gb", 0.3), instance("9", "1g.10gb", 0.9)},
          {{"GPU-a100/gi1", "J-big"}, {"GPU-a100/gi2", "J-big"}, {"GPU-a100/gi9", "J-small"}}));
      ASSERT_TRUE(s.ok()) << s.error().message;
    }
  }
  const CommandResult run = Ofu(fmt::format("report --store '{}' --format json", path.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["gpus"].size(), 3u);
  EXPECT_NEAR(j["gpus"][0]["share"].get<double>(), 42.0 / 108, 1e-12);
  EXPECT_NEAR(j["gpus"][2]["share"].get<double>(), 14.0 / 108, 1e-12);
  EXPECT_EQ(j["gpus"][2]["mig_profile"], "1g.10gb");
  EXPECT_NEAR(j["gpus"][2]["ofu"].get<double>(), 0.9, 1e-12);  // relative to its own slice
  EXPECT_NEAR(j["overall"]["ofu"].get<double>(), 50.4 / 98, 1e-12);
  EXPECT_NEAR(j["overall"]["seconds"].get<double>(), 120.0 * 98 / 108, 1e-9);
  ASSERT_EQ(j["jobs"].size(), 2u);
  EXPECT_EQ(j["jobs"][0]["job_id"], "J-big");
  EXPECT_NEAR(j["jobs"][0]["ofu"].get<double>(), 0.45, 1e-12);
  EXPECT_NEAR(j["jobs"][0]["gpu_hours"].get<double>(), 2 * 120.0 * 42 / 108 / 3600, 1e-12);
  EXPECT_EQ(j["jobs"][1]["job_id"], "J-small");
  EXPECT_NEAR(j["jobs"][1]["ofu"].get<double>(), 0.9, 1e-12);
  EXPECT_NEAR(j["jobs"][1]["gpu_hours"].get<double>(), 120.0 * 14 / 108 / 3600, 1e-12);
  EXPECT_EQ(j["jobs"][1]["gpus_left_out"], 0);
}

// --- kill -9 -------------------------------------------------------------

// Synthetic recording: one H100 SXM5 sampled every 0.125 s (exact in binary,
// so window spans are exact), tensor activity 0.1 + 0.001 i, SM clock 1830 MHz.
constexpr double kStepS = 0.125;
constexpr double kRecT0 = 1789999980;

double Tensor(int i) { return 0.1 + 0.001 * (i % 500); }

std::string Recording(int first, int count) {
  std::string text =
      "# TYPE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE gauge\n"
      "# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n";
  const std::string labels = R"(gpu="0",UUID="GPU-kill9",modelName="NVIDIA H100 80GB HBM3",Hostname="node-k")";
  for (int i = first; i < first + count; ++i) {
    const double t = kRecT0 + kStepS * i;
    text += fmt::format("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{}}} {} {:.3f}\n", labels, Tensor(i), t);
    text += fmt::format("DCGM_FI_DEV_SM_CLOCK{{{}}} 1830 {:.3f}\n", labels, t);
  }
  return text + "# EOF\n";
}

std::vector<ofu::history::StoredWindow> Rows(const std::string& path) {
  auto history = ofu::history::ReadHistory(path, {});
  return history.ok() ? history->windows : std::vector<ofu::history::StoredWindow>{};
}

std::string IntegrityCheck(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);  // read-write: recovers the WAL as the agent's next open would
  sqlite3_stmt* stmt = nullptr;
  std::string result = "(failed)";
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    result = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return result;
}

TEST_F(ReportStoreCli, KillNineLosesAtMostTheWindowInFlightAndTheAgentAppendsAfter) {
  const fs::path part1 = Write("part1.om", Recording(0, 800));    // 100 s: the agent is killed long before
  const fs::path part2 = Write("part2.om", Recording(1000, 16));  // later: appended by a second run
  const fs::path config = Write("agent.toml",
                                "[attribution]\nmethods = [\"static\"]\n[[attribution.static]]\ngpu = \"0\"\n"
                                "job_id = \"kill9-job\"\nuser = \"bob\"\njob_name = \"replay\"\n");
  const std::string store = (dir_ / "history.sqlite").string();
  const std::string log = (dir_ / "agent.log").string();

  std::vector<std::string> args = {OFU_BINARY,      "agent",    "--config",
                                   config.string(), "--source", "replay:" + part1.string(),
                                   "--window",      "0.125",    "--listen",
                                   "127.0.0.1:0",   "--store",  store};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, OFU_BINARY, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);

  // Wait for at least 5 windows in the store (the replay plays 8 a second).
  std::size_t seen = 0;
  for (int tries = 0; tries < 400 && seen < 5; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (fs::exists(store)) seen = Rows(store).size();
  }
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << ofu::testing::Slurp(log);
  ASSERT_GE(seen, 5u) << ofu::testing::Slurp(log);

  // The file is sound and holds a gap-free prefix of the recording's windows.
  EXPECT_EQ(IntegrityCheck(store), "ok");
  const auto rows = Rows(store);
  const std::size_t n = rows.size();
  ASSERT_GE(n, seen);
  ASSERT_LT(n, 800u);
  // OFU x f_spec summed over the windows: each window's tensor activity times
  // the clock the agent used, the H100 80GB HBM3's measured clock model at a
  // reported 1830 MHz (no clock event reasons in the recording; the model
  // has its own hand-computed tests in tests/core/clock_model_test.cc).
  const ofu::ClockModel model =
      *(*ofu::GpuSpecDatabase::Embedded()->Lookup("h100-sxm5"))->ClockModelFor("NVIDIA H100 80GB HBM3");
  const auto product = [&model](double tensor) {
    return tensor * ofu::EstimateRunClock(model, tensor, 1830, std::nullopt).mhz;
  };
  double product_sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(rows[i].end_s, kRecT0 + kStepS * static_cast<double>(i));
    EXPECT_EQ(rows[i].span_s, kStepS);
    EXPECT_EQ(rows[i].counters.observed_s(), kStepS);
    EXPECT_NEAR(rows[i].counters.tensor_active_s() / rows[i].counters.observed_s(), Tensor(static_cast<int>(i)), 1e-12);
    product_sum += product(Tensor(static_cast<int>(i)));
  }
  fmt::print("kill -9 after {} windows seen; {} windows in the store\n", seen, n);

  // A second run on the same file appends (the agent exits when the replay ends).
  const CommandResult again =
      Ofu(fmt::format("agent --config '{}' --source 'replay:{}' --window 0.125 --listen 127.0.0.1:0 --store '{}'",
                      config.string(), part2.string(), store));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(IntegrityCheck(store), "ok");
  const auto after = Rows(store);
  ASSERT_EQ(after.size(), n + 16);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(after[i], rows[i]);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(after[n + i].end_s, kRecT0 + kStepS * (1000 + i));
    product_sum += product(Tensor(1000 + i));
  }

  // The report: OFU = mean of tensor activity x run clock / f_spec (equal spans).
  const CommandResult report = Ofu(fmt::format("report --store '{}' --job kill9-job --format json", store));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const auto j = nlohmann::json::parse(report.out);
  const double f_spec = j["gpus"][0]["spec_clock_mhz"].get<double>();
  EXPECT_NEAR(f_spec, 1829.94, 0.01);
  const double expected = product_sum / static_cast<double>(n + 16) / f_spec;
  EXPECT_NEAR(j["overall"]["ofu"].get<double>(), expected, 1e-12);
  ASSERT_EQ(j["jobs"].size(), 1u);
  EXPECT_NEAR(j["jobs"][0]["ofu"].get<double>(), expected, 1e-12);
  // The job held every stored window: the first run's interval closed at its last window, the second's open.
  EXPECT_NEAR(j["jobs"][0]["gpu_hours"].get<double>(), static_cast<double>(n + 16) * kStepS / 3600, 1e-12);
  EXPECT_EQ(j["jobs"][0]["user"], "bob");
}

TEST_F(ReportStoreCli, AgentWithAStoreItCannotOpenExits2NamingIt) {
  const fs::path recording = Write("r.om", Recording(0, 8));
  const std::string store = (dir_ / "missing-dir" / "history.sqlite").string();
  const CommandResult run = Ofu(fmt::format("agent --source 'replay:{}' --listen 127.0.0.1:0 --store '{}'",
                                            recording.string(), store));
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("history store " + store), std::string::npos) << run.err;
  EXPECT_NE(run.err.find((dir_ / "missing-dir").string() + " does not exist"), std::string::npos) << run.err;
}

}  // namespace
