#include "ofu/history/prometheus_totals.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "ofu/history/prometheus_client.h"
#include "ofu/history/prometheus_increase.h"

namespace ofu::history {
namespace {

// The agent's counters (core/output_counters.h), each with its place in a row.
struct Counter {
  std::string name;  // the exposition's counter: "ofu_observed_seconds_total"
  std::size_t id;    // in the table and in StoredWindow::counters
  double scale;      // counter unit -> row unit (FLOP -> TFLOP)
};

std::vector<Counter> CountersOf(const OutputCounterTable& table) {
  std::vector<Counter> counters;
  for (std::size_t id = 0; id < table.size(); ++id) {
    counters.push_back({table[id].sample_name(), id, 1 / table[id].metric_scale});
  }
  return counters;
}

// Samples the server holds per GPU and step of a sum (x and p twice, their
// differences, the set operations, the sum): measured on Prometheus 2.42.
constexpr double kSamplesPerGpuStep = 6;

void Add(StoredWindow& row, const Counter& counter, double value) {
  row.counters.Add(counter.id, value * counter.scale);
}

const Counter* CounterNamed(const std::vector<Counter>& counters, const std::string& name) {
  for (const Counter& counter : counters) {
    if (name == counter.name) return &counter;
  }
  return nullptr;
}

// The server's side of the totals: the queries (batched, at an instant, over
// the whole range, in pieces) and their progress. The classes below decide
// what to ask.
class TotalsQueries {
 public:
  TotalsQueries(PrometheusClient& client, const HistoryQuery& query, const PrometheusTotalsOptions& options)
      : client_(client), query_(query), options_(options) {}

  const std::string& url() const { return client_.url(); }
  const HistoryQuery& query() const { return query_; }  // since_s and until_s are set
  const PrometheusTotalsOptions& options() const { return options_; }

  // One piece of a batched query: a PromQL expression whose series are told
  // apart from the other terms' by their labels, and the samples it loads.
  struct Term {
    std::string promql;
    double samples = 1;  // loaded by the server
    double series = 1;   // in the answer
  };

  // Runs `terms` joined by `or`, as few queries as the server's limits and
  // max_samples_per_query allow; a query refused for its size is halved. A
  // term refused alone goes to `refused_alone`, an error by default.
  Status Batched(const std::vector<Term>& terms, const std::function<void(const PromSeries&)>& consume,
                 const std::function<Status(size_t)>& refused_alone = nullptr) {
    constexpr size_t kMaxQueryBytes = 256 * 1024;
    // The answer is parsed whole: a bound on its series bounds ofu's memory.
    constexpr double kMaxSeries = 20'000;
    size_t begin = 0;
    while (begin < terms.size()) {
      size_t end = begin;
      size_t bytes = 0;
      double samples = 0, series = 0;
      while (end < terms.size() &&
             (end == begin ||
              (bytes + terms[end].promql.size() < kMaxQueryBytes && series + terms[end].series <= kMaxSeries &&
               samples + terms[end].samples < static_cast<double>(options_.query.max_samples_per_query)))) {
        bytes += terms[end].promql.size() + 6;
        samples += terms[end].samples;
        series += terms[end].series;
        ++end;
      }
      OFU_RETURN_IF_ERROR(BatchedRun(terms, begin, end, consume, refused_alone));
      begin = end;
    }
    return OkStatus();
  }

  // One instant query at `at`, each series' value to `consume`.
  Status Instant(const std::string& promql, double at, const std::function<void(const PromSeries&)>& consume) {
    return QueryEachSeries(client_, promql, at, "of one scrape interval", consume);
  }

  // An instant query over the whole range ({range}), in time pieces if refused.
  Status Whole(const std::string& text, const std::function<void(PromAnswer&&)>& consume) {
    double piece_s = *query_.until_s - *query_.since_s;
    return Over(
        piece_s, 1,
        [&](double length_s) {
          std::string promql = text;
          promql.replace(promql.find("{range}"), 7, PromRange(length_s));
          return promql;
        },
        [&](PromAnswer&& answer) { consume(std::move(answer)); });
  }

