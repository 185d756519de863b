#include "ofu/formats/kineto_trace.h"

namespace ofu::formats {

Result<KernelTrace> ReadKinetoTrace(const std::string& path, const TraceReadOptions&) {
  return Error{ErrorCode::kUnavailable, path + ": Kineto reader not written yet"};
}

Result<KernelTrace> ParseKinetoTrace(std::string_view, std::string_view source_name) {
  return Error{ErrorCode::kUnavailable, std::string(source_name) + ": Kineto reader not written yet"};
}

}  // namespace ofu::formats
