#include "ofu/analysis/store_report.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <ctime>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ofu/core/gpu_share.h"
#include "ofu/history/history_rollup.h"

namespace ofu::analysis {
namespace {

using history::ForEachWindowOfRow;
using history::StoredGpu;
using history::StoredJob;
using history::StoredRollup;
using history::StoredWindow;

bool IsDownsampled(const StoredWindow& row) { return (row.flags & history::kHistoryDownsampled) != 0; }

bool InInterval(double end_s, const StoredJob& job) {
  return end_s > job.start_s && (!job.end_s || end_s <= *job.end_s);
}

std::optional<double> ParseNumber(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// "YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)".
std::optional<double> ParseRfc3339(std::string_view text) {
  auto digits = [&](std::size_t at, std::size_t n) -> std::optional<int> {
    if (at + n > text.size()) return std::nullopt;
    int value = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
      value = value * 10 + (text[i] - '0');
    }
    return value;
  };
  auto at = [&](std::size_t i, std::string_view allowed) {
    return i < text.size() && allowed.find(text[i]) != std::string_view::npos;
  };
  const auto year = digits(0, 4), month = digits(5, 2), day = digits(8, 2);
  const auto hour = digits(11, 2), minute = digits(14, 2), second = digits(17, 2);
  if (!year || !month || !day || !hour || !minute || !second || !at(4, "-") || !at(7, "-") || !at(10, "Tt ") ||
      !at(13, ":") || !at(16, ":")) {
    return std::nullopt;
  }
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  std::size_t i = 19;
  double fraction = 0;
  if (at(i, ".")) {
    const std::size_t start = i;
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start + 1) return std::nullopt;
    fraction = *ParseNumber(std::string("0") + std::string(text.substr(start, i - start)));
  }
  double offset_s = 0;
  if (at(i, "Zz")) {
    ++i;
  } else if (at(i, "+-")) {
    const auto oh = digits(i + 1, 2), om = digits(i + 4, 2);
    if (!oh || !om || !at(i + 3, ":") || *oh > 23 || *om > 59) return std::nullopt;
    offset_s = (text[i] == '-' ? -1 : 1) * (*oh * 3600.0 + *om * 60.0);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != text.size()) return std::nullopt;
  std::tm tm{};
  tm.tm_year = *year - 1900;
  tm.tm_mon = *month - 1;
  tm.tm_mday = *day;
  tm.tm_hour = *hour;
  tm.tm_min = *minute;
  tm.tm_sec = *second;
  return static_cast<double>(timegm(&tm)) + fraction - offset_s;
}

std::string DescribeSeconds(double seconds) {
  return seconds >= 3600 ? fmt::format("{:.2f} h", seconds / 3600) : fmt::format("{:.0f} s", seconds);
}

// A stored GPU's identity, spec and share, with a problem where the agent or
// this spec database does not know its model.
GpuReport GpuOfStored(const StoredGpu& stored, const GpuSpecDatabase& specs) {
  GpuReport gpu;
  gpu.identity = stored.identity;
  gpu.identity.uuid = stored.key();  // the store keeps the key only
  gpu.model = stored.identity.model;
  if (stored.sku.empty()) {
    gpu.problems.push_back("the agent did not know this GPU model (not in the spec database): no OFU was stored");
  } else if (auto spec = specs.Lookup(stored.sku); spec.ok()) {
    gpu.spec = *spec;
    gpu.share = GpuShare(*gpu.spec, gpu.identity);
    if (!gpu.share) gpu.problems.push_back(WhyNoGpuShare(*gpu.spec, gpu.identity));
  } else {
    gpu.problems.push_back(
        fmt::format("stored SKU {} is not in this spec database: f_spec not shown, "
                    "the stored OFU stands",
                    stored.sku));
    // Its stored OFU is still good; a whole GPU weighs 1, a MIG slice of an
    // unknown SKU has no known share.
    if (!IsMigInstance(gpu.identity)) gpu.share = 1.0;
  }
  return gpu;
}

// One GPU's rows, in time order, into its summary, its gaps and the overall
// figures; at the end, the time it was down, without OFU or not recorded at
// all becomes a problem each. Holds no row.
class GpuRows {
 public:
  // `sku_known`: the agent stored OFU, so windows without it are worth a note.
  // `counters`: the rows' counters (core/output_counters.h), what a row's
  // windows are made of.
  GpuRows(GpuReport& gpu, bool sku_known, OverallBuilder& overall, const OutputCounterTable& counters)
      : gpu_(gpu), sku_known_(sku_known), overall_(overall), counters_(counters) {}

