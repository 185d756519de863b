// A GPU history read back from Prometheus (or anything that speaks its HTTP
// query API: Thanos, Mimir, VictoriaMetrics), as the same StoredHistory the
// agent's SQLite store gives, so that one report builder serves both
// (`ofu report --store` and `ofu report --prometheus`).
//
// What it asks: the raw samples of the agent's counters over the range, one
// instant query with a range selector evaluated at the range's end,
//     {__name__=~"ofu_((observed|utilized|busy|busy_utilized|tensor_active|hmma_active|imma_active|dfma_active|
//                      fp64_active|fp32_active|fp16_active|non_tensor_peak)_seconds|non_tensor_flop_upper_bound)_total"}[R]
// plus ofu_gpu_info[R] (model, SKU) and ofu_gpu_job_info[R] (with a job: only
// {job_id="X"}, and only that job's GPUs are read).
// Each pair of consecutive scrapes of a GPU becomes one row whose values are
// the counters' increases (a decrease is a restart of the agent: the new
// value is the increase); a per-pipe counter the GPU does not export leaves
// the row's pipe seconds absent. The counters follow the counter rule of
// sinks/window_counters.h, as the store's rows do, so the two read alike:
// windows without data add 0 observed and 0 tensor seconds in both. One
// difference is inherent to counters: once a pipe's series exists, a scrape
// interval without that pipe reads as an increase of 0 where the store has
// NULL; sums, and every ratio built from them, are the same. With a job, a row counts when the job's info
// series was present on that GPU at the row's end, which is exact attribution
// per scrape interval, like the store's job intervals. Job intervals (every
// job's, or the one's) are runs of scrapes showing the job on a GPU, each
// (scrape before the run, last scrape of the run], so a row belongs to a job
// exactly when the job's info was present at the row's end.
//
// Errors: kInvalidArgument for a URL that is not http(s)://host[:port][/path];
// kUnavailable when the server cannot be reached or answers with an HTTP
// error; kMalformedInput when its answer is not the query API's JSON, or
// when Prometheus reports a query error (its message included).
//
// Thread-safety: no shared state.
#pragma once

#include <string>

#include "ofu/core/result.h"
#include "ofu/sinks/history_reader.h"

namespace ofu::analysis {

struct PrometheusQueryOptions {
  double timeout_s = 30;
};

// `query.until_s` and `query.since_s` must be set (the caller defaults them).
Result<sinks::StoredHistory> ReadPrometheusHistory(const std::string& url, const sinks::HistoryQuery& query,
                                                   const PrometheusQueryOptions& options = {});

}  // namespace ofu::analysis
