// Issue 55, items 1 and 2: dcgm-exporter's series summed per GPU, job and
// hour. A SYNTHETIC fleet written as dcgm-exporter's gauges (bench/
// dcgm_fleet.py: H100, H200 and A100 boards, jobs labelled hpc_job) is
// backfilled into the Debian Prometheus with the rules of `ofu rules hourly
// --series dcgm-exporter`; `report --series dcgm-exporter` read from the
// rollups (and the raw series for the partial hours at the ends) must give
// the every-sample path's OFU per GPU and overall, and the raw series' sums'
// OFU per job, to 1e-9 relative. Rules made for the wrong scrape interval
// (steps of two scrapes, so half of them are not counted) must not.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofu/core/gpu_spec.h"
#include "ofu/history/dcgm_exporter_rules.h"
#include "ofu/history/dcgm_hourly.h"
#include "support/backfilled_prometheus.h"
#include "support/background_process.h"
#include "support/cli_runner.h"
#include "support/json_compare.h"
#include "support/simulated_fleet.h"
#include "support/victoria_metrics.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ofu::testing::BackgroundProcess;
using ofu::testing::RunShell;

constexpr double kStart = 1790002800 + 800;  // 800 s past an hour: partial hours at both ends

TEST(DcgmHourlyRules, SumEachScrapeOnceAtAStepBelowTheScrapeInterval) {
  auto specs = ofu::GpuSpecDatabase::Embedded();
  ASSERT_TRUE(specs.ok());
  auto yaml = ofu::history::DcgmHourlyRulesYaml(60, *specs);
  ASSERT_TRUE(yaml.ok()) << yaml.error().message;
  // S = 50 s for 60 s scrapes; the hour's steps (e - 3600, e].
  EXPECT_NE(yaml->find("expr: vector(50)"), std::string::npos);
  EXPECT_NE(yaml->find("[3599999ms:50000ms]"), std::string::npos);
  EXPECT_NE(yaml->find("record: gpu_job:dcgm_tensor_active_x_ofu_clock_mhz:sum1h"), std::string::npos);
  // The measured boards' clock models, the H100's burst ratios among them; A100 keeps the reported clock.
  EXPECT_NE(yaml->find("modelName=\"NVIDIA H100 80GB HBM3\""), std::string::npos);
  EXPECT_NE(yaml->find("* 1.202"), std::string::npos);
  EXPECT_EQ(yaml->find("A100"), std::string::npos);
  EXPECT_FALSE(ofu::history::DcgmHourlyRulesYaml(1, *specs).ok());
  // At a range's ends only the scrapes in (after, until] count.
  const ofu::history::DcgmStepScope scope{50, "hpc_job=\"7\"", 1000.5, 2000, {}, std::nullopt};
  EXPECT_EQ(ofu::history::DcgmStepTimeExpr(scope),
            "(timestamp(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{hpc_job=\"7\"}) or "
            "timestamp(DCGM_FI_PROF_TENSOR_UTIL_RATIO{hpc_job=\"7\"})) > time() - 50 > 1000.500 <= 2000.000");
}

