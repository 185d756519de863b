// The OFU report of what the agent stored (`ofu report --store`): the same
// Report as for a recording (per GPU and overall; report.h), with
// Report::history_read (how it was read) and Report::jobs (totals per job).
//
// Stored rows become OfuWindows and go through core's Summarizer, as the
// windows of a recording do: a row with observed_s > 0 is a window of
// covered_s = observed_s with ofu = utilized_s / observed_s and tensor
// activity tensor_active_s / observed_s. A row that is partly busy (a
// downsampled one) is split into its busy and idle parts, so OFU, active
// OFU, tensor activity and idle fraction are exactly the sums' ratios. Rows
// without an OFU add only their clock. Percentiles are over rows (over
// downsampled spans where the rows are downsampled).
//
// Job totals, per job id over the range. Every GPU's seconds are weighted by
// its share of a physical GPU (1, or its MIG slice's; core/gpu_share.h), so
// hours are GPU-equivalent hours:
//   gpus            GPUs (and MIG instances) with an interval of the job in
//                   the range and a known share
//   gpus_left_out   those without one (unknown model or MIG profile): not in
//                   any figure of the job
//   gpu_hours       sum of the job's intervals clipped to the range (an
//                   interval still open ends at its GPU's newest window)
//   ofu             sum(utilized_s) / sum(observed_s) over the job's windows
//   active_ofu      the same over busy seconds
//   observed_hours  sum(observed_s) / 3600: the part of gpu_hours with an OFU
//   non_tensor      CUDA-core pipe activities and share_of_peak: their
//                   seconds over the observed seconds of the rows that have
//                   them (weighted); flops_upper_bound_tflops: the bound's
//                   TFLOP over those weighted seconds (TFLOP/s per GPU)
//
// Thread-safety: pure functions of their inputs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ofu/analysis/report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/core/result.h"
// The stored row types, and HistoryStream for ReadStoreReport.
#include "ofu/history/history_reader.h"
// HistoryTotals, the sums BuildTotalsReport reports.
#include "ofu/history/prometheus_totals.h"

namespace ofu::analysis {

// `specs` must outlive the returned report (GpuReport::spec points into it).
// A GPU whose stored SKU the database no longer knows is reported without
// spec, with a problem saying so; its stored OFU stands. The report's
// window_s is the span of the first full-resolution row (by GPU, then time),
// else of the first row.
//
// The history's windows may come in any order; each GPU's are taken in the
// order given. It is StoreReportBuilder fed GPU by GPU.
// `counters`: the counters the rows hold (core/output_counters.h).
Report BuildStoreReport(const history::StoredHistory& history, const GpuSpecDatabase& specs,
                        const OutputCounterTable& counters = OutputCounterTable::Builtin());

// BuildStoreReport one row at a time, for a store read with
// history::HistoryStream (`ofu report --store`): it keeps per-GPU and per-job
// state (the GPU being read's Summarizer, every GPU's summary and gaps, each
// job's sums), never the rows, so its memory does not grow with them.
//
// `head` gives the path, query, GPUs and job intervals; its windows are not
// read. `head` must outlive the builder, `specs` the report.
// Thread-safety: one thread at a time.
class StoreReportBuilder {
 public:
  StoreReportBuilder(const history::StoredHistory& head, const GpuSpecDatabase& specs,
                     const OutputCounterTable& counters = OutputCounterTable::Builtin());
  ~StoreReportBuilder();
  StoreReportBuilder(const StoreReportBuilder&) = delete;
  StoreReportBuilder& operator=(const StoreReportBuilder&) = delete;

  // Rows GPU by GPU, in the order of head.gpus (HistoryStream's and
  // ReadHistory's order: by id), each GPU's in time order. A row of a GPU
  // that head does not list only counts towards rows() and window_s; a row
  // of a GPU listed before the one being read breaks this contract and is
  // left out.
  void Add(const history::StoredWindow& row);
  // An hour of a GPU's windows summed (history/history_rollup.h), in the same
  // order as its windows would be: the same as adding each of them, but
  // percentiles, which come from its histogram (within half a bin).
  void Add(const history::StoredRollup& rollup);
  std::int64_t rows() const;     // windows added, one by one or in rollups
  std::int64_t rollups() const;  // rollups added
  // The report; call once, after the last row.
  Report Finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// `ofu report --store` without holding the rows: the store at `path` read
// with history::HistoryStream into a StoreReportBuilder. Without rollups the
// report equals BuildStoreReport(ReadHistory(path, query), specs); with
// them (the default) it is the same report from the store's hourly sums where
// it has them, to floating-point rounding, with percentiles within half a
// histogram bin (0.05 percentage points). `head` is the history without its
// windows (GPUs, job intervals); `rows` how many windows it has, `rollups`
// how many hourly sums stood for some of them. Errors: ReadHistory's.
struct StoreReadOptions {
  bool rollups = true;
};
struct StreamedStoreReport {
  history::StoredHistory head;
  Report report;
  std::int64_t rows = 0;
  std::int64_t rollups = 0;
};
Result<StreamedStoreReport> ReadStoreReport(const std::string& path, const history::HistoryQuery& query,
                                            const GpuSpecDatabase& specs, const StoreReadOptions& options = {});

// The report of totals: the same per-GPU, overall and per-job figures as
// BuildStoreReport of the windows they sum (OFU, active OFU, tensor
// activity, idle fraction, coverage), without percentiles (absent: they need
// the windows) and without gaps. Job gpu_hours come from the intervals.
Report BuildTotalsReport(const history::HistoryTotals& totals, const GpuSpecDatabase& specs);

// A time for --since/--until: Unix seconds ("1790000000", "1790000000.5"),
// RFC 3339 ("2026-11-21T10:00:00Z", "2026-11-21T12:00:00+02:00", fractional
// seconds allowed) or relative to `now_s` ("-2h", "-30m", "-7d", "-90s").
// kInvalidArgument otherwise.
Result<double> ParseTimeArgument(std::string_view text, double now_s);

}  // namespace ofu::analysis
