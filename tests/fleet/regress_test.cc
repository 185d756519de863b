// Change-point detection: fires on planted changes, not on noise. The series
// are SYNTHETIC, drawn here with fixed seeds.
#include "ofu/analysis/regress.h"
#include "ofu/render/regress_output.h"

#include <random>

#include <gtest/gtest.h>

namespace {

using ofu::analysis::ChangeOptions;
using ofu::analysis::DetectChanges;
using ofu::analysis::RobustNoise;

std::vector<double> Noisy(std::mt19937_64& rng, size_t n, double level, double relative_noise) {
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> v(n);
  for (double& x : v) x = level * (1 + relative_noise * normal(rng));
  return v;
}

TEST(ChangePoints, NoiselessStepIsFoundExactly) {
  std::vector<double> v(40, 0.5);
  for (size_t i = 25; i < v.size(); ++i) v[i] = 0.2;  // 2.5x lower from index 25
  const auto changes = DetectChanges(v, {});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].index, 25u);
  EXPECT_NEAR(changes[0].before, 0.5, 1e-12);  // means from prefix sums: off by rounding only
  EXPECT_NEAR(changes[0].after, 0.2, 1e-12);
}

TEST(ChangePoints, RobustNoiseIgnoresTheStep) {
  // Alternating ±0.01 around 0.5, then 0.2: |diffs| are 0.02 except one 0.3.
  std::vector<double> v;
  for (int i = 0; i < 100; ++i) v.push_back((i < 50 ? 0.5 : 0.2) + (i % 2 ? 0.01 : -0.01));
  // median |diff| = 0.02 -> sigma = 1.4826 * 0.02 / sqrt(2)
  EXPECT_NEAR(RobustNoise(v), 1.4826 * 0.02 / std::sqrt(2.0), 1e-12);
}

TEST(ChangePoints, PlantedChangesAreFoundAndNoiseIsNot) {
  std::mt19937_64 rng(42);
  int false_alarms = 0, found = 0;
  for (int trial = 0; trial < 200; ++trial) {
    // Noise only: 5 % relative noise, 1000 windows.
    false_alarms += static_cast<int>(DetectChanges(Noisy(rng, 1000, 0.4, 0.05), {}).size());
    // A 2.5x drop at a random point, same noise.
    const size_t at = 100 + static_cast<size_t>(trial) * 4;
    std::vector<double> v = Noisy(rng, 1000, 0.4, 0.05);
    for (size_t i = at; i < v.size(); ++i) v[i] /= 2.5;
    const auto changes = DetectChanges(v, {});
    if (changes.size() == 1 && changes[0].index >= at - 1 && changes[0].index <= at + 1 &&
        std::abs(changes[0].after / changes[0].before - 0.4) < 0.02) {
      ++found;
    }
  }
  EXPECT_EQ(false_alarms, 0);
  EXPECT_EQ(found, 200);
}

TEST(ChangePoints, SmallEffectsAndShortSegmentsAreNotChanges) {
  std::vector<double> v(100, 0.4);
  for (size_t i = 50; i < v.size(); ++i) v[i] = 0.36;  // 10 %: below min_ratio 1.25
  EXPECT_TRUE(DetectChanges(v, {}).empty());
  // A 5-window dip (a checkpoint) mid-run: any split with 10 windows a side
  // averages it away, e.g. at 50: 0.4 against (5·0.1 + 45·0.4)/50 = 0.37, 1.08x.
  std::vector<double> blip(100, 0.4);
  for (size_t i = 50; i < 55; ++i) blip[i] = 0.1;
  EXPECT_TRUE(DetectChanges(blip, {}).empty());
  // Shares use an absolute effect instead: 0.97 -> 0.30 is a shift, 0.97 -> 0.90 is not.
  ChangeOptions shares{10, 6, 1.0, 0.2, 8};
  std::vector<double> s(60, 0.97);
  for (size_t i = 30; i < s.size(); ++i) s[i] = 0.30;
  EXPECT_EQ(DetectChanges(s, shares).size(), 1u);
  for (size_t i = 30; i < s.size(); ++i) s[i] = 0.90;
  EXPECT_TRUE(DetectChanges(s, shares).empty());
}

TEST(ChangePoints, TwoChangesUpAndDown) {
  std::mt19937_64 rng(7);
  std::vector<double> v = Noisy(rng, 600, 0.5, 0.03);
  for (size_t i = 200; i < 400; ++i) v[i] /= 2.5;  // a debug build for a while
  const auto changes = DetectChanges(v, {});
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_NEAR(static_cast<double>(changes[0].index), 200, 1);
  EXPECT_NEAR(static_cast<double>(changes[1].index), 400, 1);
  EXPECT_GT(changes[1].after / changes[1].before, 2.3);
}

// The CSV quotes what a user named: a job name with a comma, an id with a
// double quote. Hand-made findings (SYNTHETIC), one of each kind; each row
// written out by hand. Before the writer quoted, "train, v2" made a row of
// ten fields under a header of nine.
TEST(RegressCsv, QuotesJobNamesAndIdsThatHoldCommasOrQuotes) {
  ofu::analysis::RegressReport report;
  report.changes.push_back({"j\"1", "train, v2", 1000, 0.5, 0.2, 0.4, 9, {"GPU-a", "GPU-b"}});
  report.run_changes.push_back({"eval,nightly", "j7", 2000, 0.3, 0.6, 2, 3, 4});
  report.precision_shifts.push_back({"j9", "plain", 3000, {{"hmma", 0.9, 0.1}}, {"GPU-c"}});
  EXPECT_EQ(ofu::render::RenderRegressCsv(report),
            "kind,job_id,job_name,time_s,what,before,after,ratio,gpus\n"
            "ofu_change,\"j\"\"1\",\"train, v2\",1000,ofu,0.5,0.2,0.4,GPU-a GPU-b\n"
            "run_change,j7,\"eval,nightly\",2000,ofu,0.3,0.6,2,\n"
            "precision_shift,j9,plain,3000,hmma_share,0.9,0.1,,GPU-c\n");
}

}  // namespace
