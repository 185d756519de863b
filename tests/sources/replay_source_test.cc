// Replay through the Source interface (synthetic recordings written here).
#include "ofu/sources/replay_source.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace ofu::sources {
namespace {

namespace fs = std::filesystem;

// Synthetic: GPU A sampled at 10, 11, 12 s; GPU B only at 10 and 12 s.
constexpr const char* kTwoGpus = R"(# TYPE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE gauge
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu="0",UUID="GPU-a",modelName="NVIDIA H100 80GB HBM3"} 0.5 10
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu="0",UUID="GPU-a",modelName="NVIDIA H100 80GB HBM3"} 0.25 11
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu="0",UUID="GPU-a",modelName="NVIDIA H100 80GB HBM3"} 0.75 12
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu="1",UUID="GPU-b",modelName="NVIDIA H100 80GB HBM3"} 0.1 10
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu="1",UUID="GPU-b",modelName="NVIDIA H100 80GB HBM3"} 0.2 12
# TYPE DCGM_FI_DEV_SM_CLOCK gauge
DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="GPU-a",modelName="NVIDIA H100 80GB HBM3"} 1830 10
# EOF
)";

class ReplaySourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() /
            ("ofu-replay-source-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".om");
    std::ofstream(path_) << kTwoGpus;
  }
  void TearDown() override { fs::remove(path_); }
  fs::path path_;
};

TEST_F(ReplaySourceTest, YieldsOneSnapshotPerInstantWithEveryGpu) {
  FakeClock clock(1000);
  auto source = OpenReplaySource(path_.string(), SourceOptions{}, clock);
  ASSERT_TRUE(source.ok()) << source.error().message;
  EXPECT_FALSE((*source)->live());
  EXPECT_EQ((*source)->kind(), "replay");

  auto first = (*source)->Next();
  ASSERT_TRUE(first.ok() && first->has_value());
  const Snapshot& s0 = **first;
  EXPECT_EQ(s0.time_s, 10);
  EXPECT_EQ(s0.window_s, 1);  // time to the next instant
  ASSERT_EQ(s0.gpus.size(), 2u);
  EXPECT_EQ(s0.gpus[0].identity.uuid, "GPU-a");
  EXPECT_EQ(s0.gpus[0].sample.tensor_active, 0.5);
  EXPECT_EQ(s0.gpus[0].sample.sm_clock_mhz, 1830);
  EXPECT_EQ(s0.gpus[0].clock_basis, ClockBasis::kPointReading);
  EXPECT_EQ(s0.gpus[1].sample.tensor_active, 0.1);
  EXPECT_EQ(s0.gpus[1].clock_basis, ClockBasis::kNone);

  auto second = (*source)->Next();
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_EQ((*second)->time_s, 11);
  EXPECT_EQ((*second)->gpus[0].sample.tensor_active, 0.25);
  EXPECT_FALSE((*second)->gpus[1].sample.tensor_active.has_value()) << "GPU b has no sample at 11 s: absent";
  EXPECT_EQ((*second)->gpus[1].sample.time_s, 11);

  auto third = (*source)->Next();
  ASSERT_TRUE(third.ok() && third->has_value());
  EXPECT_EQ((*third)->gpus[1].sample.tensor_active, 0.2);

  auto end = (*source)->Next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());
  EXPECT_EQ(clock.NowS(), 1000) << "no pacing unless asked";
}

TEST_F(ReplaySourceTest, PacingSleepsTheRecordedSpacing) {
  FakeClock clock(1000);
  SourceOptions options;
  options.pace_replay = true;
  auto source = OpenReplaySource(path_.string(), options, clock);
  ASSERT_TRUE(source.ok());
  while (true) {
    auto next = (*source)->Next();
    ASSERT_TRUE(next.ok());
    if (!next->has_value()) break;
  }
  EXPECT_EQ(clock.NowS(), 1002);  // 10 -> 11 -> 12: two one-second steps
}

TEST(ReplaySource, MissingFileIsAnIoErrorNamingIt) {
  FakeClock clock(0);
  auto source = OpenReplaySource("/nonexistent/rec.om", SourceOptions{}, clock);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code, ErrorCode::kIo);
  EXPECT_NE(source.error().message.find("/nonexistent/rec.om"), std::string::npos);
}

}  // namespace
}  // namespace ofu::sources
