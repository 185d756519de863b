// Totals from Prometheus, summed by the server (`ofu report --prometheus`
// and `ofu reconcile --prometheus`): per GPU and per (job, GPU), the sums of
// the agent's counters' increases over the range, so that a fleet's week
// comes back as a few series per GPU instead of every raw sample.
//
// The arithmetic, for each of the agent's 13 counters x (docs/prometheus.md, "Queries ofu
// sends"), at steps of S seconds (S at most the scrape interval; see below):
//   d(t)  = x(t) − p(t)  when it is ≥ 0, where p(t) = last_over_time(x[G] offset S)
//           x(t)         when it is < 0 (a counter reset: the agent restarted)
//   GPU   sum_over_time(d[C:S])                            per piece C of the range
//   job   sum_over_time((d * on(uuid) group_left(job_id) job_info_in_step)[C:S])
// where job_info_in_step = last_over_time(ofu_gpu_job_info[S − 1 ms]): the job
// whose info was scraped in the step. The sum of d over consecutive steps
// telescopes to the counter's increase, whatever S, so GPU totals are the
// rows' sums exactly (the rule of Prometheus's increase() without its
// extrapolation). A step holds at most one scrape when S ≤ the scrape
// interval; then a reset is counted as the raw rows count it and each
// scrape's increase goes to the job scraped with it, as in the store. S is
// the scrape interval, less 10 %, from the densest 10 minutes of the GPU with
// the most samples, unless given. A scrape gap
// longer than G (5 min) starts the counter afresh: the increase across it is
// not counted (the raw rows count it). G is 5 minutes, the server's default
// lookback: a longer G costs the server G / scrape interval samples per step.
// The range is asked for in pieces (by time; a piece refused for its size is
// halved), each at most max_samples_per_query / (6 × GPUs) steps long.
// Job intervals: from the first to the last scrape showing the job on a GPU
// (one interval per job and GPU, opening one scrape interval before its
// first scrape). The edges of the range are exact to one step.
//
// Errors: those of prometheus_client.h.
// Thread-safety: no shared state.
#pragma once

#include <string>

#include "ofu/analysis/prometheus_history.h"
#include "ofu/analysis/store_report.h"

namespace ofu::analysis {

struct PrometheusTotalsOptions {
  PrometheusQueryOptions query;
  double step_s = 0;       // S; 0: from the data
  double max_gap_s = 300;  // G: the server's default lookback delta
};

// `query.until_s` and `query.since_s` must be set.
Result<HistoryTotals> ReadPrometheusTotals(const std::string& url, const sinks::HistoryQuery& query,
                                           const PrometheusTotalsOptions& options = {});

}  // namespace ofu::analysis
