// Raw samples from a Prometheus server (or anything that speaks its query
// API): every series a selector matches, with every sample it holds in
// (since_s, until_s], as scraped. For readers that want the scrapes
// themselves rather than the agent's counters: `ofu report --prometheus URL
// --series dcgm-exporter` reads dcgm-exporter's gauges this way
// (analysis/prometheus_recording.h).
//
// What it asks (docs/prometheus.md, "Queries ofu sends"):
//   count by (__name__) (last_over_time(<selector>[R]))   the names in the range
//   sum(count_over_time({__name__="<name>"}[R]))           each name's samples, to plan
//   <selector>[P]                                          each piece of the range, at its end
// The range is read in pieces of at most max_samples_per_query samples (by
// the count, as if spread evenly); a piece the server refuses for its size
// is halved (prometheus_client.h, QueryOverPieces). A sample seen in two
// pieces (a range selector that includes its start) is kept once.
//
// Memory: every sample read is held, about 16 bytes each plus the labels
// once per series; the answer of one piece is parsed whole.
//
// Errors: those of prometheus_client.h.
// Thread-safety: no shared state.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/history/prometheus_client.h"

namespace ofu::history {

struct RawSeriesOptions {
  double timeout_s = 60;                           // per HTTP request
  std::int64_t max_samples_per_query = 2'000'000;  // a piece's size, in samples
  // Called after each query with a line for people; may be empty.
  std::function<void(const std::string&)> progress;
};

// Every series `selector` (a PromQL vector selector, "{__name__=~\"a|b\"}")
// matches, in label order, each with its samples in (since_s, until_s] in
// time order. Series without a sample in the range are not returned.
Result<std::vector<PromSeries>> ReadRawSeries(const std::string& url, const std::string& selector, double since_s,
                                              double until_s, const RawSeriesOptions& options = {});

}  // namespace ofu::history
