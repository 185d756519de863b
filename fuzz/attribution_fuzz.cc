// libFuzzer entry for the attribution parsers: cgroup lines and files,
// process environments, status files, passwd files and mapping files.
//
// The same bytes go to every parser. Each result must keep its contract:
// a Slurm job id is all digits, a pod UID is 8-4-4-4-12 hex, an environment
// value holds no NUL, a mapping-file id is neither blank nor "0", and every
// returned string is read so AddressSanitizer sees one that points outside
// the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "ofu/attribution/cgroup_path.h"
#include "ofu/attribution/proc_files.h"
#include "ofu/attribution/slurm_mapping_dir.h"

namespace {

std::size_t Sum(std::string_view s) {
  std::size_t sum = 0;
  for (const char c : s) sum += static_cast<unsigned char>(c);
  return sum;
}

std::size_t CheckJob(const std::optional<ofu::attribution::CgroupJob>& job, std::string_view input) {
  if (!job) return 0;
  if (job->job_id.empty() || input.find(job->container_id) == std::string_view::npos) std::abort();
  if (job->scheduler == "slurm") {
    for (const char c : job->job_id) {
      if (c < '0' || c > '9') std::abort();
    }
    if (input.find(job->job_id) == std::string_view::npos) std::abort();
  } else if (job->scheduler == "kubernetes") {
    if (job->job_id.size() != 36 || job->job_id[8] != '-' || job->job_id[23] != '-') std::abort();
  } else {
    std::abort();
  }
  return Sum(job->job_id) + Sum(job->container_id) + Sum(job->scheduler);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::size_t checksum = 0;

  checksum += CheckJob(ofu::attribution::ParseCgroupLine(input), input);
  checksum += CheckJob(ofu::attribution::ParseCgroupFile(input), input);

  const ofu::attribution::SlurmEnviron env = ofu::attribution::ParseSlurmEnviron(input);
  for (const std::string* value : {&env.job_id, &env.user, &env.job_name}) {
    if (value->find('\0') != std::string::npos) std::abort();
    if (!value->empty() && input.find(*value) == std::string_view::npos) std::abort();
    checksum += Sum(*value);
  }

  checksum += ofu::attribution::ParseStatusUid(input).value_or(0);

  const std::uint32_t uid = size >= 2 ? static_cast<std::uint32_t>(data[0] - '0') : 0;
  if (const auto name = ofu::attribution::LookupPasswdName(input, uid)) {
    if (name->empty() || name->find(':') != std::string::npos) std::abort();
    checksum += Sum(*name);
  }

  for (const std::string& id : ofu::attribution::ParseMappingFile(input)) {
    if (id.empty() || id == "0" || id.find('\n') != std::string::npos) std::abort();
    checksum += Sum(id);
  }

  volatile std::size_t sink = checksum;
  static_cast<void>(sink);
  return 0;
}
