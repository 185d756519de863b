#include "ofu/formats/trace_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <unordered_map>

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

Result<std::vector<std::string>> TraceFiles(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return std::vector<std::string>{path};
  std::vector<std::string> files;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!it->is_regular_file(ec)) continue;
    if (name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".sqlite")) {
      files.push_back(it->path().string());
    }
  }
  if (ec) return Error::Io("{}: cannot list: {}", path, ec.message());
  if (files.empty()) return Error::Io("{}: no trace files in it (*.json, *.json.gz, *.sqlite)", path);
  std::sort(files.begin(), files.end());
  return files;
}

void AppendKernelTrace(KernelTrace& into, KernelTrace&& from, std::string_view source) {
  if (into.format.empty()) {
    into.format = from.format;
  } else if (into.format != from.format) {
    into.format = "mixed";
  }
  std::unordered_map<std::string, uint32_t> name_ids;
  for (uint32_t i = 0; i < into.kernel_names.size(); ++i) name_ids.emplace(into.kernel_names[i], i);
  std::vector<uint32_t> new_name(from.kernel_names.size());
  for (uint32_t i = 0; i < from.kernel_names.size(); ++i) {
    const auto [slot, inserted] = name_ids.try_emplace(from.kernel_names[i],
                                                       static_cast<uint32_t>(into.kernel_names.size()));
    if (inserted) into.kernel_names.push_back(std::move(from.kernel_names[i]));
    new_name[i] = slot->second;
  }
  const auto op_offset = static_cast<uint32_t>(into.ops.size());
  into.kernels.reserve(into.kernels.size() + from.kernels.size());
  for (TraceKernel& kernel : from.kernels) {
    if (kernel.name_id < new_name.size()) kernel.name_id = new_name[kernel.name_id];
    if (kernel.op) kernel.op = *kernel.op + op_offset;
    into.kernels.push_back(kernel);
  }
  for (FrameworkOp& op : from.ops) into.ops.push_back(std::move(op));
  for (TraceDevice& device : from.devices) {
    const bool known = std::any_of(into.devices.begin(), into.devices.end(),
                                   [&](const TraceDevice& d) { return d.id == device.id && d.name == device.name; });
    if (!known) into.devices.push_back(std::move(device));
  }
  // The first trace that says it is another vendor's speaks for the set.
  if (!into.other_platform && from.other_platform) {
    into.other_platform = std::move(from.other_platform);
    if (!source.empty()) into.other_platform->evidence = fmt::format("{}: {}", source, into.other_platform->evidence);
  }
  for (std::string& name : from.range_profiler_kernels) into.range_profiler_kernels.push_back(std::move(name));
  into.bytes_read += from.bytes_read;
  for (std::string& note : from.notes) {
    into.notes.push_back(source.empty() ? std::move(note) : fmt::format("{}: {}", source, note));
  }
}

Result<KernelTrace> ReadKernelTraces(const std::vector<std::string>& paths, const TraceReadOptions& options) {
  KernelTrace out;
  for (const std::string& path : paths) {
    OFU_ASSIGN_OR_RETURN(KernelTrace trace, ReadKernelTrace(path, options));
    const std::string source = paths.size() > 1 ? std::filesystem::path(path).filename().string() : std::string();
    AppendKernelTrace(out, std::move(trace), source);
  }
  return out;
}

}  // namespace ofu::formats
