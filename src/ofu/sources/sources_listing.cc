#include "ofu/sources/sources_listing.h"

#include <fmt/format.h>

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

std::string FormatSourceKindsHelp(const SourceRegistry& registry) {
  std::string out;
  for (const SourceKind& kind : registry.kinds()) out += fmt::format("  {:<8} {}\n", kind.scheme, kind.help);
  return out;
}

}  // namespace ofu::sources
