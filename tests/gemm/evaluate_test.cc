// MFU, OFU, padding correction and tile check of one case, against values
// worked out by hand for an H100 SXM5 (989.4 TFLOP/s bf16 on 132 SMs at
// 4096 FLOP/clk, so f_spec = 989.4e6 / (132 * 4096) = 1829.97 MHz, not
// quite the 1830 MHz usually quoted).
#include "ofu/gemm/evaluate.h"

#include <gtest/gtest.h>

#include <utility>

namespace ofu::gemm {
namespace {

using kernels::Precision;

const GpuSpec& H100() {
  static const GpuSpecDatabase db = GpuSpecDatabase::Embedded().value();
  return *db.Lookup("h100-sxm5").value();
}

CaseRun MakeRun(int64_t m, int64_t n, int64_t k, Precision precision) {
  CaseRun run;
  run.gemm_case.m = m;
  run.gemm_case.n = n;
  run.gemm_case.k = k;
  run.gemm_case.precision = precision;
  run.gpu_model = "NVIDIA H100 80GB HBM3";
  run.measurement.iterations = 1000;
  run.measurement.elapsed_s = 2.0;
  return run;
}

const double kSpecMhz = 989.4e6 / (132.0 * 4096.0);

CounterWindow Window(double active, double source_mhz, double point_mhz, double oversampled_mhz, bool exact = false) {
  CounterWindow w;
  w.tensor_active = active;
  w.source_clock_mhz = source_mhz;
  w.exact_cycles = exact;
  w.point_clock_mhz = point_mhz;
  w.oversampled_clock_mhz = oversampled_mhz;
  return w;
}

CounterWindow TimedWindow(double start_s, double end_s) {
  CounterWindow w = Window(0.5, kSpecMhz, kSpecMhz, kSpecMhz);
  w.start_s = start_s;
  w.end_s = end_s;
  return w;
}

// SYNTHETIC: a 1000³ bf16 loop of 1000 iterations in 2 s whose first 20 %
// (0.4 s) runs faster than the rest, the way a loop starts at a high clock
// before the power limit pulls it down. Host clock from 100 s:
//   100.0 s: 0     100.4 s: 300 (750 it/s)
//   101.2 s: 650   102.0 s: 1000 (437.5 it/s from 100.4 s on)
CaseRun FastStartLoop() {
  CaseRun run = MakeRun(1000, 1000, 1000, Precision::kBf16);
  run.measurement.checkpoints = {{100.0, 0}, {100.4, 300}, {101.2, 650}, {102.0, 1000}};
  return run;
}

TEST(EvaluateTest, TrueMfuFromTheTimedLoop) {
  // 2 * 4096^3 = 137438953472 FLOP per iteration; x1000 / 2 s = 68.719476736
  // TFLOP/s; / 989.4 = 0.0694557072...
  auto row = EvaluateCase(MakeRun(4096, 4096, 4096, Precision::kBf16), H100());
  ASSERT_TRUE(row.ok()) << row.error().message;
  EXPECT_NEAR(row->achieved_tflops, 68.719476736, 1e-9);
  EXPECT_DOUBLE_EQ(*row->peak_tflops, 989.4);
  EXPECT_NEAR(*row->mfu, 0.0694557072, 1e-9);
  EXPECT_DOUBLE_EQ(row->time_per_iteration_us, 2000.0);
  // No windows: every OFU absent, never 0.
  EXPECT_FALSE(row->ofu_raw.has_value());
  EXPECT_FALSE(row->err_raw_pp.has_value());
  EXPECT_NE(row->note.find("no counter window"), std::string::npos);
}

TEST(EvaluateTest, OfuPerClockBasisAndPaddingCorrection) {
  CaseRun run = MakeRun(1000, 1000, 1000, Precision::kBf16);
  // Two windows at A = 0.5 and 0.7. Source clock f_spec: OFU 0.5 and 0.7,
  // mean 0.6. Point clock 0.9 f_spec: 0.45 and 0.63, mean 0.54. Oversampled
  // 0.8 f_spec: mean 0.48.
  run.measurement.windows = {Window(0.5, kSpecMhz, 0.9 * kSpecMhz, 0.8 * kSpecMhz),
                             Window(0.7, kSpecMhz, 0.9 * kSpecMhz, 0.8 * kSpecMhz)};
  // 2e9 FLOP x 1000 / 2 s = 1 TFLOP/s; MFU = 1 / 989.4.
  run.kernel_name = "nvjet_tst_128x256_64x4_2x1_v_bz_TNT";
  auto row = EvaluateCase(run, H100());
  ASSERT_TRUE(row.ok()) << row.error().message;
  const double mfu = 1.0 / 989.4;
  EXPECT_NEAR(*row->mfu, mfu, 1e-12);
  EXPECT_NEAR(*row->tensor_active, 0.6, 1e-12);
  EXPECT_NEAR(*row->ofu_raw, 0.6, 1e-12);
  EXPECT_NEAR(*row->ofu_point, 0.54, 1e-12);
  EXPECT_NEAR(*row->ofu_oversampled, 0.48, 1e-12);
  EXPECT_FALSE(row->ofu_exact.has_value());  // no exact-cycle window
  EXPECT_NEAR(*row->err_raw_pp, (0.6 - mfu) * 100, 1e-9);
  EXPECT_NEAR(*row->err_point_pp, (0.54 - mfu) * 100, 1e-9);

  // The name's tile 128x256, K-tile 64, cluster 2x1: M pads to a multiple
  // of 256 (1024), N of 256 (1024), K of 64 (1024):
  // U/E = 1000^3 / 1024^3 = 0.9313225746154785.
  EXPECT_EQ(row->kernel_family, "nvjet");
  EXPECT_EQ(row->name_tiling, (Tiling{128, 256, 64, 4, 2, 1}));
  EXPECT_EQ(row->correction_tiling, "name");
  EXPECT_NEAR(*row->padding_factor, 0.9313225746154785, 1e-15);
  EXPECT_NEAR(*row->ofu_corrected, 0.6 * 0.9313225746154785, 1e-12);
  EXPECT_NEAR(*row->err_corrected_pp, (0.6 * 0.9313225746154785 - mfu) * 100, 1e-9);
  EXPECT_EQ(row->tile_check, TileCheck::kUnknown);  // the algorithm gave nothing
}

TEST(EvaluateTest, MfuOverTheWindowsSpanNotTheWholeLoop) {
  // Windows [100.5, 101.2] and [101.2, 101.9] cover only the slower 80 %.
  // Iterations by 100.5 s: 300 + (0.1 / 0.8) * 350 = 343.75; by 101.9 s:
  // 650 + (0.7 / 0.8) * 350 = 956.25. So 612.5 iterations in 1.4 s =
  // 437.5 it/s x 2e9 FLOP = 0.875 TFLOP/s; MFU = 0.875 / 989.4 =
  // 8.8437436830...e-4. The whole loop would give 1 / 989.4 = 1.0107e-3.
  CaseRun run = FastStartLoop();
  run.measurement.windows = {TimedWindow(100.5, 101.2), TimedWindow(101.2, 101.9)};
  auto row = EvaluateCase(run, H100());
  ASSERT_TRUE(row.ok()) << row.error().message;
  EXPECT_NEAR(row->achieved_tflops, 0.875, 1e-12);
  EXPECT_NEAR(*row->mfu, 0.875 / 989.4, 1e-15);
  EXPECT_NEAR(*row->mfu_span_s, 1.4, 1e-12);
  // The loop's own figures stay the whole loop's.
  EXPECT_EQ(row->iterations, 1000);
  EXPECT_DOUBLE_EQ(row->elapsed_s, 2.0);
  EXPECT_DOUBLE_EQ(row->time_per_iteration_us, 2000.0);
  // OFU 0.5 (A = 0.5 at f_spec) against the span's MFU.
  EXPECT_NEAR(*row->err_raw_pp, (0.5 - 0.875 / 989.4) * 100, 1e-9);
  EXPECT_EQ(row->note.find("whole loop"), std::string::npos) << row->note;
}

TEST(EvaluateTest, MfuFallsBackToTheWholeLoopAndSaysWhy) {
  // Whole loop: 2e9 FLOP x 1000 / 2 s = 1 TFLOP/s, MFU 1 / 989.4.
  const double whole = 1.0 / 989.4;
  {
    CaseRun run = FastStartLoop();  // windows without times
    run.measurement.windows = {Window(0.5, kSpecMhz, kSpecMhz, kSpecMhz)};
    auto row = EvaluateCase(run, H100());
    ASSERT_TRUE(row.ok());
    EXPECT_NEAR(*row->mfu, whole, 1e-15);
    EXPECT_FALSE(row->mfu_span_s.has_value());
    EXPECT_NE(row->note.find("MFU over the whole loop, not the windows' span: a window has no times"),
              std::string::npos)
        << row->note;
  }
  {
    CaseRun run = FastStartLoop();  // one checkpoint is too few
    run.measurement.checkpoints.resize(1);
    run.measurement.windows = {TimedWindow(100.5, 101.2)};
    auto row = EvaluateCase(run, H100());
    ASSERT_TRUE(row.ok());
    EXPECT_NEAR(*row->mfu, whole, 1e-15);
    EXPECT_NE(row->note.find("no checkpoints"), std::string::npos) << row->note;
  }
  {
    CaseRun run = FastStartLoop();  // a window ending after the last checkpoint
    run.measurement.windows = {TimedWindow(101.5, 102.1)};
    auto row = EvaluateCase(run, H100());
    ASSERT_TRUE(row.ok());
    EXPECT_NEAR(*row->mfu, whole, 1e-15);
    EXPECT_NE(row->note.find("not inside the checkpoints"), std::string::npos) << row->note;
  }
  {
    CaseRun run = FastStartLoop();  // checkpoints out of order
    std::swap(run.measurement.checkpoints[1], run.measurement.checkpoints[2]);
    run.measurement.windows = {TimedWindow(100.5, 101.2)};
    auto row = EvaluateCase(run, H100());
    ASSERT_TRUE(row.ok());
    EXPECT_NEAR(*row->mfu, whole, 1e-15);
    EXPECT_NE(row->note.find("out of order"), std::string::npos) << row->note;
  }
}

TEST(EvaluateTest, ExactCycleOfuOnlyWhenEveryWindowIsExact) {
  CaseRun run = MakeRun(1024, 1024, 1024, Precision::kBf16);
  run.measurement.windows = {Window(0.5, kSpecMhz, kSpecMhz, kSpecMhz, true),
                             Window(0.5, kSpecMhz, kSpecMhz, kSpecMhz, true)};
  auto exact = EvaluateCase(run, H100());
  ASSERT_TRUE(exact.ok());
  EXPECT_NEAR(*exact->ofu_exact, 0.5, 1e-12);
  run.measurement.windows[1].exact_cycles = false;
  auto mixed = EvaluateCase(run, H100());
  ASSERT_TRUE(mixed.ok());
  EXPECT_FALSE(mixed->ofu_exact.has_value());
  // A window without tensor activity makes the OFU absent, not a mean of the rest.
  run.measurement.windows[1].tensor_active.reset();
  auto gap = EvaluateCase(run, H100());
  ASSERT_TRUE(gap.ok());
  EXPECT_FALSE(gap->ofu_raw.has_value());
}

// The SMs' own clock over the loop, from the probe launched before and after
// it (clock_probe.h), beside NVML's: SYNTHETIC records, 1 ms apart, two SMs
// at 1321 and 1323 MHz (median 1322); NVML's oversampled clock 1454 MHz,
// tensor 0.9. NVML / run = 1454 / 1322 = 1.09985; OFU with the SMs' clock
// 0.9 x 1322 / 1829.945 = 0.650186.
TEST(EvaluateTest, TheSmsOwnClockBesideNvmls) {
  CaseRun run = MakeRun(1000, 1000, 1000, Precision::kBf16);
  run.measurement.windows = {Window(0.9, 1454, 1454, 1454)};
  run.measurement.probes = {{{0, 0, 0}, {1, 0, 0}}, {{0, 1'321'000, 1'000'000}, {1, 1'323'000, 1'000'000}}};
  auto row = EvaluateCase(run, H100());
  ASSERT_TRUE(row.ok()) << row.error().message;
  EXPECT_DOUBLE_EQ(*row->sm_clock_run_mhz, 1322);
  EXPECT_DOUBLE_EQ(*row->sm_clock_run_min_mhz, 1321);
  EXPECT_DOUBLE_EQ(*row->sm_clock_run_max_mhz, 1323);
  EXPECT_NEAR(*row->nvml_over_run, 1454.0 / 1322, 1e-12);
  EXPECT_NEAR(*row->ofu_run, 0.9 * 1322 / kSpecMhz, 1e-12);
  EXPECT_NEAR(*row->err_run_pp, (*row->ofu_run - *row->mfu) * 100, 1e-9);

  // Without the probe: absent, never 0; with a probe that saw no SM twice: a note.
  run.measurement.probes.clear();
  auto none = EvaluateCase(run, H100());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->sm_clock_run_mhz.has_value());
  EXPECT_FALSE(none->ofu_run.has_value());
  run.measurement.probes = {{{0, 0, 0}}, {{1, 5, 5}}};
  auto broken = EvaluateCase(run, H100());
  ASSERT_TRUE(broken.ok());
  EXPECT_FALSE(broken->sm_clock_run_mhz.has_value());
  EXPECT_NE(broken->note.find("no SM clock from the probe"), std::string::npos) << broken->note;
}

TEST(EvaluateTest, AlgorithmTileWhenTheNameHasNone) {
  CaseRun run = MakeRun(100, 1000, 1024, Precision::kBf16);
  run.algorithm_tiling = Tiling{128, 256, 64, 3, 1, 1};
  auto row = EvaluateCase(run, H100());
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->correction_tiling, "algorithm");
  // M 100 -> 128, N 1000 -> 1024, K 1024: 100*1000*1024 / (128*1024*1024).
  EXPECT_NEAR(*row->padding_factor, 0.762939453125, 1e-15);
}

