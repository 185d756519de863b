// End-to-end tests of `ofu correct` on traces written here (synthetic), with
// the factor, corrected OFU and predicted MFU worked out by hand.
//
// The trace holds two GEMMs on an H100 SXM5 (named by deviceProperties):
//   bf16 aten::mm 4096x4096x4096 on 128x128x64 tiles: no padding; tensor
//     time X·4096 with X = 2·4096·4096.
//   fp8 aten::_scaled_mm 4096x4097x4096 on 128x256x128 tiles: cuBLAS's M is
//     PyTorch's N = 4097, padded to 4224; at twice the bf16 rate its tensor
//     time is X·2112, of which X·2048.5 useful.
// So factor = 6144.5 / 6208, and against bf16 the MFU scale is
// (4096 + 2·2112) / 6208 = 8320 / 6208.
#include <sqlite3.h>

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace {

constexpr double kFactor = 6144.5 / 6208.0;
constexpr double kMfuScale = 8320.0 / 6208.0;

constexpr const char* kKinetoTrace = R"json({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132, "computeMajor": 9, "computeMinor": 0}],
  "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 10, "ts": 100, "dur": 50,
     "args": {"External id": 7, "Input Dims": [[4096, 4096], [4096, 4096]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 110, "dur": 5,
     "args": {"External id": 7, "correlation": 42}},
    {"ph": "X", "cat": "kernel", "name": "nvjet_tst_128x128_64x4_1x1_v_bz_TNT", "pid": 0, "tid": 7, "ts": 200, "dur": 800,
     "args": {"External id": 7, "correlation": 42, "device": 0, "stream": 7, "grid": [1024, 1, 1], "block": [384, 1, 1]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::_scaled_mm", "pid": 10, "tid": 10, "ts": 300, "dur": 50,
     "args": {"External id": 9, "Input Dims": [[4096, 4096], [4096, 4097], [], []],
              "Input type": ["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float"]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 310, "dur": 5,
     "args": {"External id": 9, "correlation": 43}},
    {"ph": "X", "cat": "kernel", "name": "nvjet_qqtst_128x256_128x4_1x1_v_bz_TNN", "pid": 0, "tid": 7, "ts": 1000, "dur": 450,
     "args": {"External id": 9, "correlation": 43, "device": 0, "stream": 7, "grid": [528, 1, 1], "block": [384, 1, 1]}},
    {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>(int)", "pid": 0, "tid": 7,
     "ts": 1500, "dur": 30, "args": {"correlation": 44, "device": 0, "stream": 7}}
  ]
})json";

// Runs ofu in the test's directory, so that file names are relative to it.
class CorrectCli : public ofu::testing::CliTest {
 protected:
  ofu::testing::CommandResult Ofu(const std::string& args) {
    return ofu::testing::RunShell(fmt::format("cd '{}' && '{}' {}", dir_.string(), OFU_BINARY, args), dir_);
  }
};

nlohmann::json ParseJson(const ofu::testing::CommandResult& result) {
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return nlohmann::json::parse(result.out);
}

TEST_F(CorrectCli, KinetoTraceGivesTheHandFactorCorrectedOfuAndMfu) {
  Write("step.json", kKinetoTrace);
  const auto json = ParseJson(Ofu("correct --trace step.json --ofu 0.5 --format json"));
  EXPECT_EQ(json["trace"]["format"], "kineto");
  EXPECT_EQ(json["trace"]["kernels"], 3);
  EXPECT_EQ(json["gpu"]["sku"], "h100-sxm5");
  EXPECT_EQ(json["gpu"]["rates"], "spec");
  EXPECT_NEAR(json["factor"].get<double>(), kFactor, 1e-12);
  EXPECT_NEAR(json["corrected_ofu"].get<double>(), 0.5 * kFactor, 1e-12);
  EXPECT_NEAR(json["mfu_scale"].get<double>(), kMfuScale, 1e-12);
  EXPECT_NEAR(json["predicted_mfu"].get<double>(), 0.5 * kFactor * kMfuScale, 1e-12);
  ASSERT_EQ(json["precision_mix"].size(), 2u);
  EXPECT_EQ(json["precision_mix"][0]["precision"], "bf16");
  EXPECT_NEAR(json["precision_mix"][0]["tensor_time_share"].get<double>(), 4096.0 / 6208.0, 1e-12);
  EXPECT_EQ(json["non_tensor_gemm_share"], 0.0);
  ASSERT_EQ(json["wasteful"].size(), 1u);
  EXPECT_EQ(json["wasteful"][0]["op"], "aten::_scaled_mm");
  EXPECT_EQ(json["wasteful"][0]["kernel_m"]["padded"], 4224);
  EXPECT_EQ(json["wasteful"][0]["advice"], "N = 4097 pads to 4224 with 128-wide tiles; make N a multiple of 128");
  EXPECT_EQ(json["coverage"]["corrected_kernels"], 2);
}

TEST_F(CorrectCli, GzippedTraceReadsTheSame) {
  Write("step.json", kKinetoTrace);
  ASSERT_EQ(ofu::testing::RunShell(fmt::format("gzip -k '{}'", (dir_ / "step.json").string()), dir_).exit_code, 0);
  // The name does not matter: the bytes say gzip.
  std::filesystem::rename(dir_ / "step.json.gz", dir_ / "step.trace");
  const auto json = ParseJson(Ofu("correct --trace step.trace --ofu 0.5 --format json"));
  EXPECT_NEAR(json["factor"].get<double>(), kFactor, 1e-12);
  EXPECT_NEAR(json["predicted_mfu"].get<double>(), 0.5 * kFactor * kMfuScale, 1e-12);
}

TEST_F(CorrectCli, TableShowsFiguresAndAdvice) {
  Write("step.json", kKinetoTrace);
  const auto result = Ofu("correct --trace step.json --ofu 0.5");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find(fmt::format("Correction factor     {:.4f}", kFactor)), std::string::npos) << result.out;
  EXPECT_NE(result.out.find(fmt::format("Corrected OFU         {:.3f}", 0.5 * kFactor)), std::string::npos);
  EXPECT_NE(result.out.find(fmt::format("Predicted MFU (bf16)  {:.3f}", 0.5 * kFactor * kMfuScale)), std::string::npos);
  EXPECT_NE(result.out.find("H100 SXM5 (from the trace)"), std::string::npos);
  EXPECT_NE(result.out.find("N = 4097 pads to 4224 with 128-wide tiles; make N a multiple of 128"), std::string::npos);
  EXPECT_NE(result.out.find("nvjet_qqtst_128x256_128x4_1x1_v_bz_TNN"), std::string::npos);
}

