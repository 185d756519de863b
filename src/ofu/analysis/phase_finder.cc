#include "ofu/analysis/phase_finder.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <functional>
#include <queue>
#include <tuple>
#include <utility>

namespace ofu::analysis {
namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// The windows with an OFU, as channels: 0 is OFU, 1.. the signals.
class Segmenter {
 public:
  Segmenter(std::span<const OfuWindow> windows, std::span<const PhaseSignal> signals, const PhaseFinderOptions& options)
      : windows_(windows), signals_(signals), channels_(1 + signals.size()) {
    thresholds_.push_back(options.ofu_threshold);
    for (const auto& signal : signals) thresholds_.push_back(signal.threshold);
    for (std::size_t i = 0; i < windows.size(); ++i) {
      if (windows[i].ofu) kept_.push_back(i);
    }
  }

  std::size_t kept() const { return kept_.size(); }

  // The value of channel c in kept window k; absent when it has none.
  std::optional<double> Value(std::size_t k, std::size_t c) const {
    const std::size_t i = kept_[k];
    if (c == 0) return windows_[i].ofu;
    const auto& values = signals_[c - 1].values;
    return i < values.size() ? values[i] : std::nullopt;
  }
  double Length(std::size_t k) const {
    const OfuWindow& w = windows_[kept_[k]];
    return std::max(w.end_s - w.start_s, 0.0);
  }

  struct Run {
    std::size_t first = 0, last = 0;  // kept windows, inclusive
    int windows = 0;
    double seconds = 0;
    std::size_t prev = kNone, next = kNone;
    bool cut_after = false;  // a stretch without OFU too long to bridge follows
    bool alive = true;
    unsigned version = 0;
  };

  // The mean of channel c over all of run r's windows: what the phase reports.
  std::optional<double> Level(std::size_t r, std::size_t c) const {
    const double w = weight_[r * channels_ + c];
    if (!(w > 0)) return std::nullopt;
    return sum_[r * channels_ + c] / w;
  }
  // The level that decides boundaries: the mean over its windows that were
  // not blips; all of them where it has no such window with a value.
  std::optional<double> CoreLevel(std::size_t r, std::size_t c) const {
    const double w = core_weight_[r * channels_ + c];
    if (!(w > 0)) return Level(r, c);
    return core_sum_[r * channels_ + c] / w;
  }

  // D over the channels both have (see the header); 0 when they share none.
  template <typename A, typename B>
  double Distance(A a, B b) const {
    double d = 0;
    for (std::size_t c = 0; c < channels_; ++c) {
      if (!(thresholds_[c] > 0)) continue;
      const std::optional<double> x = a(c), y = b(c);
      if (x && y) d = std::max(d, std::abs(*x - *y) / thresholds_[c]);
    }
    return d;
  }
  double RunDistance(std::size_t a, std::size_t b) const {
    return Distance([&](std::size_t c) { return CoreLevel(a, c); }, [&](std::size_t c) { return CoreLevel(b, c); });
  }

  void StartRun(std::size_t k, bool cut_before) {
    Run run;
    run.first = run.last = k;
    if (!runs_.empty()) {
      run.prev = runs_.size() - 1;
      runs_.back().next = runs_.size();
      runs_.back().cut_after = cut_before;
    }
    runs_.push_back(run);
    sum_.resize(runs_.size() * channels_, 0);
    weight_.resize(runs_.size() * channels_, 0);
    core_sum_.resize(runs_.size() * channels_, 0);
    core_weight_.resize(runs_.size() * channels_, 0);
    AddWindow(runs_.size() - 1, k);
  }

  void AddWindow(std::size_t r, std::size_t k) {
    Run& run = runs_[r];
    run.last = k;
    ++run.windows;
    run.seconds += Length(k);
    for (std::size_t c = 0; c < channels_; ++c) {
      if (const auto v = Value(k, c)) {
        sum_[r * channels_ + c] += *v * Length(k);
        weight_[r * channels_ + c] += Length(k);
      }
    }
  }

  // Step 1: runs, cut where a window differs from its run or after a long stretch without OFU.
  void BuildRuns(double max_bridge_s) {
    for (std::size_t k = 0; k < kept_.size(); ++k) {
      if (runs_.empty()) {
        StartRun(k, false);
        continue;
      }
      const bool cut = windows_[kept_[k]].start_s - windows_[kept_[k - 1]].end_s > max_bridge_s;
      const std::size_t r = runs_.size() - 1;
      const double d = Distance([&](std::size_t c) { return Value(k, c); }, [&](std::size_t c) { return Level(r, c); });
      if (cut || d > 1) {
        StartRun(k, cut);
      } else {
        AddWindow(r, k);
      }
    }
  }

