// Jobs from the processes on each GPU: for every pid the counter source
// reports on a GPU, read <proc_root>/<pid>/cgroup (cgroup_path.h), falling
// back to the SLURM_JOB_ID in <proc_root>/<pid>/environ (proc_files.h).
//
//   job_id     Slurm job id, or the Kubernetes pod UID
//   user       SLURM_JOB_USER from the environment; else the real uid of
//              <proc_root>/<pid>/status looked up in the password file;
//              else the uid in decimal
//   job_name   SLURM_JOB_NAME from the environment (Slurm only)
//   scheduler  "slurm" or "kubernetes"; container_id is not a container
//              name, so the Kubernetes fields other than job_id stay empty
//
// Rules (docs/attribution.md):
//   * a pid that vanishes while it is read (ENOENT/ESRCH) is skipped
//     silently: processes come and go between the source's sample and now;
//   * a file the agent may not read (EACCES/EPERM) is counted, and one note
//     per call says how many and what to do;
//   * pids of several jobs on one GPU: the job with the most pids wins, ties
//     to the smallest job id (numerically when both are numbers); a note
//     names the jobs;
//   * a GPU with no pids, or none in a job, is left unattributed.
//
// The pids are those of the host's pid namespace (what NVML reports): in a
// container the agent needs the host's /proc (hostPID, or the host's /proc
// mounted and proc_root pointing at it).
//
// Thread-safety: one thread at a time (see attributor.h).
#pragma once

#include <string>
#include <vector>

#include "ofu/attribution/attributor.h"

namespace ofu::attribution {

struct ProcessScanOptions {
  std::string proc_root = "/proc";          // tests point it at a fake tree
  std::string passwd_path = "/etc/passwd";  // uid -> user name; missing is fine
};

class ProcessScanAttributor : public Attributor {
 public:
  explicit ProcessScanAttributor(ProcessScanOptions options = {});

  std::string Describe() const override;
  Result<Attribution> Attribute(const std::vector<GpuRef>& gpus) override;

 private:
  ProcessScanOptions options_;
};

}  // namespace ofu::attribution
