#include "ofu/sources/source_factory.h"

#include <fmt/format.h>

#include "ofu/sources/dcgm_source.h"
#include "ofu/sources/nvml_source.h"
#include "ofu/sources/replay_source.h"
#include "ofu/sources/scrape_source.h"

namespace ofu::sources {
namespace {

constexpr std::string_view kSpecForms =
    "nvml, dcgm, dcgm:ADDRESS (host[:port] or unix:/path), scrape:URL or replay:FILE";

// "prefix:rest" -> rest, when text starts with prefix and a colon.
std::optional<std::string_view> After(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size() + 2 || text.substr(0, prefix.size()) != prefix || text[prefix.size()] != ':') {
    return std::nullopt;
  }
  return text.substr(prefix.size() + 1);
}

}  // namespace

Result<SourceSpec> ParseSourceSpec(std::string_view text) {
  if (text == "nvml") return SourceSpec{SourceKind::kNvml, ""};
  if (text == "dcgm") return SourceSpec{SourceKind::kDcgm, ""};
  if (auto rest = After(text, "dcgm")) return SourceSpec{SourceKind::kDcgm, std::string(*rest)};
  if (auto rest = After(text, "scrape")) return SourceSpec{SourceKind::kScrape, std::string(*rest)};
  if (auto rest = After(text, "replay")) return SourceSpec{SourceKind::kReplay, std::string(*rest)};
  if (text == "scrape" || text == "replay" || text == "scrape:" || text == "replay:" || text == "dcgm:") {
    text = text.substr(0, text.find(':'));
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("source '{}' needs an argument: {}:{}", text, text,
                             text == "scrape" ? "URL" : text == "dcgm" ? "ADDRESS" : "FILE")};
  }
  return Error{ErrorCode::kInvalidArgument, fmt::format("unknown source '{}'; use one of: {}", text, kSpecForms)};
}

Result<std::unique_ptr<Source>> OpenSource(const SourceSpec& spec, const SourceOptions& options, Clock& clock) {
  switch (spec.kind) {
    case SourceKind::kNvml: return OpenNvmlSource(options, clock);
    case SourceKind::kDcgm: return OpenDcgmSource(spec.argument, options, clock);
    case SourceKind::kScrape: return OpenScrapeSource(spec.argument, options, clock);
    case SourceKind::kReplay: return OpenReplaySource(spec.argument, options, clock);
  }
  return Error{ErrorCode::kInvalidArgument, "unknown source kind"};
}

Result<std::unique_ptr<Source>> AutoDetectSource(const SourceOptions& options, Clock& clock) {
  auto nvml = OpenNvmlSource(options, clock);
  if (nvml.ok()) return nvml;
  auto dcgm = OpenDcgmSource("", options, clock);
  if (dcgm.ok()) return dcgm;
  return Error{ErrorCode::kUnavailable,
               fmt::format("no live source works on this machine:\n"
                           "  nvml: {}\n"
                           "  dcgm: {}\n"
                           "To read a recording instead, pass --source replay:FILE; to read a dcgm-exporter, "
                           "--source scrape:http://HOST:9400/metrics.",
                           nvml.error().message, dcgm.error().message)};
}

std::vector<SourceProbe> ProbeSources(const SourceOptions& options, Clock& clock) {
  std::vector<SourceProbe> probes;
  auto nvml = OpenNvmlSource(options, clock);
  probes.push_back({"nvml", nvml.ok(), nvml.ok() ? (*nvml)->Describe() : nvml.error().message});
  auto dcgm = OpenDcgmSource("", options, clock);
  probes.push_back({"dcgm", dcgm.ok(), dcgm.ok() ? (*dcgm)->Describe() : dcgm.error().message});
  probes.push_back({"scrape", true,
                    "reads a dcgm-exporter endpoint given as --source scrape:http://HOST:9400/metrics"});
  probes.push_back({"replay", true, "reads a recording given as --source replay:FILE"});
  return probes;
}

}  // namespace ofu::sources
