#include "ofu/sources/sources_listing.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ofu::sources {

SourcesListing ListSources(const SourceRegistry& registry, const SourceOptions& options, Clock& clock) {
  SourcesListing listing;
  for (const SourceKind& kind : registry.kinds()) {
    const Result<std::string> found = kind.probe(options, clock);
    listing.probes.push_back({kind.scheme, found.ok(), found.ok() ? *found : found.error().message});
    if (kind.auto_detect && found.ok()) listing.any_auto_detected = true;
  }
  return listing;
}

std::string FormatSourcesTable(const SourcesListing& listing) {
  std::string out;
  for (const SourceProbe& probe : listing.probes) {
    out += fmt::format("{:<7} {:<11} {}\n", probe.name, probe.available ? "available" : "unavailable", probe.detail);
  }
  if (!listing.any_auto_detected) {
    out +=
        "\nNo live source on this machine: ofu can still replay recordings "
        "(ofu report --input FILE, ofu top --source replay:FILE).\n";
  }
  return out;
}

std::string FormatSourcesJson(const SourcesListing& listing) {
  auto out = nlohmann::ordered_json::array();
  for (const SourceProbe& probe : listing.probes) {
    out.push_back({{"source", probe.name}, {"available", probe.available}, {"detail", probe.detail}});
  }
  return out.dump(2) + "\n";
}

std::string FormatSourceKindsHelp(const SourceRegistry& registry) {
  std::string out;
  for (const SourceKind& kind : registry.kinds()) out += fmt::format("  {:<8} {}\n", kind.scheme, kind.help);
  return out;
}

}  // namespace ofu::sources
