// Totals from Prometheus, summed by the server (`ofu report --prometheus`
// and `ofu reconcile --prometheus`): per GPU and per (job, GPU), the sums of
// the agent's counters' increases over the range, so that a fleet's week
// comes back as a few values per GPU and job instead of every raw sample.
//
// The rule is that of the rows (prometheus_history.h): each scrape adds its
// counter's increase since the scrape before (the new value after a reset),
// to its GPU and to the job scraped with it; the first scrape of a GPU with
// none before it within the lookback adds nothing. Two ways to the same sums:
//
// Spans (the common case, cost independent of the range's length). A GPU's
// span is its scrapes in (since, until]; a job's is its info's scrapes on
// one GPU. Found at coarse steps (C = 4 scrape intervals, 60 to 240 s: a
// `count_over_time` over C at each step), then exactly at steps of less than
// a scrape interval within the first and last coarse step. The sum over a
// span telescopes: the value at its last scrape less the value before its
// first (at `since` for a span that began earlier), read with `@` for many
// spans in one query. Valid only without a reset (`resets()` over the range
// and a lookback), with every counter there at both ends, and, for a job,
// with the job in every scrape of its GPU within its span (two
// `count_over_time`s agree). A GPU where any of that fails goes to:
//
// Step sums, for each of the agent's 13 counters x (docs/prometheus.md,
// "Queries ofu sends"), at steps of S seconds (S at most the scrape interval):
//   d(t)  = x(t) − p(t)  when it is ≥ 0, where p(t) = last_over_time(x[G] offset S)
//           x(t)         when it is < 0 (a counter reset: the agent restarted)
//   GPU   sum_over_time(d[C:S])                            per piece C of the range
//   job   sum_over_time((d * on(uuid) group_left(job_id) job_info_in_step)[C:S])
// where job_info_in_step = last_over_time(ofu_gpu_job_info[S − 1 ms]): the job
// whose info was scraped in the step. The sum of d over consecutive steps
// telescopes to the counter's increase, whatever S. A step holds at most one
// scrape when S ≤ the scrape interval; then a reset is counted as the rows
// count it and each scrape's increase goes to the job scraped with it. S is
// the scrape interval, less 10 %, from the densest 10 minutes of the GPU with
// the most samples, unless given. A scrape gap longer than G (5 min) starts
// the counter afresh: the increase across it is not counted there (the rows
// and the spans count it). The cost is the server's: every step of every GPU.
// The range is asked for in pieces (by time; a piece refused for its size is
// halved), each at most max_samples_per_query / (6 × GPUs) steps long.
//
// Job intervals: from the first to the last scrape showing the job on a GPU
// (one interval per job and GPU, opening one scrape interval before its
// first scrape). The report's notes say how many GPUs took each way.
//
// Errors: those of prometheus_client.h.
// Thread-safety: no shared state.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ofu/history/history_reader.h"
#include "ofu/history/prometheus_history.h"

namespace ofu::history {

// Totals instead of windows: what the Prometheus server sums for ofu.
// `history` has the GPUs and the job intervals and no windows; a sum is a
// downsampled row (kHistoryDownsampled) holding the sums of the windows it
// stands for (analysis::BuildTotalsReport makes the report of them).
struct HistoryTotals {
  StoredHistory history;
  std::map<std::int64_t, StoredWindow> of_gpu;  // gpu id -> its windows in the range (with a job: the job's)
  std::map<std::pair<std::string, std::int64_t>, StoredWindow> of_job;  // (job id, gpu id) -> the job's there
  double window_s = 0;                                                  // the scrape interval the sums were made at
  std::vector<std::string> notes;                                       // how they were made, for people
};

struct PrometheusTotalsOptions {
  PrometheusQueryOptions query;
  double step_s = 0;       // S; 0: from the data
  double max_gap_s = 300;  // G: the server's default lookback delta
  // The spans are found at coarse steps: 4 scrape intervals (60 to 240 s),
  // or longer, in whole minutes, where the range would need more than this
  // many. The passes cost the server one evaluation per step and series: a
  // week at 60 s steps over 6,144 (job, GPU) series was 47 of the fleet
  // report's 65 s (docs/BENCHMARKS.md, "Fleet scale").
  int max_coarse_steps = 1000;
};

// `query.until_s` and `query.since_s` must be set.
Result<HistoryTotals> ReadPrometheusTotals(const std::string& url, const HistoryQuery& query,
                                           const PrometheusTotalsOptions& options = {});

}  // namespace ofu::history
