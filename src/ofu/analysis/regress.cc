#include "ofu/analysis/regress.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

namespace ofu::analysis {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)) + upper) / 2;
}

bool EffectLargeEnough(double before, double after, const ChangeOptions& options) {
  const double lo = std::min(before, after), hi = std::max(before, after);
  if (options.min_ratio > 1 && !(lo > 0 ? hi / lo >= options.min_ratio : hi > 0)) return false;
  return std::abs(after - before) >= options.min_difference;
}

// One GPU's change of one job, before grouping.
struct GpuChange {
  double time_s;
  double before, after, statistic;
  std::string gpu;
  std::string pipe;  // precision shares only
};

// Clusters of changes (sorted by time) no more than group_s apart, split by
// direction when `by_direction`.
std::vector<std::vector<const GpuChange*>> Group(std::vector<GpuChange>& changes, double group_s, bool by_direction) {
  std::sort(changes.begin(), changes.end(), [](const GpuChange& a, const GpuChange& b) { return a.time_s < b.time_s; });
  std::vector<std::vector<const GpuChange*>> groups;
  for (bool down : {true, false}) {
    std::vector<const GpuChange*> current;
    for (const GpuChange& change : changes) {
      if (by_direction && (change.after < change.before) != down) continue;
      if (!current.empty() && change.time_s - current.back()->time_s > group_s) {
        groups.push_back(std::move(current));
        current.clear();
      }
      current.push_back(&change);
    }
    if (!current.empty()) groups.push_back(std::move(current));
    if (!by_direction) break;
  }
  std::sort(groups.begin(), groups.end(),
            [](const auto& a, const auto& b) { return a.front()->time_s < b.front()->time_s; });
  return groups;
}

std::vector<std::string> GpusOf(const std::vector<const GpuChange*>& group) {
  std::set<std::string> gpus;
  for (const GpuChange* change : group) gpus.insert(change->gpu);
  return {gpus.begin(), gpus.end()};
}

// The history's jobs, indexed: (job, GPU) -> the job's intervals there;
// job -> its name and its first start.
struct JobIndex {
  std::map<std::pair<std::string, std::int64_t>, std::vector<const history::StoredJob*>> intervals;
  std::map<std::string, std::string> name_of;
  std::map<std::string, double> start_of;
};

JobIndex IndexJobs(const history::StoredHistory& history) {
  JobIndex index;
  for (const history::StoredJob& job : history.jobs) {
    index.intervals[{job.job_id, job.gpu_id}].push_back(&job);
    index.name_of[job.job_id] = job.job_name;
    auto [it, inserted] = index.start_of.emplace(job.job_id, job.start_s);
    if (!inserted) it->second = std::min(it->second, job.start_s);
  }
  return index;
}

// One pipe's share of tensor time, window by window.
struct PipeSeries {
  const char* name;
  std::size_t counter;  // its counter (core/output_counters.h)
  std::vector<double> values, times;
};

// A job's timeline on one GPU: OFU per window inside its intervals, and each
// pipe's share of tensor time where the window had tensor activity.
struct JobTimeline {
  std::vector<double> ofu, ofu_times;
  PipeSeries pipes[3] = {
      {"hmma", kCounterHmmaActive, {}, {}}, {"imma", kCounterImmaActive, {}, {}}, {"dfma", kCounterDfmaActive, {}, {}}};
};

JobTimeline TimelineOf(const std::vector<const history::StoredJob*>& spans,
                       const std::vector<const history::StoredWindow*>& rows) {
  JobTimeline timeline;
  for (const history::StoredWindow* row : rows) {
    const bool inside = std::any_of(spans.begin(), spans.end(), [&](const history::StoredJob* j) {
      return row->end_s > j->start_s && (!j->end_s || row->end_s <= *j->end_s);
    });
    if (!inside || row->counters.observed_s() <= 0) continue;
    timeline.ofu.push_back(row->counters.utilized_s() / row->counters.observed_s());
    timeline.ofu_times.push_back(row->end_s);
    if (row->counters.tensor_active_s() <= 0) continue;
    for (PipeSeries& pipe : timeline.pipes) {
      const std::optional<double> pipe_s = row->counters[pipe.counter];
      if (!pipe_s) continue;
      pipe.values.push_back(*pipe_s / row->counters.tensor_active_s());
      pipe.times.push_back(row->end_s);
    }
  }
  return timeline;
}

using ChangesByJob = std::map<std::string, std::vector<GpuChange>>;

