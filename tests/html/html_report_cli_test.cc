// `ofu report --html` end to end: the built program on a store written here
// with the agent's HistoryStore (the synthetic two-GPU job of
// tests/sinks/history_fixture.h), and on the bundled synthetic recording.
#include <filesystem>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "html/html_test_support.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/core/non_tensor.h"
#include "ofu/sinks/history_store.h"
#include "sinks/history_fixture.h"
#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using ofu::testing::CommandResult;
using ofu::testing::kJobT0;

using ofu::testing::DataOf;

class HtmlReportCli : public ofu::testing::CliTest {
 protected:
  std::string WriteJobStore() { return ofu::testing::WriteTwoGpuJobStore(dir_ / "history.sqlite"); }
};

TEST_F(HtmlReportCli, StoreToPageWithJobAndGpuTimelines) {
  const std::string store = WriteJobStore();
  const fs::path out = dir_ / "report.html";
  const CommandResult run = Ofu(fmt::format("report --store '{}' --html '{}'", store, out.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, out.string() + "\n");  // the path, not the text report
  EXPECT_FALSE(fs::exists(out.string() + ".tmp"));
  const nlohmann::json data = DataOf(ofu::testing::Slurp(out));
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["source"], store);
  EXPECT_EQ(data["title"], "OFU report");
  EXPECT_EQ(data["bucket_s"], 60);  // 6 windows of 60 s: one bucket per window
  ASSERT_EQ(data["gpus"].size(), 2u);
  // The test store's windows do not say where their clock came from (as a store
  // written before 2026-11-27): the page names none rather than guessing.
  EXPECT_TRUE(data["clock_source"].is_null());
  EXPECT_TRUE(data["gpus"][0]["clock_source"].is_null());
  // GPU 1: 0.2 0.8 lost 0.6 0.4 0.0 -- the lost window is a gap, not a zero.
  const auto gpu1 = data["gpus"][1]["points"];
  ASSERT_EQ(gpu1[1].size(), 6u);
  EXPECT_NEAR(gpu1[1][0].get<double>(), 0.2, 1e-12);
  EXPECT_TRUE(gpu1[1][2].is_null());
  EXPECT_EQ(gpu1[1][5].get<double>(), 0.0);
  EXPECT_EQ(gpu1[0][0].get<double>(), kJobT0 + 60);
  // J1 per window, over its GPUs: 0.4, (0.5 + 0.8) / 2, 0.6 (GPU 1 lost),
  // (0.3 + 0.6) / 2, 0.4; job OFU 216 / 420 as in `ofu report --store`.
  ASSERT_EQ(data["jobs"].size(), 1u);
  const auto job = data["jobs"][0];
  EXPECT_EQ(job["job_id"], "J1");
  EXPECT_NEAR(job["ofu"].get<double>(), 216.0 / 420, 1e-12);
  const std::vector<double> expected = {0.4, 0.65, 0.6, 0.45, 0.4};
  ASSERT_EQ(job["points"][1].size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(job["points"][1][i].get<double>(), expected[i], 1e-12) << i;
  }
  ASSERT_EQ(data["skus"].size(), 1u);
  EXPECT_EQ(data["skus"][0]["gpus"], 2);
  // No MFU log: no scatter (the page says why). The regression scan ran and
  // found nothing in five windows (it needs ten on each side of a change).
  EXPECT_TRUE(data["scatter"].is_null());
  ASSERT_TRUE(data["markers"].is_array());
  EXPECT_TRUE(data["markers"].empty());
  EXPECT_TRUE(data["kernel_findings"].is_null());  // no --trace: no findings, not empty ones
}