TEST_F(CorrectCli, ReferencePrecisionAndOrientationChangeTheAnswer) {
  Write("step.json", kKinetoTrace);
  auto json = ParseJson(Ofu("correct --trace step.json --ofu 0.5 --reference-precision fp8 --format json"));
  EXPECT_NEAR(json["predicted_mfu"].get<double>(), 0.5 * kFactor * kMfuScale / 2, 1e-12);
  // Direct: the fp8 kernel's M is 4096 (no padding on 128) and N = 4097 on 256: 4352.
  EXPECT_TRUE(json["ofu_clock_source"].is_null());  // a figure given with --ofu names no clock
  json = ParseJson(Ofu("correct --trace step.json --tile-orientation direct --format json"));
  EXPECT_NEAR(json["factor"].get<double>(), (4096.0 + 2048.5) / (4096.0 + 2176.0), 1e-12);
  EXPECT_TRUE(json["corrected_ofu"].is_null());
}

TEST_F(CorrectCli, OfuFromARecording) {
  const std::string recording = std::string(OFU_SOURCE_DIR) + "/data/recordings/synthetic-2xh100-bf16-matmul.om";
  Write("step.json", kKinetoTrace);
  const auto report = ParseJson(Ofu(fmt::format("report --input '{}' --format json", recording)));
  const double ofu = report["overall"]["ofu"].get<double>();
  const auto json = ParseJson(Ofu(fmt::format("correct --trace step.json --input '{}' --format json", recording)));
  EXPECT_EQ(json["ofu_source"], recording);
  // Two H100 80GB HBM3: the OFU uses their measured clock model, and says so.
  EXPECT_EQ(report["overall"]["clock_source"], "measured-model");
  EXPECT_EQ(json["ofu_clock_source"], "measured-model");
  EXPECT_NEAR(json["ofu"].get<double>(), ofu, 1e-12);
  EXPECT_NEAR(json["corrected_ofu"].get<double>(), ofu * kFactor, 1e-12);
}

// The same two GEMMs as an Nsight Systems export (synthetic, written here
// with SQLite): kernels, their launches, and emit_nvtx ranges with sizes on
// the launching thread; the cluster columns say 1x1x1.
void WriteNsysExport(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  constexpr int64_t kTid = (int64_t{77} << 24) + 78;  // pid 77, tid 78
  const std::string sql = fmt::format(R"sql(
    CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO StringIds VALUES (1, 'nvjet_tst_128x128_64x4_1x1_v_bz_TNT'),
                                 (2, 'nvjet_qqtst_128x256_128x4_1x1_v_bz_TNN'),
                                 (3, 'cudaLaunchKernel');
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
      deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
      correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
      gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
      blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
      clusterX INTEGER, clusterY INTEGER, clusterZ INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
      (200000, 1000000, 0, 1, 7, 42, {pid}, 1, 1, 1024, 1, 1, 384, 1, 1, 1, 1, 1),
      (1000000, 1450000, 0, 1, 7, 43, {pid}, 2, 2, 528, 1, 1, 384, 1, 1, 1, 1, 1);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
      eventClass INTEGER NOT NULL DEFAULT 0, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL);
    INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (110000, 115000, 0, {tid}, 42, 3), (310000, 315000, 0, {tid}, 43, 3);
    CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
      text TEXT, globalTid INTEGER, textId INTEGER);
    INSERT INTO NVTX_EVENTS VALUES
      (100000, 150000, 59, NULL, 'aten::mm, seq = 1, op_id = 5, sizes = [[4096, 4096], [4096, 4096]], input_op_ids = []', {tid}, NULL),
      (300000, 350000, 59, NULL, 'aten::_scaled_mm, seq = 2, op_id = 9, sizes = [[4096, 4096], [4096, 4097], [], []], input_op_ids = []', {tid}, NULL);
  )sql",
                                      fmt::arg("pid", int64_t{77} << 24), fmt::arg("tid", kTid));
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