  // The windows of the runs with at least min_windows windows are the core.
  void MarkCore(int min_windows) {
    for (std::size_t r = 0; r < runs_.size(); ++r) {
      if (runs_[r].windows < min_windows) continue;
      for (std::size_t c = 0; c < channels_; ++c) {
        core_sum_[r * channels_ + c] = sum_[r * channels_ + c];
        core_weight_[r * channels_ + c] = weight_[r * channels_ + c];
      }
    }
  }

  // b (a's next) into a.
  void Merge(std::size_t a, std::size_t b) {
    Run& ra = runs_[a];
    Run& rb = runs_[b];
    ra.last = rb.last;
    ra.windows += rb.windows;
    ra.seconds += rb.seconds;
    for (std::size_t c = 0; c < channels_; ++c) {
      sum_[a * channels_ + c] += sum_[b * channels_ + c];
      weight_[a * channels_ + c] += weight_[b * channels_ + c];
      core_sum_[a * channels_ + c] += core_sum_[b * channels_ + c];
      core_weight_[a * channels_ + c] += core_weight_[b * channels_ + c];
    }
    ra.next = rb.next;
    if (rb.next != kNone) runs_[rb.next].prev = a;
    ra.cut_after = rb.cut_after;
    rb.alive = false;
    ++ra.version;
  }

  // The run's neighbours it may merge with: not across a cut.
  std::size_t Left(std::size_t r) const {
    const std::size_t p = runs_[r].prev;
    return p != kNone && !runs_[p].cut_after ? p : kNone;
  }
  std::size_t Right(std::size_t r) const { return runs_[r].cut_after ? kNone : runs_[r].next; }

  // Step 2: no run shorter than min_windows that has a neighbour.
  void MergeBlips(int min_windows) {
    using Entry = std::tuple<int, std::size_t, std::size_t>;  // windows, first kept window, run
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
    for (std::size_t r = 0; r < runs_.size(); ++r) {
      if (runs_[r].windows < min_windows) queue.emplace(runs_[r].windows, runs_[r].first, r);
    }
    while (!queue.empty()) {
      const auto [windows, first, r] = queue.top();
      queue.pop();
      if (!runs_[r].alive || runs_[r].windows != windows || runs_[r].first != first) continue;
      const std::size_t left = Left(r), right = Right(r);
      std::size_t merged = kNone;
      if (left != kNone && right != kNone && RunDistance(left, right) <= 1) {
        Merge(left, r);
        Merge(left, right);
        merged = left;
      } else if (left != kNone && (right == kNone || RunDistance(r, left) <= RunDistance(r, right))) {
        Merge(left, r);
        merged = left;
      } else if (right != kNone) {
        Merge(r, right);
        merged = r;
      } else {
        continue;  // alone between cuts: it stays, short
      }
      if (runs_[merged].windows < min_windows) queue.emplace(runs_[merged].windows, runs_[merged].first, merged);
    }
  }

  // Step 3: merge adjacent runs that do not differ, the closest pair first.
  void MergeLevels() {
    // distance, first kept window of the left run, left, its version, right, its version
    using Entry = std::tuple<double, std::size_t, std::size_t, unsigned, std::size_t, unsigned>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
    auto push = [&](std::size_t a) {
      if (a == kNone) return;
      const std::size_t b = Right(a);
      if (b == kNone) return;
      const double d = RunDistance(a, b);
      if (d <= 1) queue.emplace(d, runs_[a].first, a, runs_[a].version, b, runs_[b].version);
    };
    for (std::size_t r = 0; r < runs_.size(); ++r) push(r);
    while (!queue.empty()) {
      const auto [d, first, a, va, b, vb] = queue.top();
      queue.pop();
      if (!runs_[a].alive || !runs_[b].alive || runs_[a].version != va || runs_[b].version != vb ||
          runs_[a].next != b) {
        continue;
      }
      Merge(a, b);
      push(Left(a));
      push(a);
    }
  }

  // Each phase, and the OFU level that decides its kind (CoreLevel).
  std::vector<std::pair<FoundPhase, double>> Phases() const {
    std::vector<std::pair<FoundPhase, double>> phases;
    for (std::size_t r = runs_.empty() ? kNone : 0; r != kNone; r = runs_[r].next) {
      const Run& run = runs_[r];
      FoundPhase phase;
      phase.start_s = windows_[kept_[run.first]].start_s;
      phase.end_s = windows_[kept_[run.last]].end_s;
      phase.windows = run.windows;
      phase.seconds = run.seconds;
      // A run whose windows all have zero length has no time to weigh by: its plain mean.
      if (const auto level = Level(r, 0)) {
        phase.ofu = *level;
      } else {
        double sum = 0;
        for (std::size_t k = run.first; k <= run.last; ++k) sum += *Value(k, 0);
        phase.ofu = sum / run.windows;
      }
      for (std::size_t c = 1; c < channels_; ++c) phase.signals.push_back(Level(r, c));
      const double level = CoreLevel(r, 0).value_or(phase.ofu);
      phases.emplace_back(std::move(phase), level);
    }
    return phases;
  }