// The zero-deploy rules (history/dcgm_exporter_rules.h) join the spec
// constants on modelName, each alias also without "NVIDIA ", and apply the
// measured boards' clock models. Each name must join one SKU: a spec file in
// which the short form of one SKU's alias is another's is refused when read.
TEST(DcgmExporterRules, EachModelNameJoinsOneSkuAndTheMeasuredBoardsGetTheirModel) {
  auto specs = ofu::GpuSpecDatabase::Embedded();
  ASSERT_TRUE(specs.ok());
  const std::string yaml = ofu::history::DcgmExporterRulesYaml(*specs);
  EXPECT_NE(yaml.find("modelName: \"NVIDIA H100 80GB HBM3\"\n          sku: \"h100-sxm5\""), std::string::npos);
  EXPECT_NE(yaml.find("modelName: \"H100 80GB HBM3\"\n          sku: \"h100-sxm5\""), std::string::npos);
  // H200 steady work: f / 1.099 (data/gpu_specs.json's clock_model).
  EXPECT_NE(yaml.find("{modelName=\"NVIDIA H200\"} - 0.45) / (0.75 - 0.45), 0, 1) / 1.099)))"), std::string::npos);
  EXPECT_NE(yaml.find("clock_source: measured-model"), std::string::npos);

  json db = json::parse(ofu::testing::Slurp(fs::path(OFU_SOURCE_DIR) / "data" / "gpu_specs.json"));
  for (json& sku : db["skus"]) {
    if (sku["id"] == "h200-sxm") sku["aliases"].push_back("H100 80GB HBM3");
  }
  auto twice = ofu::GpuSpecDatabase::Parse(db.dump(), "twice.json");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("\"H100 80GB HBM3\" is listed for both h100-sxm5 and h200-sxm"),
            std::string::npos)
      << twice.error().message;
}

class DcgmHourlyCli : public ofu::testing::CliTest {};

// Jobs need the labels that name them; the sums need the model clock (the
// reported clock and the HTML page read every sample). Refused before any
// query: the URL answers nothing.
TEST_F(DcgmHourlyCli, JobsNeedTheirLabelsAndTheSumsTheModelClock) {
  const std::string prom = "--prometheus http://127.0.0.1:9 --series dcgm-exporter --since 1000 --until 9000";
  auto job = Ofu("report " + prom + " --job 4242");
  EXPECT_EQ(job.exit_code, 1) << job.err;
  EXPECT_NE(job.err.find("--job with --series dcgm-exporter needs --job-labels slurm or kubernetes"), std::string::npos)
      << job.err;
  auto reported = Ofu("report " + prom + " --job-labels slurm --clock reported");
  EXPECT_EQ(reported.exit_code, 1) << reported.err;
  EXPECT_NE(reported.err.find("read every sample"), std::string::npos) << reported.err;
  auto pod = Ofu("report " + prom + " --job-labels kubernetes --job train-7");
  EXPECT_EQ(pod.exit_code, 1) << pod.err;
  EXPECT_NE(pod.err.find("a Kubernetes job is namespace/pod"), std::string::npos) << pod.err;
  auto labels = Ofu("report " + prom + " --job-labels lsf");
  EXPECT_EQ(labels.exit_code, 1) << labels.err;
  // Servers listed in a file take dcgm-exporter's series too: this one is
  // asked (and answers nothing: exit 5); the store never has them.
  const auto servers = Write("servers.txt", "http://127.0.0.1:9\n");
  auto listed = Ofu("report --prometheus-file '" + servers.string() +
                    "' --series dcgm-exporter --job-labels slurm --since 1000 --until 9000");
  EXPECT_EQ(listed.exit_code, 5) << listed.err;
  EXPECT_NE(listed.err.find("http://127.0.0.1:9"), std::string::npos) << listed.err;
  auto store = Ofu("reconcile --store x.sqlite --series dcgm-exporter --job-labels slurm --mfu m.csv");
  EXPECT_EQ(store.exit_code, 1) << store.err;
  EXPECT_NE(store.err.find("--store excludes --series"), std::string::npos) << store.err;
}

