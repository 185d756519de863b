// Reads a whole small file (a log, a CSV, a config) into memory, for the
// parsers that take text, and writes one whole (a report page). Not for
// traces or recordings, which are streamed.
//
// Errors: kIo "<path>: cannot open: <reason>" or "<path>: cannot read:
// <reason>", the reason from the system (strerror); kIo "cannot write
// <path>" when a write fails.
//
// Thread-safety: no shared state.
#pragma once

#include <string>

#include "ofu/core/result.h"

namespace ofu::formats {

Result<std::string> ReadTextFile(const std::string& path);

// Writes `contents` to `path` whole: to "<path>.tmp" first, then renamed over
// `path`, so a reader never sees half a file. Nothing is left behind when it
// fails.
Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace ofu::formats