  void Add(const StoredWindow& row) {
    ForEachWindowOfRow(
        row,
        [&](const OfuWindow& window) {
          summarizer_.Add(window);
          // Without a share (no stored SKU: no stored OFU) the GPU is counted as left out.
          overall_.AddWindow(gpu_, window);
        },
        counters_);
    AddClockSources(row.flags);
    down_s_ += row.span_s - row.up_s;
    without_ofu_s_ += row.up_s > row.counters.observed_s() ? row.up_s - row.counters.observed_s() : 0;
    if (IsDownsampled(row)) {
      previous_end_ = NAN;
      return;
    }
    const double start = row.end_s - row.span_s;
    if (start > previous_end_ + history::kContiguousWindowsS) gpu_.windowed.gaps.push_back({previous_end_, start});
    previous_end_ = row.end_s;
  }

  // An hour of windows, or a part of one, summed (history_rollup.h): what
  // adding each of them would do, with the gaps before and after it.
  void Add(const StoredRollup& rollup) {
    const history::StoredWindow& total = rollup.total;
    const WindowTotals totals = history::TotalsOfRollup(rollup);
    summarizer_.Add(totals);
    overall_.AddTotals(gpu_, totals);
    AddClockSources(total.flags);
    down_s_ += total.span_s - total.up_s;
    without_ofu_s_ += total.up_s - total.counters.observed_s();  // up_s >= observed_s in each of its windows
    if (rollup.first_start_s > previous_end_ + history::kContiguousWindowsS) {
      gpu_.windowed.gaps.push_back({previous_end_, rollup.first_start_s});
    }
    previous_end_ = total.end_s;
  }

  void Finish() {
    gpu_.summary = summarizer_.Finish();
    overall_.EndGpu(gpu_);
    if (down_s_ > 0) {
      gpu_.problems.push_back(fmt::format("the GPU did not answer for {} (lost or unreachable): excluded",
                                          DescribeSeconds(down_s_)));
    }
    if (without_ofu_s_ > 0 && sku_known_) {
      gpu_.problems.push_back(fmt::format("{} of windows without tensor activity or clock: excluded",
                                          DescribeSeconds(without_ofu_s_)));
    }
    if (!gpu_.windowed.gaps.empty()) {
      double seconds = 0;
      for (const Gap& gap : gpu_.windowed.gaps) seconds += gap.seconds();
      gpu_.problems.push_back(
          fmt::format("{} gap(s) in the history, {} in all (the agent was not running): "
                      "excluded, not filled",
                      gpu_.windowed.gaps.size(), DescribeSeconds(seconds)));
    }
  }

 private:
  GpuReport& gpu_;
  bool sku_known_;
  OverallBuilder& overall_;
  // Where the rows' OFU took its clock (their kHistoryClock* flags; none in rows
  // from before the store kept it).
  void AddClockSources(std::uint32_t flags) {
    const std::uint8_t sources = history::ClockSourcesOfFlags(flags);
    summarizer_.AddClockSources(sources);
    overall_.AddClockSources(gpu_, sources);
  }

  const OutputCounterTable& counters_;
  Summarizer summarizer_;
  double down_s_ = 0, without_ofu_s_ = 0;
  double previous_end_ = NAN;  // NaN: no full-resolution window before
};

// One job's totals being summed: its intervals clipped to the range, and the
// rows inside them, each GPU weighed by its share.
struct JobSums {
  JobTotals totals;
  std::set<std::int64_t> gpus;      // weighed in the totals
  std::set<std::int64_t> left_out;  // without a known share
  double seconds = 0, observed = 0, utilized = 0, busy = 0, busy_utilized = 0;
  // Non-tensor: (weighted seconds of the figure, weighted observed seconds that have it).
  std::array<std::pair<double, double>, kCudaCorePipes> pipes{};  // by CudaCorePipe
  std::pair<double, double> peak;
  double tflop = 0, tflop_observed = 0;

  void AddRow(const StoredWindow& row, double share) {
    observed += row.counters.observed_s() * share;
    utilized += row.counters.utilized_s() * share;
    busy += row.counters.busy_s() * share;
    busy_utilized += row.counters.busy_utilized_s() * share;
    auto add = [&](std::pair<double, double>& into, const std::optional<double>& figure_s) {
      if (!figure_s) return;
      into.first += *figure_s * share;
      into.second += row.counters.observed_s() * share;
    };
    for (const CudaCorePipeInfo& pipe : CudaCorePipes()) {
      add(pipes[IndexOf(pipe.pipe)], row.counters[PipeActiveCounter(pipe.pipe)]);
    }
    add(peak, row.counters[kCounterNonTensorPeak]);
    if (row.counters[kCounterNonTensorTflop]) {
      tflop += *row.counters[kCounterNonTensorTflop];
      tflop_observed += row.counters.observed_s() * share;
    }
  }

