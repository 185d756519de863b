#include "ofu/formats/nsys_sqlite.h"

namespace ofu::formats {

Result<KernelTrace> ReadNsysSqlite(const std::string& path, const TraceReadOptions&) {
  return Error{ErrorCode::kUnavailable, path + ": Nsight reader not written yet"};
}

Result<KernelTrace> ParseNsysSqliteImage(std::string_view, std::string_view source_name) {
  return Error{ErrorCode::kUnavailable, std::string(source_name) + ": Nsight reader not written yet"};
}

}  // namespace ofu::formats