class DcgmHourly : public ofu::testing::CliTest {
 protected:
  void TearDown() override {
    prometheus_.Stop();
    CliTest::TearDown();
  }
  json RunJson(const std::string& args) { return ofu::testing::OfuJson(dir_, "report " + args); }
  static double Relative(const json& a, const json& b) {
    if (!a.is_number() || !b.is_number()) return INFINITY;
    return std::abs(a.get<double>() - b.get<double>()) / std::abs(a.get<double>());
  }
  // The fleet in a Prometheus of its own under `dir`, with the rules for
  // `rules_interval_s` backfilled over it; the server restarted on them.
  void Serve(const fs::path& dir, double rules_interval_s, int& port) {
    fs::create_directories(dir);
    ASSERT_TRUE(ofu::testing::ServeBackfilled(prometheus_, dir, dir_ / "fleet.om", port));
    auto rules = RunShell(fmt::format("'{}' rules hourly --series dcgm-exporter --scrape-interval {}", OFU_BINARY,
                                      rules_interval_s),
                          dir_);
    ASSERT_EQ(rules.exit_code, 0) << rules.err;
    const fs::path file = dir / "rules.yml";
    {
      std::ofstream out(file);
      out << rules.out;
    }
    auto check = RunShell(fmt::format("'{}' check rules '{}'", OFU_PROMTOOL, file.string()), dir_);
    ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
    ASSERT_TRUE(ofu::testing::BackfillRules(dir, port, file, kStart, kStart + 5 * 3600));
    prometheus_.Stop();
    ASSERT_TRUE(ofu::testing::StartPrometheus(prometheus_, dir, port));
    // The blocks are read once the server answers with them, not when it says it is ready.
    ASSERT_TRUE(ofu::testing::SeriesVisible(port, ofu::history::kDcgmHourlyMarkerName, kStart + 6 * 3600, 6 * 3600,
                                            "Prometheus (restarted on promtool's rule blocks)",
                                            dir / "prometheus.log"));
  }
  BackgroundProcess prometheus_;
};

