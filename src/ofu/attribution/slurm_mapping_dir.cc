#include "ofu/attribution/slurm_mapping_dir.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ofu/attribution/small_file.h"

namespace ofu::attribution {
namespace {

std::string_view Trim(std::string_view s) {
  const std::size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  const std::size_t end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

}  // namespace

std::vector<std::string> ParseMappingFile(std::string_view content) {
  std::vector<std::string> ids;
  std::size_t start = 0;
  while (start < content.size()) {
    std::size_t end = content.find('\n', start);
    if (end == std::string_view::npos) end = content.size();
    const std::string_view id = Trim(content.substr(start, end - start));
    if (!id.empty() && id != "0") ids.emplace_back(id);
    start = end + 1;
  }
  return ids;
}

SlurmMappingDirAttributor::SlurmMappingDirAttributor(std::string dir) : dir_(std::move(dir)) {}

std::string SlurmMappingDirAttributor::Describe() const { return fmt::format("slurm mapping directory {}", dir_); }

Result<Attribution> SlurmMappingDirAttributor::Attribute(const std::vector<GpuRef>& gpus) {
  Attribution out;
  struct stat info {};
  if (::stat(dir_.c_str(), &info) != 0) {
    if (errno == ENOENT) {
      out.notes.push_back(
          fmt::format("mapping directory {} does not exist yet: no GPU job has started since boot, or the "
                      "Slurm prolog (deploy/slurm/prolog.sh) is not installed or writes elsewhere",
                      dir_));
      return out;
    }
    return Error::Unavailable(
        "cannot read the Slurm mapping directory {}: {}; check the path "
        "and that the agent may read it",
        dir_, std::strerror(errno));
  }
  if (!S_ISDIR(info.st_mode)) {
    return Error::Unavailable(
        "the Slurm mapping directory {} is not a directory; point the "
        "agent at the directory the prolog writes",
        dir_);
  }

  for (const GpuRef& gpu : gpus) {
    if (gpu.index < 0 || gpu.uuid.empty()) continue;
    const std::string path = fmt::format("{}/{}", dir_, gpu.index);
    const FileRead file = ReadSmallFile(path, 64 * 1024);
    if (file.status == FileStatus::kMissing) continue;  // no job on this GPU
    if (file.status == FileStatus::kDenied) {
      return Error::Unavailable(
          "cannot read {}: {}; the prolog must leave the mapping files "
          "readable by the agent",
          path, file.error);
    }
    if (file.status != FileStatus::kOk) {
      out.notes.push_back(fmt::format("cannot read {}: {}", path, file.error));
      continue;
    }
    std::vector<std::string> ids = ParseMappingFile(file.content);
    if (ids.empty()) continue;
    if (ids.size() > 1) {
      out.notes.push_back(fmt::format("GPU {} ({}) is shared by jobs {}: attributed to {}, the last line of {}",
                                      gpu.index, gpu.uuid, fmt::join(ids, ", "), ids.back(), path));
    }
    JobInfo job;
    job.job_id = ids.back();
    job.scheduler = "slurm";
    out.jobs.emplace(gpu.uuid, std::move(job));
  }
  return out;
}

}  // namespace ofu::attribution