 private:
  std::span<const OfuWindow> windows_;
  std::span<const PhaseSignal> signals_;
  std::size_t channels_;
  std::vector<double> thresholds_;
  std::vector<std::size_t> kept_;  // indices of the windows with an OFU
  std::vector<Run> runs_;          // the first run is always alive: merges keep the left one
  // Per run and channel: value x seconds and seconds with a value, over all
  // its windows and over its core (MarkCore).
  std::vector<double> sum_, weight_, core_sum_, core_weight_;
};

// The median length of the windows with an OFU; 0 when none.
double MedianLength(const Segmenter& s) {
  std::vector<double> lengths;
  lengths.reserve(s.kept());
  for (std::size_t k = 0; k < s.kept(); ++k) lengths.push_back(s.Length(k));
  if (lengths.empty()) return 0;
  auto mid = lengths.begin() + static_cast<std::ptrdiff_t>(lengths.size() / 2);
  std::nth_element(lengths.begin(), mid, lengths.end());
  return *mid;
}

void Classify(std::vector<std::pair<FoundPhase, double>>& phases, PhaseFinding& finding,
              const PhaseFinderOptions& options) {
  auto low = [&](const std::pair<FoundPhase, double>& p) { return p.second < options.low_ofu; };
  const auto first_work = std::find_if_not(phases.begin(), phases.end(), low);
  const auto last_work = std::find_if_not(phases.rbegin(), phases.rend(), low);
  for (auto it = phases.begin(); it != phases.end(); ++it) {
    FoundPhase& phase = it->first;
    const bool any_work = first_work != phases.end();
    if (!low(*it)) {
      phase.kind = PhaseKind::kSteady;
    } else if (any_work && it < first_work) {
      phase.kind = PhaseKind::kStartup;
    } else if (any_work && it > last_work.base() - 1) {
      phase.kind = PhaseKind::kTail;
    } else {
      phase.kind = PhaseKind::kLow;  // between busy phases, or no tensor work at all
    }
    finding.seconds += phase.seconds;
    switch (phase.kind) {
      case PhaseKind::kStartup: finding.startup_s += phase.seconds; break;
      case PhaseKind::kSteady: finding.steady_s += phase.seconds; break;
      case PhaseKind::kLow: finding.low_s += phase.seconds; break;
      case PhaseKind::kTail: finding.tail_s += phase.seconds; break;
    }
    finding.phases.push_back(std::move(phase));
  }
  if (finding.seconds > 0) finding.stall_share = finding.low_s / finding.seconds;
}

}  // namespace

std::string_view PhaseKindName(PhaseKind kind) {
  switch (kind) {
    case PhaseKind::kStartup: return "startup";
    case PhaseKind::kSteady: return "steady";
    case PhaseKind::kLow: return "low";
    case PhaseKind::kTail: return "tail";
  }
  return "steady";
}

std::string_view PhaseKindWord(PhaseKind kind) { return kind == PhaseKind::kLow ? "stall" : PhaseKindName(kind); }

PhaseFinding FindPhases(std::span<const OfuWindow> windows, std::span<const PhaseSignal> signals,
                        const PhaseFinderOptions& options) {
  Segmenter segmenter(windows, signals, options);
  PhaseFinding finding;
  finding.windows_without_ofu = static_cast<int>(windows.size() - segmenter.kept());
  const int min_windows = std::max(options.min_windows, 1);
  segmenter.BuildRuns(min_windows * MedianLength(segmenter));
  segmenter.MarkCore(min_windows);
  segmenter.MergeBlips(min_windows);
  segmenter.MergeLevels();
  auto phases = segmenter.Phases();
  Classify(phases, finding, options);
  return finding;
}

PhaseSeries PhaseSeriesOf(std::span<const CounterSample> samples, double interval_s,
                          const std::optional<OfuScale>& scale, std::span<const PhaseCounter> counters) {
  PhaseSeries series;
  series.windows.reserve(samples.size());
  for (const auto& sample : samples) {
    series.windows.push_back(WindowOfSample(sample, interval_s, scale, WindowOptions{}.busy_threshold));
  }
  for (const auto& counter : counters) {
    PhaseSignal signal;
    signal.name = std::string(InfoFor(counter.field).name);
    signal.threshold = counter.threshold;
    signal.values.reserve(samples.size());
    for (const auto& sample : samples) signal.values.push_back(GetField(sample, counter.field));
    series.signals.push_back(std::move(signal));
  }
  return series;
}

std::span<const PhaseCounter> DefaultPhaseCounters() {
  static constexpr std::array<PhaseCounter, 7> kCounters = {{
      {CounterField::kGrEngineActive},
      {CounterField::kSmActive},
      {CounterField::kSmOccupancy},
      {CounterField::kDramActive},
      {CounterField::kFp64Active},
      {CounterField::kFp32Active},
      {CounterField::kFp16Active},
  }};
  return kCounters;
}

}  // namespace ofu::analysis