TEST_F(DcgmHourly, AFleetFromRollupsGivesTheRawPathsOfuPerGpuJobAndOverallToOnePartInABillion) {
  if (!ofu::testing::ProgramFound(OFU_PROMETHEUS) || !ofu::testing::ProgramFound(OFU_PROMTOOL)) {
    GTEST_SKIP() << "no prometheus or promtool binary (scripts/install-deps.sh installs the Debian packages)";
  }
  // 6 GPUs (2 of each board) x 4 hours of 60 s scrapes, jobs by hpc_job.
  auto sim = RunShell(fmt::format("python3 '{}/bench/dcgm_fleet.py' raw '{}' --gpus 6 --hours 4 --interval 60 "
                                  "--start {:.0f} --seed 11",
                                  OFU_SOURCE_DIR, (dir_ / "fleet.om").string(), kStart),
                      dir_);
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  int port = 0;
  ASSERT_NO_FATAL_FAILURE(Serve(dir_ / "right", 60, port));
  const std::string prom = fmt::format("--prometheus http://127.0.0.1:{} --series dcgm-exporter", port);
  const std::string range = fmt::format("--since {:.0f} --until {:.0f}", kStart, kStart + 4 * 3600);

  // Every sample, as a recording: per GPU and overall.
  const json samples = RunJson(fmt::format("{} {} --resolution raw", prom, range));
  // The raw series' sums and the rollups, with jobs.
  const json sums = RunJson(fmt::format("{} {} --resolution raw --job-labels slurm", prom, range));
  const json hourly = RunJson(fmt::format("{} {} --resolution hourly --job-labels slurm", prom, range));
  ASSERT_FALSE(samples.is_discarded() || sums.is_discarded() || hourly.is_discarded());
  // Whole hours from the rollups (where the group's evaluations fall in the
  // hour is the server's choice), the partial hours at the ends raw.
  const std::string note = hourly["notes"][0];
  EXPECT_EQ(note.rfind("resolution: hourly rollups for 3 hours (1 run, sum step 50 s), raw counters for the rest (", 0),
            0u)
      << note;
  EXPECT_EQ(note.find("(none)"), std::string::npos) << note;
  EXPECT_LE(Relative(samples["overall"]["ofu"], hourly["overall"]["ofu"]), 1e-9);
  EXPECT_LE(Relative(samples["overall"]["ofu"], sums["overall"]["ofu"]), 1e-9);
  EXPECT_DOUBLE_EQ(samples["overall"]["seconds"].get<double>(), hourly["overall"]["seconds"].get<double>());
  ASSERT_EQ(samples["gpus"].size(), 6u);
  ASSERT_EQ(hourly["gpus"].size(), 6u);
  std::map<std::string, json> sample_gpus;
  for (const json& gpu : samples["gpus"]) sample_gpus[gpu["uuid"].get<std::string>()] = gpu;
  for (const json& gpu : hourly["gpus"]) {
    const std::string uuid = gpu["uuid"];
    ASSERT_TRUE(sample_gpus.contains(uuid)) << uuid;
    EXPECT_LE(Relative(sample_gpus[uuid]["ofu"], gpu["ofu"]), 1e-9) << uuid;
    EXPECT_EQ(sample_gpus[uuid]["clock_source"], gpu["clock_source"]) << uuid;
  }
  // Jobs: the rollups give the raw sums' jobs, OFU to 1e-9 and GPU-hours to a scrape interval.
  ASSERT_GE(hourly["jobs"].size(), 10u);
  ASSERT_EQ(hourly["jobs"].size(), sums["jobs"].size());
  for (std::size_t i = 0; i < sums["jobs"].size(); ++i) {
    const json& raw_job = sums["jobs"][i];
    const json& job = hourly["jobs"][i];
    EXPECT_EQ(job["job_id"], raw_job["job_id"]);
    EXPECT_EQ(job["gpus"], raw_job["gpus"]);
    EXPECT_EQ(job["scheduler"], "slurm");
    EXPECT_LE(Relative(raw_job["ofu"], job["ofu"]), 1e-9) << raw_job["job_id"];
    EXPECT_NEAR(job["gpu_hours"].get<double>(), raw_job["gpu_hours"].get<double>(), 60.0 / 3600) << raw_job["job_id"];
  }
  // One job alike (--job), on both paths; and auto takes the rollups.
  const std::string job = sums["jobs"][3]["job_id"];
  const json one_sums = RunJson(fmt::format("{} {} --resolution raw --job-labels slurm --job {}", prom, range, job));
  const json one_hourly = RunJson(fmt::format("{} {} --job-labels slurm --job {}", prom, range, job));
  EXPECT_LE(Relative(sums["jobs"][3]["ofu"], one_sums["overall"]["ofu"]), 1e-9) << job;
  EXPECT_LE(Relative(one_sums["overall"]["ofu"], one_hourly["overall"]["ofu"]), 1e-9) << job;
  EXPECT_EQ(one_hourly["notes"][0], hourly["notes"][0]);
  prometheus_.Stop();

  // The same fleet with rules made for 120 s scrapes: a 100 s step holds two
  // of its 60 s scrapes and sums one. The answers must differ.
  ASSERT_NO_FATAL_FAILURE(Serve(dir_ / "wrong", 120, port));
  const json wrong =
      RunJson(fmt::format("--prometheus http://127.0.0.1:{} --series dcgm-exporter {} "
                          "--resolution hourly --job-labels slurm",
                          port, range));
  ASSERT_FALSE(wrong.is_discarded());
  EXPECT_GT(Relative(samples["overall"]["ofu"], wrong["overall"]["ofu"]), 1e-6);
  EXPECT_GT(Relative(samples["overall"]["seconds"], wrong["overall"]["seconds"]), 1e-3);
}

