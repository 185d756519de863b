#include "ofu/analysis/store_report.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <ctime>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "ofu/core/gpu_share.h"

namespace ofu::analysis {
namespace {

using sinks::StoredGpu;
using sinks::StoredJob;
using sinks::StoredWindow;

// Consecutive windows closer than this are contiguous: replayed spans are
// differences of epoch times, off by an ulp or so.
constexpr double kContiguousS = 1e-3;

bool IsDownsampled(const StoredWindow& row) { return (row.flags & sinks::kHistoryDownsampled) != 0; }

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

using RowsByGpu = std::map<std::int64_t, std::vector<const StoredWindow*>>;  // gpu id -> rows, in time order

// The history's window length: its first full-resolution row's span, else
// (none, or a span of 0) its first row's.
double ReportedWindowS(const sinks::StoredHistory& history) {
  double window_s = 0;
  for (const StoredWindow& row : history.windows) {
    if (!IsDownsampled(row)) {
      window_s = row.span_s;
      break;
    }
  }
  if (window_s == 0 && !history.windows.empty()) window_s = history.windows.front().span_s;
  return window_s;
}

// A stored GPU's identity, spec and share, with a problem where the agent or
// this spec database does not know its model.
GpuReport GpuOfStored(const StoredGpu& stored, const GpuSpecDatabase& specs) {
  GpuReport gpu;
  gpu.identity.key = stored.uuid;
  gpu.identity.uuid = stored.uuid;
  gpu.identity.model = stored.model;
  gpu.identity.hostname = stored.hostname;
  gpu.identity.gpu_index = stored.gpu_index;
  gpu.identity.mig_profile = stored.mig_profile;
  gpu.identity.mig_instance = stored.mig_instance;
  gpu.model = stored.model;
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

// One GPU's rows into its summary and the overall figures; the time it was
// down, without OFU or not recorded at all becomes a problem each.
// `sku_known`: the agent stored OFU, so windows without it are worth a note.
void AddRowsOfGpu(const std::vector<const StoredWindow*>& rows, bool sku_known, GpuReport& gpu,
                  OverallBuilder& overall) {
  Summarizer summarizer;
  std::vector<OfuWindow> windows;
  double down_s = 0, without_ofu_s = 0;
  double previous_end = NAN;  // NaN: no full-resolution window before
  for (const StoredWindow* row : rows) {
    for (const OfuWindow& window : WindowsOfRow(*row)) {
      summarizer.Add(window);
      windows.push_back(window);
    }
    down_s += row->span_s - row->up_s;
    without_ofu_s += row->up_s > row->observed_s ? row->up_s - row->observed_s : 0;
    if (IsDownsampled(*row)) {
      previous_end = NAN;
      continue;
    }
    const double start = row->end_s - row->span_s;
    if (start > previous_end + kContiguousS) gpu.windowed.gaps.push_back({previous_end, start});
    previous_end = row->end_s;
  }
  gpu.summary = summarizer.Finish();
  // Without a share (no stored SKU: no stored OFU) the GPU is counted as left out.
  overall.Add(gpu, windows);
  if (down_s > 0) {
    gpu.problems.push_back(fmt::format("the GPU did not answer for {} (lost or unreachable): excluded",
                                       DescribeSeconds(down_s)));
  }
  if (without_ofu_s > 0 && sku_known) {
    gpu.problems.push_back(fmt::format("{} of windows without tensor activity or clock: excluded",
                                       DescribeSeconds(without_ofu_s)));
  }
  if (!gpu.windowed.gaps.empty()) {
    double seconds = 0;
    for (const Gap& gap : gpu.windowed.gaps) seconds += gap.seconds();
    gpu.problems.push_back(
        fmt::format("{} gap(s) in the history, {} in all (the agent was not running): "
                    "excluded, not filled",
                    gpu.windowed.gaps.size(), DescribeSeconds(seconds)));
  }
}

// Per job: intervals clipped to the range, and the sums of the rows inside
// them, each GPU weighed by its share.
// `add_rows(job, add)` calls add(row) for the rows of `job`'s interval.
std::vector<JobTotals> JobTotalsOf(
    const sinks::StoredHistory& history, std::map<std::int64_t, std::optional<double>>& share_of,
    const std::function<void(const StoredJob&, const std::function<void(const StoredWindow&)>&)>& add_rows) {
  struct Sums {
    JobTotals totals;
    std::set<std::int64_t> gpus;      // weighed in the totals
    std::set<std::int64_t> left_out;  // without a known share
    double seconds = 0, observed = 0, utilized = 0, busy = 0, busy_utilized = 0;
    // Non-tensor: (weighted seconds of the figure, weighted observed seconds that have it).
    std::pair<double, double> fp64, fp32, fp16, peak;
    double tflop = 0, tflop_observed = 0;
  };
  std::map<std::string, Sums> jobs;
  std::map<std::int64_t, std::optional<double>> last_end;
  for (const StoredGpu& gpu : history.gpus) last_end[gpu.id] = gpu.last_end_s;
  const double since = history.query.since_s.value_or(-INFINITY);
  const double until = history.query.until_s.value_or(INFINITY);
  for (const StoredJob& job : history.jobs) {
    Sums& sums = jobs[job.job_id];
    if (sums.gpus.empty() && sums.left_out.empty()) {
      sums.totals.job_id = job.job_id;
      sums.totals.user = job.user;
      sums.totals.job_name = job.job_name;
      sums.totals.scheduler = job.scheduler;
    }
    // A GPU without a share (unknown model or MIG profile) is counted, not weighed.
    const std::optional<double> share = share_of[job.gpu_id];
    if (!share) {
      sums.left_out.insert(job.gpu_id);
      continue;
    }
    sums.gpus.insert(job.gpu_id);
    const double end = job.end_s.value_or(std::max(job.start_s, last_end[job.gpu_id].value_or(job.start_s)));
    const double clipped = std::min(end, until) - std::max(job.start_s, since);
    if (clipped > 0) sums.seconds += clipped * *share;
    add_rows(job, [&](const StoredWindow& row) {
      sums.observed += row.observed_s * *share;
      sums.utilized += row.utilized_s * *share;
      sums.busy += row.busy_s * *share;
      sums.busy_utilized += row.busy_utilized_s * *share;
      auto add = [&](std::pair<double, double>& into, const std::optional<double>& seconds) {
        if (!seconds) return;
        into.first += *seconds * *share;
        into.second += row.observed_s * *share;
      };
      add(sums.fp64, row.fp64_active_s);
      add(sums.fp32, row.fp32_active_s);
      add(sums.fp16, row.fp16_active_s);
      add(sums.peak, row.non_tensor_peak_s);
      if (row.non_tensor_tflop) {
        sums.tflop += *row.non_tensor_tflop;
        sums.tflop_observed += row.observed_s * *share;
      }
    });
  }
  std::vector<JobTotals> out;
  for (auto& [id, sums] : jobs) {
    JobTotals totals = sums.totals;
    totals.gpus = static_cast<int>(sums.gpus.size());
    totals.gpus_left_out = static_cast<int>(sums.left_out.size());
    totals.gpu_hours = sums.seconds / 3600;
    totals.observed_hours = sums.observed / 3600;
    if (sums.observed > 0) totals.ofu = sums.utilized / sums.observed;
    if (sums.busy > 0) totals.active_ofu = sums.busy_utilized / sums.busy;
    auto mean = [](const std::pair<double, double>& p) {
      return p.second > 0 ? std::optional(p.first / p.second) : std::nullopt;
    };
    totals.non_tensor.fp64_active = mean(sums.fp64);
    totals.non_tensor.fp32_active = mean(sums.fp32);
    totals.non_tensor.fp16_active = mean(sums.fp16);
    totals.non_tensor.share_of_peak = mean(sums.peak);
    if (sums.tflop_observed > 0) totals.non_tensor.flops_upper_bound_tflops = sums.tflop / sums.tflop_observed;
    out.push_back(std::move(totals));
  }
  return out;
}

}  // namespace

std::vector<OfuWindow> WindowsOfRow(const StoredWindow& row) {
  OfuWindow base;
  base.start_s = row.end_s - row.span_s;
  base.end_s = row.end_s;
  bool clock_given = false;
  auto add_clock = [&](OfuWindow& w) {
    if (clock_given || !row.clock_mhz || row.clock_windows <= 0) return;
    w.sm_clock_mhz = row.clock_mhz;
    w.sm_clock_min_mhz = row.clock_min_mhz.value_or(*row.clock_mhz);
    w.sm_clock_max_mhz = row.clock_max_mhz.value_or(*row.clock_mhz);
    w.clock_readings = static_cast<int>(row.clock_windows);
    clock_given = true;
  };
  std::vector<OfuWindow> out;
  if (row.observed_s > 0) {
    // The CUDA-core figures are means over the observed seconds, the same in
    // the busy and the idle part.
    auto per_second = [&](const std::optional<double>& v) {
      return v ? std::optional(*v / row.observed_s) : std::nullopt;
    };
    base.non_tensor.fp64_active = per_second(row.fp64_active_s);
    base.non_tensor.fp32_active = per_second(row.fp32_active_s);
    base.non_tensor.fp16_active = per_second(row.fp16_active_s);
    base.non_tensor.flops_upper_bound_tflops = per_second(row.non_tensor_tflop);
    base.non_tensor.share_of_peak = per_second(row.non_tensor_peak_s);
    const double tensor = row.tensor_active_s / row.observed_s;
    if (row.busy_s > 0) {
      OfuWindow w = base;
      w.covered_s = row.busy_s;
      w.ofu = row.busy_utilized_s / row.busy_s;
      w.tensor_active = tensor;
      w.busy = true;
      add_clock(w);
      out.push_back(w);
    }
    const double idle_s = row.observed_s - row.busy_s;
    if (idle_s > row.observed_s * 1e-12) {
      OfuWindow w = base;
      w.covered_s = idle_s;
      w.ofu = (row.utilized_s - row.busy_utilized_s) / idle_s;
      w.tensor_active = tensor;
      w.busy = false;
      add_clock(w);
      out.push_back(w);
    }
  } else if (row.clock_mhz) {
    OfuWindow w = base;
    add_clock(w);
    out.push_back(w);
  }
  return out;
}

StoreReport BuildStoreReport(const sinks::StoredHistory& history, const GpuSpecDatabase& specs) {
  StoreReport out;
  out.query = history.query;
  Report& report = out.report;
  report.source_name = history.path;
  report.window_s = ReportedWindowS(history);

  RowsByGpu rows_of;
  for (const StoredWindow& row : history.windows) rows_of[row.gpu_id].push_back(&row);

  // Each GPU's share of a physical GPU (1, or its MIG slice's), by id; absent
  // leaves it out of the overall and job figures.
  std::map<std::int64_t, std::optional<double>> share_of;
  OverallBuilder overall;
  for (const StoredGpu& stored : history.gpus) {
    GpuReport gpu = GpuOfStored(stored, specs);
    share_of[stored.id] = gpu.share;
    gpu.windowed.interval_s = report.window_s;
    AddRowsOfGpu(rows_of[stored.id], !stored.sku.empty(), gpu, overall);
    report.gpus.push_back(std::move(gpu));
  }
  report.overall = overall.FinishSummary();
  report.coverage = overall.coverage();
  out.jobs = JobTotalsOf(history, share_of, [&](const StoredJob& job, const auto& add) {
    for (const StoredWindow* row : rows_of[job.gpu_id]) {
      if (InInterval(row->end_s, job)) add(*row);
    }
  });
  return out;
}

StoreReport BuildTotalsReport(const HistoryTotals& totals, const GpuSpecDatabase& specs) {
  const sinks::StoredHistory& history = totals.history;
  StoreReport out;
  out.query = history.query;
  out.method = "counters";
  Report& report = out.report;
  report.source_name = history.path;
  report.window_s = totals.window_s;
  report.notes = totals.notes;
  std::map<std::int64_t, std::optional<double>> share_of;
  OverallBuilder overall;
  for (const StoredGpu& stored : history.gpus) {
    GpuReport gpu = GpuOfStored(stored, specs);
    share_of[stored.id] = gpu.share;
    gpu.windowed.interval_s = report.window_s;
    auto sums = totals.of_gpu.find(stored.id);
    std::vector<const StoredWindow*> rows;
    if (sums != totals.of_gpu.end()) rows.push_back(&sums->second);
    AddRowsOfGpu(rows, !stored.sku.empty(), gpu, overall);
    // One row per GPU: its "percentiles" would be its mean.
    gpu.summary.p10 = gpu.summary.p50 = gpu.summary.p90 = std::nullopt;
    report.gpus.push_back(std::move(gpu));
  }
  report.overall = overall.FinishSummary();
  report.overall.p10 = report.overall.p50 = report.overall.p90 = std::nullopt;
  report.coverage = overall.coverage();
  // Each (job, GPU) sum counts once, with the first of the job's intervals there.
  std::set<std::pair<std::string, std::int64_t>> counted;
  out.jobs = JobTotalsOf(history, share_of, [&](const StoredJob& job, const auto& add) {
    auto sums = totals.of_job.find({job.job_id, job.gpu_id});
    if (sums != totals.of_job.end() && counted.insert(sums->first).second) add(sums->second);
  });
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