// Each job's OFU changes, grouped across its GPUs by direction: one OfuChange
// per group, its figures the medians over the GPUs.
void AddOfuChanges(ChangesByJob& ofu_changes, std::map<std::string, std::string>& name_of,
                   const RegressOptions& options, RegressReport& report) {
  for (auto& [job_id, changes] : ofu_changes) {
    for (const auto& group : Group(changes, options.group_s, /*by_direction=*/true)) {
      std::vector<double> times, ratios, before, after, statistics;
      for (const GpuChange* c : group) {
        times.push_back(c->time_s);
        ratios.push_back(c->before > 0 ? c->after / c->before : INFINITY);
        before.push_back(c->before);
        after.push_back(c->after);
        statistics.push_back(c->statistic);
      }
      report.changes.push_back({job_id, name_of[job_id], Median(times), Median(before), Median(after), Median(ratios),
                                Median(statistics), GpusOf(group)});
    }
  }
}

// Each job's changes of pipe shares, grouped across GPUs and pipes (a shift
// moves time from one pipe to another, so both directions belong together).
void AddPrecisionShifts(ChangesByJob& share_changes, std::map<std::string, std::string>& name_of,
                        const RegressOptions& options, RegressReport& report) {
  for (auto& [job_id, changes] : share_changes) {
    for (const auto& group : Group(changes, options.group_s, /*by_direction=*/false)) {
      PrecisionShift shift;
      shift.job_id = job_id;
      shift.job_name = name_of[job_id];
      std::vector<double> times;
      std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_pipe;
      for (const GpuChange* c : group) {
        times.push_back(c->time_s);
        by_pipe[c->pipe].first.push_back(c->before);
        by_pipe[c->pipe].second.push_back(c->after);
      }
      shift.time_s = Median(times);
      for (auto& [pipe, values] : by_pipe) shift.pipes.push_back({pipe, Median(values.first), Median(values.second)});
      shift.gpus = GpusOf(group);
      report.precision_shifts.push_back(std::move(shift));
    }
  }
}

// Across runs of one job name: the runs' OFU in order of start, scanned
// like a timeline when there are min_runs on each side.
void AddRunChanges(const Report& store, const std::map<std::string, double>& start_of, const RegressOptions& options,
                   RegressReport& report) {
  std::map<std::string, std::vector<std::pair<double, const JobTotals*>>> runs;
  for (const JobTotals& job : store.jobs) {
    if (job.job_name.empty() || !job.ofu) continue;
    auto start = start_of.find(job.job_id);
    runs[job.job_name].emplace_back(start == start_of.end() ? 0.0 : start->second, &job);
  }
  ChangeOptions run_options = options.ofu;
  run_options.min_segment = options.min_runs;
  for (auto& [name, list] : runs) {
    if (static_cast<int>(list.size()) < 2 * options.min_runs) continue;
    ++report.job_names;
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<double> values;
    for (const auto& [start, job] : list) values.push_back(*job->ofu);
    std::vector<ChangePoint> changes = DetectChanges(values, run_options);
    for (size_t i = 0; i < changes.size(); ++i) {
      const ChangePoint& c = changes[i];
      const size_t previous = i == 0 ? 0 : changes[i - 1].index;
      const size_t next = i + 1 < changes.size() ? changes[i + 1].index : values.size();
      report.run_changes.push_back({name, list[c.index].second->job_id, list[c.index].first, c.before, c.after,
                                    c.before > 0 ? c.after / c.before : INFINITY, static_cast<int>(c.index - previous),
                                    static_cast<int>(next - c.index)});
    }
  }
}

}  // namespace

double RobustNoise(std::span<const double> values) {
  if (values.size() < 2) return 1e-6;
  std::vector<double> diffs(values.size() - 1);
  for (size_t i = 0; i + 1 < values.size(); ++i) diffs[i] = std::abs(values[i + 1] - values[i]);
  const double sigma = 1.4826 * Median(std::move(diffs)) / std::sqrt(2.0);
  const double level = std::abs(Median(std::vector<double>(values.begin(), values.end())));
  return std::max(sigma, 1e-6 + 1e-3 * level);
}