  // A sum over steps of `step_s` ({range} becomes the subquery [piece − 1
  // ms:step_s]), in pieces of about `piece_s` (lowered where the server
  // refuses one), each series' one value handed to `consume`.
  Status Pieces(const std::string& text, double& piece_s, double step_s,
                const std::function<void(const PromSeries&)>& consume) {
    return Over(
        piece_s, step_s,
        [&](double length_s) {
          std::string promql = text;
          promql.replace(promql.find("{range}"), 7, fmt::format("[{}:{}]", PromMs(length_s - 0.001), PromMs(step_s)));
          return promql;
        },
        [&](PromAnswer&& answer) {
          for (const PromSeries& s : answer.series) {
            if (!s.samples.empty()) consume(s);
          }
        });
  }

  // One query per piece of the range (QueryOverPieces), the PromQL of a
  // piece's length from `promql_of`.
  Status Over(double& piece_s, double min_piece_s, const std::function<std::string(double length_s)>& promql_of,
              const std::function<void(PromAnswer&&)>& consume) {
    return QueryOverPieces(client_, *query_.since_s, *query_.until_s, piece_s, min_piece_s, promql_of,
                           [&](PromAnswer&& answer, double) {
                             consume(std::move(answer));
                             return OkStatus();
                           });
  }

  void Progress(const std::string& what) {
    if (options_.query.progress) {
      options_.query.progress(fmt::format("summed {} ({} queries)", what, client_.queries()));
    }
  }

 private:
  // `a or b or c …` as a balanced tree: Prometheus copies the left side's
  // series at each `or`, so a chain of n terms costs n² and a tree n log n
  // (measured: 3.6 s for one chain of 768 terms).
  static std::string JoinedByOr(const std::vector<Term>& terms, size_t begin, size_t end) {
    if (end - begin == 1) return "(" + terms[begin].promql + ")";
    const size_t middle = begin + (end - begin) / 2;
    return "(" + JoinedByOr(terms, begin, middle) + " or " + JoinedByOr(terms, middle, end) + ")";
  }

  Status BatchedRun(const std::vector<Term>& terms, size_t begin, size_t end,
                    const std::function<void(const PromSeries&)>& consume,
                    const std::function<Status(size_t)>& refused_alone) {
    auto queried = client_.Query(JoinedByOr(terms, begin, end), *query_.until_s);
    if (!queried.ok() && queried.error().message.find("@ modifier") != std::string::npos) {
      return Error::Unavailable(
          "{}: the server does not take PromQL's @ modifier, which ofu's sums need (Prometheus 2.33 and later "
          "take it; 2.25 to 2.32 with --enable-feature=promql-at-modifier): {}",
          client_.url(), queried.error().message);
    }
    OFU_ASSIGN_OR_RETURN(auto answer, std::move(queried));
    if (answer.too_large) {
      if (end - begin > 1) {
        const size_t middle = begin + (end - begin) / 2;
        OFU_RETURN_IF_ERROR(BatchedRun(terms, begin, middle, consume, refused_alone));
        return BatchedRun(terms, middle, end, consume, refused_alone);
      }
      if (refused_alone) return refused_alone(begin);
      return Error::Unavailable("{}: the server refuses a query for one span for its size ({})", client_.url(),
                                answer.refusal);
    }
    for (const PromSeries& s : answer.series) {
      if (!s.samples.empty()) consume(s);
    }
    Progress(fmt::format("{} queries", client_.queries()));
    return OkStatus();
  }

  PrometheusClient& client_;
  const HistoryQuery query_;
  const PrometheusTotalsOptions& options_;
};

// A series seen over part of the range: a GPU's ofu_observed_seconds_total,
// or a job's ofu_gpu_job_info on one GPU. Its first and last scrape, and
// each counter's value before the first and at the last.
struct Span {
  bool is_job = false;
  std::string uuid, job_id, user, job_name, scheduler;
  double first_step = INFINITY, last_step = -INFINITY;  // the coarse steps that saw it
  double first = NAN, last = NAN;                       // its first and last scrape (s)
  std::map<const Counter*, double> before, at_last;
};

// The cheap way to the sums (the header's "Spans"): the spans of the GPUs
// and of the jobs on them, and every counter's value at their edges, so that
// a span's sums are its last values less those before it. The GPUs where
// that does not hold (a reset, a job missing from some of its GPU's scrapes,
// a value that is not there) are left to the step sums: dirty().
class SpanReader {
 public:
  // `ids` (uuid -> gpu id) and `counters` must outlive the reader.
  SpanReader(TotalsQueries& server, const std::map<std::string, std::int64_t>& ids,
             const std::vector<Counter>& counters, double scrape_s, double step_s)
      : server_(server), ids_(ids), counters_(counters), scrape_s_(scrape_s), step_s_(step_s) {
    const HistoryQuery& query = server_.query();
    const double range_s = *query.until_s - *query.since_s;
    coarse_s_ = std::max(std::clamp(std::round(4 * scrape_s_), 60.0, 240.0),
                         60 * std::ceil(range_s / std::max(1, server_.options().max_coarse_steps) / 60));
  }