TEST_F(CorrectCli, NsightExportGivesTheSameFactor) {
  WriteNsysExport(dir_ / "run.sqlite");
  // The export names no GPU model here, and NVTX carries no dtypes: the fp8
  // precision comes from the kernel name, the rates from --gpu-model.
  const auto json = ParseJson(Ofu("correct --trace run.sqlite --ofu 0.5 --gpu-model h100-sxm5 --format json"));
  EXPECT_EQ(json["trace"]["format"], "nsys-sqlite");
  EXPECT_EQ(json["trace"]["kernels"], 2);
  EXPECT_EQ(json["coverage"]["corrected_kernels"], 2);
  EXPECT_NEAR(json["factor"].get<double>(), kFactor, 1e-12);
  EXPECT_NEAR(json["predicted_mfu"].get<double>(), 0.5 * kFactor * kMfuScale, 1e-12);
  EXPECT_EQ(json["wasteful"][0]["advice"], "N = 4097 pads to 4224 with 128-wide tiles; make N a multiple of 128");
}

// A real PyTorch profiler trace (AlexNet on an A100, HolisticTraceAnalysis's
// tests/data, MIT; tests/data/kineto/README.md). Its device is named
// "NVIDIA A100-PG509-200" and its ops carry no shapes. Its GEMM kernels, with
// their summed durations read from the file: ampere_sgemm_32x32_sliced1x4_tn
// x6 2621 us, cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1 x2 2069 us and
// ampere_gcgemm_64x64_nt x2 646 us on CUDA cores; the cuDNN engine
// sm80_xmma_fprop_implicit_gemm_indexed_tf32... x6 1814 us on tensor cores;
// cuBLASLt's epilogue kernel x6 39 us beside the linked GEMM ops.
// So 5336 of 7189 us of GEMM time ran on CUDA cores, and with no shapes
// nothing can be corrected (exit 4, factor null).
TEST_F(CorrectCli, RealA100TraceShowsItsGemmsRanOnCudaCores) {
  const auto result = Ofu("correct --trace '" OFU_TEST_DATA_DIR
                          "/kineto/hta-alexnet-a100.json.gz' --ofu 0.3 --format json");
  EXPECT_EQ(result.exit_code, 4) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["gpu"]["sku"], "a100");  // the model name as the trace spells it
  EXPECT_EQ(json["gpu"]["from"], "the trace");
  EXPECT_EQ(json["trace"]["kernels"], 79);
  EXPECT_EQ(json["coverage"]["gemm_kernels"], 22);
  EXPECT_EQ(json["coverage"]["simt_kernels"], 10);
  EXPECT_DOUBLE_EQ(json["coverage"]["simt_time_us"].get<double>(), 5336);
  EXPECT_DOUBLE_EQ(json["coverage"]["gemm_time_us"].get<double>(), 7189);
  EXPECT_NEAR(json["non_tensor_gemm_share"].get<double>(), 5336.0 / 7189, 1e-12);
  EXPECT_TRUE(json["factor"].is_null());
  EXPECT_NE(json["notes"].dump().find("record_shapes=True"), std::string::npos) << json["notes"];
}

// A real V100 training step in FP32 (pytorch/kineto's tb_plugin test trace,
// tests/data/kineto/README.md), recorded without shapes: its GEMMs ran on
// the CUDA cores (2 volta_sgemm and 3 cuBLAS gemmSN kernels, 13 of the GEMM
// ops' 17 us). Shapes cannot help such a trace, and V100's tensor cores take FP16
// only: the advice is fp16 autocast, never TF32 and never "record shapes"
// alone. Without --gpu-model (the trace's "Tesla V100-DGXS-32GB" is not in
// the spec database) the advice says which GPUs need fp16.
TEST_F(CorrectCli, RealV100Fp32TraceIsAdvisedMixedPrecisionNotShapes) {
  const std::string trace = OFU_TEST_DATA_DIR "/kineto/kineto-tb-plugin-gpu-metrics-v100.json";
  const auto result = Ofu("correct --trace '" + trace + "' --gpu-model v100-sxm2 --ofu 0.01 --format json");
  EXPECT_EQ(result.exit_code, 4) << result.err;  // nothing on tensor cores to correct
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["coverage"]["simt_kernels"], 5);
  // 13 of the GEMM ops' 17 us: gemmSN 3 + 2 + 2, volta_sgemm 3 + 3; the other
  // 4 us are two elementwise adds inside the ops (not GEMMs).
  EXPECT_NEAR(json["non_tensor_gemm_share"].get<double>(), 13.0 / 17, 1e-12);
  const std::string notes = json["notes"].dump();
  EXPECT_NE(notes.find("ran on the CUDA cores, not the tensor cores"), std::string::npos) << notes;
  EXPECT_NE(notes.find("Recording shapes (record_shapes=True) would not change that"), std::string::npos) << notes;
  EXPECT_NE(notes.find(R"(torch.autocast(\"cuda\", dtype=torch.float16))"), std::string::npos) << notes;
  EXPECT_NE(notes.find("allow_tf32 changes nothing here (V100 SXM2"), std::string::npos) << notes;
  EXPECT_EQ(notes.find("allow_tf32 = True"), std::string::npos) << notes;

  const auto unknown = Ofu("correct --trace '" + trace + "' --ofu 0.01");
  EXPECT_EQ(unknown.exit_code, 4) << unknown.err;
  EXPECT_NE(unknown.out.find("only fp16 autocast reaches the tensor cores"), std::string::npos) << unknown.out;
}

