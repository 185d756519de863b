// Reads an Nsight Systems SQLite export (nsys export --type sqlite) into a
// KernelTrace.
//
// (Contract to be completed by the implementation: tables and columns read,
// schema differences handled, how kernels are linked to NVTX ranges.)
#pragma once

#include <string>
#include <string_view>

#include "ofu/core/result.h"
#include "ofu/formats/kernel_trace.h"

namespace ofu::formats {

// Opens `path` read-only. Errors: kIo when it cannot be opened as SQLite,
// kMalformedInput naming the table, column or row when the schema or a row
// is not what an Nsight export holds.
Result<KernelTrace> ReadNsysSqlite(const std::string& path, const TraceReadOptions& options = {});

// The same for a database image in memory (sqlite3_deserialize); for tests
// and fuzzing. `source_name` names it in errors.
Result<KernelTrace> ParseNsysSqliteImage(std::string_view bytes, std::string_view source_name);

}  // namespace ofu::formats
