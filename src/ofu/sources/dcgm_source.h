// Live counters from DCGM, loaded with dlopen.
//
// (Contract to be completed by its implementation; see DESIGN.md §4.)
#pragma once

#include <memory>
#include <string_view>

#include "ofu/core/result.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/source.h"

namespace ofu::sources {

// `address`: empty = the hostengine on localhost, else an embedded one;
// "host[:port]" or "unix:/path" = that hostengine only.
// Errors: kUnavailable naming the library or the address and DCGM's error.
Result<std::unique_ptr<Source>> OpenDcgmSource(std::string_view address, const SourceOptions& options, Clock& clock);

}  // namespace ofu::sources
