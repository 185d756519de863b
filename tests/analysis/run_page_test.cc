// One run's page (analysis/run_page.h) on the REAL bundled H100 recording
// (data/recordings/h100-sxm5-stage-a-1s.om: 1 s samples, eight phases with
// their true MFU): its own phases when it carries them, else those found on
// its samples, and its own resolution.
#include "ofu/analysis/run_page.h"

#include <gtest/gtest.h>

#include "ofu/core/gpu_key.h"

namespace ofu::analysis {
namespace {

class RunPageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto read = sources::ReadRecordingFile(OFU_SOURCE_DIR "/data/recordings/h100-sxm5-stage-a-1s.om");
    ASSERT_TRUE(read.ok()) << read.error().message;
    recording_ = std::move(*read);
  }
  Report ReportOf(const sources::Recording& recording, double window_s) {
    ReportOptions options;
    options.windows.window_s = window_s;
    auto report = BuildReport(recording, specs_, options);
    EXPECT_TRUE(report.ok()) << report.error().message;
    return report.ok() ? *report : Report{};
  }
  GpuSpecDatabase specs_ = *GpuSpecDatabase::Embedded();
  sources::Recording recording_;
};

TEST_F(RunPageTest, TheRecordingsResolutionIsItsSampleInterval) {
  // The median spacing of its samples, as the report measured it: 0.99997 s.
  EXPECT_NEAR(OwnResolutionS(ReportOf(recording_, 60)), 1.0, 1e-4);
  Report empty;
  empty.window_s = 30;
  EXPECT_DOUBLE_EQ(OwnResolutionS(empty), 30.0);  // no GPU: the report's window
}

TEST_F(RunPageTest, ARecordingsOwnPhasesWithTheirTrueMfu) {
  const Report report = ReportOf(recording_, 1);
  const RunPage page = RunPageOfRecording(report, recording_);
  EXPECT_EQ(page.phases_basis, "recorded");
  EXPECT_FALSE(page.run.has_value());
  ASSERT_EQ(page.phases.size(), report.phases.size());
  ASSERT_EQ(page.phases.size(), 8u);
  for (std::size_t i = 0; i < page.phases.size(); ++i) {
    EXPECT_EQ(page.phases[i].name, report.phases[i].phase);
    EXPECT_EQ(page.phases[i].gpu, GpuKey(report.gpus[0].identity));
    EXPECT_EQ(page.phases[i].ofu, report.phases[i].ofu);
    EXPECT_EQ(page.phases[i].mfu, report.phases[i].mfu);
  }
  // bf16-8192: OFU 70.2 % beside the loop's true MFU 69.4 % (README of data/recordings).
  EXPECT_EQ(page.phases[0].name, "bf16-8192");
  EXPECT_NEAR(*page.phases[0].ofu, 0.7020, 1e-4);
  EXPECT_NEAR(*page.phases[0].mfu, 0.6940, 1e-4);
}

// Without its labels, the page shows the phases found on the samples: the
// same as FindPhasesOfGpu, no MFU (nothing was printed), and time order.
TEST_F(RunPageTest, WithoutLabelsThePhasesFound) {
  sources::Recording unlabelled = recording_;
  unlabelled.phases.clear();
  const Report report = ReportOf(unlabelled, 1);
  ASSERT_TRUE(report.phases.empty());
  const RunPage page = RunPageOfRecording(report, unlabelled);
  EXPECT_EQ(page.phases_basis, "found");
  const auto found = FindPhasesOfGpu(report.gpus[0], unlabelled);
  ASSERT_TRUE(found.has_value());
  ASSERT_EQ(page.phases.size(), found->phases.size());
  ASSERT_GE(page.phases.size(), 5u);
  for (std::size_t i = 0; i < page.phases.size(); ++i) {
    EXPECT_EQ(page.phases[i].kind, PhaseKindWord(found->phases[i].kind));
    EXPECT_DOUBLE_EQ(*page.phases[i].ofu, found->phases[i].ofu);
    EXPECT_FALSE(page.phases[i].mfu.has_value());
    if (i > 0) {
      EXPECT_GT(page.phases[i].start_s, page.phases[i - 1].start_s);
    }
  }
  EXPECT_EQ(page.phases.front().kind, "startup");
}

}  // namespace
}  // namespace ofu::analysis