  // The spans of the GPUs of the label matchers `filter` (with a job asked
  // for, that job's spans alone), with their values where the GPU is not
  // dirty.
  Status Read(const std::string& filter) {
    const HistoryQuery& query = server_.query();
    OFU_RETURN_IF_ERROR(ReadResets(filter));
    if (!query.job_id) OFU_RETURN_IF_ERROR(FindSpans("ofu_observed_seconds_total", filter, false));
    const std::string job_filter = filter + (query.job_id ? ",job_id=" + PromQuoted(*query.job_id) : "");
    OFU_RETURN_IF_ERROR(FindSpans("ofu_gpu_job_info", job_filter, true));
    OFU_RETURN_IF_ERROR(ReadSpanValues());
    return CheckJobSpans();
  }

  // The GPUs' spans and then the jobs', each job's in order of its GPUs.
  const std::vector<Span>& spans() const { return spans_; }
  // The GPUs (uuids) whose spans do not give their sums.
  const std::set<std::string>& dirty() const { return dirty_; }

 private:
  // GPUs whose counters were reset (the agent restarted) within the range or
  // a lookback before it: their totals are the step sums'.
  Status ReadResets(const std::string& filter) {
    double piece_s = *server_.query().until_s - *server_.query().since_s;
    return server_.Over(
        piece_s, coarse_s_,
        [&](double length_s) {
          // Each piece reaches a lookback into the one before: a reset
          // between two pieces' scrapes is seen.
          return fmt::format("resets(ofu_observed_seconds_total{{{}}}[{}])", filter,
                             PromMs(length_s + server_.options().max_gap_s));
        },
        [&](PromAnswer&& answer) {
          for (const PromSeries& s : answer.series) {
            if (!s.samples.empty() && s.samples.front().second > 0) dirty_.insert(s.Label("uuid"));
          }
        });
  }

