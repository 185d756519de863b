// Live counters from a dcgm-exporter endpoint, scraped over HTTP.
//
// Each window Next() sleeps to the window's end, GETs the URL, and reads
// the body with the replay reader (so every metric name, scale and label
// rule is the same as for recordings). The window's values are the scrape's
// values, stamped with the time of the scrape. dcgm-exporter samples every
// 30 s by default, so windows shorter than that repeat its last values.
//
// A failed scrape (connection refused, timeout, HTTP status other than 200)
// makes every GPU seen so far kUnavailable for that window, with the reason;
// the next window tries again. A malformed body is an error (kMalformedInput).
// What the replay reader notes about a body (families whose values are not
// numbers, see replay.h) goes into Snapshot::notes the first time a note
// appears, not on every window.
//
// Thread-safety: one thread at a time (see Source).
#pragma once

#include <memory>
#include <string>

#include "ofu/core/result.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/source.h"

namespace ofu::sources {

// `url`: http://host[:port]/path. Errors: kInvalidArgument for a URL that
// is not http://; kUnavailable when the first scrape fails.
Result<std::unique_ptr<Source>> OpenScrapeSource(const std::string& url, const SourceOptions& options, Clock& clock);

}  // namespace ofu::sources
