// FindPhases (phase_finder.h) on REAL recordings read without their labels,
// checked against the labels, and on SYNTHETIC series for the edge cases.
#include "ofu/analysis/phase_finder.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ofu/core/gpu_share.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/sources/replay.h"

namespace ofu::analysis {
namespace {

struct Loaded {
  sources::Recording recording;
  PhaseSeries series;
  double interval_s = 0;
};

Loaded Load(const std::string& path) {
  Loaded loaded;
  auto recording = sources::ReadRecordingFile(path);
  EXPECT_TRUE(recording.ok()) << recording.error().message;
  loaded.recording = std::move(recording.value());
  EXPECT_EQ(loaded.recording.gpus.size(), 1u);
  const auto& gpu = loaded.recording.gpus.front();
  // Each sample is the mean of the interval before it: the median spacing.
  std::vector<double> spacing;
  for (std::size_t i = 1; i < gpu.samples.size(); ++i)
    spacing.push_back(gpu.samples[i].time_s - gpu.samples[i - 1].time_s);
  std::nth_element(spacing.begin(), spacing.begin() + static_cast<std::ptrdiff_t>(spacing.size() / 2), spacing.end());
  loaded.interval_s = spacing[spacing.size() / 2];
  static const auto specs = GpuSpecDatabase::Embedded();
  EXPECT_TRUE(specs.ok());
  auto spec = specs.value().Lookup(gpu.identity.model);
  EXPECT_TRUE(spec.ok()) << gpu.identity.model;
  loaded.series = PhaseSeriesOf(gpu.samples, loaded.interval_s, OfuScaleOf(*spec.value(), gpu.identity),
                                DefaultPhaseCounters());
  return loaded;
}

// The labelled boundaries of a recording and what the finder must do at
// each. A stage's level is the mean of its windows wholly inside it (its
// OFU and each signal), as the phase table measures it (phase_table.h).
// Between two stages the workload set up and warmed up the next loop,
// unlabelled: the change happens somewhere in [a.end, b.start], so a found
// boundary counts for it when it lies within one window of that stretch. The
// first stage's warm-up is unlabelled too, so the boundary before it may lie
// up to the longest such stretch (g) before its start (and the level before
// it is of the windows before that); the one after the last stage may lie up
// to g after its end (the level after it: from one window past its end). D is the largest |difference| / threshold over
// OFU (5 pp) and the signals (5 pp each), the finder's own measure (phase_finder.h):
//   D > 1.2   required: a boundary must be found there;
//   D < 0.8   exempt: nothing changes, so a boundary there is invented;
//   between   either: within 1 pp of the threshold, where the warm-up and
//             transition windows the finder also sees (and the stage means
//             leave out) can tip the means either way.
struct Labelled {
  std::string name;
  double lo = 0, hi = 0;  // the stretch a found boundary must lie in
  double d = 0;
};

struct Level {
  std::optional<double> ofu;
  std::vector<std::optional<double>> signals;
};

Level LevelIn(const PhaseSeries& series, double start_s, double end_s) {
  Level level;
  double ofu_sum = 0, seconds = 0;
  std::vector<double> sums(series.signals.size()), weights(series.signals.size());
  for (std::size_t i = 0; i < series.windows.size(); ++i) {
    const OfuWindow& w = series.windows[i];
    if (w.start_s < start_s || w.end_s > end_s || !w.ofu) continue;
    const double length = w.end_s - w.start_s;
    ofu_sum += *w.ofu * length;
    seconds += length;
    for (std::size_t c = 0; c < sums.size(); ++c) {
      if (const auto v = series.signals[c].values[i]) {
        sums[c] += *v * length;
        weights[c] += length;
      }
    }
  }
  if (seconds > 0) level.ofu = ofu_sum / seconds;
  for (std::size_t c = 0; c < sums.size(); ++c) {
    level.signals.push_back(weights[c] > 0 ? std::optional<double>(sums[c] / weights[c]) : std::nullopt);
  }
  return level;
}

double D(const Level& a, const Level& b, const PhaseSeries& series, const PhaseFinderOptions& options) {
  double d = std::abs(*a.ofu - *b.ofu) / options.ofu_threshold;
  for (std::size_t c = 0; c < a.signals.size(); ++c) {
    if (a.signals[c] && b.signals[c]) {
      d = std::max(d, std::abs(*a.signals[c] - *b.signals[c]) / series.signals[c].threshold);
    }
  }
  return d;
}

std::vector<Labelled> LabelledBoundaries(const Loaded& loaded, const PhaseFinderOptions& options) {
  const auto& stages = loaded.recording.phases;
  const auto& series = loaded.series;
  const double w = loaded.interval_s;
  double g = 0;
  for (std::size_t i = 1; i < stages.size(); ++i) g = std::max(g, stages[i].start_s - stages[i - 1].end_s);
  std::vector<Labelled> out;
  // Before the first stage and its warm-up: start-up.
  const Level before = LevelIn(series, series.windows.front().start_s, stages.front().start_s - g);
  if (before.ofu) {
    out.push_back({"(start) | " + stages.front().name, stages.front().start_s - g - w, stages.front().start_s + w,
                   D(before, LevelIn(series, stages.front().start_s, stages.front().end_s), series, options)});
  }
  for (std::size_t i = 1; i < stages.size(); ++i) {
    const auto& a = stages[i - 1];
    const auto& b = stages[i];
    out.push_back({a.name + " | " + b.name, a.end_s - w, b.start_s + w,
                   D(LevelIn(series, a.start_s, a.end_s), LevelIn(series, b.start_s, b.end_s), series, options)});
  }
  // After the last stage nothing warms up: from one window past its end.
  const Level after = LevelIn(series, stages.back().end_s + w, series.windows.back().end_s);
  if (after.ofu) {
    out.push_back({stages.back().name + " | (end)", stages.back().end_s - w, stages.back().end_s + g + w,
                   D(LevelIn(series, stages.back().start_s, stages.back().end_s), after, series, options)});
  }
  return out;
}

struct RealCase {
  std::string path;
  PhaseFinderOptions options;
  bool exactly_one;  // one boundary per required stretch (the stretch is shorter than a phase)
};

// Checks the found boundaries against the labelled ones (above) and returns
// how many required ones were found.
int CheckAgainstLabels(const RealCase& c) {
  const Loaded loaded = Load(c.path);
  EXPECT_FALSE(loaded.recording.phases.empty());
  const PhaseFinding found = FindPhases(loaded.series.windows, loaded.series.signals, c.options);
  std::vector<double> boundaries;
  for (std::size_t i = 0; i + 1 < found.phases.size(); ++i) boundaries.push_back(found.phases[i].end_s);
  const auto labelled = LabelledBoundaries(loaded, c.options);
  int required_found = 0;
  for (const auto& l : labelled) {
    const auto n = std::count_if(boundaries.begin(), boundaries.end(),
                                 [&](double b) { return b >= l.lo && b <= l.hi; });
    if (l.d > 1.2) {
      EXPECT_GE(n, 1) << c.path << ": no boundary found at " << l.name << " (D " << l.d << ")";
      if (c.exactly_one) {
        EXPECT_EQ(n, 1) << c.path << ": " << l.name;
      }
      if (n >= 1) ++required_found;
    } else if (l.d < 0.8) {
      EXPECT_EQ(n, 0) << c.path << ": a boundary invented at " << l.name << " (D " << l.d << ")";
    }
  }
  for (double b : boundaries) {
    const bool explained = std::any_of(labelled.begin(), labelled.end(),
                                       [&](const Labelled& l) { return l.d >= 0.8 && b >= l.lo && b <= l.hi; });
    EXPECT_TRUE(explained) << c.path << ": a boundary invented at " << std::fixed << b;
  }
  return required_found;
}

// REAL: the bundled H100 recording (data/recordings/README.md), 1 s windows,
// read without its labels. Its 8 stages give 9 labelled boundaries (with
// start-up before the first and the end after the last):
//   required (7): start-up | bf16-8192 (D 20), tf32 | fp8 (OFU 72.2 -> 62.1 %,
//     FP32 pipe 0.1 -> 23 %: D 4.6), fp8 | bf16-4097 (D 6.2), bf16-4097 | copy
//     (D 16.6), copy | idle and idle | fp32-simt-8192 (OFU 0 on both sides:
//     found by the graphics engine, SM and DRAM activity and the FP32 pipe,
//     D 20), fp32-simt-8192 | end (D 20);
//   exempt (1): bf16 | fp16 8192³ (OFU 70.2 vs 67.2 %, every counter within
//     1.1 pp: D 0.60): a boundary there would be invented;
//   either (1): fp16 | tf32 8192³ (OFU 67.2 vs 72.2 %: 4.99 pp, D 0.998; SM
//     occupancy 14.3 vs 18.0 %). The finder merges bf16, fp16 and tf32 into
//     one phase (67.8 %).
// The stretch between two stages is about 1.4 s, shorter than a phase of
// 3 windows, so each required boundary is found exactly once.
TEST(PhaseFinderReal, BundledH100StageAWithoutLabels) {
  const RealCase c{std::string(OFU_SOURCE_DIR) + "/data/recordings/h100-sxm5-stage-a-1s.om", {}, true};
  EXPECT_EQ(CheckAgainstLabels(c), 7);
  // What the phases are: start-up until the first GEMM, four steady ones,
  // then OFU ~0 to the end (copy, idle, the FP32 GEMM, idle): the tail.
  const Loaded loaded = Load(c.path);
  const PhaseFinding found = FindPhases(loaded.series.windows, loaded.series.signals);
  ASSERT_EQ(found.phases.size(), 8u);
  const PhaseKind kinds[] = {PhaseKind::kStartup, PhaseKind::kSteady, PhaseKind::kSteady, PhaseKind::kSteady,
                             PhaseKind::kTail,    PhaseKind::kTail,   PhaseKind::kTail,   PhaseKind::kTail};
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(found.phases[i].kind, kinds[i]) << i;
  EXPECT_NEAR(found.phases[2].ofu, 0.6171, 1e-4);  // fp8 8192³ and its warm-up
  EXPECT_NEAR(found.phases[3].ofu, 0.3023, 1e-4);  // bf16 4097³
  EXPECT_EQ(found.stall_share, 0.0);               // no stall between tensor work
}

// REAL: the clock-truth runs (tests/data/gpu-results/2026-11-27-clock-truth/),
// 100 ms windows, without their labels. Each stage's label starts 2 s after
// its loop did, so between two stages lie 2 s (20 windows) of warm-up, long
// enough to be phases of their own: a required boundary is found at least
// once there, and no boundary may fall anywhere else. min_windows is 10 (a
// phase of at least 1 s): with 3, the H100 finds a 3-window dip of 5.6 pp
// 0.28 s into bf16-8192, where the power cap first bites and NVML's clock
// drops for 300 ms: a real change of OFU, but no phase of the job.
//   h100-plan1: 10 required (start-up, bf16 | idle-1, idle-1 | bf16-4097,
//     bf16-4097 | fp16, tf32 | fp8, fp8 | fp32 (by the FP32 pipe and OFU),
//     fp32 | idle-2 (OFU 0 on both sides: by the activities), idle-2 |
//     bf16-again, bf16-again | mixed, end); either: fp16 | tf32 (66.1 vs
//     70.9 %: D 0.96), where it finds two, around tf32's warm-up (OFU 67.5 %,
//     the graphics engine 95 %: the pause between the loops).
//   h200-plan1: 9 required (the same less `mixed`); either: fp16 | tf32
//     (64.7 vs 69.1 %: D 0.88), where it finds none.
TEST(PhaseFinderReal, ClockTruthH100WithoutLabels) {
  const RealCase c{
      std::string(OFU_TEST_DATA_DIR) + "/gpu-results/2026-11-27-clock-truth/h100-plan1.om", {.min_windows = 10}, false};
  EXPECT_EQ(CheckAgainstLabels(c), 10);
}

TEST(PhaseFinderReal, ClockTruthH200WithoutLabels) {
  const RealCase c{
      std::string(OFU_TEST_DATA_DIR) + "/gpu-results/2026-11-27-clock-truth/h200-plan1.om", {.min_windows = 10}, false};
  EXPECT_EQ(CheckAgainstLabels(c), 9);
}

// SYNTHETIC series from here on: made up for these tests, 1 s windows
// ending at t = 1, 2, ... with the OFU given.
std::vector<OfuWindow> Series(const std::vector<std::optional<double>>& ofu) {
  std::vector<OfuWindow> windows;
  for (std::size_t i = 0; i < ofu.size(); ++i) {
    OfuWindow w;
    w.start_s = static_cast<double>(i);
    w.end_s = static_cast<double>(i + 1);
    w.ofu = ofu[i];
    windows.push_back(w);
  }
  return windows;
}

std::vector<std::optional<double>> Repeat(std::vector<std::optional<double>> out, std::optional<double> value, int n) {
  out.insert(out.end(), static_cast<std::size_t>(n), value);
  return out;
}

TEST(PhaseFinderSynthetic, AllIdleIsOneLowPhaseAndAllOfItLost) {
  const PhaseFinding f = FindPhases(Series(Repeat({}, 0.0, 12)));
  ASSERT_EQ(f.phases.size(), 1u);
  EXPECT_EQ(f.phases[0].kind, PhaseKind::kLow);  // no tensor work at all: not start-up
  EXPECT_EQ(f.phases[0].start_s, 0);
  EXPECT_EQ(f.phases[0].end_s, 12);
  EXPECT_EQ(f.phases[0].windows, 12);
  EXPECT_EQ(f.seconds, 12);
  EXPECT_EQ(f.stall_share, 1.0);
}

TEST(PhaseFinderSynthetic, NoWindowsNoShare) {
  const PhaseFinding f = FindPhases(Series({std::nullopt, std::nullopt}));
  EXPECT_TRUE(f.phases.empty());
  EXPECT_EQ(f.windows_without_ofu, 2);
  EXPECT_FALSE(f.stall_share.has_value());
}

TEST(PhaseFinderSynthetic, AOneWindowBlipIsNoPhase) {
  // 0.6 x 5, one window at 0 (a hiccup), 0.6 x 5.
  const PhaseFinding f = FindPhases(Series(Repeat(Repeat(Repeat({}, 0.6, 5), 0.0, 1), 0.6, 5)));
  ASSERT_EQ(f.phases.size(), 1u);
  EXPECT_EQ(f.phases[0].kind, PhaseKind::kSteady);
  EXPECT_EQ(f.phases[0].windows, 11);
  EXPECT_NEAR(f.phases[0].ofu, 6.0 / 11, 1e-12);  // the blip's second counts in the mean
  EXPECT_EQ(f.stall_share, 0.0);
  // Two windows are still a blip; three are a phase (min_windows).
  EXPECT_EQ(FindPhases(Series(Repeat(Repeat(Repeat({}, 0.6, 5), 0.0, 2), 0.6, 5))).phases.size(), 1u);
  EXPECT_EQ(FindPhases(Series(Repeat(Repeat(Repeat({}, 0.6, 5), 0.0, 3), 0.6, 5))).phases.size(), 3u);
}

TEST(PhaseFinderSynthetic, StartupSteadyCheckpointSteadyTail) {
  // start-up 4 s at 0; steady 10 s alternating 0.54/0.56 (noise under the
  // threshold); a checkpoint save 5 s at 0.01; steady 9 s: one window that
  // straddles the restart (0.35), then 8 at 0.60; tail 3 s at 0.
  auto series = [](double straddle) {
    std::vector<std::optional<double>> ofu = Repeat({}, 0.0, 4);
    for (int i = 0; i < 10; ++i) ofu.push_back(i % 2 == 0 ? 0.54 : 0.56);
    ofu = Repeat(ofu, 0.01, 5);
    ofu = Repeat(ofu, straddle, 1);
    ofu = Repeat(ofu, 0.6, 8);
    return Series(Repeat(ofu, 0.0, 3));
  };
  const PhaseFinding f = FindPhases(series(0.35));
  ASSERT_EQ(f.phases.size(), 5u);
  const PhaseKind kinds[] = {PhaseKind::kStartup, PhaseKind::kSteady, PhaseKind::kLow, PhaseKind::kSteady,
                             PhaseKind::kTail};
  const double starts[] = {0, 4, 14, 19, 28};
  const double ends[] = {4, 14, 19, 28, 31};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(f.phases[i].kind, kinds[i]) << i;
    EXPECT_EQ(f.phases[i].start_s, starts[i]) << i;
    EXPECT_EQ(f.phases[i].end_s, ends[i]) << i;
  }
  EXPECT_NEAR(f.phases[1].ofu, 0.55, 1e-12);
  EXPECT_NEAR(f.phases[2].ofu, 0.01, 1e-12);
  EXPECT_EQ(f.phases[2].windows, 5);
  // The straddling window is a blip nearer 0.60 (0.25 away) than 0.01 (0.34): it
  // joins the restart, whose mean it lowers.
  EXPECT_NEAR(f.phases[3].ofu, (0.35 + 8 * 0.6) / 9, 1e-12);
  // By hand: 31 s observed, the checkpoint's 5 s lost: 5 / 31.
  EXPECT_EQ(f.seconds, 31);
  EXPECT_EQ(f.startup_s, 4);
  EXPECT_EQ(f.low_s, 5);
  EXPECT_EQ(f.tail_s, 3);
  EXPECT_EQ(f.steady_s, 19);
  ASSERT_TRUE(f.stall_share.has_value());
  EXPECT_NEAR(*f.stall_share, 5.0 / 31, 1e-12);