  JobTotals Finish() const {
    JobTotals out = totals;
    out.gpus = static_cast<int>(gpus.size());
    out.gpus_left_out = static_cast<int>(left_out.size());
    out.gpu_hours = seconds / 3600;
    out.observed_hours = observed / 3600;
    if (observed > 0) out.ofu = utilized / observed;
    if (busy > 0) out.active_ofu = busy_utilized / busy;
    auto mean = [](const std::pair<double, double>& p) {
      return p.second > 0 ? std::optional(p.first / p.second) : std::nullopt;
    };
    for (std::size_t i = 0; i < kCudaCorePipes; ++i) out.non_tensor.active[i] = mean(pipes[i]);
    out.non_tensor.share_of_peak = mean(peak);
    if (tflop_observed > 0) out.non_tensor.flops_upper_bound_tflops = tflop / tflop_observed;
    return out;
  }
};

using SharesById = std::map<std::int64_t, std::optional<double>>;

// Per job id: identity (from its first interval), GPUs, and the seconds of
// its intervals clipped to the range (an interval still open ends at its
// GPU's newest window). Rows are added by the caller, for the intervals
// whose GPU has a share.
std::map<std::string, JobSums> JobSumsOf(const history::StoredHistory& history, const SharesById& share_of) {
  std::map<std::string, JobSums> jobs;
  std::map<std::int64_t, std::optional<double>> last_end;
  for (const StoredGpu& gpu : history.gpus) last_end[gpu.id] = gpu.last_end_s;
  const double since = history.query.since_s.value_or(-INFINITY);
  const double until = history.query.until_s.value_or(INFINITY);
  for (const StoredJob& job : history.jobs) {
    JobSums& sums = jobs[job.job_id];
    if (sums.gpus.empty() && sums.left_out.empty()) {
      sums.totals.job_id = job.job_id;
      sums.totals.user = job.user;
      sums.totals.job_name = job.job_name;
      sums.totals.scheduler = job.scheduler;
    }
    // A GPU without a share (unknown model or MIG profile) is counted, not weighed.
    const auto share = share_of.find(job.gpu_id);
    if (share == share_of.end() || !share->second) {
      sums.left_out.insert(job.gpu_id);
      continue;
    }
    sums.gpus.insert(job.gpu_id);
    const double end = job.end_s.value_or(std::max(job.start_s, last_end[job.gpu_id].value_or(job.start_s)));
    const double clipped = std::min(end, until) - std::max(job.start_s, since);
    if (clipped > 0) sums.seconds += clipped * *share->second;
  }
  return jobs;
}

std::vector<JobTotals> FinishJobs(const std::map<std::string, JobSums>& jobs) {
  std::vector<JobTotals> out;
  for (const auto& [id, sums] : jobs) out.push_back(sums.Finish());
  return out;
}

// A GPU's job intervals, in start order, for rows that come in time order:
// each row is added to the sums of every interval it lies in.
class GpuIntervals {
 public:
  void Insert(const StoredJob& job, JobSums& sums) { intervals_.push_back({&job, &sums}); }
  void Sort() {
    std::stable_sort(intervals_.begin(), intervals_.end(),
                     [](const Interval& a, const Interval& b) { return a.job->start_s < b.job->start_s; });
  }
  void Add(const StoredWindow& row, double share) {
    // Rows come in time order: an interval that ended before this row has
    // no later row either.
    while (first_ < intervals_.size() && intervals_[first_].job->end_s && *intervals_[first_].job->end_s < row.end_s) {
      ++first_;
    }
    for (std::size_t i = first_; i < intervals_.size() && intervals_[i].job->start_s < row.end_s; ++i) {
      if (InInterval(row.end_s, *intervals_[i].job)) intervals_[i].sums->AddRow(row, share);
    }
  }

 private:
  struct Interval {
    const StoredJob* job;
    JobSums* sums;
  };
  std::vector<Interval> intervals_;
  std::size_t first_ = 0;
};

}  // namespace

struct StoreReportBuilder::State {
  const history::StoredHistory& head;
  Report out;
  OverallBuilder overall;
  SharesById share_of;
  std::map<std::int64_t, std::size_t> index_of;  // GPU id -> its index in head.gpus and out.gpus
  std::map<std::string, JobSums> jobs;
  std::vector<GpuIntervals> intervals;  // by GPU index
  // The GPU being read; GPUs before it are finished.
  std::size_t next = 0;  // index of the first GPU not yet started
  std::optional<GpuRows> current;
  std::int64_t rows = 0;
  std::optional<double> first_span_s, first_full_span_s;

