#include "ofu/sources/scrape_source.h"

namespace ofu::sources {

// Placeholder until the scrape source lands.
Result<std::unique_ptr<Source>> OpenScrapeSource(const std::string&, const SourceOptions&, Clock&) {
  return Error{ErrorCode::kUnavailable, "the scrape source is not implemented yet"};
}

}  // namespace ofu::sources