// --input is read as ofu report reads it: a pasted scrape's prompts and
// elisions are skipped (its GPU then has no OFU: no tensor field, exit 4),
// and --strict refuses the first such line, naming file and line (exit 2).
TEST_F(CorrectCli, StrictRefusesAPastedRecordingsStrayLines) {
  const std::string trace = OFU_TEST_DATA_DIR "/kineto/hta-alexnet-a100.json.gz";
  const std::string scrape = OFU_TEST_DATA_DIR "/scrapes/pasted-gpu-monitoring-tools-readme-quickstart.prom";
  const auto lenient = Ofu("correct --trace '" + trace + "' --input '" + scrape + "' --gpu-model a100");
  EXPECT_EQ(lenient.exit_code, 4) << lenient.err;
  EXPECT_NE(lenient.err.find("no OFU could be computed"), std::string::npos) << lenient.err;
  const auto strict = Ofu("correct --trace '" + trace + "' --input '" + scrape + "' --gpu-model a100 --strict");
  EXPECT_EQ(strict.exit_code, 2) << strict.err;
  EXPECT_NE(strict.err.find("pasted-gpu-monitoring-tools-readme-quickstart.prom:1: metric name missing"),
            std::string::npos)
      << strict.err;
}

// A real trace recorded with shapes (HolisticTraceAnalysis's
// tests/data/timeline_analysis/sampled_rank-0.json.gz, MIT; an Ampere run,
// no deviceProperties). Every tensor-core GEMM is a CUTLASS 2.x tf32 kernel.
// The expected values come from tests/data/kineto/expected_factor.py, written
// apart from the C++ code (its own linking, tile reading and padding): 386
// kernels linked to a GEMM op, 308 of them tensor-op GEMMs, factor
// 0.7245387931526568. The rest, summed from the file: 60 SIMT GEMMs
// (ampere_sgemm_*, gemv, gemmk1, sgemm_largek) 12671 us; 18 non-GEMM kernels
// inside GEMM ops (cuBLASLt epilogue x8 417 us, splitKreduce x8 100 us,
// scal_kernel x2 16 us) 533 us. The worst row by hand: aten::bmm
// [2048,606,160] x [2048,160,20] on a 64x64x32 tile, kernel M = 20 -> 64,
// kernel N = 606 -> 640, K = 160 stays.
TEST_F(CorrectCli, RealTraceWithShapesMatchesAnIndependentReading) {
  const auto result = Ofu("correct --trace '" OFU_TEST_DATA_DIR
                          "/kineto/hta-timeline-sampled-rank0.json.gz' --ofu 0.4 --format json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["trace"]["kernels"], 1154);
  const auto& coverage = json["coverage"];
  EXPECT_EQ(coverage["gemm_kernels"], 386);
  EXPECT_EQ(coverage["corrected_kernels"], 308);
  EXPECT_EQ(coverage["simt_kernels"], 60);
  EXPECT_DOUBLE_EQ(coverage["simt_time_us"].get<double>(), 12671);
  ASSERT_EQ(coverage["left_out"].size(), 1u) << coverage["left_out"];
  EXPECT_EQ(coverage["left_out"][0]["reason"], "launched by a GEMM op, but not named as a GEMM");
  EXPECT_EQ(coverage["left_out"][0]["kernels"], 18);
  EXPECT_DOUBLE_EQ(coverage["left_out"][0]["time_us"].get<double>(), 533);
  EXPECT_NEAR(json["factor"].get<double>(), 0.7245387931526568, 1e-12);
  EXPECT_NEAR(json["corrected_ofu"].get<double>(), 0.4 * 0.7245387931526568, 1e-12);

  const auto& worst = json["wasteful"][0];
  EXPECT_EQ(worst["op"], "aten::bmm");
  EXPECT_EQ(worst["batch"], 2048);
  EXPECT_EQ(worst["m"], 606);
  EXPECT_EQ(worst["n"], 20);
  EXPECT_EQ(worst["k"], 160);
  EXPECT_EQ(worst["launches"], 4);
  EXPECT_EQ(worst["kernel_m"]["padded"], 64);
  EXPECT_EQ(worst["kernel_n"]["padded"], 640);
  EXPECT_EQ(worst["kernel_k"]["padded"], 160);
  // Ampere kernels have no clusters: nothing about clusters was assumed.
  EXPECT_EQ(json["notes"].dump().find("cluster"), std::string::npos) << json["notes"];
}

// Two ranks of the real run above (HolisticTraceAnalysis's
// tests/data/trace_filter/sampled_rank-0 and -1, MIT; rank 0 is the file
// above) as one job: a directory of per-rank traces, or --trace twice.
// expected_factor.py over both files: 773 kernels linked, 616 tensor-op
// GEMMs, factor 0.7234732534421487; 1154 + 1104 kernels.
TEST_F(CorrectCli, ADirectoryOfRankTracesIsCorrectedAsOneJob) {
  const std::filesystem::path ranks = dir_ / "ranks";
  std::filesystem::create_directories(ranks);
  for (const char* rank : {"hta-timeline-sampled-rank0.json.gz", "hta-timeline-sampled-rank1.json.gz"}) {
    std::filesystem::copy_file(std::filesystem::path(OFU_TEST_DATA_DIR) / "kineto" / rank, ranks / rank);
  }
  Write("ranks/README.txt", "not a trace: skipped\n");
  const auto check = [](const ofu::testing::CommandResult& result) {
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json["trace"]["kernels"], 1154 + 1104);
    EXPECT_EQ(json["coverage"]["corrected_kernels"], 616);
    EXPECT_NEAR(json["factor"].get<double>(), 0.7234732534421487, 1e-12);
    // Each rank's notes say which rank they are about.
    EXPECT_NE(json["notes"].dump().find("hta-timeline-sampled-rank1.json.gz: 387 of 1104 kernels are linked"),
              std::string::npos)
        << json["notes"];
  };
  check(Ofu("correct --trace '" + ranks.string() + "' --ofu 0.4 --format json"));
  check(Ofu("correct --trace '" + (ranks / "hta-timeline-sampled-rank0.json.gz").string() + "' --trace '" +
            (ranks / "hta-timeline-sampled-rank1.json.gz").string() + "' --ofu 0.4 --format json"));

  std::filesystem::create_directories(dir_ / "empty");
  const auto empty = Ofu("correct --trace '" + (dir_ / "empty").string() + "'");
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("no trace files in it"), std::string::npos) << empty.err;
}

