// Training logs read from the table data/training_log_patterns.json
// (training_log.h): every pattern's own example line gives its stated value,
// and the frameworks added with the table read real excerpts from public
// threads and docs, copied verbatim into tests/data/training-logs/ (README.md
// there names each source and the values read by hand). Inputs written here
// are marked SYNTHETIC.
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "ofu/analysis/reconcile.h"
#include "ofu/formats/training_log.h"

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

}  // namespace
