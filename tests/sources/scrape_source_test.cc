// The scrape source against a real HTTP server on loopback serving
// synthetic dcgm-exporter output.
#include "ofu/sources/scrape_source.h"

#include <atomic>
#include <mutex>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "support/loopback_http_server.h"

namespace ofu::sources {
namespace {

// Synthetic dcgm-exporter body: two GPUs, no timestamps (as the exporter serves).
constexpr const char* kBody =
    R"(# HELP DCGM_FI_PROF_PIPE_TENSOR_ACTIVE Ratio of cycles the tensor (HMMA) pipe is active.
# TYPE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE gauge
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu="0",UUID="GPU-a",modelName="NVIDIA H100 80GB HBM3",Hostname="n1"} 0.625
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu="1",UUID="GPU-b",modelName="NVIDIA H100 80GB HBM3",Hostname="n1"} 0.125
# TYPE DCGM_FI_DEV_SM_CLOCK gauge
DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="GPU-a",modelName="NVIDIA H100 80GB HBM3",Hostname="n1"} 1755
DCGM_FI_DEV_SM_CLOCK{gpu="1",UUID="GPU-b",modelName="NVIDIA H100 80GB HBM3",Hostname="n1"} 1980
)";

class ScrapeSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    http_.server().Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
      if (fail_.load()) {
        response.status = 503;
        return;
      }
      const std::lock_guard<std::mutex> lock(body_mutex_);
      response.set_content(body_, "text/plain; version=0.0.4");
    });
    port_ = http_.Start();
    ASSERT_GT(port_, 0);
  }
  std::string Url() const { return fmt::format("http://127.0.0.1:{}/metrics", port_); }

  int port_ = 0;
  std::atomic<bool> fail_{false};
  std::mutex body_mutex_;
  std::string body_ = kBody;
  // Last: destroyed (stopped) first, before what its handlers use.
  ofu::testing::LoopbackHttpServer http_;
};

TEST_F(ScrapeSourceTest, EachWindowIsOneScrapeStampedWithTheWindowEnd) {
  FakeClock clock(5000);
  SourceOptions options;
  options.window_s = 2;
  auto source = OpenScrapeSource(Url(), options, clock);
  ASSERT_TRUE(source.ok()) << source.error().message;
  EXPECT_TRUE((*source)->live());
  EXPECT_EQ((*source)->kind(), "scrape");

  auto snapshot = (*source)->Next();
  ASSERT_TRUE(snapshot.ok() && snapshot->has_value());
  EXPECT_EQ((*snapshot)->time_s, 5002);
  EXPECT_EQ((*snapshot)->window_s, 2);
  ASSERT_EQ((*snapshot)->gpus.size(), 2u);
  const GpuReading& a = (*snapshot)->gpus[0];
  EXPECT_EQ(a.identity.uuid, "GPU-a");
  EXPECT_EQ(a.health, GpuHealth::kOk);
  EXPECT_EQ(a.sample.time_s, 5002);
  EXPECT_EQ(a.sample.tensor_active, 0.625);
  EXPECT_EQ(a.sample.sm_clock_mhz, 1755);
  EXPECT_EQ(a.clock_basis, ClockBasis::kPointReading);
  EXPECT_EQ((*snapshot)->gpus[1].sample.sm_clock_mhz, 1980);

  auto second = (*source)->Next();
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_EQ((*second)->time_s, 5004);
}

TEST_F(ScrapeSourceTest, FailedScrapeMarksKnownGpusUnavailableThenRecovers) {
  FakeClock clock(0);
  auto source = OpenScrapeSource(Url(), SourceOptions{}, clock);
  ASSERT_TRUE(source.ok()) << source.error().message;

  fail_ = true;
  auto down = (*source)->Next();
  ASSERT_TRUE(down.ok() && down->has_value());
  ASSERT_EQ((*down)->gpus.size(), 2u);
  for (const auto& gpu : (*down)->gpus) {
    EXPECT_EQ(gpu.health, GpuHealth::kUnavailable);
    EXPECT_NE(gpu.problem.find("HTTP status 503"), std::string::npos) << gpu.problem;
    EXPECT_FALSE(gpu.sample.tensor_active.has_value()) << "no data is absent, not zero";
  }

  fail_ = false;
  auto up = (*source)->Next();
  ASSERT_TRUE(up.ok() && up->has_value());
  EXPECT_EQ((*up)->gpus[0].health, GpuHealth::kOk);
  EXPECT_EQ((*up)->gpus[0].sample.tensor_active, 0.625);
}

TEST_F(ScrapeSourceTest, NothingListeningIsUnavailableWithAHint) {
  FakeClock clock(0);
  const std::string url = Url();
  http_.Stop();  // port now closed
  auto source = OpenScrapeSource(url, SourceOptions{}, clock);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(source.error().message.find(url), std::string::npos) << source.error().message;
  EXPECT_NE(source.error().message.find("dcgm-exporter"), std::string::npos) << source.error().message;
}

// The live source reads bodies with the replay reader, so a value dcgm-exporter
// could not format does not stop it; the note comes once, not every window.
TEST_F(ScrapeSourceTest, NonNumericValuesAreNotedOnceAndTheScrapeGoesOn) {
  {
    const std::lock_guard<std::mutex> lock(body_mutex_);
    body_ += "DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION{gpu=\"0\",UUID=\"GPU-a\"} ERROR - FAILED TO CONVERT TO STRING\n";
  }
  FakeClock clock(0);
  auto source = OpenScrapeSource(Url(), SourceOptions{}, clock);
  ASSERT_TRUE(source.ok()) << source.error().message;

  auto first = (*source)->Next();
  ASSERT_TRUE(first.ok() && first->has_value()) << (first.ok() ? "" : first.error().message);
  ASSERT_EQ((*first)->gpus.size(), 2u);
  EXPECT_EQ((*first)->gpus[0].sample.tensor_active, 0.625);
  ASSERT_EQ((*first)->notes.size(), 1u);
  EXPECT_EQ((*first)->notes[0],
            Url() +
                ":8: DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION: value 'ERROR - FAILED TO CONVERT TO STRING' is not a "
                "number; 1 such sample skipped (family not used by ofu)");

  auto second = (*source)->Next();
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_TRUE((*second)->notes.empty());
}

TEST(ScrapeSource, OnlyHttpUrls) {
  FakeClock clock(0);
  auto source = OpenScrapeSource("https://x/metrics", SourceOptions{}, clock);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace ofu::sources