// A real trace whose GEMMs mostly run inside CUDA graphs (HolisticTraceAnalysis's
// tests/data/negative_queue_length_values_check/rank0.json.gz, MIT; an
// "NVIDIA A100-SXM4-80GB"). Counted from the file with Python's json module:
// of its 86 CUTLASS tensor-op kernels, 55 (98174 us) carry the correlation of
// a cudaGraphLaunch and 11 (19569 us) that of no launch event at all; the
// 20 linked to a GEMM op give factor 0.9685828877005348
// (tests/data/kineto/expected_factor.py).
TEST_F(CorrectCli, RealTraceSaysWhichGemmsCudaGraphsHid) {
  const auto result = Ofu("correct --trace '" OFU_TEST_DATA_DIR
                          "/kineto/hta-cuda-graphs-a100.json.gz' --ofu 0.4 --format json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["gpu"]["sku"], "a100");
  EXPECT_EQ(json["coverage"]["corrected_kernels"], 20);
  EXPECT_NEAR(json["factor"].get<double>(), 0.9685828877005348, 1e-12);
  const auto& left_out = json["coverage"]["left_out"];
  ASSERT_GE(left_out.size(), 2u) << left_out;
  EXPECT_EQ(left_out[0]["reason"], "replayed from a CUDA graph, so no op or shape");
  EXPECT_EQ(left_out[0]["kernels"], 55);
  EXPECT_DOUBLE_EQ(left_out[0]["time_us"].get<double>(), 98174);
  EXPECT_EQ(left_out[1]["reason"], "its launch is not in the trace, so no op or shape");
  EXPECT_EQ(left_out[1]["kernels"], 11);
  EXPECT_DOUBLE_EQ(left_out[1]["time_us"].get<double>(), 19569);
  bool advised = false;
  for (const auto& note : json["notes"]) {
    advised = advised ||
              note.get<std::string>().rfind("55 tensor-core GEMM kernel(s) (98.2 ms) were replayed from CUDA graphs",
                                            0) == 0;
  }
  EXPECT_TRUE(advised) << json["notes"];
}

// --training-log beside the prediction. The trace (the real A100 one above,
// factor 0.9685828877005348, all tf32: mfu_scale 156/312 = 0.5) and the log
// (karpathy/nanoGPT#178, median 16.605 % over 312 TFLOPS) come from
// different runs: pairing them only checks the arithmetic. On the trace's
// A100 the log's peak is the GPU's own: predicted 0.3 x 0.96858... x 0.5,
// reported 0.16605. With --gpu-model h100-sxm5 the log's MFU is rescaled to
// the H100's 989.4 TFLOPS.
TEST_F(CorrectCli, TrainingLogSetsTheReportedMfuBesideThePredictedOne) {
  const std::string trace = OFU_TEST_DATA_DIR "/kineto/hta-cuda-graphs-a100.json.gz";
  const std::string log = OFU_TEST_DATA_DIR "/training-logs/nanogpt-178.log";
  auto result = Ofu("correct --trace '" + trace + "' --ofu 0.3 --training-log '" + log + "' --format json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  auto json = nlohmann::json::parse(result.out);
  const double predicted = 0.3 * 0.9685828877005348 * 0.5;
  EXPECT_NEAR(json["predicted_mfu"].get<double>(), predicted, 1e-12);
  const auto& reported = json["reported"];
  EXPECT_EQ(reported["format"], "nanoGPT");
  EXPECT_EQ(reported["steps"], 24);
  EXPECT_NEAR(reported["mfu"].get<double>(), 0.16605, 1e-12);
  EXPECT_NEAR(reported["ratio"].get<double>(), 0.16605 / predicted, 1e-9);
  EXPECT_EQ(reported["flag"], "ok");  // 1.14x, within the 15 % tolerance

  result = Ofu("correct --trace '" + trace + "' --ofu 0.3 --gpu-model h100-sxm5 --training-log '" + log +
               "' --format json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  json = nlohmann::json::parse(result.out);
  EXPECT_NEAR(json["reported"]["mfu"].get<double>(), 0.16605 * 312 / 989.4, 1e-12);
  EXPECT_NEAR(json["reported"]["logged_mfu"].get<double>(), 0.16605, 1e-12);

  const auto table = Ofu("correct --trace '" + trace + "' --ofu 0.3 --training-log '" + log + "'");
  EXPECT_NE(table.out.find("Reported MFU (bf16)   0.166  (nanoGPT log "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("Reported / predicted  1.14x  ok: "), std::string::npos) << table.out;

  // A log with no MFU (karpathy/llm.c#796, every step "-100.0%"): refused,
  // exit 2 naming it, and the trace's answer is still printed in full with
  // a note (issue 30: a refused log hid it).
  const auto bad = Ofu("correct --trace '" + trace +
                       "' --ofu 0.3 --format json --training-log '" OFU_TEST_DATA_DIR
                       "/training-logs/llmc-796-blackwell.log'");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("llmc-796-blackwell.log: every MFU the log prints"), std::string::npos) << bad.err;
  json = nlohmann::json::parse(bad.out);
  EXPECT_NEAR(json["predicted_mfu"].get<double>(), predicted, 1e-12);
  EXPECT_TRUE(json["reported"].is_null());
  EXPECT_NE(json["training_log_error"].get<std::string>().find("every MFU the log prints (11 step(s)) is absent"),
            std::string::npos);
  EXPECT_NE(json["notes"].back().get<std::string>().find("--training-log was refused"), std::string::npos);
  const auto bad_table = Ofu("correct --trace '" + trace +
                             "' --ofu 0.3 --training-log '" OFU_TEST_DATA_DIR "/training-logs/no-such.log'");
  EXPECT_EQ(bad_table.exit_code, 2);
  EXPECT_NE(bad_table.out.find("Predicted MFU (bf16)  0.145"), std::string::npos) << bad_table.out;
  EXPECT_NE(bad_table.out.find("--training-log was refused"), std::string::npos) << bad_table.out;
}

// Megatron-LM prints TFLOP/s per GPU (NVIDIA/Megatron-LM#756, median 228.3
// over iterations 29-31): ofu divides it by the GPU's peak of
// --reference-precision and says which. The trace's A100 (bf16 312 TFLOPS):
// 228.3 / 312; with --gpu-model h100-sxm5 (989.4): 228.3 / 989.4. Pairing
// the log with this trace checks only the arithmetic (different runs).
TEST_F(CorrectCli, TrainingLogOfTflopsPerGpuIsDividedByTheNamedPeak) {
  const std::string trace = OFU_TEST_DATA_DIR "/kineto/hta-cuda-graphs-a100.json.gz";
  const std::string log = OFU_TEST_DATA_DIR "/training-logs/megatron-756-h100.log";
  auto result = Ofu("correct --trace '" + trace + "' --ofu 0.3 --training-log '" + log + "' --format json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  auto json = nlohmann::json::parse(result.out);
  const auto& reported = json["reported"];
  EXPECT_EQ(reported["format"], "Megatron-LM");
  EXPECT_EQ(reported["steps"], 3);
  EXPECT_DOUBLE_EQ(reported["flops_per_gpu"].get<double>(), 228.3e12);
  EXPECT_DOUBLE_EQ(reported["gpu_peak_flops"].get<double>(), 312e12);
  EXPECT_EQ(reported["gpu"], "a100");
  EXPECT_EQ(reported["precision"], "bf16");
  EXPECT_NEAR(reported["mfu"].get<double>(), 228.3 / 312, 1e-12);
  bool stated = false;
  for (const auto& note : json["notes"]) {
    stated = stated || note.get<std::string>() ==
                           "the log prints 228.3 TFLOP/s per GPU; over a100 (from the trace)'s bf16 peak (312.0 "
                           "TFLOPS) that is MFU 0.7317";
  }
  EXPECT_TRUE(stated) << json["notes"];

  result = Ofu("correct --trace '" + trace + "' --ofu 0.3 --gpu-model h100-sxm5 --training-log '" + log +
               "' --format json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  json = nlohmann::json::parse(result.out);
  EXPECT_NEAR(json["reported"]["mfu"].get<double>(), 228.3 / 989.4, 1e-12);
  EXPECT_EQ(json["reported"]["gpu"], "h100-sxm5");

  // prime-rl#20: "mfu: 337.59" is flagged and left out, 42.46 is used.
  result = Ofu("correct --trace '" + trace +
               "' --ofu 0.3 --training-log '" OFU_TEST_DATA_DIR "/training-logs/prime-rl-20.log'");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("Reported MFU (bf16)   0.425  (prime-rl log "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("1 impossible value(s) of the training log left out: "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("prime-rl-20.log:1: MFU 337.59 % is above 100 %: impossible, left out"), std::string::npos)
      << result.out;
}

// The trace's GEMM time on CUDA cores beside a recording's FP32 pipe (issue
// 18): the real A100 trace above (5336 of 7189 us on CUDA cores) with a
// SYNTHETIC A100 recording (written here, not measured): tensor pipe 0.02,
// FP32 pipe 0.7 at 1410 MHz, 60 s; then the same without the FP32 counter.
TEST_F(CorrectCli, RecordingsFp32PipeStandsBesideTheCudaCoreGemmShare) {
  auto recording = [](bool with_fp32) {
    std::string text = "# SYNTHETIC recording written by tests/cli/correct_cli_test.cc, not measured on a GPU\n";
    const std::string labels = R"(gpu="0",UUID="GPU-simt-0",modelName="NVIDIA A100-SXM4-80GB",Hostname="node-a")";
    for (int t = 1; t <= 60; ++t) {
      const int ts = 1699999980 + t;
      text += fmt::format("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{}}} 0.02 {}\n", labels, ts);
      if (with_fp32) text += fmt::format("DCGM_FI_PROF_PIPE_FP32_ACTIVE{{{}}} 0.7 {}\n", labels, ts);
      text += fmt::format("DCGM_FI_DEV_SM_CLOCK{{{}}} 1410 {}\n", labels, ts);
    }
    return text;
  };
  const std::string trace = OFU_TEST_DATA_DIR "/kineto/hta-alexnet-a100.json.gz";
  Write("fp32.prom", recording(true));
  const auto json = nlohmann::json::parse(Ofu("correct --trace '" + trace + "' --input fp32.prom --format json").out);
  EXPECT_NEAR(json["fp32_pipe_active"].get<double>(), 0.7, 1e-12);
  EXPECT_NEAR(json["non_tensor_gemm_share"].get<double>(), 5336.0 / 7189, 1e-12);
  const auto table = Ofu("correct --trace '" + trace + "' --input fp32.prom");
  EXPECT_NE(table.out.find("FP32 pipe (recording) 70.0 % active  (busy, and most GEMM time is on CUDA cores: FP32 "
                           "GEMMs; TF32 or bf16/fp16 autocast"),
            std::string::npos)
      << table.out;
  // Rated as a V100, whose tensor cores take FP16 only: no TF32 or bf16 to offer.
  const auto v100 = Ofu("correct --trace '" + trace + "' --input fp32.prom --gpu-model v100-sxm2");
  EXPECT_NE(v100.out.find("FP32 pipe (recording) 70.0 % active  (busy, and most GEMM time is on CUDA cores: FP32 "
                          "GEMMs; this GPU's tensor cores take FP16 only, so fp16 autocast moves them there)"),
            std::string::npos)
      << v100.out;

  Write("no-fp32.prom", recording(false));
  const auto without =
      nlohmann::json::parse(Ofu("correct --trace '" + trace + "' --input no-fp32.prom --format json").out);
  EXPECT_TRUE(without["fp32_pipe_active"].is_null()) << "absent, never 0";
  EXPECT_EQ(Ofu("correct --trace '" + trace + "' --input no-fp32.prom").out.find("FP32 pipe"), std::string::npos);
}

TEST_F(CorrectCli, ErrorsAndExitCodes) {
  // A truncated trace: exit 2 naming the file and the byte offset.
  const std::string text = kKinetoTrace;
  Write("cut.json", text.substr(0, 400));
  auto result = Ofu("correct --trace cut.json");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("cut.json: byte "), std::string::npos) << result.err;
  EXPECT_TRUE(result.out.empty());

  result = Ofu("correct --trace missing.json");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("missing.json"), std::string::npos);

  // No GEMM at all: nothing to correct, exit 4, and the factor is null, not 1.
  Write("none.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "softmax_kernel", "ts": 1, "dur": 2,
                         "args": {"device": 0}}]})");
  result = Ofu("correct --trace none.json --format json");
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_TRUE(nlohmann::json::parse(result.out)["factor"].is_null());

  Write("step.json", kKinetoTrace);
  EXPECT_EQ(Ofu("correct --trace step.json --ofu 0.5 --input x.om").exit_code, 1);
  EXPECT_EQ(Ofu("correct --trace step.json --gpu-model no-such-gpu").exit_code, 3);
  EXPECT_EQ(Ofu("correct --trace step.json --reference-precision fp64").exit_code, 1);
}

}  // namespace