  // The spans of `selector`'s series, appended to spans_: the coarse steps
  // (coarse_s_ apart) whose last coarse_s_ held a scrape of the series, then
  // the first and last scrape within the first and last of those steps, at
  // steps of less than a scrape interval.
  Status FindSpans(const std::string& metric, const std::string& matchers, bool is_job) {
    std::vector<Span>& spans = spans_;
    const double since = *server_.query().since_s, until = *server_.query().until_s;
    const size_t begin = spans.size();
    std::map<std::pair<std::string, std::string>, size_t> index;  // (uuid, job id) -> spans
    const auto span_of = [&](const PromSeries& s) -> Span* {
      const std::string& uuid = s.Label("uuid");
      if (!ids_.contains(uuid) || s.samples.empty()) return nullptr;
      auto [it, inserted] = index.try_emplace({uuid, is_job ? s.Label("job_id") : ""}, spans.size());
      if (inserted) {
        Span& span = spans.emplace_back();
        span.is_job = is_job;
        span.uuid = uuid;
        if (is_job) {
          span.job_id = s.Label("job_id");
          span.user = s.Label("user");
          span.job_name = s.Label("job_name");
          span.scheduler = s.Label("scheduler");
        }
      }
      return &spans[it->second];
    };
    const std::string selector = fmt::format("{}{{{}}}", metric, matchers);
    const std::string present = fmt::format("count_over_time({}[{}])", selector, PromMs(coarse_s_));
    // One subquery gives each series' coarse steps with a scrape, first and
    // last alike: Prometheus evaluates it once, where min_over_time and
    // max_over_time of it were two passes over every sample. Its answer is a
    // point per series and step, parsed whole: pieces of about
    // kMaxCoarsePoints points (one series per GPU and step, a job's on its
    // GPU's) bound ofu's memory.
    constexpr double kMaxCoarsePoints = 250'000;
    const double gpus = std::max<double>(1, static_cast<double>(ids_.size()));
    double piece_s = std::max(coarse_s_, std::floor(kMaxCoarsePoints / gpus) * coarse_s_);
    OFU_RETURN_IF_ERROR(server_.Over(
        piece_s, coarse_s_,
        [&](double length_s) {
          return fmt::format("timestamp({})[{}:{}]", present, PromMs(length_s - 0.001), PromMs(coarse_s_));
        },
        [&](PromAnswer&& answer) {
          for (const PromSeries& s : answer.series) {
            Span* span = span_of(s);
            if (span == nullptr) continue;
            for (const auto& [at, t] : s.samples) {
              span->first_step = std::min(span->first_step, t);
              span->last_step = std::max(span->last_step, t);
            }
          }
        }));
    // Scrapes after the last step.
    OFU_RETURN_IF_ERROR(server_.Instant(present, until, [&](const PromSeries& s) {
      if (Span* span = span_of(s)) {
        span->last_step = until;
        span->first_step = std::min(span->first_step, until);
      }
    }));
    // The exact scrapes, one term per (job, coarse step).
    for (const bool last : {false, true}) {
      std::map<std::pair<std::string, double>, std::vector<std::string>> groups;  // (job id, step) -> uuids
      for (size_t i = begin; i < spans.size(); ++i) {
        groups[{spans[i].job_id, last ? spans[i].last_step : spans[i].first_step}].push_back(spans[i].uuid);
      }
      std::vector<TotalsQueries::Term> terms;
      for (const auto& [key, all_uuids] : groups) {
        const std::string job = is_job ? ",job_id=" + PromQuoted(key.first) : "";
        for (const std::vector<std::string>& uuids : SplitAlternatives(all_uuids)) {
          // The fine steps need not fall on the coarse step itself: the scrape
          // at or before it is the last one, and the first where no fine step
          // lies between the first scrape and the coarse step.
          const std::string series = fmt::format("{}{{uuid=~\"{}\"{}}}", metric, PromExactAlternatives(uuids), job);
          const std::string fine = fmt::format("{}_over_time(timestamp({})[{}:{}] @ {:.3f})", last ? "max" : "min",
                                               series, PromMs(coarse_s_), PromMs(step_s_), key.second);
          const std::string at = fmt::format("timestamp({} @ {:.3f})", series, key.second);
          terms.push_back({last ? fmt::format("({}) or ({})", at, fine) : fmt::format("({}) or ({})", fine, at),
                           static_cast<double>(uuids.size()) * (coarse_s_ / step_s_ + 2),
                           static_cast<double>(uuids.size())});
        }
      }
      OFU_RETURN_IF_ERROR(server_.Batched(terms, [&](const PromSeries& s) {
        if (Span* span = span_of(s)) (last ? span->last : span->first) = s.samples.front().second;
      }));
    }
    // The range is (since, until], as the store reads it. Prometheus 2's
    // ranges are closed, so a series whose last scrape is at `since` itself
    // is seen too: it has no window in the range (and checking its job span
    // would ask PromQL for a range of 0 ms, which it refuses).
    spans.erase(std::remove_if(spans.begin() + static_cast<std::ptrdiff_t>(begin), spans.end(),
                               [&](const Span& span) { return span.last <= since; }),
                spans.end());
    return OkStatus();
  }