// The SYNTHETIC fleet (6 GPUs x 4 hours of 60 s scrapes, jobs labelled as
// `jobs` says) imported into a VictoriaMetrics of its own, with the rules
// replayed by vmalert on the hour; `vm` serves it on `port`.
class DcgmOnVictoriaMetrics : public DcgmHourly {
 protected:
  void Serve(const std::string& jobs, int& port) {
    auto sim = RunShell(fmt::format("python3 '{}/bench/dcgm_fleet.py' raw '{}' --gpus 6 --hours 4 --interval 60 "
                                    "--start {:.0f} --seed 11 --jobs {}",
                                    OFU_SOURCE_DIR, (dir_ / "fleet.om").string(), kStart, jobs),
                        dir_);
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    fs::create_directories(dir_ / "vm");
    ASSERT_TRUE(ofu::testing::ServeImported(vm_, dir_ / "vm", ofu::testing::Slurp(dir_ / "fleet.om"), port));
    auto rules = RunShell(fmt::format("'{}' rules hourly --series dcgm-exporter --scrape-interval 60", OFU_BINARY),
                          dir_);
    ASSERT_EQ(rules.exit_code, 0) << rules.err;
    const fs::path file = Write("rules.yml", rules.out);
    ASSERT_TRUE(ofu::testing::ReplayRules(dir_, file, port, kStart, kStart + 5 * 3600))
        << ofu::testing::Slurp(dir_ / "vmalert.log");
  }
  void TearDown() override {
    vm_.Stop();
    DcgmHourly::TearDown();
  }
  BackgroundProcess vm_;
  const std::string range_ = fmt::format("--since {:.0f} --until {:.0f}", kStart, kStart + 4 * 3600);
};

// The same rollups on VictoriaMetrics (issue 55, "Done when" 1): the raw
// series imported, the rules replayed by vmalert on the hour; the hourly
// path gives that server's raw sums per GPU, per job and overall to 1e-9.
TEST_F(DcgmOnVictoriaMetrics, TheRollupsGiveTheRawSums) {
  if (const std::string missing = ofu::testing::FirstMissing({OFU_VICTORIA_METRICS, OFU_VMALERT}); !missing.empty()) {
    GTEST_SKIP() << "no " << missing << " (scripts/install-deps.sh installs victoria-metrics)";
  }
  int port = 0;
  ASSERT_NO_FATAL_FAILURE(Serve("slurm", port));
  const std::string prom = fmt::format("--prometheus http://127.0.0.1:{} --series dcgm-exporter", port);
  const std::string& range = range_;
  const json sums = RunJson(fmt::format("{} {} --resolution raw --job-labels slurm", prom, range));
  const json hourly = RunJson(fmt::format("{} {} --resolution hourly --job-labels slurm", prom, range));
  ASSERT_FALSE(sums.is_discarded() || hourly.is_discarded());
  EXPECT_EQ(hourly["notes"][0].get<std::string>().rfind("resolution: hourly rollups for ", 0), 0u) << hourly["notes"];
  EXPECT_LE(Relative(sums["overall"]["ofu"], hourly["overall"]["ofu"]), 1e-9);
  ASSERT_EQ(hourly["gpus"].size(), 6u);
  ASSERT_EQ(sums["gpus"].size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(hourly["gpus"][i]["uuid"], sums["gpus"][i]["uuid"]);
    EXPECT_LE(Relative(sums["gpus"][i]["ofu"], hourly["gpus"][i]["ofu"]), 1e-9) << sums["gpus"][i]["uuid"];
  }
  ASSERT_GE(hourly["jobs"].size(), 10u);
  ASSERT_EQ(hourly["jobs"].size(), sums["jobs"].size());
  for (std::size_t i = 0; i < sums["jobs"].size(); ++i) {
    EXPECT_EQ(hourly["jobs"][i]["job_id"], sums["jobs"][i]["job_id"]);
    EXPECT_LE(Relative(sums["jobs"][i]["ofu"], hourly["jobs"][i]["ofu"]), 1e-9) << sums["jobs"][i]["job_id"];
  }
}

