// ofu run's choice of the job's GPUs (analysis/run_report.h), on SYNTHETIC
// GPUs, and the training-log stream it reads the job's output with, on a
// real log.
#include "ofu/analysis/run_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace ofu::analysis {
namespace {

RunGpu Gpu(std::string key, std::string index, std::string uuid, std::set<int> pids = {}) {
  RunGpu gpu;
  gpu.identity.key = std::move(key);
  gpu.identity.gpu_index = std::move(index);
  gpu.identity.uuid = std::move(uuid);
  gpu.pids = std::move(pids);
  return gpu;
}

const std::vector<RunGpu> kGpus = {Gpu("GPU-a", "0", "GPU-aaaa1111", {100}), Gpu("GPU-b", "1", "GPU-bbbb2222", {200}),
                                   Gpu("GPU-c", "2", "GPU-cccc3333", {100, 300})};

TEST(ChooseRunGpus, VisibleDevicesByIndexAndUuidPrefixInTheirOrder) {
  const RunGpuChoice choice = ChooseRunGpus("2, GPU-bbbb", kGpus, {100});
  EXPECT_EQ(choice.rule, "CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(choice.keys, (std::vector<std::string>{"GPU-c", "GPU-b"}));
  // GPU-c ran pid 300 too, GPU-b only 200: neither is the job's.
  EXPECT_EQ(choice.shared, (std::vector<std::string>{"GPU-b (pid 200)", "GPU-c (pid 300)"}));
}

TEST(ChooseRunGpus, AnInvalidEntryEndsTheListAsCudaDoes) {
  const RunGpuChoice choice = ChooseRunGpus("1,x,0", kGpus, {});
  EXPECT_EQ(choice.keys, std::vector<std::string>{"GPU-b"});
  ASSERT_EQ(choice.notes.size(), 1u);
  EXPECT_NE(choice.notes[0].find("'x' is not an index or a UUID"), std::string::npos);
}

TEST(ChooseRunGpus, MigUuidsAreNotedAndTheProcessesDecide) {
  const RunGpuChoice choice = ChooseRunGpus("MIG-1234", kGpus, {100});
  EXPECT_EQ(choice.rule, "processes");
  EXPECT_EQ(choice.keys, (std::vector<std::string>{"GPU-a", "GPU-c"}));
  EXPECT_EQ(choice.why, "NVML listed the job's processes (pid 100) on them");
  ASSERT_EQ(choice.notes.size(), 1u);
  EXPECT_NE(choice.notes[0].find("MIG UUID"), std::string::npos);
}

TEST(ChooseRunGpus, SetButEmptyMeansNoGpuAndUnsetWithNoProcessesMeansAll) {
  EXPECT_TRUE(ChooseRunGpus("", kGpus, {100}).keys.empty());
  const RunGpuChoice all = ChooseRunGpus(std::nullopt, kGpus, {999});
  EXPECT_EQ(all.rule, "all");
  EXPECT_EQ(all.keys.size(), 3u);
}

// Line by line, a real log reads as the whole file does.
TEST(TrainingLogStream, ReadsAsTheWholeFile) {
  const std::string path = std::string(OFU_TEST_DATA_DIR) + "/training-logs/nanogpt-178.log";
  const auto whole = formats::ReadTrainingLog(path);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  const auto table = formats::TrainingLogPatterns::Embedded();
  ASSERT_TRUE(table.ok());
  formats::TrainingLogStream stream("nanogpt-178.log", *table);
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) stream.Line(line);
  const auto streamed = stream.Finish();
  ASSERT_TRUE(streamed.ok()) << streamed.error().message;
  EXPECT_EQ(streamed->format, "nanoGPT");
  EXPECT_EQ(streamed->steps.size(), whole->steps.size());
  EXPECT_DOUBLE_EQ(streamed->median, whole->median);
  EXPECT_DOUBLE_EQ(streamed->median, 0.16605);  // the README's hand median
}

// A part of a real log: the steps a phase keeps, their median by hand, and
// everything else (format, precision, peak) the whole log's.
TEST(TrainingLogStream, APartOfALogHasItsStepsMedian) {
  const auto whole = formats::ReadTrainingLog(std::string(OFU_TEST_DATA_DIR) + "/training-logs/nanogpt-178.log");
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  ASSERT_GE(whole->steps.size(), 4u);
  const auto first_three = formats::LogOfSteps(*whole, [&](const formats::TrainingLogStep& step) {
    return step.line <= whole->steps[2].line;
  });
  ASSERT_TRUE(first_three.has_value());
  ASSERT_EQ(first_three->steps.size(), 3u);
  std::vector<double> values = {whole->steps[0].value, whole->steps[1].value, whole->steps[2].value};
  std::sort(values.begin(), values.end());
  EXPECT_DOUBLE_EQ(first_three->median, values[1]);
  EXPECT_EQ(first_three->format, whole->format);
  EXPECT_EQ(first_three->peak_flops, whole->peak_flops);
  EXPECT_FALSE(formats::LogOfSteps(*whole, [](const formats::TrainingLogStep&) { return false; }).has_value());
}

}  // namespace
}  // namespace ofu::analysis
