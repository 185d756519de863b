#include "ofu/history/prometheus_client.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "ofu/net/http_client.h"

namespace ofu::history {
namespace {

struct Endpoint {
  std::string origin;     // scheme://host[:port]
  std::string base_path;  // "" or "/prefix"
};

Result<Endpoint> ParseEndpoint(const std::string& url) {
  const size_t scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  if ((scheme != "http" && scheme != "https") || url.size() == scheme_end + 3) {
    return Error::InvalidArgument(
        "Prometheus URL '{}' must be http(s)://host[:port][/path], e.g. http://prometheus:9090", url);
  }
  const size_t slash = url.find('/', scheme_end + 3);
  Endpoint endpoint{url.substr(0, slash), slash == std::string::npos ? "" : url.substr(slash)};
  while (!endpoint.base_path.empty() && endpoint.base_path.back() == '/') endpoint.base_path.pop_back();
  return endpoint;
}

}  // namespace

bool IsRefusalForSize(const std::string& message) {
  // Prometheus: --query.max-samples, the 11,000 points per series of a range
  // query; Thanos/Mimir/Cortex: max samples, chunks, series, fetched bytes;
  // VictoriaMetrics: -search.maxSamplesPerQuery, -search.maxSeries, and
  // -search.maxQueryLen (16 KiB by default: the GPUs' regex of a 1,024-GPU
  // batch is longer, and a smaller batch is the answer to it too).
  for (std::string_view marker :
       {"too many samples", "exceeded maximum resolution", "max-samples", "maxSamplesPerQuery", "maxSeries",
        "maxQueryLen", "the query exceeded the maximum number", "exceeded the limit", "limit of", "max_fetched"}) {
    if (message.find(marker) != std::string::npos) return true;
  }
  return false;
}

struct PrometheusClient::Connection {
  Endpoint endpoint;
  std::unique_ptr<net::HttpClient> client;
};

PrometheusClient::PrometheusClient(std::string url, std::unique_ptr<Connection> connection)
    : url_(std::move(url)), connection_(std::move(connection)) {}

PrometheusClient::~PrometheusClient() = default;

Result<std::unique_ptr<PrometheusClient>> PrometheusClient::Open(const std::string& url, double timeout_s) {
  OFU_ASSIGN_OR_RETURN(auto endpoint, ParseEndpoint(url));
  net::HttpClientOptions options;
  options.timeout_s = timeout_s;
  options.keep_alive = true;
  // A query is sent as its headers, then its form body. With Nagle's
  // algorithm the body waits for the headers' ACK, which the server's kernel
  // may delay by 40 ms: 40 ms of every query, 8 s of a 1,024-GPU week's fleet
  // report (docs/BENCHMARKS.md).
  options.tcp_nodelay = true;
  OFU_ASSIGN_OR_RETURN(auto client, net::OpenHttpClient(endpoint.origin, options));
  auto connection = std::make_unique<Connection>(Connection{std::move(endpoint), std::move(client)});
  return std::unique_ptr<PrometheusClient>(new PrometheusClient(url, std::move(connection)));
}

Result<PromAnswer> PrometheusClient::Query(const std::string& promql, double time_s) {
  ++queries_;
  const net::HttpForm form = {{"query", promql}, {"time", fmt::format("{:.3f}", time_s)}};
  auto response = connection_->client->PostForm(connection_->endpoint.base_path + "/api/v1/query", form);
  if (!response.ok()) {
    return Error::Unavailable("{}: cannot query Prometheus: {}", url_, response.error().message);
  }
  auto parsed = formats::ReadPrometheusApiAnswer(response->body, url_);
  if (!parsed.ok()) {
    if (IsRefusalForSize(response->body)) return PromAnswer{{}, true, response->body};
    if (parsed.error().message != formats::NotPrometheusApiJson(url_)) return parsed.error();
    return Error{response->status == 200 ? ErrorCode::kMalformedInput : ErrorCode::kUnavailable,
                 fmt::format("{}: HTTP {} and not the query API's JSON", url_, response->status)};
  }
  if (parsed->status != "success") {
    if (IsRefusalForSize(parsed->error)) return PromAnswer{{}, true, parsed->error};
    return Error::MalformedInput("{}: query {} failed: {}: {}", url_, promql, parsed->error_type, parsed->error);
  }
  PromAnswer answer;
  for (PromSeries& series : parsed->series) {
    samples_read_ += static_cast<std::int64_t>(series.samples.size());
    answer.series.push_back(std::move(series));
  }
  return answer;
}

std::string PromQuoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

std::string PromNumber(double x) { return fmt::format("{}", x); }

std::string CounterNamesRegex(const OutputCounterTable& table) {
  std::vector<std::string> names;
  for (const OutputCounter& row : table.rows()) names.push_back(row.sample_name());
  return PromExactAlternatives(names);
}

namespace {

// One value as PromExactAlternatives writes it.
void AppendExact(std::string& out, const std::string& value) {
  for (char c : value) {
    if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos)
      out += "\\\\";
    else if (c == '"')
      out += '\\';
    out += c;
  }
}

}  // namespace