// Jobs from Kubernetes' labels (issue 55 item 2): a job is namespace/pod,
// named by its container, on the raw sums and the rollups alike; --job takes
// one; and `reconcile` reads the jobs' OFU from the same sums, set beside
// the MFU each job reported. Without --job-labels it has no jobs to compare.
TEST_F(DcgmOnVictoriaMetrics, KubernetesPodsAreJobsForReportAndReconcile) {
  if (const std::string missing = ofu::testing::FirstMissing({OFU_VICTORIA_METRICS, OFU_VMALERT}); !missing.empty()) {
    GTEST_SKIP() << "no " << missing << " (scripts/install-deps.sh installs victoria-metrics)";
  }
  int port = 0;
  ASSERT_NO_FATAL_FAILURE(Serve("kubernetes", port));
  const std::string prom =
      fmt::format("--prometheus http://127.0.0.1:{} --series dcgm-exporter --job-labels kubernetes", port);
  const json sums = RunJson(fmt::format("{} {} --resolution raw", prom, range_));
  const json hourly = RunJson(fmt::format("{} {} --resolution hourly", prom, range_));
  ASSERT_FALSE(sums.is_discarded() || hourly.is_discarded());
  ASSERT_GE(hourly["jobs"].size(), 10u);
  ASSERT_EQ(hourly["jobs"].size(), sums["jobs"].size());
  for (std::size_t i = 0; i < sums["jobs"].size(); ++i) {
    const json& job = hourly["jobs"][i];
    EXPECT_EQ(job["job_id"], sums["jobs"][i]["job_id"]);
    // bench/dcgm_fleet.py: namespace team-<job % 3>, pod train-<job>, container worker.
    const std::string id = job["job_id"];
    const int number = std::stoi(id.substr(id.find("/train-") + 7));
    EXPECT_EQ(id, fmt::format("team-{}/train-{}", number % 3, number));
    EXPECT_EQ(job["job_name"], "worker") << id;
    EXPECT_EQ(job["scheduler"], "kubernetes") << id;
    EXPECT_LE(Relative(sums["jobs"][i]["ofu"], job["ofu"]), 1e-9) << id;
  }
  const json& picked = hourly["jobs"][2];
  const std::string pod = picked["job_id"];
  const json one = RunJson(fmt::format("{} {} --job {}", prom, range_, pod));
  ASSERT_FALSE(one.is_discarded());
  EXPECT_LE(Relative(picked["ofu"], one["overall"]["ofu"]), 1e-9) << pod;

  // Two pods' reported MFU: reconcile sets each beside its OFU from the rollups.
  const json& other = hourly["jobs"][5];
  const fs::path mfu = Write("mfu.csv", fmt::format("job_id,mfu,reference_precision\n{},0.31,bf16\n{},0.12,bf16\n", pod,
                                                    other["job_id"].get<std::string>()));
  const json reconciled = ofu::testing::OfuJson(dir_,
                                                fmt::format("reconcile {} {} --mfu '{}'", prom, range_, mfu.string()));
  ASSERT_FALSE(reconciled.is_discarded());
  ASSERT_EQ(reconciled["jobs"].size(), 2u) << reconciled.dump();
  std::map<std::string, json> rows;
  for (const json& row : reconciled["jobs"]) rows[row["job_id"].get<std::string>()] = row;
  ASSERT_TRUE(rows.contains(pod) && rows.contains(other["job_id"])) << reconciled.dump();
  EXPECT_LE(Relative(picked["ofu"], rows[pod]["ofu"]), 1e-9);
  EXPECT_LE(Relative(other["ofu"], rows[other["job_id"]]["ofu"]), 1e-9);
  EXPECT_DOUBLE_EQ(rows[pod]["reported_mfu"].get<double>(), 0.31);
  EXPECT_DOUBLE_EQ(rows[other["job_id"]]["reported_mfu"].get<double>(), 0.12);
  EXPECT_EQ(rows[pod]["job_name"], "worker");

  auto unnamed = Ofu(fmt::format("reconcile --prometheus http://127.0.0.1:{} --series dcgm-exporter {} --mfu '{}'",
                                 port, range_, mfu.string()));
  EXPECT_EQ(unnamed.exit_code, 1) << unnamed.err;
  EXPECT_NE(unnamed.err.find("--series dcgm-exporter needs --job-labels slurm or kubernetes"), std::string::npos)
      << unnamed.err;
  auto windows = Ofu(fmt::format("report {} {} --per-window", prom, range_));
  EXPECT_EQ(windows.exit_code, 1) << windows.err;
  EXPECT_NE(windows.err.find("not window by window"), std::string::npos) << windows.err;
}

}  // namespace
