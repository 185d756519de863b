// Reads a whole small file (a log, a CSV, a config) into memory, for the
// parsers that take text. Not for traces or recordings, which are streamed.
//
// Errors: kIo "<path>: cannot open: <reason>" or "<path>: cannot read:
// <reason>", the reason from the system (strerror).
//
// Thread-safety: no shared state.
#pragma once

#include <string>

#include "ofu/core/result.h"

namespace ofu::formats {

Result<std::string> ReadTextFile(const std::string& path);

}  // namespace ofu::formats
