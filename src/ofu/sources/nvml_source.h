// Live counters from NVML GPM (Hopper and later), loaded with dlopen.
//
// (Contract to be completed by its implementation; see DESIGN.md §4.)
#pragma once

#include <memory>

#include "ofu/core/result.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/source.h"

namespace ofu::sources {

// Errors: kUnavailable when the library cannot be loaded or initialised, or
// no GPU is present; the message names the library and the NVML error.
Result<std::unique_ptr<Source>> OpenNvmlSource(const SourceOptions& options, Clock& clock);

}  // namespace ofu::sources
