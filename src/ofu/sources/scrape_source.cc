#include "ofu/sources/scrape_source.h"

#include <sstream>
#include <unordered_set>

#include <fmt/format.h>

#include "ofu/net/http_client.h"
#include "ofu/sources/replay.h"

namespace ofu::sources {
namespace {

constexpr std::string_view kScheme = "http://";

struct Url {
  std::string origin;  // http://host:port
  std::string path;    // /metrics
};

Result<Url> ParseUrl(const std::string& url) {
  if (url.rfind(kScheme, 0) != 0 || url.size() == kScheme.size()) {
    return Error::InvalidArgument("scrape URL '{}' must start with http:// (e.g. http://node1:9400/metrics)", url);
  }
  const std::size_t slash = url.find('/', kScheme.size());
  if (slash == std::string::npos) return Url{url, "/metrics"};
  return Url{url.substr(0, slash), url.substr(slash)};
}

class ScrapeSource final : public Source {
 public:
  ScrapeSource(std::string url, std::unique_ptr<net::HttpClient> client, std::string path, const SourceOptions& options,
               Clock& clock)
      : url_(std::move(url)), client_(std::move(client)), path_(std::move(path)), options_(options), clock_(clock) {}

  std::string_view kind() const override { return "scrape"; }

  std::string Describe() const override { return fmt::format("scrape of {}", url_); }
  bool live() const override { return true; }

  // One scrape; on failure the reason.
  Result<Recording> Scrape() {
    auto response = client_->Get(path_);
    if (!response.ok()) return Error::Unavailable("{}: {}", url_, response.error().message);
    if (response->status != 200) {
      return Error::Unavailable("{}: HTTP status {}", url_, response->status);
    }
    std::istringstream body(response->body);
    OFU_ASSIGN_OR_RETURN(auto recording, ReadRecording(body, url_));
    return recording;
  }

  Result<std::optional<Snapshot>> Next() override {
    if (!window_end_s_) window_end_s_ = clock_.NowS();
    *window_end_s_ += options_.window_s;
    clock_.SleepS(*window_end_s_ - clock_.NowS());

    Snapshot snapshot;
    snapshot.time_s = clock_.NowS();
    snapshot.window_s = options_.window_s;
    auto recording = Scrape();
    if (!recording.ok()) {
      if (recording.error().code == ErrorCode::kMalformedInput) return recording.error();
      for (const auto& identity : known_) {
        GpuReading reading;
        reading.identity = identity;
        reading.health = GpuHealth::kUnavailable;
        reading.problem = recording.error().message + "; retrying every window";
        reading.sample.time_s = snapshot.time_s;
        snapshot.gpus.push_back(std::move(reading));
      }
      snapshot.notes.push_back(fmt::format("scrape failed: {}", recording.error().message));
      return std::optional<Snapshot>(std::move(snapshot));
    }
    for (auto& note : recording->notes) {
      if (noted_.insert(note).second) snapshot.notes.push_back(std::move(note));
    }
    for (auto& gpu : recording->gpus) {
      Remember(gpu.identity);
      GpuReading reading;
      reading.identity = gpu.identity;
      if (!gpu.samples.empty()) reading.sample = gpu.samples.back();
      reading.sample.time_s = snapshot.time_s;  // the exporter's own stamps are its, not ours
      if (reading.sample.sm_clock_mhz) {
        reading.clock_basis = ClockBasis::kPointReading;
        reading.clock_readings = 1;
      }
      snapshot.gpus.push_back(std::move(reading));
    }
    return std::optional<Snapshot>(std::move(snapshot));
  }

  void Remember(const GpuIdentity& identity) {
    if (seen_.insert(identity.key).second) known_.push_back(identity);
  }

 private:
  std::string url_;
  std::unique_ptr<net::HttpClient> client_;
  std::string path_;
  SourceOptions options_;
  Clock& clock_;
  std::optional<double> window_end_s_;
  std::vector<GpuIdentity> known_;  // every GPU seen, so a failed scrape can mark them
  std::unordered_set<std::string> seen_;
  // Notes already passed on. A note names its line and count, so it repeats
  // word for word while the exporter's output keeps its shape.
  std::unordered_set<std::string> noted_;
};

}  // namespace

Result<std::unique_ptr<Source>> OpenScrapeSource(const std::string& url, const SourceOptions& options, Clock& clock) {
  OFU_ASSIGN_OR_RETURN(auto parts, ParseUrl(url));
  net::HttpClientOptions http;
  http.timeout_s = options.scrape_timeout_s;
  OFU_ASSIGN_OR_RETURN(auto client, net::OpenHttpClient(parts.origin, http));
  auto source = std::make_unique<ScrapeSource>(url, std::move(client), std::move(parts.path), options, clock);
  auto first = source->Scrape();
  if (!first.ok()) {
    if (first.error().code == ErrorCode::kMalformedInput) return first.error();
    return Error::Unavailable("{}; is dcgm-exporter running there? (default port 9400)", first.error().message);
  }
  if (first->gpus.empty()) {
    return Error::Unavailable("{}: answered, but with no GPU metrics ofu knows (read {} samples)", url,
                              first->samples_read);
  }
  for (const auto& gpu : first->gpus) source->Remember(gpu.identity);
  return std::unique_ptr<Source>(std::move(source));
}

}  // namespace ofu::sources