namespace {

// The real traces of the first H100 run (tests/data/gpu-results/, not
// synthetic): the pad-to-8 finding with its dimensions and cost, and none
// on the training step.
const std::string kH100 = std::string(OFU_TEST_DATA_DIR) + "/gpu-results/2026-11-26-h100-sxm5";

TEST_F(CorrectCli, ARaggedH100TracePrintsThePadToEightFinding) {
  // The phase's OFU from stage-c-ragged.csv; its measured MFU was 0.1380.
  auto result = Ofu("correct --trace '" + kH100 +
                    "/ragged/trace-bf16-4097x1000x8191.json.gz' --ofu 0.31137530858227397");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("GEMMs on kernels built for an older architecture"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("M = 4097 and K = 8191 are not multiples of 8, so cuBLAS ran a pre-Hopper kernel "
                            "(sm75 s1688 bf16)"),
            std::string::npos)
      << result.out;
  // The cost: all of its tensor time, 51.3 % of it on a native kernel (100 % x 0.513).
  EXPECT_NE(result.out.find("this GEMM's 100.0 % of tensor time would be 51.3 % on a native kernel"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("Pad M to 4104 and K to 8192"), std::string::npos) << result.out;
  // 0.31137530858227397 x 0.9472008907433712 (tiles) x 0.513 = 0.1513 (0.1395 with the
  // figure fitted on NVML's clock, 0.473). This --ofu is on NVML's clock (1980 MHz) while
  // the figure is on the SMs' (about 1809 MHz in this state, measured in
  // docs/results/2026-11-27-clock-truth), so it reads 1.3 pp above the MFU (0.1380).
  EXPECT_NE(result.out.find("Predicted MFU (bf16)  0.151"), std::string::npos) << result.out;

  auto json_result = Ofu("correct --format json --trace '" + kH100 +
                         "/ragged/trace-bf16-4097x1000x8191.json.gz' --ofu 0.31137530858227397");
  ASSERT_EQ(json_result.exit_code, 0) << json_result.err;
  const auto json = nlohmann::json::parse(json_result.out);
  EXPECT_NEAR(json["predicted_mfu"].get<double>(), 0.31137530858227397 * 0.9472008907433712 * 0.513, 1e-9);
  ASSERT_EQ(json["pre_native"].size(), 1u);
  EXPECT_EQ(json["pre_native"][0]["unaligned"], nlohmann::json::array({"M = 4097", "K = 8191"}));
  EXPECT_DOUBLE_EQ(json["pre_native"][0]["relative_throughput"].get<double>(), 0.513);
}

TEST_F(CorrectCli, TheH100TrainingTracePrintsNoPreNativeFinding) {
  auto result = Ofu("correct --trace '" + kH100 + "/train/trace.json.gz' --ofu 0.4941877687298037");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.find("built for an older architecture"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("pre-native"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("Correction factor     0.9916"), std::string::npos) << result.out;
}

// Real traces of an AMD GPU (AMD-AGI/TraceLens's MI300X) and of the CUPTI
// range profiler (HTA's A100): before this change the first asked for
// --gpu-model (and took h100-sxm5 without comment), the second blamed lost
// CUPTI records and said "no GEMM kernels in the trace".
TEST_F(CorrectCli, AnAmdTraceIsRefusedWithTheDeviceNamed) {
  const std::string trace = OFU_TEST_DATA_DIR "/kineto/amd-tracelens-mi300x-bert-small-subset.json.gz";
  const auto plain = Ofu("correct --trace '" + trace + "'");
  EXPECT_EQ(plain.exit_code, 4) << plain.err;
  EXPECT_NE(plain.err.find("recorded on AMD Instinct MI300X VF (AMD, not NVIDIA: deviceProperties name"),
            std::string::npos)
      << plain.err;
  EXPECT_NE(plain.err.find("defined for NVIDIA tensor cores"), std::string::npos) << plain.err;
  const auto flagged = Ofu("correct --gpu-model h100-sxm5 --trace '" + trace + "'");
  EXPECT_EQ(flagged.exit_code, 1) << flagged.err;
  EXPECT_NE(flagged.err.find("--gpu-model h100-sxm5: "), std::string::npos) << flagged.err;
  EXPECT_NE(flagged.err.find("an NVIDIA model cannot stand for it"), std::string::npos) << flagged.err;
}

TEST_F(CorrectCli, ARangeProfilerTraceSaysWhatItHolds) {
  const auto result = Ofu("correct --format json --trace '" OFU_TEST_DATA_DIR
                          "/kineto/hta-cupti-range-profiler-a100-subset.json.gz'");
  EXPECT_EQ(result.exit_code, 4) << result.err;  // nothing to correct
  EXPECT_NE(result.out.find("CUPTI's range profiler, not as kernel activity: 77 records"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("15 of its 77 CUPTI range-profiler records name GEMM kernels"), std::string::npos)
      << result.out;
  EXPECT_EQ(result.out.find("no GEMM kernels"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("were lost"), std::string::npos) << result.out;
}

}  // namespace
