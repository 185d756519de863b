// The PromQL of a counter's exact increase, step by step, and of its split
// by the job scraped in each step: one model for the two places that sum the
// agent's counters on the server, the sums `ofu report --prometheus` asks
// for (prometheus_totals.h) and the hourly recording rules that keep a
// month of them (prometheus_hourly.h). Both must count alike, or a month
// read from the rollups would not equal the one read from raw counters.
//
// The rule is that of the rows (prometheus_history.h): an increase is the
// value less the one before; a decrease is a reset (the agent restarted) and
// the value after it is the increase. A step holds at most one scrape when
// the step is at most the scrape interval, so each scrape's increase is
// counted once and goes to the job scraped with it.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

namespace ofu::history {

// The increase of the instant vector `x` over the `window_s` seconds before
// each evaluation; absent where `x` had no sample within `max_gap_s` before
// that (a scrape gap longer than the lookback starts the counter afresh).
std::string PromIncreaseOver(const std::string& x, double window_s, double max_gap_s);

// The job scraped on each GPU in the `window_s` seconds before evaluation
// (ofu_gpu_job_info{matchers}), one series per (uuid, job_id).
std::string PromJobIn(const std::string& matchers, double window_s);

// `d` per (GPU, job scraped in the window), and per GPU alone (no job_id)
// where no job was scraped; with `only_jobs`, the jobs' parts alone.
std::string PromSplitByJob(const std::string& d, const std::string& job_in, bool only_jobs);

// A PromQL duration of whole milliseconds ("50000ms").
std::string PromMs(double seconds);

}  // namespace ofu::history
