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
#include <string_view>
#include <vector>

#include "ofu/core/result.h"

namespace ofu::formats {

Result<std::string> ReadTextFile(const std::string& path);

// Writes `contents` to `path` whole: to "<path>.tmp" first, then renamed over
// `path`, so a reader never sees half a file. Nothing is left behind when it
// fails.
Status WriteFileAtomically(const std::string& path, const std::string& contents);

// The lines of `text`, without their LF or CRLF ends; line N (1-based) is
// element N-1. A final line end starts no further line. Views into `text`.
std::vector<std::string_view> TextLines(std::string_view text);

}  // namespace ofu::formats
