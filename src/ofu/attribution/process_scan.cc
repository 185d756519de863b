#include "ofu/attribution/process_scan.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ofu/attribution/cgroup_path.h"
#include "ofu/attribution/proc_files.h"
#include "ofu/attribution/small_file.h"

namespace ofu::attribution {
namespace {

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Job ids in the order of the tie rule: numbers numerically, else as text.
bool JobIdLess(const std::string& a, const std::string& b) {
  if (AllDigits(a) && AllDigits(b) && a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

struct ProcessJob {
  JobInfo job;
  bool user_from_environ = false;  // SLURM_JOB_USER, better than a uid lookup
};

// One call's state: the password file is read at most once, and the files
// the agent may not read are counted for a single note.
class Scan {
 public:
  explicit Scan(const ProcessScanOptions& options) : options_(options) {}

  // The job of one process; nullopt when it has none or has gone.
  std::optional<ProcessJob> JobOf(std::uint32_t pid) {
    const std::string dir = fmt::format("{}/{}", options_.proc_root, pid);
    const FileRead cgroup = Read(dir + "/cgroup");
    if (cgroup.status == FileStatus::kMissing) return std::nullopt;
    std::optional<CgroupJob> from_cgroup;
    if (cgroup.status == FileStatus::kOk) from_cgroup = ParseCgroupFile(cgroup.content);

    // The environment gives the Slurm job when the cgroup does not (no
    // cgroup plugin, or proctrack/linuxproc), and the user and job name.
    SlurmEnviron env;
    if (!from_cgroup || from_cgroup->scheduler == "slurm") {
      const FileRead environment = Read(dir + "/environ");
      if (environment.status == FileStatus::kMissing) return std::nullopt;
      if (environment.status == FileStatus::kOk) env = ParseSlurmEnviron(environment.content);
    }

    ProcessJob found;
    JobInfo& job = found.job;
    if (from_cgroup) {
      job.job_id = from_cgroup->job_id;
      job.scheduler = from_cgroup->scheduler;
    } else if (AllDigits(env.job_id)) {
      job.job_id = env.job_id;
      job.scheduler = "slurm";
    } else {
      return std::nullopt;
    }
    if (job.scheduler == "slurm" && env.job_id == job.job_id) {
      job.user = env.user;
      job.job_name = env.job_name;
      found.user_from_environ = !job.user.empty();
    }
    if (job.user.empty()) {
      const FileRead status = Read(dir + "/status");
      if (status.status == FileStatus::kMissing) return std::nullopt;
      if (status.status == FileStatus::kOk) {
        if (const auto uid = ParseStatusUid(status.content)) job.user = UserName(*uid);
      }
    }
    return found;
  }

  std::vector<std::string> notes;

  void AddDeniedNote() {
    if (denied_ == 0) return;
    notes.push_back(
        fmt::format("permission denied reading {} file(s) under {} (first: {}): run the agent as root, or "
                    "with CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH, to see other users' processes",
                    denied_, options_.proc_root, first_denied_));
  }

 private:
  FileRead Read(const std::string& path) {
    FileRead file = ReadSmallFile(path);
    if (file.status == FileStatus::kDenied) {
      if (denied_++ == 0) first_denied_ = path;
    } else if (file.status == FileStatus::kFailed) {
      notes.push_back(fmt::format("cannot read {}: {}", path, file.error));
    }
    return file;
  }

  std::string UserName(std::uint32_t uid) {
    if (!passwd_) {
      const FileRead file = ReadSmallFile(options_.passwd_path, 16 << 20);
      passwd_ = file.status == FileStatus::kOk ? file.content : std::string();
    }
    if (auto name = LookupPasswdName(*passwd_, uid)) return *name;
    return std::to_string(uid);
  }

  const ProcessScanOptions& options_;
  std::optional<std::string> passwd_;
  int denied_ = 0;
  std::string first_denied_;
};

struct Candidate {
  ProcessJob first;  // the job as its first readable process gave it
  int pids = 0;
};

}  // namespace

ProcessScanAttributor::ProcessScanAttributor(ProcessScanOptions options) : options_(std::move(options)) {}

std::string ProcessScanAttributor::Describe() const { return fmt::format("process scan of {}", options_.proc_root); }

Result<Attribution> ProcessScanAttributor::Attribute(const std::vector<GpuRef>& gpus) {
  struct stat info {};
  const bool exists = ::stat(options_.proc_root.c_str(), &info) == 0;
  if (!exists || !S_ISDIR(info.st_mode)) {
    return Error::Unavailable(
        "process scan: {} is not a readable directory ({}); in a "
        "container, mount the host's /proc and point proc_root at it",
        options_.proc_root, exists ? "not a directory" : std::strerror(errno));
  }

  Attribution out;
  Scan scan(options_);
  for (const GpuRef& gpu : gpus) {
    if (gpu.uuid.empty()) continue;
    // Keyed by scheduler and id, so a Slurm job 5 and a pod never merge.
    std::map<std::pair<std::string, std::string>, Candidate> jobs;
    for (const std::uint32_t pid : gpu.pids) {
      std::optional<ProcessJob> found = scan.JobOf(pid);
      if (!found) continue;
      Candidate& candidate = jobs[{found->job.scheduler, found->job.job_id}];
      if (candidate.pids++ == 0) {
        candidate.first = std::move(*found);
        continue;
      }
      // Another process of the job may have had a readable environment.
      JobInfo& job = candidate.first.job;
      if (found->user_from_environ && !candidate.first.user_from_environ) {
        job.user = found->job.user;
        candidate.first.user_from_environ = true;
      }
      if (job.user.empty()) job.user = found->job.user;
      if (job.job_name.empty()) job.job_name = found->job.job_name;
    }
    if (jobs.empty()) continue;

    const Candidate* best = &jobs.begin()->second;
    for (const auto& [key, candidate] : jobs) {
      if (candidate.pids > best->pids ||
          (candidate.pids == best->pids && JobIdLess(candidate.first.job.job_id, best->first.job.job_id))) {
        best = &candidate;
      }
    }
    if (jobs.size() > 1) {
      std::vector<std::string> counts;
      for (const auto& [key, candidate] : jobs) {
        counts.push_back(fmt::format("{} {}: {} process(es)", key.first, key.second, candidate.pids));
      }
      out.notes.push_back(
          fmt::format("GPU {} runs processes of {} jobs ({}): attributed to {}, the job with the most "
                      "processes (ties: smallest job id)",
                      gpu.uuid, jobs.size(), fmt::join(counts, ", "), best->first.job.job_id));
    }
    out.jobs.emplace(gpu.uuid, best->first.job);
  }
  scan.AddDeniedNote();
  for (std::string& note : scan.notes) out.notes.push_back(std::move(note));
  return out;
}

}  // namespace ofu::attribution
