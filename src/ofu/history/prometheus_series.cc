#include "ofu/history/prometheus_series.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include <fmt/format.h>

namespace ofu::history {

Result<std::vector<PromSeries>> ReadRawSeries(const std::string& url, const std::string& selector, double since_s,
                                              double until_s, const RawSeriesOptions& options) {
  OFU_ASSIGN_OR_RETURN(auto client, PrometheusClient::Open(url, options.timeout_s));
  const double range_s = until_s - since_s;
  if (range_s <= 0) return std::vector<PromSeries>{};

  // How many samples the range holds, so that a piece loads about the
  // budget: per name, since count_over_time drops the name and two series
  // of one label set under different names would collide
  // (last_over_time keeps it).
  OFU_ASSIGN_OR_RETURN(
      PromAnswer names,
      client->Query(fmt::format("count by (__name__) (last_over_time({}{}))", selector, PromRange(range_s)), until_s));
  double total = 0;
  for (const PromSeries& name : names.series) {
    OFU_ASSIGN_OR_RETURN(PromAnswer counted,
                         client->Query(fmt::format("sum(count_over_time({{__name__={}}}{}))",
                                                   PromQuoted(name.Label("__name__")), PromRange(range_s)),
                                       until_s));
    for (const PromSeries& s : counted.series) {
      if (!s.samples.empty()) total += s.samples.front().second;
    }
  }
  const double budget = static_cast<double>(std::max<std::int64_t>(1, options.max_samples_per_query));
  double piece_s = std::min(range_s, range_s * budget / total);
  constexpr double kMinPieceS = 1;  // below a second a refusal is the server's limit, not the range's

  std::map<std::map<std::string, std::string>, PromSeries> by_labels;
  OFU_RETURN_IF_ERROR(QueryOverPieces(
      *client, since_s, until_s, piece_s, std::min(kMinPieceS, range_s),
      [&](double length_s) { return selector + PromRange(length_s); },
      [&](PromAnswer&& answer, double) {
        for (PromSeries& piece : answer.series) {
          PromSeries& series = by_labels[piece.labels];
          if (series.labels.empty()) series.labels = piece.labels;
          for (const auto& [t, v] : piece.samples) {
            // (since, until], each sample once: pieces come in time order.
            if (t <= since_s || t > until_s) continue;
            if (!series.samples.empty() && t <= series.samples.back().first) continue;
            series.samples.emplace_back(t, v);
          }
        }
        if (options.progress) {
          options.progress(fmt::format("{} queries, {} samples", client->queries(), client->samples_read()));
        }
        return OkStatus();
      }));
  std::vector<PromSeries> out;
  out.reserve(by_labels.size());
  for (auto& [labels, series] : by_labels) {
    if (!series.samples.empty()) out.push_back(std::move(series));
  }
  return out;
}

}  // namespace ofu::history