  // Every counter's value before each span and at its last scrape: the last
  // scrape at or before the time, within the server's lookback. Before a
  // span that starts in the range is just before its first scrape; without a
  // scrape there, its first scrape (whose own increase then does not count,
  // as in the step sums). A span that began before the range starts at
  // `since`. A span whose values are not all there goes to the step sums.
  Status ReadSpanValues() {
    std::vector<Span>& spans = spans_;
    const double since = *server_.query().since_s;
    const auto before_of = [&](const Span& span) { return span.first > since ? span.first - 0.001 : since; };
    using Values = std::map<std::pair<double, std::string>, std::map<const Counter*, double>>;  // (t, uuid)
    const auto read = [&](const std::vector<std::pair<double, std::string>>& wanted, Values& values) {
      std::map<double, std::set<std::string>> at;  // time -> uuids
      for (const auto& [t, uuid] : wanted) at[t].insert(uuid);
      std::vector<double> times;
      std::vector<TotalsQueries::Term> terms;
      for (const auto& [t, all_uuids] : at) {
        for (const std::vector<std::string>& uuids : SplitAlternatives({all_uuids.begin(), all_uuids.end()})) {
          terms.push_back({fmt::format("label_replace({{__name__=~\"{}\",uuid=~\"{}\"}} @ {:.3f}, \"ofu_at\", \"{}\", "
                                       "\"\", \"\")",
                                       CounterNamesRegex(*server_.options().query.counters),
                                       PromExactAlternatives(uuids), t, times.size()),
                           static_cast<double>(uuids.size() * counters_.size()),
                           static_cast<double>(uuids.size() * counters_.size())});
          times.push_back(t);
        }
      }
      return server_.Batched(terms, [&](const PromSeries& s) {
        const Counter* counter = CounterNamed(counters_, s.Label("__name__"));
        const size_t k = std::stoul(s.Label("ofu_at"));
        if (counter != nullptr && k < times.size()) {
          values[{times[k], s.Label("uuid")}][counter] = s.samples.front().second;
        }
      });
    };
    std::vector<std::pair<double, std::string>> wanted;
    for (const Span& span : spans) {
      if (std::isnan(span.first) || std::isnan(span.last)) dirty_.insert(span.uuid);
      if (dirty_.contains(span.uuid)) continue;
      wanted.emplace_back(before_of(span), span.uuid);
      wanted.emplace_back(span.last, span.uuid);
    }
    Values values;
    OFU_RETURN_IF_ERROR(read(wanted, values));
    // No scrape before the first: the values at the first.
    wanted.clear();
    for (const Span& span : spans) {
      if (!dirty_.contains(span.uuid) && span.first > since && !values.contains({before_of(span), span.uuid})) {
        wanted.emplace_back(span.first, span.uuid);
      }
    }
    OFU_RETURN_IF_ERROR(read(wanted, values));
    for (Span& span : spans) {
      if (dirty_.contains(span.uuid)) continue;
      auto before = values.find({before_of(span), span.uuid});
      if (before == values.end() && span.first > since) before = values.find({span.first, span.uuid});
      const auto last = values.find({span.last, span.uuid});
      if (before == values.end() || last == values.end() || !SameCountersRising(before->second, last->second)) {
        dirty_.insert(span.uuid);
        continue;
      }
      span.before = before->second;
      span.at_last = last->second;
    }
    return OkStatus();
  }

  // A job's span telescopes only if the job was scraped with every scrape of
  // its GPU in it: the two counts must agree.
  Status CheckJobSpans() {
    const double since = *server_.query().since_s;
    // One term per job and window: its GPUs started and ended together.
    std::map<std::tuple<std::string, double, double>, std::vector<const Span*>> groups;  // (job, from, last)
    for (const Span& span : spans_) {
      if (!span.is_job || dirty_.contains(span.uuid)) continue;
      const double from = span.first > since ? span.first - 0.001 : since;
      groups[{span.job_id, from, span.last}].push_back(&span);
    }
    std::vector<TotalsQueries::Term> terms;
    std::vector<std::map<std::string, const Span*>> checked;  // per term: uuid -> span
    for (const auto& [key, members] : groups) {
      const auto& [job_id, from, last] = key;
      std::map<std::string, const Span*> span_of;
      for (const Span* span : members) span_of[span->uuid] = span;
      std::vector<std::string> all_uuids;
      for (const auto& [uuid, span] : span_of) all_uuids.push_back(uuid);
      const std::string range = fmt::format("[{}] @ {:.3f}", PromMs(last - from), last);
      for (const std::vector<std::string>& uuids : SplitAlternatives(all_uuids)) {
        std::map<std::string, const Span*>& of_uuid = checked.emplace_back();
        for (const std::string& uuid : uuids) of_uuid[uuid] = span_of.at(uuid);
        const std::string gpus = fmt::format("uuid=~\"{}\"", PromExactAlternatives(uuids));
        terms.push_back(
            {fmt::format("label_replace(sum by (uuid) (count_over_time(ofu_observed_seconds_total{{{}}}{})) "
                         "- sum by (uuid) (count_over_time(ofu_gpu_job_info{{{},job_id={}}}{})), "
                         "\"ofu_at\", \"{}\", \"\", \"\")",
                         gpus, range, gpus, PromQuoted(job_id), range, checked.size() - 1),
             2 * static_cast<double>(uuids.size()) * ((last - from) / scrape_s_ + 1),
             static_cast<double>(uuids.size())});
      }
    }
    std::set<const Span*> agree;
    OFU_RETURN_IF_ERROR(server_.Batched(
        terms,
        [&](const PromSeries& s) {
          const size_t k = std::stoul(s.Label("ofu_at"));
          if (k >= checked.size()) return;
          auto it = checked[k].find(s.Label("uuid"));
          if (it != checked[k].end() && s.samples.front().second == 0) agree.insert(it->second);
        },
        /*refused_alone=*/[&](size_t) { return OkStatus(); }));
    for (const auto& of_uuid : checked) {
      for (const auto& [uuid, span] : of_uuid) {
        if (!agree.contains(span)) dirty_.insert(uuid);
      }
    }
    return OkStatus();
  }