std::vector<ChangePoint> DetectChanges(std::span<const double> values, const ChangeOptions& options) {
  const size_t n = values.size();
  const size_t min_segment = static_cast<size_t>(std::max(1, options.min_segment));
  if (n < 2 * min_segment) return {};
  const double sigma = RobustNoise(values);
  std::vector<double> prefix(n + 1, 0.0);
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + values[i];
  const auto mean = [&](size_t a, size_t b) { return (prefix[b] - prefix[a]) / static_cast<double>(b - a); };

  std::map<size_t, double> found;  // index -> statistic
  std::function<void(size_t, size_t)> search = [&](size_t a, size_t b) {
    if (b - a < 2 * min_segment || static_cast<int>(found.size()) >= options.max_changes) return;
    const double total = static_cast<double>(b - a);
    double best = -1;
    size_t best_k = 0;
    for (size_t k = a + min_segment; k + min_segment <= b; ++k) {
      const double nl = static_cast<double>(k - a), nr = static_cast<double>(b - k);
      const double t = std::abs(mean(a, k) - mean(k, b)) / sigma * std::sqrt(nl * nr / total);
      if (t > best) {
        best = t;
        best_k = k;
      }
    }
    if (best < options.threshold || !EffectLargeEnough(mean(a, best_k), mean(best_k, b), options)) return;
    found[best_k] = best;
    search(a, best_k);
    search(best_k, b);
  };
  search(0, n);

  // Means of the final segments on either side of each change.
  std::vector<ChangePoint> out;
  std::vector<size_t> bounds{0};
  for (const auto& [index, statistic] : found) bounds.push_back(index);
  bounds.push_back(n);
  size_t i = 1;
  for (const auto& [index, statistic] : found) {
    out.push_back({index, mean(bounds[i - 1], index), mean(index, bounds[i + 1]), statistic});
    ++i;
  }
  return out;
}

struct RegressScanner::State {
  RegressOptions options;
  RegressReport report;
  ChangesByJob ofu_changes, share_changes;
  std::map<std::string, std::string> name_of;  // job -> name
  std::map<std::string, double> start_of;      // job -> its first start
};

RegressScanner::RegressScanner(const RegressOptions& options) : state_(std::make_unique<State>()) {
  state_->options = options;
}

RegressScanner::~RegressScanner() = default;

void RegressScanner::Add(const history::StoredHistory& batch) {
  State& s = *state_;
  std::map<std::int64_t, std::string> uuid_of;
  for (const history::StoredGpu& gpu : batch.gpus) uuid_of[gpu.id] = gpu.key();
  std::map<std::int64_t, std::vector<const history::StoredWindow*>> rows_of;
  for (const history::StoredWindow& row : batch.windows) rows_of[row.gpu_id].push_back(&row);
  const JobIndex jobs = IndexJobs(batch);
  for (const auto& [job_id, name] : jobs.name_of) s.name_of[job_id] = name;
  for (const auto& [job_id, start] : jobs.start_of) {
    auto [it, inserted] = s.start_of.emplace(job_id, start);
    if (!inserted) it->second = std::min(it->second, start);
  }

  // Within jobs: every (job, GPU) timeline scanned on its own; the changes
  // are grouped across the job's GPUs in Finish.
  for (const auto& [key, spans] : jobs.intervals) {
    const auto& [job_id, gpu_id] = key;
    const JobTimeline timeline = TimelineOf(spans, rows_of[gpu_id]);
    ++s.report.series;
    s.report.windows += static_cast<long long>(timeline.ofu.size());
    const std::string& uuid = uuid_of[gpu_id];
    for (const ChangePoint& c : DetectChanges(timeline.ofu, s.options.ofu)) {
      s.ofu_changes[job_id].push_back({timeline.ofu_times[c.index - 1], c.before, c.after, c.statistic, uuid, ""});
    }
    for (const PipeSeries& pipe : timeline.pipes) {
      for (const ChangePoint& c : DetectChanges(pipe.values, s.options.shares)) {
        s.share_changes[job_id].push_back({pipe.times[c.index - 1], c.before, c.after, c.statistic, uuid, pipe.name});
      }
    }
  }
}

RegressReport RegressScanner::Finish(const std::string& source, const Report& store) {
  State& s = *state_;
  RegressReport report = std::move(s.report);
  report.source = source;
  report.options = s.options;
  AddOfuChanges(s.ofu_changes, s.name_of, s.options, report);
  AddPrecisionShifts(s.share_changes, s.name_of, s.options, report);
  AddRunChanges(store, s.start_of, s.options, report);
  if (report.series == 0) report.notes.push_back("no job intervals in the range: nothing to scan");
  return report;
}

RegressReport ScanRegressions(const history::StoredHistory& history, const Report& store,
                              const RegressOptions& options) {
  RegressScanner scanner(options);
  scanner.Add(history);
  return scanner.Finish(history.path, store);
}

}  // namespace ofu::analysis
