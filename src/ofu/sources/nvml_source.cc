#include "ofu/sources/nvml_source.h"

namespace ofu::sources {

// Placeholder until the NVML source lands.
Result<std::unique_ptr<Source>> OpenNvmlSource(const SourceOptions&, Clock&) {
  return Error{ErrorCode::kUnavailable, "the NVML source is not implemented yet"};
}

}  // namespace ofu::sources