  const OutputCounterTable& counters;

  State(const history::StoredHistory& h, const OutputCounterTable& c) : head(h), counters(c) {}

  // The index of the GPU `gpu_id`, made the one being read; absent when head
  // does not list it or it is finished already (a row out of order).
  std::optional<std::size_t> Start(std::int64_t gpu_id) {
    const auto found = index_of.find(gpu_id);
    if (found == index_of.end()) return std::nullopt;
    const std::size_t index = found->second;
    if (index + 1 < next) return std::nullopt;
    AdvanceTo(index);
    return index;
  }

  // Finishes GPUs until `index` is the one being read (or, with
  // head.gpus.size(), until all are finished).
  void AdvanceTo(std::size_t index) {
    while (next <= index && next <= head.gpus.size()) {
      if (current) {
        current->Finish();
        current.reset();
      }
      if (next == head.gpus.size()) break;
      current.emplace(out.gpus[next], !head.gpus[next].sku.empty(), overall, counters);
      ++next;
    }
  }
};

StoreReportBuilder::StoreReportBuilder(const history::StoredHistory& head, const GpuSpecDatabase& specs,
                                       const OutputCounterTable& counters)
    : state_(std::make_unique<State>(head, counters)) {
  State& st = *state_;
  st.out.history_read = HistoryRead{.query = head.query};
  st.out.source_name = head.path;
  // Each GPU's share of a physical GPU (1, or its MIG slice's), by id; absent
  // leaves it out of the overall and job figures.
  for (const StoredGpu& stored : head.gpus) {
    GpuReport gpu = GpuOfStored(stored, specs);
    st.share_of[stored.id] = gpu.share;
    st.index_of[stored.id] = st.out.gpus.size();
    st.out.gpus.push_back(std::move(gpu));
  }
  st.jobs = JobSumsOf(head, st.share_of);
  st.intervals.resize(head.gpus.size());
  for (const StoredJob& job : head.jobs) {
    const auto index = st.index_of.find(job.gpu_id);
    if (index == st.index_of.end() || !st.share_of[job.gpu_id]) continue;
    st.intervals[index->second].Insert(job, st.jobs[job.job_id]);
  }
  for (GpuIntervals& of_gpu : st.intervals) of_gpu.Sort();
}

StoreReportBuilder::~StoreReportBuilder() = default;

std::int64_t StoreReportBuilder::rows() const { return state_->rows; }

std::int64_t StoreReportBuilder::rollups() const { return state_->out.history_read->rollups; }

void StoreReportBuilder::Add(const StoredWindow& row) {
  State& st = *state_;
  ++st.rows;
  if (!st.first_span_s) st.first_span_s = row.span_s;
  if (!st.first_full_span_s && !IsDownsampled(row)) st.first_full_span_s = row.span_s;
  const std::optional<std::size_t> index = st.Start(row.gpu_id);
  if (!index) return;
  st.current->Add(row);
  if (const std::optional<double>& share = st.share_of[row.gpu_id]) st.intervals[*index].Add(row, *share);
}

void StoreReportBuilder::Add(const StoredRollup& rollup) {
  State& st = *state_;
  st.rows += rollup.windows;
  ++st.out.history_read->rollups;
  st.out.history_read->windows_in_rollups += rollup.windows;
  // Its windows are full-resolution ones (history::RollUp).
  if (!st.first_span_s) st.first_span_s = rollup.first_span_s;
  if (!st.first_full_span_s) st.first_full_span_s = rollup.first_span_s;
  const std::optional<std::size_t> index = st.Start(rollup.total.gpu_id);
  if (!index) return;
  st.current->Add(rollup);
  // All its windows are in the same job intervals (HistoryStream), those of its last.
  if (const std::optional<double>& share = st.share_of[rollup.total.gpu_id]) {
    st.intervals[*index].Add(rollup.total, *share);
  }
}

Report StoreReportBuilder::Finish() {
  State& st = *state_;
  st.AdvanceTo(st.head.gpus.size());
  Report& report = st.out;
  // The first full-resolution row's span; without one (or a span of 0), the first row's.
  report.window_s = st.first_full_span_s.value_or(0);
  if (report.window_s == 0 && st.first_span_s) report.window_s = *st.first_span_s;
  for (GpuReport& gpu : report.gpus) gpu.windowed.interval_s = report.window_s;
  report.overall = st.overall.FinishSummary();
  report.coverage = st.overall.coverage();
  st.out.jobs = FinishJobs(st.jobs);
  st.out.history_read->step_s = st.head.step_s;
  return std::move(st.out);
}

