#include "ofu/formats/trace_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string_view>

#include <fmt/format.h>

#include "ofu/formats/kineto_trace.h"
#include "ofu/formats/nsys_sqlite.h"

namespace ofu::formats {

Result<KernelTrace> ReadKernelTrace(const std::string& path, const TraceReadOptions& options) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error::Io("{}: cannot open: {}", path, std::strerror(errno));
  constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};
  char head[16] = {};
  file.read(head, sizeof head);
  if (std::string_view(head, static_cast<size_t>(file.gcount())) == kSqliteMagic) {
    return ReadNsysSqlite(path, options);
  }
  return ReadKinetoTrace(path, options);
}

}  // namespace ofu::formats