// The simulator's fleet (SYNTHETIC, tests/fleet): the page's scatter flags
// exactly the jobs whose MFU log was planted with a FLOPs-accounting error,
// and its markers are exactly the planted regression, precision switch and
// regression across runs.
TEST_F(HtmlReportCli, SimulatedFleetPageShowsWhatWasPlantedAndNothingElse) {
  const fs::path fleet = dir_ / "fleet";
  const CommandResult simulated =
      ofu::testing::RunShell(fmt::format("'{}' --out '{}' --seed 7", OFU_FLEET_SIM, fleet.string()), dir_);
  ASSERT_EQ(simulated.exit_code, 0) << simulated.err;
  const fs::path out = dir_ / "fleet.html";
  const CommandResult run = Ofu(fmt::format("report --store '{}' --html '{}' --mfu '{}' --corrections '{}'",
                                            (fleet / "history.sqlite").string(), out.string(),
                                            (fleet / "mfu.csv").string(), (fleet / "corrections").string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json data = DataOf(ofu::testing::Slurp(out));
  ASSERT_TRUE(data.is_object());
  const nlohmann::json truth = nlohmann::json::parse(ofu::testing::Slurp(fleet / "ground_truth.json"));

  std::set<std::string> planted_flags, flagged;
  for (const auto& job : truth["jobs"]) {
    if (job["plant"] != "none") planted_flags.insert(job["job_id"].get<std::string>());
  }
  ASSERT_EQ(planted_flags.size(), 5u);  // four FLOPs miscalculations and one non_tensor_work job (issue 18)
  ASSERT_TRUE(data["scatter"].is_object());
  EXPECT_EQ(data["scatter"]["points"].size(), truth["jobs"].size());
  for (const auto& point : data["scatter"]["points"]) {
    if (point["flagged"].get<bool>()) flagged.insert(point["job_id"].get<std::string>());
  }
  EXPECT_EQ(flagged, planted_flags);
  EXPECT_TRUE(data["scatter"]["pearson_r"].is_number());

  std::set<std::pair<std::string, std::string>> planted_markers, markers;
  for (const auto& r : truth["regressions"]) planted_markers.insert({"regression", r["job_id"].get<std::string>()});
  for (const auto& r : truth["precision_shifts"]) {
    planted_markers.insert({"precision shift", r["job_id"].get<std::string>()});
  }
  for (const auto& r : truth["run_regressions"]) {
    planted_markers.insert({"regression across runs", r["first_job_id"].get<std::string>()});
  }
  ASSERT_EQ(planted_markers.size(), 3u);
  ASSERT_TRUE(data["markers"].is_array());
  for (const auto& marker : data["markers"]) {
    markers.insert({marker["kind"].get<std::string>(), marker["job_id"].get<std::string>()});
  }
  EXPECT_EQ(markers, planted_markers);

  // The CUDA-core advice names exactly the job planted with its matmuls on
  // the CUDA cores (OFU 0.02, FP32 pipe 0.7); every other job's FP32 pipe
  // is 0.05.
  std::set<std::string> planted_cuda_core, advised_jobs;
  for (const auto& job : truth["jobs"]) {
    if (job["plant"] == "non_tensor_work") planted_cuda_core.insert(job["job_id"].get<std::string>());
  }
  ASSERT_EQ(planted_cuda_core.size(), 1u);
  for (const auto& advice : data["cuda_core_advice"]) {
    if (!advice["job_id"].get<std::string>().empty()) advised_jobs.insert(advice["job_id"].get<std::string>());
  }
  EXPECT_EQ(advised_jobs, planted_cuda_core);
}

// SYNTHETIC store written as the agent writes it (issue 18). Job SGEMM on
// GPU-0: OFU 0.02, FP32 pipe 0.7, SM clock 1755 MHz; the bound is computed by
// core (CompleteNonTensor) as the agent does:
//   0.7 x 132 x 128 x 2 x 1.755e9 = 41.513472 TFLOP/s, 41.513472 / 66.9 of the peak.
// Job BF16 on GPU-1: OFU 0.45, no CUDA-core counters. Five 60 s windows.
std::string WriteCudaCoreStore(const fs::path& path) {
  const auto specs = *ofu::GpuSpecDatabase::Embedded();
  const ofu::GpuSpec& h100 = **specs.Lookup("h100-sxm5");
  ofu::sources::FakeClock clock(kJobT0);
  ofu::sinks::HistoryOptions options;
  options.path = path.string();
  auto store = ofu::sinks::HistoryStore::Open(options, clock);
  EXPECT_TRUE(store.ok()) << store.error().message;
  if (!store.ok()) return options.path;
  for (int k = 1; k <= 5; ++k) {
    ofu::sinks::GpuWindow sgemm = ofu::testing::H100Window("GPU-0", "0", 0.02, true, std::nullopt, 1755.0);
    sgemm.window.non_tensor[ofu::CudaCorePipe::kFp32] = 0.7;
    ofu::CompleteNonTensor(sgemm.window.non_tensor, sgemm.window.sm_clock_mhz,
                           ofu::NonTensorScaleOf(h100, h100.sm_count));
    const ofu::sinks::GpuWindow bf16 = ofu::testing::H100Window("GPU-1", "1", 0.45);
    const ofu::Status s = (*store)->Consume(ofu::testing::Batch(kJobT0 + 60.0 * k, 60, {sgemm, bf16},
                                                                {{"GPU-0", "SGEMM"}, {"GPU-1", "BF16"}}));
    EXPECT_TRUE(s.ok()) << s.error().message;
  }
  return options.path;
}

TEST_F(HtmlReportCli, CudaCoreJobGetsItsBoundAndTheAdviceTheOtherNothing) {
  const std::string store = WriteCudaCoreStore(dir_ / "cuda-cores.sqlite");
  const fs::path out = dir_ / "cuda-cores.html";
  const CommandResult run = Ofu(fmt::format("report --store '{}' --html '{}'", store, out.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json data = DataOf(ofu::testing::Slurp(out));
  ASSERT_TRUE(data.is_object());
  ASSERT_EQ(data["jobs"].size(), 2u);  // by id: BF16, SGEMM
  const auto& bf16 = data["jobs"][0];
  const auto& sgemm = data["jobs"][1];
  ASSERT_EQ(sgemm["job_id"], "SGEMM");
  EXPECT_NEAR(sgemm["ofu"].get<double>(), 0.02, 1e-9);
  EXPECT_NEAR(sgemm["non_tensor"]["fp32_active"].get<double>(), 0.7, 1e-9);
  EXPECT_NEAR(sgemm["non_tensor"]["flops_upper_bound_tflops"].get<double>(), 41.513472, 1e-6);
  EXPECT_NEAR(sgemm["non_tensor"]["share_of_peak"].get<double>(), 41.513472 / 66.9, 1e-6);
  EXPECT_TRUE(sgemm["non_tensor"]["fp64_active"].is_null());
  ASSERT_EQ(sgemm["points"].size(), 3u);  // t, OFU, FP32 pipe
  for (const auto& v : sgemm["points"][2]) EXPECT_NEAR(v.get<double>(), 0.7, 1e-9);
  ASSERT_EQ(bf16["job_id"], "BF16");
  EXPECT_EQ(bf16["points"].size(), 2u);
  for (const auto& [key, value] : bf16["non_tensor"].items()) EXPECT_TRUE(value.is_null()) << key;
  for (const auto& [key, value] : data["gpus"][1]["non_tensor"].items()) EXPECT_TRUE(value.is_null()) << key;

  // The advice: the job and its GPU, in `ofu report`'s words; none for BF16.
  std::set<std::string> advised;
  for (const auto& a : data["cuda_core_advice"]) {
    advised.insert(a["job_id"].get<std::string>() + "|" + a["gpu_uuid"].get<std::string>());
    EXPECT_EQ(a["pipe"], "fp32");
    EXPECT_NEAR(a["gain_upper_bound"].get<double>(), 494.7 / 66.9, 1e-9);
  }
  EXPECT_EQ(advised, (std::set<std::string>{"SGEMM|", "|GPU-0"}));

  // The same figures and text as the JSON report of the same store.
  const CommandResult json = Ofu(fmt::format("report --store '{}' --format json", store));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json report = nlohmann::json::parse(json.out);
  EXPECT_EQ(report["jobs"][1]["non_tensor"]["flops_upper_bound_tflops"],
            sgemm["non_tensor"]["flops_upper_bound_tflops"]);
  ASSERT_EQ(report["advice"].size(), 1u);  // per GPU
  EXPECT_EQ(report["advice"][0]["text"], data["cuda_core_advice"][1]["text"]);
}

TEST_F(HtmlReportCli, MfuNeedsHtml) {
  const CommandResult run = Ofu("report --store x.sqlite --mfu mfu.csv");
  EXPECT_EQ(run.exit_code, 1);
}

TEST_F(HtmlReportCli, EmptyRangeStillWritesThePageAndExitsNoData) {
  const std::string store = WriteJobStore();
  const fs::path out = dir_ / "empty.html";
  const CommandResult run = Ofu(fmt::format("report --store '{}' --since {} --html '{}' --title 'Last week'", store,
                                            kJobT0 + 3600, out.string()));
  EXPECT_EQ(run.exit_code, 4) << run.err;
  EXPECT_NE(run.err.find("no windows"), std::string::npos) << run.err;
  const nlohmann::json data = DataOf(ofu::testing::Slurp(out));
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["title"], "Last week");
  EXPECT_TRUE(data["gpus"].empty());
  EXPECT_TRUE(data["clock_source"].is_null());  // no window: no clock named
  EXPECT_TRUE(data["start_s"].is_null());
}

TEST_F(HtmlReportCli, UnwritablePathIsAnIoError) {
  const std::string store = WriteJobStore();
  const CommandResult run = Ofu(fmt::format("report --store '{}' --html '{}'", store,
                                            (dir_ / "missing" / "r.html").string()));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("cannot write"), std::string::npos) << run.err;
}

TEST_F(HtmlReportCli, RecordingToPage) {
  const fs::path out = dir_ / "recording.html";
  const CommandResult run =
      Ofu(fmt::format("report --input '{}/recordings/synthetic-2xh100-bf16-matmul.om' --html '{}'",
                      OFU_SOURCE_DIR "/data", out.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json data = DataOf(ofu::testing::Slurp(out));
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["gpus"].size(), 2u);
  EXPECT_TRUE(data["jobs"].empty());  // a recording does not say which job ran
  EXPECT_TRUE(data["overall_ofu"].is_number());
  EXPECT_EQ(data["synthetic"], true);  // the recording says it is synthetic
  // The board was measured (NVIDIA H100 80GB HBM3): its OFU uses the clock model, as
  // `ofu report --input` says, and the page names it overall and per GPU.
  EXPECT_EQ(data["clock_source"], "measured-model");
  for (const auto& gpu : data["gpus"]) EXPECT_EQ(gpu["clock_source"], "measured-model");
  // It has no CUDA-core pipe counters: absent figures, no FP32 series, no advice.
  for (const auto& gpu : data["gpus"]) {
    for (const auto& [key, value] : gpu["non_tensor"].items()) EXPECT_TRUE(value.is_null()) << key;
    EXPECT_EQ(gpu["points"].size(), 2u);
  }
  EXPECT_TRUE(data["cuda_core_advice"].empty());
}

// The real H100 recording (data/recordings/h100-sxm5-stage-a-1s.om, 74.8 s
// of samples in a 60 s window and a partial one) gives the page the OFU and
// the seconds `ofu report --input` gives. The page's rows once weighed the
// partial window as a whole one: 0.362 on the page, 0.325 in the report.
TEST_F(HtmlReportCli, RecordingPageHasTheReportsOfuSecondsAndPhases) {
  const std::string input = OFU_SOURCE_DIR "/data/recordings/h100-sxm5-stage-a-1s.om";
  const fs::path out = dir_ / "h100.html";
  const CommandResult page = Ofu(fmt::format("report --input '{}' --html '{}'", input, out.string()));
  ASSERT_EQ(page.exit_code, 0) << page.err;
  const CommandResult text = Ofu(fmt::format("report --input '{}' --format json", input));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const nlohmann::json overall = nlohmann::json::parse(text.out)["overall"];
  const nlohmann::json data = DataOf(ofu::testing::Slurp(out));
  ASSERT_TRUE(data.is_object());
  EXPECT_NEAR(overall["ofu"].get<double>(), 0.32505, 1e-5);
  EXPECT_NEAR(data["overall_ofu"].get<double>(), overall["ofu"].get<double>(), 1e-12);
  ASSERT_EQ(data["gpus"].size(), 1u);
  EXPECT_NEAR(data["gpus"][0]["ofu"].get<double>(), overall["ofu"].get<double>(), 1e-12);
  ASSERT_EQ(data["skus"].size(), 1u);
  EXPECT_NEAR(data["skus"][0]["ofu"].get<double>(), overall["ofu"].get<double>(), 1e-12);
  EXPECT_NEAR(data["observed_hours"].get<double>() * 3600, overall["seconds"].get<double>(), 1e-6);

  // At the recording's own resolution (issue 54): a point per 1 s sample
  // (74.8 s of them), not one-minute cells, and the recording's eight
  // phases with the OFU and true MFU `ofu report` gives each.
  EXPECT_EQ(data["bucket_s"], 1.0);
  EXPECT_EQ(data["gpus"][0]["points"][0].size(), 75u);
  const nlohmann::json phases = nlohmann::json::parse(text.out)["phases"];
  const nlohmann::json& run_page = data["run_page"];
  EXPECT_EQ(run_page["phases_basis"], "recorded");
  EXPECT_TRUE(run_page["run"].is_null());
  ASSERT_EQ(phases.size(), 8u);
  ASSERT_EQ(run_page["phases"].size(), phases.size());
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const nlohmann::json& drawn = run_page["phases"][i];
    EXPECT_EQ(drawn["name"], phases[i]["phase"]);
    EXPECT_EQ(drawn["gpu"], data["gpus"][0]["uuid"]);
    EXPECT_EQ(drawn["start_s"], phases[i]["start_s"]);
    EXPECT_EQ(drawn["ofu"], phases[i]["ofu"]) << drawn;
    EXPECT_EQ(drawn["mfu"], phases[i]["mfu"]) << drawn;
  }
  EXPECT_NEAR(run_page["phases"][4]["ofu"].get<double>(), 0.3105, 1e-4);  // bf16-4097
  EXPECT_NEAR(run_page["phases"][4]["mfu"].get<double>(), 0.1370, 1e-4);
}

TEST_F(HtmlReportCli, TitleNeedsHtml) {
  const std::string store = WriteJobStore();
  const CommandResult run = Ofu(fmt::format("report --store '{}' --title x", store));
  EXPECT_EQ(run.exit_code, 1);
}

// --trace: the GEMM findings of real H100 traces (tests/data/gpu-results/
// 2026-11-26-h100-sxm5/ragged/, measured, not synthetic), the same as
// `ofu correct --trace` finds in them, on the page of a (synthetic) store.
const std::string kRagged = OFU_TEST_DATA_DIR "/gpu-results/2026-11-26-h100-sxm5/ragged/";

TEST_F(HtmlReportCli, TraceAddsTheGemmFindingsOfOfuCorrect) {
  const std::string store = WriteJobStore();
  const std::string trace = kRagged + "trace-bf16-4097x1000x8191.json.gz";
  const fs::path out = dir_ / "trace.html";
  const CommandResult run = Ofu(fmt::format("report --store '{}' --html '{}' --trace '{}'", store, out.string(),
                                            trace));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json data = DataOf(ofu::testing::Slurp(out));
  ASSERT_TRUE(data.is_object());
  const nlohmann::json& findings = data["kernel_findings"];
  ASSERT_TRUE(findings.is_object()) << data.dump().substr(0, 400);
  EXPECT_EQ(findings["traces"], nlohmann::json::array({trace}));
  EXPECT_EQ(findings["gpu_sku"], "h100-sxm5");  // the trace names its device
  EXPECT_NEAR(findings["throughput_factor"].get<double>(), 0.513, 1e-12);
  ASSERT_GE(findings["gemms"].size(), 1u);
  const nlohmann::json& first = findings["gemms"][0];
  EXPECT_EQ(first["kind"], "pre-native kernel");
  EXPECT_EQ(first["family"], "sm75 s1688 bf16");
  EXPECT_EQ(first["unaligned"], nlohmann::json::parse(R"(["M = 4097", "K = 8191"])"));
  EXPECT_EQ(first["tensor_time_share"], 1.0);

  // What `ofu correct` says about the same trace, word for word.
  const CommandResult correct = Ofu(fmt::format("correct --trace '{}' --format json", trace));
  ASSERT_EQ(correct.exit_code, 0) << correct.err;
  const nlohmann::json corrected = nlohmann::json::parse(correct.out);
  EXPECT_EQ(findings["factor"], corrected["factor"]);
  EXPECT_EQ(findings["padding_factor"], corrected["padding_factor"]);
  ASSERT_EQ(corrected["pre_native"].size(), 1u);
  EXPECT_EQ(first["advice"], corrected["pre_native"][0]["advice"]);
  EXPECT_EQ(first["kernel"], corrected["pre_native"][0]["kernel"]);
  EXPECT_EQ(findings["gemms"].size(), 1 + corrected["wasteful"].size());
}

TEST_F(HtmlReportCli, TraceIsRepeatableAndReadAsOneJob) {
  const std::string store = WriteJobStore();
  const std::string a = kRagged + "trace-bf16-4097x1000x8191.json.gz",
                    b = kRagged + "trace-bf16-1000x4097x8191.json.gz";
  const fs::path out = dir_ / "traces.html";
  const CommandResult run = Ofu(fmt::format("report --store '{}' --html '{}' --trace '{}' --trace '{}'", store,
                                            out.string(), a, b));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json findings = DataOf(ofu::testing::Slurp(out))["kernel_findings"];
  EXPECT_EQ(findings["traces"], nlohmann::json::array({a, b}));
  int pre_native = 0;
  double share = 0;
  for (const auto& g : findings["gemms"]) {
    if (g["kind"] != "pre-native kernel") continue;
    ++pre_native;
    share += g["tensor_time_share"].get<double>();
  }
  EXPECT_EQ(pre_native, 2);  // one GEMM per trace, both on the sm75 kernels
  EXPECT_NEAR(share, 1.0, 1e-12);
}

TEST_F(HtmlReportCli, TraceNeedsHtml) {
  const CommandResult run = Ofu(fmt::format("report --store x.sqlite --trace '{}'", kRagged));
  EXPECT_EQ(run.exit_code, 1);
}

TEST_F(HtmlReportCli, UnreadableTraceIsAnInputError) {
  const std::string store = WriteJobStore();
  const fs::path out = dir_ / "bad-trace.html";
  const CommandResult run = Ofu(fmt::format("report --store '{}' --html '{}' --trace '{}'", store, out.string(),
                                            (dir_ / "missing.json.gz").string()));
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("missing.json.gz"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(out));  // nothing half-made
}

}  // namespace