  // The same counters before and at the end, none lower at the end.
  bool SameCountersRising(const std::map<const Counter*, double>& before,
                          const std::map<const Counter*, double>& last) const {
    if (before.size() != last.size() || !before.contains(&counters_[0])) return false;
    for (const auto& [counter, value] : last) {
      auto it = before.find(counter);
      if (it == before.end() || value < it->second) return false;
    }
    return true;
  }

  TotalsQueries& server_;
  const std::map<std::string, std::int64_t>& ids_;
  const std::vector<Counter>& counters_;
  const double scrape_s_, step_s_;
  double coarse_s_ = 60;  // the steps that find spans
  std::vector<Span> spans_;
  std::set<std::string> dirty_;
};

// The step sums (the header's "Step sums") of the GPUs the spans could not
// answer, added to the totals: per (GPU, job scraped in the step), and per
// GPU where no job was (or, with a job asked for, not at all).
class StepSums {
 public:
  // `ids` (uuid -> gpu id), `counters` and `totals` must outlive the sums.
  StepSums(TotalsQueries& server, const std::map<std::string, std::int64_t>& ids, const std::vector<Counter>& counters,
           double step_s, HistoryTotals& totals)
      : server_(server), ids_(ids), counters_(counters), step_s_(step_s), totals_(totals) {}

  // The step sums for the GPUs of `filter` (`gpus` of them).
  Status SumGpus(const std::string& filter, size_t gpus) {
    const HistoryQuery& query = server_.query();
    const double since = *query.since_s, until = *query.until_s;
    job_filter_ = filter + (query.job_id ? ",job_id=" + PromQuoted(*query.job_id) : "");
    double piece_s = std::max(step_s_, static_cast<double>(server_.options().query.max_samples_per_query) /
                                           (kSamplesPerGpuStep * static_cast<double>(gpus)) * step_s_);
    const auto step_ms = static_cast<long long>(std::llround(step_s_ * 1000));
    const auto since_ms = static_cast<long long>(std::llround(since * 1000));
    const auto until_ms = static_cast<long long>(std::llround(until * 1000));
    const long long first_step_ms = (since_ms / step_ms + 1) * step_ms;
    const long long last_step_ms = until_ms / step_ms * step_ms;
    const double head_s = static_cast<double>(since_ms - (first_step_ms - step_ms)) / 1000;
    const double tail_s = static_cast<double>(until_ms - last_step_ms) / 1000;
    for (const Counter& counter : counters_) {
      const std::string x = fmt::format("{}{{{}}}", counter.name, filter);
      const std::string d = IncreaseOver(x, step_s_);
      // One query gives both: per (GPU, job) where a job was scraped, per GPU
      // (job_id "") where none was; a GPU's total is the sum of its series.
      OFU_RETURN_IF_ERROR(server_.Pieces(fmt::format("sum by (uuid, job_id) (sum_over_time(({}){{range}}))",
                                                     Split(d, step_s_)),
                                         piece_s, step_s_, [&](const PromSeries& s) { AddToBoth(counter, s, 1); }));
      // The edges: add what the last step left before until, take off what
      // the first step took from before since.
      for (const auto& [at, window_s, sign] : {std::tuple{until, tail_s, 1.0}, std::tuple{since, head_s, -1.0}}) {
        if (window_s < 0.002) continue;
        OFU_RETURN_IF_ERROR(server_.Instant(fmt::format("sum by (uuid, job_id) ({})",
                                                        Split(IncreaseOver(x, window_s), window_s)),
                                            at, [&, by = sign](const PromSeries& s) { AddToBoth(counter, s, by); }));
      }
      server_.Progress(counter.name);
    }
    return OkStatus();
  }

 private:
  std::string IncreaseOver(const std::string& x, double window_s) const {
    return PromIncreaseOver(x, window_s, server_.options().max_gap_s);
  }

  // `d` per (GPU, job scraped in the window), per GPU where none was (prometheus_increase.h).
  std::string Split(const std::string& d, double window_s) const {
    return PromSplitByJob(d, PromJobIn(job_filter_, window_s), server_.query().job_id.has_value());
  }