  // At 0.30 it is nearer the checkpoint (0.29 away) and joins it; the mean
  // becomes (5 x 0.01 + 0.30) / 6 = 0.058, above low_ofu, but a blip does
  // not set a phase's level, so it is still a stall: 6 s of 31.
  const PhaseFinding g = FindPhases(series(0.30));
  ASSERT_EQ(g.phases.size(), 5u);
  EXPECT_NEAR(g.phases[2].ofu, 0.35 / 6, 1e-12);
  EXPECT_EQ(g.phases[2].kind, PhaseKind::kLow);
  EXPECT_NEAR(*g.stall_share, 6.0 / 31, 1e-12);
}

TEST(PhaseFinderSynthetic, AnotherCounterMarksABoundaryWhereOfuDoesNot) {
  // OFU 0 throughout: 6 s of a copy (DRAM 0.9), then 6 s idle (DRAM 0).
  const auto windows = Series(Repeat({}, 0.0, 12));
  PhaseSignal dram{"dram_active", {}, 0.05};
  dram.values = Repeat(Repeat({}, 0.9, 6), 0.0, 6);
  const PhaseSignal signals[] = {dram};
  const PhaseFinding f = FindPhases(windows, signals);
  ASSERT_EQ(f.phases.size(), 2u);
  EXPECT_EQ(f.phases[0].end_s, 6);
  ASSERT_TRUE(f.phases[0].signals[0].has_value());
  EXPECT_NEAR(*f.phases[0].signals[0], 0.9, 1e-12);
  EXPECT_EQ(f.phases[1].signals[0], 0.0);
  EXPECT_EQ(f.phases[0].kind, PhaseKind::kLow);
  // A signal absent in a window is no value, not 0: with the copy's DRAM
  // unknown, nothing tells the two apart.
  dram.values = Repeat(Repeat({}, std::nullopt, 6), 0.0, 6);
  const PhaseSignal unknown[] = {dram};
  EXPECT_EQ(FindPhases(windows, unknown).phases.size(), 1u);
}

TEST(PhaseFinderSynthetic, ShortGapsAreBridgedLongOnesCut) {
  // 0.5 x 5, 2 windows without OFU (bridged: at most min_windows long), 0.5 x 5,
  // 4 without (cut), 0.5 x 5.
  std::vector<std::optional<double>> ofu = Repeat({}, 0.5, 5);
  ofu = Repeat(ofu, std::nullopt, 2);
  ofu = Repeat(ofu, 0.5, 5);
  ofu = Repeat(ofu, std::nullopt, 4);
  ofu = Repeat(ofu, 0.5, 5);
  const PhaseFinding f = FindPhases(Series(ofu));
  EXPECT_EQ(f.windows_without_ofu, 6);
  ASSERT_EQ(f.phases.size(), 2u);
  EXPECT_EQ(f.phases[0].start_s, 0);
  EXPECT_EQ(f.phases[0].end_s, 12);    // spans the bridged 2 s ...
  EXPECT_EQ(f.phases[0].seconds, 10);  // ... which it does not count
  EXPECT_EQ(f.phases[1].start_s, 16);
  EXPECT_EQ(f.seconds, 15);
  // A short run alone between cuts stays, short: it has nothing to merge into.
  const PhaseFinding alone = FindPhases(Series(Repeat(Repeat(Repeat({}, 0.5, 5), std::nullopt, 4), 0.0, 1)));
  ASSERT_EQ(alone.phases.size(), 2u);
  EXPECT_EQ(alone.phases[1].windows, 1);
}

TEST(PhaseFinderSynthetic, TimeWeightedAndDeterministic) {
  // Windows of 1 s and 3 s: the mean weighs by seconds.
  std::vector<OfuWindow> windows = Series({0.2, 0.2, 0.2});
  windows[2].end_s = 5;  // (2, 5]
  windows[2].ofu = 0.22;
  const PhaseFinding f = FindPhases(windows);
  ASSERT_EQ(f.phases.size(), 1u);
  EXPECT_NEAR(f.phases[0].ofu, (0.2 + 0.2 + 3 * 0.22) / 5, 1e-12);
  // Equal distance both sides: the blip joins the earlier neighbour.
  const PhaseFinding tie = FindPhases(Series(Repeat(Repeat(Repeat({}, 0.0, 4), 0.3, 1), 0.6, 4)));
  ASSERT_EQ(tie.phases.size(), 2u);
  EXPECT_EQ(tie.phases[0].end_s, 5);
}

TEST(PhaseFinderSynthetic, NamesOfKinds) {
  EXPECT_EQ(PhaseKindName(PhaseKind::kStartup), "startup");
  EXPECT_EQ(PhaseKindName(PhaseKind::kSteady), "steady");
  EXPECT_EQ(PhaseKindName(PhaseKind::kLow), "low");
  EXPECT_EQ(PhaseKindName(PhaseKind::kTail), "tail");
}

}  // namespace
}  // namespace ofu::analysis
