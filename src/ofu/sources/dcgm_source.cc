#include "ofu/sources/dcgm_source.h"

namespace ofu::sources {

// Placeholder until the DCGM source lands.
Result<std::unique_ptr<Source>> OpenDcgmSource(std::string_view, const SourceOptions&, Clock&) {
  return Error{ErrorCode::kUnavailable, "the DCGM source is not implemented yet"};
}

}  // namespace ofu::sources