  void AddToBoth(const Counter& counter, const PromSeries& s, double sign) {
    if (!server_.query().job_id) AddToGpu(counter, s, sign);
    if (!s.Label("job_id").empty()) AddToJob(counter, s, sign);
  }

  void AddToGpu(const Counter& counter, const PromSeries& s, double sign) {
    auto id = ids_.find(s.Label("uuid"));
    if (id != ids_.end()) Add(totals_.of_gpu[id->second], counter, sign * s.samples.front().second);
  }

  void AddToJob(const Counter& counter, const PromSeries& s, double sign) {
    auto id = ids_.find(s.Label("uuid"));
    if (id == ids_.end()) return;
    StoredWindow& row = totals_.of_job[{s.Label("job_id"), id->second}];
    row.gpu_id = id->second;
    Add(row, counter, sign * s.samples.front().second);
  }

  TotalsQueries& server_;
  const std::map<std::string, std::int64_t>& ids_;
  const std::vector<Counter>& counters_;
  const double step_s_;
  HistoryTotals& totals_;
  std::string job_filter_;  // the GPUs' label filter, and the job's
};

// The totals of one query: the GPUs and the scrape interval, then the spans'
// sums where they hold and the step sums where they do not, as rows.
class TotalsReader {
 public:
  TotalsReader(PrometheusClient& client, const HistoryQuery& query, const PrometheusTotalsOptions& options)
      : server_(client, query, options), counters_(CountersOf(*options.query.counters)) {}

  Result<HistoryTotals> Read() {
    const HistoryQuery& query = server_.query();
    totals_.history.path = server_.url();
    totals_.history.query = query;
    const double since = *query.since_s, until = *query.until_s;
    std::string filter = "uuid!=\"\"";
    if (query.job_id) {
      std::set<std::string> uuids;
      OFU_RETURN_IF_ERROR(server_.Whole(fmt::format("count_over_time(ofu_gpu_job_info{{job_id={}}}{{range}})",
                                                    PromQuoted(*query.job_id)),
                                        [&](PromAnswer&& answer) {
                                          for (const auto& s : answer.series) uuids.insert(s.Label("uuid"));
                                        }));
      if (uuids.empty()) return std::move(totals_);
      filter = fmt::format("uuid=~\"{}\"", PromExactAlternatives({uuids.begin(), uuids.end()}));
    }
    std::vector<PromSeries> info;
    OFU_RETURN_IF_ERROR(server_.Whole(fmt::format("last_over_time(ofu_gpu_info{{{}}}{{range}})", filter),
                                      [&](PromAnswer&& answer) {
                                        for (auto& s : answer.series) info.push_back(std::move(s));
                                      }));
    ids_ = AddPrometheusGpus(info, totals_.history, &clock_flags_);
    if (ids_.empty()) return std::move(totals_);

    // The scrape interval: the range over the most samples any GPU has.
    std::map<std::string, double> samples_of;
    OFU_RETURN_IF_ERROR(server_.Whole(fmt::format("count_over_time(ofu_observed_seconds_total{{{}}}{{range}})", filter),
                                      [&](PromAnswer&& answer) {
                                        for (const auto& s : answer.series) {
                                          if (!s.samples.empty())
                                            samples_of[s.Label("uuid")] += s.samples.front().second;
                                        }
                                      }));
    double most = 0;
    std::string densest;
    for (const auto& [uuid, n] : samples_of) {
      if (n > most) most = n, densest = uuid;
    }
    if (most < 1) return std::move(totals_);
    // The scrape interval: the range over the samples, or less where scrapes
    // are denser than that (gaps lower the mean), from the most samples any
    // 10 minutes of the densest GPU hold.
    scrape_s_ = mean_scrape_s_ = (until - since) / most;
    OFU_RETURN_IF_ERROR(server_.Instant(
        fmt::format("max_over_time(count_over_time(ofu_observed_seconds_total{{uuid={}}}[10m])[{}:10m])",
                    PromQuoted(densest), PromMs(until - since)),
        until, [&](const PromSeries& s) {
          if (s.samples.front().second >= 2) scrape_s_ = std::min(scrape_s_, 600 / s.samples.front().second);
        }));
    const double step_s = server_.options().step_s > 0 ? server_.options().step_s
                                                       : std::max(0.001, std::floor(scrape_s_ * 0.9 * 1000) / 1000);
    totals_.window_s = mean_scrape_s_;

    // The cheap path: a counter's increase over a span of scrapes is its
    // last value less the one before the span (the sum of each scrape's
    // increase telescopes), so a GPU or a job on a GPU costs a few values,
    // whatever the range. Where that does not hold (a reset, a job missing
    // from some scrapes, a value that is not there), the GPU goes to the step
    // sums below.
    SpanReader spans(server_, ids_, counters_, scrape_s_, step_s);
    OFU_RETURN_IF_ERROR(spans.Read(filter));
    const std::set<std::string>& dirty = spans.dirty();
    for (const Span& span : spans.spans()) {
      if (span.is_job) totals_.history.jobs.push_back(JobOf(span));
      if (!dirty.contains(span.uuid)) AddSpan(span);
    }
    std::stable_sort(totals_.history.jobs.begin(), totals_.history.jobs.end(),
                     [](const StoredJob& a, const StoredJob& b) {
                       return std::tie(a.job_id, a.gpu_id, a.start_s) < std::tie(b.job_id, b.gpu_id, b.start_s);
                     });
    server_.Progress(fmt::format("values of {} spans", spans.spans().size()));

    if (!dirty.empty()) {
      // The step sums, for the GPUs the spans could not answer.
      StepSums sums(server_, ids_, counters_, step_s, totals_);
      for (const std::vector<std::string>& uuids : SplitAlternatives({dirty.begin(), dirty.end()})) {
        OFU_RETURN_IF_ERROR(sums.SumGpus(fmt::format("uuid=~\"{}\"", PromExactAlternatives(uuids)), uuids.size()));
      }
    }
    if (query.job_id) {
      for (const auto& [key, row] : totals_.of_job) totals_.of_gpu[key.second] = row;
    }
    for (auto& [id, row] : totals_.of_gpu) Finish(row, id);
    for (auto& [key, row] : totals_.of_job) Finish(row, key.second);
    totals_.notes.push_back(fmt::format(
        "Prometheus read the agent's counters (path: counters): {} of {} GPUs from their values at the edges of "
        "their spans, {} summed at {:.3g} s steps (a reset, or a job missing from some scrapes); scrape interval "
        "about {:.3g} s; percentiles need the windows (ofu report --html, ofu regress)",
        ids_.size() - dirty.size(), ids_.size(), dirty.size(), step_s, scrape_s_));
    return std::move(totals_);
  }

