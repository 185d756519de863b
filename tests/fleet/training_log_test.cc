// Training logs as frameworks print them (training_log.h). Most inputs are
// real: excerpts of logs pasted into public GitHub threads, copied verbatim
// into tests/data/training-logs/ (README.md there names each source). The
// expected values are the printed numbers, read by eye and checked with the
// Python snippet in that README. Inputs written here are marked SYNTHETIC.
#include "ofu/formats/training_log.h"

#include "ofu/analysis/reconcile.h"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

namespace {

using ofu::analysis::MfuOverOwnPeak;
using ofu::formats::ParseTrainingLog;
using ofu::formats::ReadTrainingLog;
using ofu::formats::ReportedMfuOf;
using ofu::formats::TrainingLogPatterns;
using ofu::formats::TrainingLogQuantity;

std::string Data(const std::string& file) { return std::string(OFU_TEST_DATA_DIR) + "/training-logs/" + file; }

std::string Text(const std::string& file) {
  std::ifstream in(Data(file), std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// pytorch/torchtitan#2389, 8x B200: three ranks print step 4 (12.01%) and
// step 5 (14.44%); one value per step, the median of two is their mean.
TEST(TrainingLog, TorchtitanWithSeveralRanksCountsEachStepOnce) {
  auto log = ReadTrainingLog(Data("torchtitan-2389.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "torchtitan");
  ASSERT_EQ(log->steps.size(), 2u);
  EXPECT_EQ(log->steps[0].step, 4);
  EXPECT_DOUBLE_EQ(log->steps[0].value, 0.1201);
  EXPECT_EQ(log->steps[0].line, 1);
  EXPECT_EQ(log->steps[1].step, 5);
  EXPECT_DOUBLE_EQ(log->steps[1].value, 0.1444);
  EXPECT_EQ(log->repeated_lines, 4);
  EXPECT_NEAR(log->median, (0.1201 + 0.1444) / 2, 1e-15);
  // The log does not print the peak: torchtitan's own table, not fixed.
  EXPECT_FALSE(log->peak_flops);
}

// pytorch/torchtitan#3393 on a Tesla T4: "[rank0]:" before each line; the
// same thread's start-up lines (another excerpt, same machine) say the GPU
// is not in torchtitan's table and print the A100 fallback it divides by.
TEST(TrainingLog, TorchtitanPeakFromTheLogsOwnLines) {
  const std::string steps = Text("torchtitan-3393.log");
  auto alone = ParseTrainingLog(steps, "torchtitan-3393.log");
  ASSERT_TRUE(alone.ok()) << alone.error().message;
  EXPECT_EQ(alone->steps.size(), 8u);
  EXPECT_EQ(alone->steps.front().step, 14);
  EXPECT_EQ(alone->steps.back().step, 21);
  EXPECT_DOUBLE_EQ(alone->median, 0.0017);
  EXPECT_FALSE(alone->peak_flops);

  auto joined = ParseTrainingLog(Text("peak-flops-torchtitan-3393.log") + steps, "joined");
  ASSERT_TRUE(joined.ok()) << joined.error().message;
  ASSERT_TRUE(joined->peak_flops);
  EXPECT_DOUBLE_EQ(*joined->peak_flops, 3.120e14);  // "Peak FLOPS used for computing MFU: 3.120e+14"
  EXPECT_NE(joined->peak_basis.find("Peak FLOPS used"), std::string::npos);

  // Only the start-up lines: no MFU, an error naming the file, never 0.
  auto startup = ParseTrainingLog(Text("peak-flops-torchtitan-3393.log"), "startup.log");
  ASSERT_FALSE(startup.ok());
  EXPECT_EQ(startup.error().message.rfind("startup.log: no line reports an MFU", 0), 0u) << startup.error().message;
}

// karpathy/nanoGPT#178: iter 0 prints "mfu -100.00%" (no value yet), then
// 24 iterations whose median is 16.605 %. nanoGPT divides by 312 TFLOPS.
TEST(TrainingLog, NanoGptSkipsItsMinusHundredAndFixesTheA100Peak) {
  auto log = ReadTrainingLog(Data("nanogpt-178.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "nanoGPT");
  EXPECT_EQ(log->absent_steps, 1);
  ASSERT_EQ(log->steps.size(), 24u);
  EXPECT_EQ(log->steps.front().step, 10);
  EXPECT_DOUBLE_EQ(log->steps.front().value, 0.1668);
  EXPECT_NEAR(log->median, 0.16605, 1e-12);
  ASSERT_TRUE(log->peak_flops);
  EXPECT_DOUBLE_EQ(*log->peak_flops, 312e12);

  const auto row = ReportedMfuOf(*log, "job-7");
  EXPECT_EQ(row.job_id, "job-7");
  EXPECT_NEAR(row.mfu, 0.16605, 1e-12);
  EXPECT_EQ(row.peak_flops, 312e12);
  EXPECT_NE(row.origin.find("nanoGPT, median of 24 step(s)"), std::string::npos) << row.origin;
}

// karpathy/nanoGPT#466, 2x TITAN Xp: 0.96 % on every line.
TEST(TrainingLog, NanoGptOnAnOldGpu) {
  auto log = ReadTrainingLog(Data("nanogpt-466-titanxp.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->steps.size(), 6u);
  EXPECT_DOUBLE_EQ(log->median, 0.0096);
}

// karpathy/llm.c#796: a Blackwell GPU llm.c's table lacks; every step says
// "-100.0% bf16 MFU". No MFU at all is an error, not a 0.
TEST(TrainingLog, LlmcWithEveryValueAbsentIsAnError) {
  auto log = ReadTrainingLog(Data("llmc-796-blackwell.log"));
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.error().message.find("every MFU the log prints (11 step(s)) is absent"), std::string::npos)
      << log.error().message;
  EXPECT_NE(log.error().message.find("llm.c did not know this GPU's peak"), std::string::npos);
}

// anthonix/llm.c#2 (an AMD port printing llm.c's line): steps 10-20, 9.1 or
// 9.2 %; median 9.2 %. The GPU's own peak: nothing fixed.
TEST(TrainingLog, LlmcSteps) {
  auto log = ReadTrainingLog(Data("llmc-anthonix-2-amd.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "llm.c");
  EXPECT_EQ(log->steps.size(), 11u);
  EXPECT_DOUBLE_EQ(log->median, 0.092);
  EXPECT_FALSE(log->peak_flops);
}

// karpathy/nanochat#147: upstream's line format, "mfu: 74.13" a percentage
// without '%' after a "(0.02%)" of progress. (Its author had patched the
// peak, so this run's denominator is not upstream's; only the reading of
// the line is checked here.)
TEST(TrainingLog, NanochatPercentWithoutASign) {
  auto log = ReadTrainingLog(Data("nanochat-147-patched-a100.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "nanochat");
  ASSERT_EQ(log->steps.size(), 7u);
  EXPECT_EQ(log->steps.front().step, 4);
  EXPECT_DOUBLE_EQ(log->steps.front().value, 0.7413);
  EXPECT_DOUBLE_EQ(log->median, 0.7387);
}

// SYNTHETIC line in nanochat's first format (scripts/base_train.py at its
// initial commit 3a5e0bc, which divided by 989e12 on any GPU and printed no
// peak line).
TEST(TrainingLog, NanochatWithoutAPeakLineUsesItsOldFixedH100Peak) {
  auto log = ParseTrainingLog(
      "step 00010/00100 (10.00%) | loss: 5.100000 | lrm: 1.00 | dt: 100.00ms | tok/sec: 1,000 | mfu: 25.00 | "
      "total time: 0.10m\n",
      "old.log");
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_DOUBLE_EQ(log->median, 0.25);
  EXPECT_EQ(log->peak_flops, 989e12);
  EXPECT_NE(log->peak_basis.find("before 2026-01-17"), std::string::npos);
}

// SYNTHETIC lines in the current nanochat format (scripts/base_train.py's
// print statements): its peak line gives the denominator; "inf" (a GPU its
// table lacks) makes every printed 0.00 absent.
TEST(TrainingLog, NanochatPeakLine) {
  const std::string steps =
      "step 00010/00100 (10.00%) | loss: 5.1 | lrm: 1.00 | dt: 100.00ms | tok/sec: 1,000 | bf16_mfu: 40.00 | "
      "epoch: 1 | total time: 0.10m\n"
      "step 00011/00100 (11.00%) | loss: 5.0 | lrm: 1.00 | dt: 100.00ms | tok/sec: 1,000 | bf16_mfu: 42.00 | "
      "epoch: 1 | total time: 0.11m\n";
  auto log = ParseTrainingLog("GPU: NVIDIA A100-SXM4-80GB | Peak FLOPS (BF16): 3.12e+14\n" + steps, "n.log");
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_DOUBLE_EQ(log->median, 0.41);
  EXPECT_EQ(log->peak_flops, 3.12e14);

  auto unknown = ParseTrainingLog(
      "GPU: Some GPU | Peak FLOPS (BF16): inf\n"
      "step 00010/00100 (10.00%) | loss: 5.1 | lrm: 1.00 | dt: 100.00ms | tok/sec: 1,000 | bf16_mfu: 0.00 | "
      "epoch: 1 | total time: 0.10m\n",
      "u.log");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("is absent"), std::string::npos) << unknown.error().message;
}

// SYNTHETIC: torchtitan colours its line with ANSI sequences when colour is
// on (torchtitan/components/metrics.py), and prints "mfu: N/A" for
// quantized runs.
TEST(TrainingLog, TorchtitanColoursAndNotAvailable) {
  const std::string log_text =
      "\x1b[31mstep:  1  \x1b[32mloss:  9.1  \x1b[38;2;180;60;0mgrad_norm:  1.0  \x1b[34mtps: 1,000  "
      "\x1b[36mtflops: 10.00  \x1b[35mmfu: N/A\x1b[39m\n"
      "\x1b[31mstep:  2  \x1b[32mloss:  9.0  \x1b[34mtps: 1,000  \x1b[36mtflops: 10.00  \x1b[35mmfu: 33.50%\x1b[39m\n";
  auto log = ParseTrainingLog(log_text, "c.log");
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->absent_steps, 1);
  ASSERT_EQ(log->steps.size(), 1u);
  EXPECT_EQ(log->steps[0].step, 2);
  EXPECT_DOUBLE_EQ(log->median, 0.335);
}

// SYNTHETIC: a negative MFU (not nanoGPT's -100) is impossible; when it is
// the only value, nothing is left and the log is refused naming the line.
TEST(TrainingLog, BadValuesNameTheLine) {
  auto negative = ParseTrainingLog("x\niter 10: loss 3.2, time 9.0ms, mfu -5.00%\n", "neg.log");
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.error().message,
            "neg.log: every value the log prints is absent or impossible, none can be used: neg.log:2: MFU -5.00 % "
            "is below 0: impossible, left out");

  auto nothing = ParseTrainingLog("epoch 1 loss 3.2 tok/s 1000\n", "other.log");
  ASSERT_FALSE(nothing.ok());
  EXPECT_EQ(nothing.error().message.rfind("other.log: no line reports an MFU in a format ofu reads", 0), 0u);

  EXPECT_FALSE(ReadTrainingLog(Data("no-such.log")).ok());
}

// PrimeIntellect-ai/prime-rl#20 (samsja, 2025-03-01): the PR's "before"
// line printed "mfu: 337.59" (a percentage without '%': 337.59 % cannot be),
// its "after" line 42.46. The impossible value is flagged with its line and
// left out; the median is the one usable step's.
TEST(TrainingLog, PrimeRlFlagsAnImpossibleMfu) {
  auto log = ParseTrainingLog(Text("prime-rl-20.log"), "prime-rl-20.log");
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "prime-rl");
  EXPECT_EQ(log->quantity, TrainingLogQuantity::kMfu);
  EXPECT_EQ(log->impossible_steps, 1);
  ASSERT_EQ(log->notes.size(), 1u);
  EXPECT_EQ(log->notes[0], "prime-rl-20.log:1: MFU 337.59 % is above 100 %: impossible, left out");
  ASSERT_EQ(log->steps.size(), 1u);
  EXPECT_EQ(log->steps[0].step, 8);
  EXPECT_EQ(log->steps[0].line, 2);
  EXPECT_DOUBLE_EQ(log->median, 0.4246);
  const auto row = ReportedMfuOf(*log, "j");
  EXPECT_DOUBLE_EQ(row.mfu, 0.4246);
  EXPECT_FALSE(row.flops_per_gpu);
  EXPECT_NE(row.origin.find("1 impossible value(s) left out (prime-rl-20.log:1: MFU 337.59 %"), std::string::npos)
      << row.origin;

  // The "before" line alone: every value impossible, the log is refused.
  auto before = ParseTrainingLog(Text("prime-rl-20.log").substr(0, Text("prime-rl-20.log").find('\n') + 1), "b.log");
  ASSERT_FALSE(before.ok());
  EXPECT_NE(before.error().message.find("b.log:1: MFU 337.59 % is above 100 %"), std::string::npos)
      << before.error().message;
}

// PrimeIntellect-ai/prime-diloco#25 (samsja, 2024-09-30), the same line
// format: 4.02 (the first step), then 50.51-50.78. Sorted: 4.02 50.51 50.55
// 50.56 50.70 50.78; median (50.55 + 50.56) / 2 = 50.555 %.
TEST(TrainingLog, PrimeDilocoSteps) {
  auto log = ReadTrainingLog(Data("prime-diloco-25.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "prime-rl");
  EXPECT_EQ(log->steps.size(), 6u);
  EXPECT_DOUBLE_EQ(log->steps[0].value, 0.0402);
  EXPECT_NEAR(log->median, 0.50555, 1e-12);
  EXPECT_EQ(log->impossible_steps, 0);
}

// modula-systems/modula#1, review comment by gaviag-cerebras (2024-06-18),
// on an A10: "MFU: 43.46%" after tokens/gpu/sec; the "..." line before it is
// not a step.
TEST(TrainingLog, ModulaMfuWithAPercentSign) {
  auto log = ReadTrainingLog(Data("modula-1-a10.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "modula");
  ASSERT_EQ(log->steps.size(), 1u);
  EXPECT_EQ(log->steps[0].step, 100);
  EXPECT_EQ(log->steps[0].line, 2);
  EXPECT_DOUBLE_EQ(log->median, 0.4346);
  EXPECT_FALSE(log->peak_flops);
}

// NVIDIA/Megatron-LM#756 (ShinoharaHare, 2024-04-06; 16 x H100): iterations
// 29-31 print 220.9, 234.4 and 228.3 TFLOP/s per GPU; median 228.3. Over
// the H100 SXM5's bf16 peak (989.4 TFLOPS, data/gpu_specs.json) that is
// 228.3 / 989.4 = 0.23075 MFU.
TEST(TrainingLog, MegatronTflopsPerGpuBecomeMfuOverTheGpusPeak) {
  auto log = ReadTrainingLog(Data("megatron-756-h100.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "Megatron-LM");
  EXPECT_EQ(log->quantity, TrainingLogQuantity::kFlopsPerGpu);
  ASSERT_EQ(log->steps.size(), 3u);
  EXPECT_EQ(log->steps[0].step, 29);
  EXPECT_DOUBLE_EQ(log->steps[0].value, 220.9e12);
  EXPECT_DOUBLE_EQ(log->steps[1].value, 234.4e12);
  EXPECT_DOUBLE_EQ(log->median, 228.3e12);
  EXPECT_FALSE(log->peak_flops);

  const auto row = ReportedMfuOf(*log, "j");
  ASSERT_TRUE(row.flops_per_gpu);
  EXPECT_DOUBLE_EQ(*row.flops_per_gpu, 228.3e12);
  const auto own = MfuOverOwnPeak(row, 989.4e12, "h100-sxm5");
  ASSERT_TRUE(own.mfu);
  EXPECT_DOUBLE_EQ(*own.mfu, 228.3 / 989.4);
  EXPECT_EQ(own.own_peak_flops, 989.4e12);
  EXPECT_EQ(own.note,
            "the log prints 228.3 TFLOP/s per GPU; over h100-sxm5's bf16 peak (989.4 TFLOPS) that is MFU 0.2307");

  // No peak: no MFU, and the note says what gives one. Never a 0.
  const auto unknown = MfuOverOwnPeak(row, std::nullopt, "the trace's GPU", "name the GPU with --gpu-model");
  EXPECT_FALSE(unknown.mfu);
  EXPECT_EQ(unknown.note,
            "the log prints 228.3 TFLOP/s per GPU, not MFU, and the trace's GPU's bf16 peak is not known, so there is "
            "no MFU: name the GPU with --gpu-model");
  // A peak below what the log prints (arithmetic only: 200 TFLOPS): 228.3 /
  // 200 = 114.15 % is above 100 %, impossible, not used.
  const auto below = MfuOverOwnPeak(row, 200e12, "x");
  EXPECT_FALSE(below.mfu);
  EXPECT_NE(below.note.find("above x's bf16 peak (200.0 TFLOPS): MFU 114."), std::string::npos) << below.note;
  EXPECT_NE(below.note.find("is impossible and not used"), std::string::npos) << below.note;
}

// AI-Hypercomputer/maxtext#761 (tonyjohnchen, 2024-07-09): "TFLOP/s/device:
// 257.929"; maxtext#8 (amankhandelia, 2023-04-28, a TPU v3-8): the older
// "TFLOP/s: 36.722", medians 257.929 and 36.739 TFLOP/s.
TEST(TrainingLog, MaxTextTflopsPerDevice) {
  auto log = ReadTrainingLog(Data("maxtext-761.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "MaxText");
  EXPECT_EQ(log->quantity, TrainingLogQuantity::kFlopsPerGpu);
  ASSERT_EQ(log->steps.size(), 1u);
  EXPECT_EQ(log->steps[0].step, 9);
  EXPECT_DOUBLE_EQ(log->median, 257.929e12);

  auto old = ReadTrainingLog(Data("maxtext-8-v3-8.log"));
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(old->format, "MaxText");
  EXPECT_EQ(old->steps.size(), 3u);
  EXPECT_EQ(old->steps[0].step, 15107);
  EXPECT_DOUBLE_EQ(old->median, 36.739e12);
}

// huggingface/nanotron#390 (JunkFood436, 2025-10-18): "model_tflops_per_gpu:
// 38.3" on four iterations, beside "85.8G" and "11.5K" of human_format;
// nanotron#23 (xrsrke, 2024-01-17): values below 1 in "{:.3g}", 0.00744,
// 0.00755, 0.00754 TFLOP/s: median 0.00754.
TEST(TrainingLog, NanotronModelTflopsPerGpu) {
  auto log = ReadTrainingLog(Data("nanotron-390.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "nanotron");
  EXPECT_EQ(log->steps.size(), 4u);
  EXPECT_EQ(log->steps[0].step, 327281);
  EXPECT_DOUBLE_EQ(log->median, 38.3e12);

  auto small = ReadTrainingLog(Data("nanotron-23.log"));
  ASSERT_TRUE(small.ok()) << small.error().message;
  EXPECT_EQ(small->steps.size(), 3u);
  EXPECT_DOUBLE_EQ(small->steps[0].value, 0.00744e12);
  EXPECT_DOUBLE_EQ(small->median, 0.00754e12);
}

// SYNTHETIC lines in nanotron's format (its human_format, logging/base.py):
// above 999 TFLOP/s the value gets a suffix, K = 1000 (B, or G in 2024-25
// versions, = 10^9).
TEST(TrainingLog, NanotronSuffixes) {
  const std::string line = "iteration: 5 / 10 | consumed_tokens: 1.2M | model_tflops_per_gpu: ";
  auto k = ParseTrainingLog(line + "1.2K | hardware_tflops_per_gpu: 1.2K | grad_norm: 1\n", "k.log");
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_DOUBLE_EQ(k->median, 1.2e3 * 1e12);
  auto g = ParseTrainingLog(line + "2G\n", "g.log");
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_DOUBLE_EQ(g->median, 2e9 * 1e12);
  auto bad = ParseTrainingLog(line + "1.2X | grad_norm: 1\n", "x.log");
  EXPECT_FALSE(bad.ok());
}

// Training logs read from the table data/training_log_patterns.json: every
// pattern's own example line gives its stated value, and the frameworks
// added with the table (issue 41) read real excerpts from public threads and
// docs (tests/data/training-logs/README.md names each source and the values
// read by hand).

// Each pattern's example line, alone, is read by its own framework (no
// earlier entry of the table takes it) and gives the value the table states.
TEST(TrainingLogTable, EveryPatternsExampleLineGivesItsStatedValue) {
  auto table = TrainingLogPatterns::Embedded();
  ASSERT_TRUE(table.ok()) << table.error().message;
  std::set<std::string> frameworks;
  for (const auto& pattern : table->patterns()) {
    SCOPED_TRACE(pattern.framework + ": " + pattern.example_line);
    EXPECT_FALSE(pattern.source.empty());
    auto log = ParseTrainingLog(pattern.example_line, "example.log", *table);
    ASSERT_TRUE(log.ok()) << log.error().message;
    EXPECT_EQ(log->format, pattern.framework);
    EXPECT_EQ(log->from_summary, pattern.summary);
    EXPECT_EQ(log->quantity, QuantityOf(pattern.unit));
    ASSERT_EQ(log->steps.size(), 1u);
    EXPECT_NEAR(log->steps[0].value, pattern.example_value, std::abs(pattern.example_value) * 1e-12);
    EXPECT_EQ(log->steps[0].step, pattern.example_step.value_or(1));
    frameworks.insert(pattern.framework);
  }
  EXPECT_EQ(frameworks.size(), table->Frameworks().size());
  EXPECT_GE(frameworks.size(), 12u);
}

// verl-project/verl#2060 (xxzhang0927, 2025-06-17): "perf/mfu/actor:0.343"
// on step 1, a ratio (34.3 %), beside "perf/mfu/actor_infer" in other logs;
// step 0 prints validation metrics only.
TEST(TrainingLogTable, VerlMfuIsARatio) {
  auto log = ReadTrainingLog(Data("verl-2060.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "verl");
  EXPECT_EQ(log->quantity, TrainingLogQuantity::kMfu);
  ASSERT_EQ(log->steps.size(), 1u);
  EXPECT_EQ(log->steps[0].step, 1);
  EXPECT_EQ(log->steps[0].line, 3);
  EXPECT_DOUBLE_EQ(log->median, 0.343);
  EXPECT_FALSE(log->peak_flops.has_value());
  EXPECT_NE(log->peak_basis.find("flops_counter.py"), std::string::npos) << log->peak_basis;
}

// verl-project/verl#1208 (EduardDurech, GH200): "perf/mfu/actor:1.018" is
// more than the GPU's peak: flagged with its line and left out; alone, the
// log is refused. After verl#2060's three lines, it is line 4 and the
// median is verl#2060's 0.343.
TEST(TrainingLogTable, VerlMfuAboveOneIsFlaggedWithItsLine) {
  auto alone = ReadTrainingLog(Data("verl-1208-gh200.log"));
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.error().message.find("verl-1208-gh200.log:1: MFU 1.018 (a ratio) is above 1 (100 %): impossible, "
                                       "left out"),
            std::string::npos)
      << alone.error().message;

  auto joined = ParseTrainingLog(Text("verl-2060.log") + Text("verl-1208-gh200.log"), "j.log");
  ASSERT_TRUE(joined.ok()) << joined.error().message;
  EXPECT_EQ(joined->impossible_steps, 1);
  ASSERT_EQ(joined->notes.size(), 1u);
  EXPECT_EQ(joined->notes[0], "j.log:4: MFU 1.018 (a ratio) is above 1 (100 %): impossible, left out");
  ASSERT_EQ(joined->steps.size(), 1u);
  EXPECT_DOUBLE_EQ(joined->median, 0.343);
  const auto row = ReportedMfuOf(*joined, "job");
  EXPECT_NE(row.origin.find("1 impossible value(s) left out"), std::string::npos) << row.origin;
}

// vllm-project/vllm#30738 (SungMinCho, B200): "MFU: 6.6 TF/s/GPU" is
// labelled MFU but is TFLOP/s per GPU: 6.6e12 FLOP/s, which over the B200's
// own peak is the MFU; one line per log interval, numbered 1.
TEST(TrainingLogTable, VllmMfuLabelIsTflops) {
  auto log = ReadTrainingLog(Data("vllm-30738-b200.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "vLLM");
  EXPECT_EQ(log->quantity, TrainingLogQuantity::kFlopsPerGpu);
  ASSERT_EQ(log->steps.size(), 1u);
  EXPECT_EQ(log->steps[0].step, 1);
  EXPECT_DOUBLE_EQ(log->median, 6.6e12);
  const auto row = ReportedMfuOf(*log, "job");
  ASSERT_TRUE(row.flops_per_gpu.has_value());
  // Over a SYNTHETIC peak of 2250 TFLOP/s: 6.6 / 2250.
  const auto own = MfuOverOwnPeak(row, 2250e12, "gpu");
  ASSERT_TRUE(own.mfu.has_value()) << own.note;
  EXPECT_NEAR(*own.mfu, 6.6 / 2250, 1e-15);
}

// NVIDIA-NeMo/Megatron-Bridge#388 (gautham-kollu, llama3 8b on 8x H100):
// "Step Time : 12.78s GPU utilization: 528.1 TFLOP/s/GPU".
// Megatron-Bridge#5719 (yaoyu-33, GB300): only the "Final-10: ... 873.330
// TFLOP/s/GPU" summary, used because no step line is there; beside a step
// line, the summary is not used.
TEST(TrainingLogTable, MegatronBridgeStepLineAndFinalTenSummary) {
  auto step = ReadTrainingLog(Data("megatron-bridge-388-h100.log"));
  ASSERT_TRUE(step.ok()) << step.error().message;
  EXPECT_EQ(step->format, "Megatron-Bridge");
  EXPECT_EQ(step->quantity, TrainingLogQuantity::kFlopsPerGpu);
  ASSERT_EQ(step->steps.size(), 1u);
  EXPECT_EQ(step->steps[0].line, 3);
  EXPECT_DOUBLE_EQ(step->median, 528.1e12);
  EXPECT_FALSE(step->from_summary);

  auto summary = ReadTrainingLog(Data("megatron-bridge-5719-gb300.log"));
  ASSERT_TRUE(summary.ok()) << summary.error().message;
  EXPECT_TRUE(summary->from_summary);
  EXPECT_DOUBLE_EQ(summary->median, 873.330e12);

  auto both = ParseTrainingLog(Text("megatron-bridge-388-h100.log") + Text("megatron-bridge-5719-gb300.log"), "b.log");
  ASSERT_TRUE(both.ok()) << both.error().message;
  EXPECT_FALSE(both->from_summary);
  ASSERT_EQ(both->steps.size(), 1u);
  EXPECT_DOUBLE_EQ(both->median, 528.1e12);
}

// microsoft/DeepSpeed docs/_tutorials/flops-profiler.md, the Megatron-LM
// example: "fwd+bwd FLOPS per GPU = ...:   34.07 TFLOPS" (the other FLOPS
// lines, fwd and bwd alone, are not the model's FLOP/s).
TEST(TrainingLogTable, DeepSpeedFlopsProfilerSummary) {
  auto log = ReadTrainingLog(Data("deepspeed-flops-profiler-tutorial.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "DeepSpeed");
  EXPECT_EQ(log->quantity, TrainingLogQuantity::kFlopsPerGpu);
  ASSERT_EQ(log->steps.size(), 1u);
  EXPECT_EQ(log->steps[0].line, 14);
  EXPECT_DOUBLE_EQ(log->median, 34.07e12);
}

// SYNTHETIC lines in the flops profiler's format: other SI prefixes, and a
// negative FLOP/s (a broken latency) flagged and left out.
TEST(TrainingLogTable, DeepSpeedPrefixesAndNegativeValues) {
  const std::string head = "fwd+bwd FLOPS per GPU = 3 * fwd flops per GPU / (fwd+bwd latency):   ";
  auto giga = ParseTrainingLog(head + "812.5 GFLOPS\n", "g.log");
  ASSERT_TRUE(giga.ok()) << giga.error().message;
  EXPECT_DOUBLE_EQ(giga->median, 812.5e9);
  auto negative = ParseTrainingLog(head + "-1.5e+18 uFLOPS\n" + head + "2.0 TFLOPS\n", "n.log");
  ASSERT_TRUE(negative.ok()) << negative.error().message;
  ASSERT_EQ(negative->notes.size(), 1u);
  EXPECT_EQ(negative->notes[0], "n.log:1: FLOP/s per GPU -1.5e+18uFLOPS is below 0: impossible, left out");
  EXPECT_DOUBLE_EQ(negative->median, 2.0e12);
}

// SYNTHETIC tables: a malformed entry is refused naming the entry and what
// is wrong, never read as a pattern that matches nothing.
TEST(TrainingLogTable, MalformedTablesAreRefused) {
  // One framework with one pattern: its line (JSON-escaped), unit and example.
  const auto table = [](const std::string& line, const std::string& unit, bool example = true) {
    std::string json = "{\"frameworks\": [{\"framework\": \"x\", \"peak_basis\": \"b\", \"patterns\": [";
    json += "{\"contains\": [\"mfu\"], \"line\": \"" + line + "\", \"unit\": \"" + unit + "\"";
    if (example) json += ", \"example\": {\"line\": \"mfu 1\", \"value\": 0.01, \"source\": \"s\"}";
    return json + "}]}]}";
  };
  auto good = TrainingLogPatterns::Parse(table("mfu (?P<value>\\\\d+)", "mfu_percent"), "t.json");
  ASSERT_TRUE(good.ok()) << good.error().message;
  auto read = ParseTrainingLog("mfu 7\n", "m.log", *good);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_DOUBLE_EQ(read->median, 0.07);

  auto no_value = TrainingLogPatterns::Parse(table("mfu (\\\\d+)", "mfu_percent"), "t.json");
  ASSERT_FALSE(no_value.ok());
  EXPECT_EQ(no_value.error().message, "t.json: frameworks[0]: patterns[0]: the pattern has no group \"value\"");
  auto unit = TrainingLogPatterns::Parse(table("mfu (?P<value>\\\\d+)", "furlongs"), "t.json");
  ASSERT_FALSE(unit.ok());
  EXPECT_NE(unit.error().message.find("unit \"furlongs\""), std::string::npos) << unit.error().message;
  auto regex = TrainingLogPatterns::Parse(table("mfu (?P<value>\\\\d+", "mfu_percent"), "t.json");
  ASSERT_FALSE(regex.ok());
  EXPECT_NE(regex.error().message.find("does not compile"), std::string::npos) << regex.error().message;
  auto no_example = TrainingLogPatterns::Parse(table("mfu (?P<value>\\\\d+)", "mfu_percent", false), "t.json");
  ASSERT_FALSE(no_example.ok());
  EXPECT_NE(no_example.error().message.find("\"example\""), std::string::npos) << no_example.error().message;
}

// Issue 52: the frameworks added then (OLMo-core, llama2.c,
// Megatron-DeepSpeed, Megatron-LM's progress.txt, tinygrad) and the generic
// rule behind the table (training_log_generic.h), on real logs from
// tests/data/training-logs/ (README.md there names each source and the
// values read by hand); inputs written here are marked SYNTHETIC.

bool Has(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& line : lines) {
    if (line.find(part) != std::string::npos) return true;
  }
  return false;
}

// allenai/OLMo-core#511: one metric block, no step line; line 11
// "throughput/device/MFU=44.57" is the step's MFU, line 12 "MFU (actual
// avg)=33.82" the average since the start, not read.
TEST(TrainingLogRows, OlmoCoreMetricBlock) {
  auto log = ReadTrainingLog(Data("olmo-core-511.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "OLMo-core");
  EXPECT_EQ(log->quantity, TrainingLogQuantity::kMfu);
  ASSERT_EQ(log->steps.size(), 1u);
  EXPECT_EQ(log->steps[0].step, 1);
  EXPECT_EQ(log->steps[0].line, 11);
  EXPECT_DOUBLE_EQ(log->median, 0.4457);
  EXPECT_TRUE(log->checks.empty());
}

// karpathy/llama2.c#461: 17 step lines (490 to 650) with eval and
// checkpoint lines between; 8 x 0.19 %, 2 x 0.20 %, 7 x 0.21 %: the 9th of
// 17 sorted is 0.20 %. llama2.c divides by the A100's 312 TFLOPS.
TEST(TrainingLogRows, Llama2c) {
  auto log = ReadTrainingLog(Data("llama2c-461.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "llama2.c");
  ASSERT_EQ(log->steps.size(), 17u);
  EXPECT_EQ(log->steps[0].step, 490);
  EXPECT_DOUBLE_EQ(log->steps[0].value, 0.0021);
  EXPECT_DOUBLE_EQ(log->median, 0.002);
  EXPECT_EQ(log->peak_flops, 312e12);
}

// FZJ-JSC/jubench-megatron-lm: iterations 10-40 print 199.03, 203.96,
// 204.71, 202.02 TFLOP/s per GPU (the 5th line is cut before its TFLOPs);
// median (202.02 + 203.96) / 2 = 202.99. DeepLink-org/AIChipBenchmark:
// iterations 5-10, sorted 152.20 152.31 152.59 153.08 153.30 153.38,
// median (152.59 + 153.08) / 2 = 152.835.
TEST(TrainingLogRows, MegatronDeepSpeedTflops) {
  auto jubench = ReadTrainingLog(Data("megatron-deepspeed-jubench.log"));
  ASSERT_TRUE(jubench.ok()) << jubench.error().message;
  EXPECT_EQ(jubench->format, "Megatron-DeepSpeed");
  EXPECT_EQ(jubench->quantity, TrainingLogQuantity::kFlopsPerGpu);
  ASSERT_EQ(jubench->steps.size(), 4u);
  EXPECT_EQ(jubench->steps[0].step, 10);
  EXPECT_DOUBLE_EQ(jubench->steps[0].value, 199.03e12);
  EXPECT_NEAR(jubench->median, 202.99e12, 1e3);

  auto aichip = ReadTrainingLog(Data("megatron-deepspeed-aichipbenchmark.log"));
  ASSERT_TRUE(aichip.ok()) << aichip.error().message;
  ASSERT_EQ(aichip->steps.size(), 6u);
  EXPECT_EQ(aichip->steps[0].step, 5);
  EXPECT_NEAR(aichip->median, 152.835e12, 1e3);
}

// swiss-ai/Megatron-LM#46: progress.txt, TAB-separated; iteration 100's
// "Job throughput: 364.8 TFLOP/s/GPU", not the "Cumulative throughput: 387.0"
// beside it.
TEST(TrainingLogRows, MegatronProgressTxt) {
  auto log = ReadTrainingLog(Data("megatron-progress-swissai-46.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "Megatron-LM progress.txt");
  ASSERT_EQ(log->steps.size(), 1u);
  EXPECT_EQ(log->steps[0].step, 100);
  EXPECT_EQ(log->steps[0].line, 2);
  EXPECT_DOUBLE_EQ(log->median, 364.8e12);
}

// tinygrad/tinygrad#13803: "DP=8" on the command line (line 1), then 10
// steps of GFLOPS summed over the 8 GPUs; sorted, the middle two are
// 397832.61 and 398116.13: median 397974.37 GFLOPS, per GPU / 8 =
// 49746.79625 GFLOPS. Without the command line the log states no count:
// the total is read as it is, and flagged.
TEST(TrainingLogRows, TinygradTotalDividedByTheStatedGpuCount) {
  auto log = ReadTrainingLog(Data("tinygrad-13803-dp8.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, "tinygrad");
  EXPECT_EQ(log->quantity, TrainingLogQuantity::kFlopsPerGpu);
  ASSERT_EQ(log->steps.size(), 10u);
  EXPECT_EQ(log->gpu_count, 8);
  EXPECT_DOUBLE_EQ(log->steps[0].value, 19644.30e9 / 8);
  EXPECT_NEAR(log->median, 49746.79625e9, 1e3);
  EXPECT_TRUE(log->checks.empty());
  EXPECT_NE(log->peak_basis.find("divided by the 8 GPU(s)"), std::string::npos) << log->peak_basis;

  const std::string text = Text("tinygrad-13803-dp8.log");
  auto no_count = ParseTrainingLog(text.substr(text.find('\n') + 1), "steps-only.log");
  ASSERT_TRUE(no_count.ok()) << no_count.error().message;
  EXPECT_FALSE(no_count->gpu_count);
  EXPECT_NEAR(no_count->median, 397974.37e9, 1e3);
  ASSERT_EQ(no_count->checks.size(), 1u);
  EXPECT_NE(no_count->checks[0].find("tinygrad prints the FLOP/s of all the job's GPUs together and the log states no "
                                     "GPU count"),
            std::string::npos)
      << no_count->checks[0];
  EXPECT_NE(ReportedMfuOf(*no_count, "j").origin.find("; check: tinygrad prints"), std::string::npos);
}

// tinygrad/tinygrad#3150: "GPUS=6" on the last line, after the steps (the
// shell's `time` line); steps 345-349, median 7654.11 GFLOPS, per GPU / 6.
TEST(TrainingLogRows, TinygradCountStatedAfterTheSteps) {
  auto log = ReadTrainingLog(Data("tinygrad-3150-gpus6.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  ASSERT_EQ(log->steps.size(), 5u);
  EXPECT_EQ(log->steps[0].step, 345);
  EXPECT_EQ(log->gpu_count, 6);
  EXPECT_DOUBLE_EQ(log->median, 7654.11e9 / 6);
}

// tinygrad/tinygrad#1830 (resnet on one RTX 3070): "... ms step, ..., 995.41
// GFLOPS", a shape no table entry has: the generic rule reads it, a FLOP/s
// not marked per GPU and no GPU count stated, so flagged.
TEST(TrainingLogGeneric, ReadsATotalFlopsLineAndFlagsTheMissingCount) {
  auto log = ReadTrainingLog(Data("tinygrad-1830-resnet.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, ofu::formats::kGenericRuleFormat);
  EXPECT_EQ(log->quantity, TrainingLogQuantity::kFlopsPerGpu);
  ASSERT_EQ(log->steps.size(), 1u);
  EXPECT_EQ(log->steps[0].step, 1);
  EXPECT_DOUBLE_EQ(log->median, 995.41e9);
  EXPECT_FALSE(log->gpu_count);
  EXPECT_TRUE(Has(log->checks,
                  "read by ofu's generic rule from line 1: 441.57 ms step, 37.10 ms fetch data, 398.86 ms GPU, 4.26 GB "
                  "used, 995.41 GFLOPS; check it"));
  EXPECT_TRUE(Has(log->checks, "the log states no GPU count: read as it is"));
  EXPECT_TRUE(Has(log->checks, "numbered 1, 2, ..."));
  EXPECT_NE(ReportedMfuOf(*log, "j").origin.find("; check: read by ofu's generic rule"), std::string::npos);
}

// tinygrad/tinygrad#14871 (llama2 LoRA on Apple MPS): "step N:  X GFLOPS,
// loss: ..."; steps 1-5, sorted 87.64 96.02 120.44 128.04 133.33: median
// 120.44 GFLOPS, step numbers from the lines.
TEST(TrainingLogGeneric, ReadsStepNumbersFromTheLine) {
  auto log = ReadTrainingLog(Data("tinygrad-14871-lora-mps.log"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->format, ofu::formats::kGenericRuleFormat);
  ASSERT_EQ(log->steps.size(), 5u);
  EXPECT_EQ(log->steps[4].step, 5);
  EXPECT_DOUBLE_EQ(log->median, 120.44e9);
  EXPECT_FALSE(Has(log->checks, "numbered 1, 2, ..."));
}

// SYNTHETIC lines: MFU spellings, percent or ratio decided per log, a total
// divided by a stated world size, a FLOP/s per GPU, a second quantity of
// OLMo-core's spelling not read.
TEST(TrainingLogGeneric, MfuSpellingsAndUnits) {
  auto ratio = ParseTrainingLog("epoch 1 loss 3.2 mfu=0.4\nepoch 2 loss 3.1 mfu=0.5\n", "r.log");
  ASSERT_TRUE(ratio.ok()) << ratio.error().message;
  EXPECT_EQ(ratio->quantity, TrainingLogQuantity::kMfu);
  EXPECT_DOUBLE_EQ(ratio->median, 0.45);
  EXPECT_TRUE(Has(ratio->checks, "no value is above 1: read as a ratio"));

  auto percent = ParseTrainingLog("iter 1 | MFU 0.9\niter 2 | MFU 45.2\niter 3 | MFU 47.0\n", "p.log");
  ASSERT_TRUE(percent.ok()) << percent.error().message;
  EXPECT_DOUBLE_EQ(percent->median, 0.452);
  EXPECT_TRUE(Has(percent->checks, "a value is above 1: read as a percent"));

  auto marked = ParseTrainingLog(
      "Step: 5 | Loss: 11.94 | MFU (%): 40.51 | TFLOPs: 400.64\nStep: 10 | Loss: 11.98 | MFU (%): 39.64 | TFLOPs: "
      "392.01\n",
      "m.log");
  ASSERT_TRUE(marked.ok()) << marked.error().message;
  EXPECT_EQ(marked->quantity, TrainingLogQuantity::kMfu);
  EXPECT_EQ(marked->steps[0].step, 5);
  EXPECT_DOUBLE_EQ(marked->median, (0.4051 + 0.3964) / 2);

  auto total = ParseTrainingLog("world size: 4\nstep 1 loss 2.0 | 400.0 TFLOPS\n", "t.log");
  ASSERT_TRUE(total.ok()) << total.error().message;
  EXPECT_EQ(total->gpu_count, 4);
  EXPECT_DOUBLE_EQ(total->median, 100e12);

  auto per_gpu = ParseTrainingLog("step 3 loss 2.0 | throughput per GPU: 0.25 PFLOPS\n", "g.log");
  ASSERT_TRUE(per_gpu.ok()) << per_gpu.error().message;
  EXPECT_FALSE(per_gpu->gpu_count);
  EXPECT_DOUBLE_EQ(per_gpu->median, 250e12);
  EXPECT_FALSE(Has(per_gpu->checks, "GPU count"));

  auto average = ParseTrainingLog("    throughput/device/MFU (actual avg)=33.82\n", "a.log");
  ASSERT_FALSE(average.ok());
  EXPECT_NE(average.error().message.find("nor any line ofu's generic rule reads"), std::string::npos)
      << average.error().message;
}

// pytorch/ao#2427: bench_matmul.py's "tops/sec ..., pct_peak 0.188" on line
// 6; Dao-AILab/flash-attention#1310: attention kernels' "Fav2: 0.840ms, 81.8
// TFLOPS" (line 2) with nothing of a training step; pytorch/pytorch#83272:
// a bmm's "TFLOPS : 85.82" (line 1). Each is refused naming its line.
TEST(TrainingLogGeneric, RefusesABenchmarksTflops) {
  auto torchao = ReadTrainingLog(Data("torchao-2427-b200.log"));
  ASSERT_FALSE(torchao.ok());
  EXPECT_EQ(torchao.error().message.rfind(Data("torchao-2427-b200.log") +
                                              ":6: a benchmark's TFLOP/s, not a training step (the line names "
                                              "'pct_peak'): 'torch.bfloat16 time_sec 5.08E-06, tops/sec 4.23E+14",
                                          0),
            0u)
      << torchao.error().message;

  auto flash = ParseTrainingLog(Text("flash-attention-1310-h20.log"), "fa.log");
  ASSERT_FALSE(flash.ok());
  EXPECT_EQ(flash.error().message,
            "fa.log:2: a benchmark's TFLOP/s, not a training step (no step, iteration, loss or learning rate on its "
            "line): 'Fav2: 0.840ms, 81.8 TFLOPS'");

  auto bmm = ParseTrainingLog(Text("pytorch-83272-bmm.log"), "bmm.log");
  ASSERT_FALSE(bmm.ok());
  EXPECT_EQ(bmm.error().message.rfind("bmm.log:1: a benchmark's TFLOP/s, not a training step", 0), 0u)
      << bmm.error().message;

  // SYNTHETIC: the log says it is a benchmark on another line.
  auto said = ParseTrainingLog("Running the GEMM benchmark\nsize 4096: 700.1 TFLOPS\n", "s.log");
  ASSERT_FALSE(said.ok());
  EXPECT_NE(said.error().message.find("s.log:2: a benchmark's TFLOP/s, not a training step (line 1 says 'benchmark')"),
            std::string::npos)
      << said.error().message;
}

// The generic rule is not used once a framework's pattern matched: a
// nanoGPT log (karpathy/nanoGPT#466, 0.96 % on each of 6 lines) with a
// SYNTHETIC line the generic rule would read, before or after it.
TEST(TrainingLogGeneric, NotUsedWhenAFrameworkMatched) {
  const std::string nanogpt = Text("nanogpt-466-titanxp.log");
  for (const std::string& text : {"step 1 loss 2.0 mfu=0.5\n" + nanogpt, nanogpt + "step 1 loss 2.0 mfu=0.5\n"}) {
    auto log = ParseTrainingLog(text, "n.log");
    ASSERT_TRUE(log.ok()) << log.error().message;
    EXPECT_EQ(log->format, "nanoGPT");
    EXPECT_EQ(log->steps.size(), 6u);
    EXPECT_DOUBLE_EQ(log->median, 0.0096);
    EXPECT_TRUE(log->checks.empty());
  }
}

}  // namespace