TEST(EvaluateTest, Fp32SimtHasNoTensorPeak) {
  auto row = EvaluateCase(MakeRun(2048, 2048, 2048, Precision::kFp32), H100());
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(row->mfu.has_value());
  EXPECT_GT(row->achieved_tflops, 0);
  EXPECT_FALSE(PeakTflops(H100(), Precision::kFp4).has_value());  // Hopper has no fp4
  EXPECT_DOUBLE_EQ(*PeakTflops(H100(), Precision::kFp8), 1979);
}

TEST(EvaluateTest, RejectsAnEmptyLoop) {
  CaseRun run = MakeRun(512, 512, 512, Precision::kBf16);
  run.measurement.iterations = 0;
  EXPECT_FALSE(EvaluateCase(run, H100()).ok());
}

TEST(TileCheckTest, ComparesAlgorithmAndName) {
  const Tiling name{128, 256, 64, 4, 2, 1};
  EXPECT_EQ(CompareTiling(Tiling{128, 256, 64, 4, 2, 1}, name), TileCheck::kAgree);
  EXPECT_EQ(CompareTiling(Tiling{128, 256, std::nullopt, std::nullopt, std::nullopt, std::nullopt}, name),
            TileCheck::kAgree);
  EXPECT_EQ(CompareTiling(Tiling{256, 128, 64, 4, 1, 2}, name), TileCheck::kSwapped);
  EXPECT_EQ(CompareTiling(Tiling{64, 256, 64, 4, 2, 1}, name), TileCheck::kDisagree);
  EXPECT_EQ(CompareTiling(Tiling{128, 256, 64, 4, 1, 1}, name), TileCheck::kDisagree);  // cluster differs
  EXPECT_EQ(CompareTiling(Tiling{}, name), TileCheck::kUnknown);
}

}  // namespace
}  // namespace ofu::gemm

