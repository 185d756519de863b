// A report's OFU must not depend on --window (core/windows.h: each tensor
// sample is paired with its own clock). On the bundled REAL H100 recording
// (data/recordings/h100-sxm5-stage-a-1s.om, 1 s samples, 74 s) the load
// changes inside most windows: before the pairing, overall OFU read 0.3273,
// 0.3234, 0.3118, 0.3179 and 0.3408 with 1, 5, 10, 30 and 60 s windows, while
// the mean of the per-sample products, sum(A x f) / (N x f_spec), is 0.3265.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <vector>

#include <gtest/gtest.h>

#include "ofu/analysis/report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/sources/replay.h"

namespace ofu::analysis {
namespace {

sources::Recording Bundled() {
  const std::string path = std::string(OFU_SOURCE_DIR) + "/data/recordings/h100-sxm5-stage-a-1s.om";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  auto recording = sources::ReadRecording(in, path);
  EXPECT_TRUE(recording.ok()) << recording.error().message;
  return std::move(recording).value();
}

Report ReportAt(const sources::Recording& recording, double window_s, bool reported_clock) {
  ReportOptions options;
  options.windows.window_s = window_s;
  options.reported_clock = reported_clock;
  auto report = BuildReport(recording, *GpuSpecDatabase::Embedded(), options);
  EXPECT_TRUE(report.ok()) << report.error().message;
  return std::move(report).value();
}

TEST(WindowLength, OverallOfuIsTheMeanOfThePerSampleProductsForEveryWindow) {
  const sources::Recording recording = Bundled();
  ASSERT_EQ(recording.gpus.size(), 1u);
  const double f_spec = 989.4e6 / (132.0 * 4096);  // H100 SXM5, MHz

  // By hand from the samples: the plain mean of A x f, and the mean
  // weighted by the seconds each sample covers (the first covers the median
  // spacing, about 1 s), which is what the windows add up.
  const auto& samples = recording.gpus[0].samples;
  std::vector<double> spacings;
  for (std::size_t i = 1; i < samples.size(); ++i) spacings.push_back(samples[i].time_s - samples[i - 1].time_s);
  std::sort(spacings.begin(), spacings.end());
  const double median = spacings.size() % 2 == 1
                            ? spacings[spacings.size() / 2]
                            : (spacings[spacings.size() / 2 - 1] + spacings[spacings.size() / 2]) / 2;
  double plain = 0, weighted = 0, seconds = 0;
  int n = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const CounterSample& s = samples[i];
    if (!s.tensor_active || !s.sm_clock_mhz) continue;
    const double covers = i == 0 ? median : s.time_s - samples[i - 1].time_s;
    plain += *s.tensor_active * *s.sm_clock_mhz;
    weighted += *s.tensor_active * *s.sm_clock_mhz * covers;
    seconds += covers;
    ++n;
  }
  plain /= n * f_spec;
  weighted /= seconds * f_spec;
  EXPECT_NEAR(plain, 0.3265, 5e-5);

  for (double window_s : {1.0, 5.0, 10.0, 30.0, 60.0}) {
    const Report report = ReportAt(recording, window_s, /*reported_clock=*/true);
    ASSERT_TRUE(report.overall.ofu.has_value()) << window_s;
    EXPECT_NEAR(*report.overall.ofu, weighted, 1e-9) << window_s << " s windows";
    EXPECT_NEAR(*report.overall.ofu, plain, 0.001) << window_s << " s windows";
  }
}

TEST(WindowLength, WithTheMeasuredModelEveryWindowLengthAndEveryPhaseAgree) {
  const sources::Recording recording = Bundled();
  const Report one = ReportAt(recording, 1, /*reported_clock=*/false);
  ASSERT_TRUE(one.overall.ofu.has_value());
  EXPECT_EQ(one.overall.clock_sources, static_cast<std::uint8_t>(ClockSource::kMeasuredModel));
  for (double window_s : {5.0, 10.0, 30.0, 60.0}) {
    const Report report = ReportAt(recording, window_s, false);
    EXPECT_NEAR(*report.overall.ofu, *one.overall.ofu, 1e-9) << window_s << " s windows";
    // The phase table reads the samples, not the report's windows.
    ASSERT_EQ(report.phases.size(), one.phases.size());
    for (std::size_t i = 0; i < report.phases.size(); ++i) {
      ASSERT_EQ(report.phases[i].ofu.has_value(), one.phases[i].ofu.has_value());
      if (one.phases[i].ofu) {
        EXPECT_DOUBLE_EQ(*report.phases[i].ofu, *one.phases[i].ofu);
      }
    }
  }
}

}  // namespace
}  // namespace ofu::analysis
