// The non-tensor bound: hand-computed values for H100 SXM5 and how absence
// propagates (core/non_tensor.h).
#include "ofu/core/non_tensor.h"

#include <gtest/gtest.h>

#include <vector>

#include "ofu/core/aggregate.h"
#include "ofu/core/gpu_share.h"
#include "ofu/core/output_counters.h"
#include "ofu/core/windows.h"

namespace ofu {
namespace {

const GpuSpec& H100() {
  static const GpuSpecDatabase db = std::move(GpuSpecDatabase::Embedded()).value();
  return **db.Lookup("h100-sxm5");
}

OfuScale H100Scale() {
  GpuIdentity whole;
  whole.key = "GPU-0";
  return OfuScaleOf(H100(), whole);
}

TEST(NonTensor, SpecDatabaseListsTheHopperPipesWithTheirQuotedClock) {
  const GpuSpec& h100 = H100();
  ASSERT_TRUE(h100.non_tensor.has_value());
  EXPECT_EQ(h100.non_tensor->fp32->lanes_per_sm, 128);
  EXPECT_EQ(h100.non_tensor->fp64->lanes_per_sm, 64);
  EXPECT_EQ(h100.non_tensor->fp16->lanes_per_sm, 256);
  // 66.9e12 / (132 * 128 * 2) = 1979.8 MHz: the boost clock, not f_spec (1830).
  EXPECT_NEAR(h100.non_tensor->fp32->QuotedClockMhz(h100.sm_count), 1979.8, 0.1);
  EXPECT_FALSE(h100.non_tensor->source.empty());
}

TEST(NonTensor, EveryListedPipeOfEverySkuImpliesOneQuotedClock) {
  const GpuSpecDatabase db = std::move(GpuSpecDatabase::Embedded()).value();
  int with_pipes = 0;
  for (const GpuSpec& spec : db.skus()) {
    if (!spec.non_tensor) continue;
    ++with_pipes;
    EXPECT_FALSE(spec.non_tensor->source.empty()) << spec.id;
    std::vector<double> clocks;
    for (const auto* pipe : {&spec.non_tensor->fp64, &spec.non_tensor->fp32, &spec.non_tensor->fp16}) {
      if (*pipe) clocks.push_back((*pipe)->QuotedClockMhz(spec.sm_count));
    }
    for (double clock : clocks) {
      // A real boost clock, and every pipe within 2 % of the first: the
      // datasheets round to two or three digits (H200: FP64 34, FP32 67).
      EXPECT_GT(clock, 1000) << spec.id;
      EXPECT_LT(clock, 2700) << spec.id;
      EXPECT_NEAR(clock / clocks.front(), 1.0, 0.02) << spec.id;
    }
  }
  EXPECT_GE(with_pipes, 10);
}

TEST(NonTensor, HandValueH100Fp32Fp64Fp16) {
  const OfuScale scale = H100Scale();
  NonTensorFigures fp32;
  fp32[CudaCorePipe::kFp32] = 0.6;
  CompleteNonTensor(fp32, 1755, scale.non_tensor);
  // 0.6 * 132 * 128 * 2 * 1.755e9 = 35.58 TFLOP/s; share 35.58 / 66.9.
  EXPECT_NEAR(*fp32.flops_upper_bound_tflops, 35.582976, 1e-6);
  EXPECT_NEAR(*fp32.share_of_peak, 35.582 / 66.9, 0.0001);

  NonTensorFigures fp64;
  fp64[CudaCorePipe::kFp64] = 0.6;
  CompleteNonTensor(fp64, 1755, scale.non_tensor);
  EXPECT_NEAR(*fp64.flops_upper_bound_tflops, 17.791488, 1e-6);  // 0.6 * 132 * 64 * 2 * 1.755e9

  NonTensorFigures fp16;
  fp16[CudaCorePipe::kFp16] = 0.6;
  CompleteNonTensor(fp16, 1755, scale.non_tensor);
  EXPECT_NEAR(*fp16.flops_upper_bound_tflops, 71.165952, 1e-6);  // 0.6 * 132 * 256 * 2 * 1.755e9

  NonTensorFigures all;
  all[CudaCorePipe::kFp64] = 0.6;
  all[CudaCorePipe::kFp32] = 0.6;
  all[CudaCorePipe::kFp16] = 0.6;
  CompleteNonTensor(all, 1755, scale.non_tensor);
  EXPECT_NEAR(*all.flops_upper_bound_tflops, 124.540416, 1e-6);  // 0.6 * 132 * (128 + 64 + 256) * 2 * 1.755e9
  EXPECT_NEAR(*all.share_of_peak, 35.582 / 66.9 + 17.791 / 33.5 + 71.165 / 133.8, 0.0001);
}

TEST(NonTensor, AbsentNeverZero) {
  const OfuScale scale = H100Scale();
  NonTensorFigures none;  // no activities
  CompleteNonTensor(none, 1755, scale.non_tensor);
  EXPECT_FALSE(none.flops_upper_bound_tflops.has_value());
  EXPECT_FALSE(none.share_of_peak.has_value());

  NonTensorFigures no_clock;
  no_clock[CudaCorePipe::kFp32] = 0.5;
  CompleteNonTensor(no_clock, std::nullopt, scale.non_tensor);
  EXPECT_FALSE(no_clock.flops_upper_bound_tflops.has_value());

  NonTensorFigures no_spec;
  no_spec[CudaCorePipe::kFp32] = 0.5;
  CompleteNonTensor(no_spec, 1755, std::nullopt);
  EXPECT_FALSE(no_spec.flops_upper_bound_tflops.has_value());

  NonTensorFigures measured_zero;
  measured_zero[CudaCorePipe::kFp32] = 0.0;
  CompleteNonTensor(measured_zero, 1755, scale.non_tensor);
  ASSERT_TRUE(measured_zero.flops_upper_bound_tflops.has_value());  // 0 measured is a value
  EXPECT_EQ(*measured_zero.flops_upper_bound_tflops, 0.0);

  // A pipe the spec has no lanes for adds nothing: L40S lists FP32 only.
  const GpuSpecDatabase db = std::move(GpuSpecDatabase::Embedded()).value();
  const GpuSpec& l40s = **db.Lookup("l40s");
  NonTensorFigures fp64_only;
  fp64_only[CudaCorePipe::kFp64] = 0.5;
  CompleteNonTensor(fp64_only, 2520, NonTensorScaleOf(l40s, l40s.sm_count));
  EXPECT_FALSE(fp64_only.flops_upper_bound_tflops.has_value());
}

TEST(NonTensor, WindowsAverageThePipesAndBoundAtTheWindowClock) {
  std::vector<CounterSample> samples;
  for (int t = 1; t <= 60; ++t) {
    CounterSample s;
    s.time_s = t;
    s.tensor_active = 0.02;
    s.fp32_active = t <= 30 ? 0.4 : 0.8;  // mean 0.6
    s.sm_clock_mhz = 1755;
    samples.push_back(s);
  }
  WindowOptions options;
  options.window_s = 60;
  const WindowedGpu w = BuildWindows(samples, H100Scale(), options);
  ASSERT_EQ(w.windows.size(), 1u);
  const NonTensorFigures& nt = w.windows[0].non_tensor;
  EXPECT_NEAR(*nt[CudaCorePipe::kFp32], 0.6, 1e-12);
  EXPECT_FALSE(nt[CudaCorePipe::kFp64].has_value());
  EXPECT_FALSE(nt[CudaCorePipe::kFp16].has_value());
  EXPECT_NEAR(*nt.flops_upper_bound_tflops, 35.582, 0.001);

  Summarizer summary;
  summary.Add(w.windows[0]);
  const Summary s = summary.Finish();
  EXPECT_NEAR(*s.non_tensor[CudaCorePipe::kFp32], 0.6, 1e-12);
  EXPECT_NEAR(*s.non_tensor.flops_upper_bound_tflops, 35.582, 0.001);
  EXPECT_FALSE(s.non_tensor[CudaCorePipe::kFp64].has_value());
}

TEST(NonTensor, SummaryBoundIsPerGpuAndAMigInstanceCountsAsItsShare) {
  // A whole H100 at bound 30 and a 3g.40gb instance (60 of 132 SMs) at bound
  // 10 over the same 60 s: FLOPs 30*60 + 10*60 over GPU-seconds 60 + 60*60/132.
  OfuWindow whole;
  whole.start_s = 0;
  whole.end_s = 60;
  whole.covered_s = 60;
  whole.non_tensor[CudaCorePipe::kFp32] = 0.5;
  whole.non_tensor.flops_upper_bound_tflops = 30;
  OfuWindow slice = whole;
  slice.non_tensor[CudaCorePipe::kFp32] = 0.25;
  slice.non_tensor.flops_upper_bound_tflops = 10;
  Summarizer summary;
  summary.Add(whole, 1);
  summary.Add(slice, 60.0 / 132);
  const Summary s = summary.Finish();
  EXPECT_NEAR(*s.non_tensor.flops_upper_bound_tflops, (30 * 60 + 10 * 60) / (60 + 60 * 60.0 / 132), 1e-9);
  EXPECT_NEAR(*s.non_tensor[CudaCorePipe::kFp32], (0.5 * 60 + 0.25 * 60 * 60 / 132) / (60 + 60 * 60.0 / 132), 1e-12);
}

// The pipe table ties each pipe to its sample field, its output counter and
// its spec entry; everything that shows a pipe loops over it.
TEST(NonTensor, EveryPipeHasItsSampleFieldOutputCounterAndSpecEntry) {
  ASSERT_EQ(CudaCorePipes().size(), kCudaCorePipes);
  const std::vector<std::string> keys = {"fp64_active", "fp32_active", "fp16_active"};
  const OutputCounterTable& table = OutputCounterTable::Builtin();
  for (std::size_t i = 0; i < kCudaCorePipes; ++i) {
    const CudaCorePipeInfo& pipe = CudaCorePipes()[i];
    EXPECT_EQ(IndexOf(pipe.pipe), i);
    EXPECT_EQ(pipe.key(), keys[i]);
    EXPECT_TRUE(InfoFor(pipe.activity).is_activity);
    EXPECT_EQ(table[PipeActiveCounter(pipe.pipe)].column, keys[i] + "_s");
  }
  // The spec member: H100 SXM5's FP64 pipe has 64 lanes, FP32 and FP16 128.
  const NonTensorSpec& h100 = *H100().non_tensor;
  EXPECT_EQ((h100.*InfoFor(CudaCorePipe::kFp64).spec)->lanes_per_sm, 64);
  EXPECT_EQ((h100.*InfoFor(CudaCorePipe::kFp32).spec)->lanes_per_sm, 128);
}

TEST(NonTensor, BusiestPipeIsTheMostActiveAtOrAboveTheThresholdTiesToFp32ThenFp16) {
  NonTensorFigures n;
  EXPECT_FALSE(BusiestPipe(n).has_value()) << "no pipe measured";
  n[CudaCorePipe::kFp64] = 0.5;
  n[CudaCorePipe::kFp16] = 0.5;
  EXPECT_EQ(BusiestPipe(n), CudaCorePipe::kFp16);
  n[CudaCorePipe::kFp32] = 0.5;
  EXPECT_EQ(BusiestPipe(n), CudaCorePipe::kFp32);
  n[CudaCorePipe::kFp64] = 0.6;
  EXPECT_EQ(BusiestPipe(n), CudaCorePipe::kFp64);
  EXPECT_EQ(BusiestPipe(n, 0.6), CudaCorePipe::kFp64);
  EXPECT_FALSE(BusiestPipe(n, 0.61).has_value());
  EXPECT_TRUE(n.any_activity());
  EXPECT_FALSE(NonTensorFigures{}.any_activity());
}

}  // namespace
}  // namespace ofu