Report BuildStoreReport(const history::StoredHistory& history, const GpuSpecDatabase& specs,
                        const OutputCounterTable& counters) {
  // GPU by GPU, each GPU's rows in the order given.
  std::map<std::int64_t, std::vector<const StoredWindow*>> rows_of;
  std::set<std::int64_t> listed;
  for (const StoredGpu& gpu : history.gpus) listed.insert(gpu.id);
  StoreReportBuilder builder(history, specs, counters);
  for (const StoredWindow& row : history.windows) {
    if (listed.count(row.gpu_id) == 0) {
      builder.Add(row);  // counts only towards the window length
    } else {
      rows_of[row.gpu_id].push_back(&row);
    }
  }
  for (const StoredGpu& gpu : history.gpus) {
    for (const StoredWindow* row : rows_of[gpu.id]) builder.Add(*row);
  }
  return builder.Finish();
}

Result<StreamedStoreReport> ReadStoreReport(const std::string& path, const history::HistoryQuery& query,
                                            const GpuSpecDatabase& specs, const StoreReadOptions& options) {
  OFU_ASSIGN_OR_RETURN(auto stream, history::HistoryStream::Open(path, query, options.rollups));
  StreamedStoreReport out;
  out.head = stream->history();
  StoreReportBuilder builder(out.head, specs);
  StoredWindow row;
  StoredRollup rollup;
  while (true) {
    OFU_ASSIGN_OR_RETURN(history::HistoryStream::Item item, stream->Next(row, rollup));
    if (item == history::HistoryStream::Item::kEnd) break;
    if (item == history::HistoryStream::Item::kWindow) {
      builder.Add(row);
    } else {
      builder.Add(rollup);
    }
  }
  out.report = builder.Finish();
  out.rows = builder.rows();
  out.rollups = builder.rollups();
  return out;
}

Report BuildTotalsReport(const history::HistoryTotals& totals, const GpuSpecDatabase& specs) {
  const history::StoredHistory& history = totals.history;
  Report out;
  out.history_read = HistoryRead{.query = history.query, .method = "counters"};
  Report& report = out;
  report.source_name = history.path;
  report.window_s = totals.window_s;
  report.notes = totals.notes;
  SharesById share_of;
  OverallBuilder overall;
  for (const StoredGpu& stored : history.gpus) {
    GpuReport gpu = GpuOfStored(stored, specs);
    share_of[stored.id] = gpu.share;
    gpu.windowed.interval_s = report.window_s;
    GpuRows rows(gpu, !stored.sku.empty(), overall, OutputCounterTable::Builtin());
    if (auto sums = totals.of_gpu.find(stored.id); sums != totals.of_gpu.end()) rows.Add(sums->second);
    rows.Finish();
    // One row per GPU: its "percentiles" would be its mean.
    gpu.summary.p10 = gpu.summary.p50 = gpu.summary.p90 = std::nullopt;
    report.gpus.push_back(std::move(gpu));
  }
  report.overall = overall.FinishSummary();
  report.overall.p10 = report.overall.p50 = report.overall.p90 = std::nullopt;
  report.coverage = overall.coverage();
  std::map<std::string, JobSums> jobs = JobSumsOf(history, share_of);
  // Each (job, GPU) sum counts once, with the first of the job's intervals there.
  std::set<std::pair<std::string, std::int64_t>> counted;
  for (const StoredJob& job : history.jobs) {
    const std::optional<double> share = share_of[job.gpu_id];
    if (!share) continue;
    auto sums = totals.of_job.find({job.job_id, job.gpu_id});
    if (sums != totals.of_job.end() && counted.insert(sums->first).second) {
      jobs[job.job_id].AddRow(sums->second, *share);
    }
  }
  out.jobs = FinishJobs(jobs);
  return out;
}

Result<double> ParseTimeArgument(std::string_view text, double now_s) {
  if (text.size() >= 3 && text.front() == '-') {
    const char unit = text.back();
    const double scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : unit == 'd' ? 86400 : 0;
    if (scale > 0) {
      if (auto amount = ParseNumber(text.substr(1, text.size() - 2)); amount && *amount >= 0) {
        return now_s - *amount * scale;
      }
    }
  }
  if (auto seconds = ParseNumber(text)) return *seconds;
  if (auto time = ParseRfc3339(text)) return *time;
  return Error::InvalidArgument(
      "time {:?} is not Unix seconds, RFC 3339 (2026-11-21T10:00:00Z) or relative (-2h, "
      "-30m, -7d)",
      text);
}

}  // namespace ofu::analysis