std::string PromExactAlternatives(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& value : values) {
    if (!out.empty()) out += '|';
    AppendExact(out, value);
  }
  return out;
}

std::vector<std::vector<std::string>> SplitAlternatives(const std::vector<std::string>& values, std::size_t max_bytes) {
  std::vector<std::vector<std::string>> groups;
  std::size_t bytes = 0;  // of the last group's alternatives
  std::string one;
  for (const std::string& value : values) {
    one.clear();
    AppendExact(one, value);
    if (groups.empty() || bytes + 1 + one.size() > max_bytes) {
      groups.emplace_back();
      bytes = one.size();
    } else {
      bytes += 1 + one.size();
    }
    groups.back().push_back(value);
  }
  return groups;
}

}  // namespace ofu::history

namespace ofu::history {

std::string PromRange(double seconds) {
  return fmt::format("[{}ms]", static_cast<long long>(std::llround(seconds * 1000)));
}

std::string PromSubqueryRange(double seconds, double step_s) {
  return fmt::format("[{}ms:{}ms]", static_cast<long long>(std::llround(seconds * 1000)),
                     static_cast<long long>(std::llround(step_s * 1000)));
}

Status QueryEachSeries(PrometheusClient& client, const std::string& promql, double at_s, const char* what,
                       const std::function<void(const PromSeries&)>& consume) {
  OFU_ASSIGN_OR_RETURN(auto answer, client.Query(promql, at_s));
  if (answer.too_large) {
    return Error::Unavailable("{}: the server refuses a query {} for its size ({})", client.url(), what,
                              answer.refusal);
  }
  for (const PromSeries& s : answer.series) {
    if (!s.samples.empty()) consume(s);
  }
  return OkStatus();
}

Status QueryOverPieces(PrometheusClient& client, double since_s, double until_s, double& piece_s, double min_piece_s,
                       const std::function<std::string(double length_s)>& make_query,
                       const std::function<Status(PromAnswer&&, double piece_end_s)>& consume) {
  struct Piece {
    double start, end;
    bool halved;  // a half of a refused piece: its length, once answered, is the new piece_s
  };
  // Pieces still to ask, the earliest at the back. A range is cut into n
  // equal pieces, n counted once: stepping by a fractional piece_s could
  // leave a piece a rounding error longer than piece_s, planned again and
  // again (it did, at 3211.185… s).
  std::vector<Piece> todo;
  constexpr double kSlack = 1 + 1e-9;
  const auto plan = [&](double start, double end) {
    const auto n = static_cast<std::int64_t>(std::max(1.0, std::ceil((end - start) / (piece_s * kSlack))));
    const double length = (end - start) / static_cast<double>(n);
    for (std::int64_t i = n - 1; i >= 0; --i) {
      todo.push_back({start + static_cast<double>(i) * length,
                      i == n - 1 ? end : start + static_cast<double>(i + 1) * length, false});
    }
  };
  plan(since_s, until_s);
  while (!todo.empty()) {
    Piece piece = todo.back();
    todo.pop_back();
    if (!piece.halved && piece.end - piece.start > piece_s * kSlack) {  // planned before piece_s was lowered
      plan(piece.start, piece.end);
      continue;
    }
    const double length = piece.end - piece.start;
    OFU_ASSIGN_OR_RETURN(auto answer, client.Query(make_query(length), piece.end));
    if (answer.too_large) {
      if (length / 2 < min_piece_s) {
        return Error::Unavailable(
            "{}: the server refuses even a {:.0f} s piece of the query for its size ({}); raise its limit "
            "(Prometheus: --query.max-samples) or ask for fewer GPUs (--job)",
            client.url(), length, answer.refusal);
      }
      const double mid = piece.start + std::round(length / 2);
      todo.push_back({mid, piece.end, true});  // pieces are consumed in time order
      todo.push_back({piece.start, mid, true});
      continue;
    }
    if (piece.halved) piece_s = std::min(piece_s, length);
    OFU_RETURN_IF_ERROR(consume(std::move(answer), piece.end));
  }
  return OkStatus();
}

}  // namespace ofu::history