 private:
  void AddSpan(const Span& span) {
    const std::int64_t id = ids_.at(span.uuid);
    StoredWindow& row = span.is_job ? totals_.of_job[{span.job_id, id}] : totals_.of_gpu[id];
    row.gpu_id = id;
    for (const auto& [counter, value] : span.at_last) Add(row, *counter, value - span.before.at(counter));
  }

  StoredJob JobOf(const Span& span) const {
    StoredJob job;
    job.gpu_id = ids_.at(span.uuid);
    job.job_id = span.job_id;
    job.user = span.user;
    job.job_name = span.job_name;
    job.scheduler = span.scheduler;
    job.start_s = span.first - mean_scrape_s_;
    job.end_s = span.last;
    return job;
  }

  // A sum as a downsampled row: it stands for its observed seconds.
  void Finish(StoredWindow& row, std::int64_t id) {
    row.gpu_id = id;
    row.end_s = *server_.query().until_s;
    row.span_s = row.up_s = row.counters.observed_s();
    row.flags |= kHistoryDownsampled;
    if (row.counters.observed_s() > 0) row.flags |= clock_flags_[id];
  }

  TotalsQueries server_;
  const std::vector<Counter> counters_;
  HistoryTotals totals_;
  std::map<std::string, std::int64_t> ids_;            // uuid -> gpu id
  std::map<std::int64_t, std::uint32_t> clock_flags_;  // gpu id -> kHistoryClock* bits (AddPrometheusGpus)
  double scrape_s_ = 0, mean_scrape_s_ = 0;
};

}  // namespace

Result<HistoryTotals> ReadPrometheusTotals(const std::string& url, const HistoryQuery& query,
                                           const PrometheusTotalsOptions& options) {
  if (!query.since_s || !query.until_s || *query.until_s <= *query.since_s) {
    return Error::InvalidArgument("a Prometheus report needs a range with since before until");
  }
  OFU_ASSIGN_OR_RETURN(auto client, PrometheusClient::Open(url, options.query.timeout_s));
  TotalsReader reader(*client, query, options);
  return reader.Read();
}

}  // namespace ofu::history
