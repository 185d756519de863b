// A client of Prometheus's HTTP query API (also served by Thanos, Mimir and
// VictoriaMetrics): instant queries, with the answer as labelled series.
//
// Refusals for size are told apart from other errors, because the caller's
// answer to them is to ask for less (a shorter range, fewer GPUs) rather than
// to give up: Prometheus's --query.max-samples ("query processing would load
// too many samples into memory"), its 11,000-points-per-series limit, and the
// sample, chunk and series limits of Thanos, Mimir and VictoriaMetrics, and
// VictoriaMetrics's limit on a query's length.
//
// Errors: kInvalidArgument for a URL that is not http(s)://host[:port][/path];
// kUnavailable when the server cannot be reached, does not answer within the
// timeout, or answers with an HTTP error that is not the query API's JSON;
// kMalformedInput when Prometheus reports a query error (its message
// included) or the answer is not the API's JSON.
//
// Thread-safety: one client per thread (it owns one HTTP connection).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ofu/core/output_counters.h"
#include "ofu/core/result.h"
#include "ofu/formats/prometheus_api.h"

namespace ofu::history {

// One series of an answer (formats/prometheus_api.h reads the API's JSON).
using PromSeries = formats::PromSeries;

// The answer to one query: its series, or a refusal for size (`too_large`,
// with the server's message in `refusal`).
struct PromAnswer {
  std::vector<PromSeries> series;
  bool too_large = false;
  std::string refusal;
};

// True for the messages servers give when a query is too large for them.
bool IsRefusalForSize(const std::string& message);

class PrometheusClient {
 public:
  // `timeout_s`: per HTTP request (connect and read).
  static Result<std::unique_ptr<PrometheusClient>> Open(const std::string& url, double timeout_s);
  ~PrometheusClient();

  // An instant query at `time_s`: a vector or a matrix (a range selector).
  // Samples read so far are counted in samples_read().
  Result<PromAnswer> Query(const std::string& promql, double time_s);

  const std::string& url() const { return url_; }
  std::int64_t queries() const { return queries_; }
  std::int64_t samples_read() const { return samples_read_; }

 private:
  struct Connection;
  PrometheusClient(std::string url, std::unique_ptr<Connection> connection);

  std::string url_;
  std::unique_ptr<Connection> connection_;
  std::int64_t queries_ = 0;
  std::int64_t samples_read_ = 0;
};

// PromQL string literal of `text`.
std::string PromQuoted(const std::string& text);

// A number as PromQL (Go's ParseFloat) reads it back exactly: the shortest
// decimal of the double ("1980", "1.202").
std::string PromNumber(double x);

// The regex alternatives matching exactly these values ("a|b\\.c").
std::string PromExactAlternatives(const std::vector<std::string>& values);

// `values` in groups, in order, each group's PromExactAlternatives at most
// max_bytes long (a value longer than that alone is a group of its own): a
// list of GPUs asked about in one term is asked in as many terms as this
// gives, because servers bound a query's length (VictoriaMetrics's
// -search.maxQueryLen is 16 KiB by default; 1,024 GPUs' UUIDs are 26 KiB).
// Every value is in exactly one group; no group is empty.
inline constexpr std::size_t kMaxAlternativesBytes = 4096;
std::vector<std::vector<std::string>> SplitAlternatives(const std::vector<std::string>& values,
                                                        std::size_t max_bytes = kMaxAlternativesBytes);

// The alternatives of every counter's sample name (OutputCounter::sample_name),
// for {__name__=~"..."}: what the readers ask the agent's counters with.
std::string CounterNamesRegex(const OutputCounterTable& table);

}  // namespace ofu::history

namespace ofu::history {

// One instant query at `at_s`, each series that has a sample handed to
// `consume`. A refusal for size is kUnavailable: "<url>: the server refuses
// a query <what> for its size (<server's message>)".
Status QueryEachSeries(PrometheusClient& client, const std::string& promql, double at_s, const char* what,
                       const std::function<void(const PromSeries&)>& consume);

// A PromQL range duration of whole milliseconds ("[86400000ms]").
std::string PromRange(double seconds);

// A subquery's range and step, whole milliseconds ("[86400000ms:300000ms]").
std::string PromSubqueryRange(double seconds, double step_s);

// Runs one instant query per piece of (since_s, until_s] at the piece's end,
// `make_query(length_s)` giving its text for the piece's length (PromRange),
// and hands each answer to `consume`. It starts with pieces of `piece_s`
// (the whole range when ≥ it); a piece the server refuses for its size is
// split in halves, down to `min_piece_s`, below which the refusal is an
// error (kUnavailable) naming the server's message and limit. After a split,
// `piece_s` is lowered to the length that was answered, so the caller's next
// range starts there instead of being refused again.
Status QueryOverPieces(PrometheusClient& client, double since_s, double until_s, double& piece_s, double min_piece_s,
                       const std::function<std::string(double length_s)>& make_query,
                       const std::function<Status(PromAnswer&&, double piece_end_s)>& consume);

}  // namespace ofu::history