namespace ofu::gemm {
namespace {

// The kernel family's throughput in the corrected OFU: a kernel built for
// Turing on an H100 (the name and figure of docs/results/2026-11-26-h100-sxm5,
// stage B's 4097^3 bf16 row; the window values here are SYNTHETIC).
TEST(EvaluateTest, APreHopperKernelCountsAtItsMeasuredThroughput) {
  const kernels::KernelThroughputTable table = kernels::KernelThroughputTable::Embedded().value();
  CaseRun run = MakeRun(4096, 4096, 4096, Precision::kBf16);
  run.measurement.windows = {Window(0.4, kSpecMhz, kSpecMhz, kSpecMhz)};
  run.kernel_name = "cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_tn_align1";
  auto row = EvaluateCase(run, H100(), &table);
  ASSERT_TRUE(row.ok()) << row.error().message;
  EXPECT_DOUBLE_EQ(*row->padding_factor, 1.0);  // 4096 is a multiple of 128
  EXPECT_DOUBLE_EQ(*row->throughput_factor, 0.513);
  EXPECT_NEAR(*row->ofu_corrected, 0.4 * 0.513, 1e-12);

  // Without the table (or for a native kernel) the factor is 1.
  auto without = EvaluateCase(run, H100());
  ASSERT_TRUE(without.ok());
  EXPECT_FALSE(without->throughput_factor.has_value());
  EXPECT_NEAR(*without->ofu_corrected, 0.4, 1e-12);
  run.kernel_name = "nvjet_tst_128x256_64x4_2x1_v_bz_TNT";
  auto native = EvaluateCase(run, H100(), &table);
  ASSERT_TRUE(native.ok());
  EXPECT_DOUBLE_EQ(*native->throughput_factor, 1.0);

  // A pre-Hopper family nobody measured: no factor, and a note that says so.
  // (sm80 s16816 was this example until the H200 run measured it: 0.667.)
  run.kernel_name = "volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_tn";
  auto unmeasured = EvaluateCase(run, H100(), &table);
  ASSERT_TRUE(unmeasured.ok());
  EXPECT_FALSE(unmeasured->throughput_factor.has_value());
  EXPECT_NE(unmeasured->note.find("built for sm70 (sm70 s884 bf16): its throughput on hopper is not measured"),
            std::string::npos)
      << unmeasured->note;
  run.kernel_name = "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_nn_align8";
  auto s16816 = EvaluateCase(run, H100(), &table);
  ASSERT_TRUE(s16816.ok());
  EXPECT_DOUBLE_EQ(*s16816->throughput_factor, 0.667);
}

}  // namespace
}  // namespace ofu::gemm
