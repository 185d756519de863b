// The job a process belongs to, read from its cgroup (/proc/PID/cgroup).
//
// A line of /proc/PID/cgroup is "hierarchy-id:controllers:path" (cgroup v1:
// one line per hierarchy; v2: the single line "0::path"). The path names the
// job where the scheduler puts its processes in a cgroup of their own:
//
//   Slurm, cgroup v1   4:devices:/slurm/uid_1000/job_123/step_0/task_0
//                      (with several slurmd per host: /slurm_<node>/uid_…)
//   Slurm, cgroup v2   0::/system.slice/slurmstepd.scope/job_123/step_0/user/task_0
//                      (with several slurmd per host: <node>_slurmstepd.scope)
//   Kubernetes, cgroupfs driver
//                      11:devices:/kubepods/burstable/pod<uid>/<container-id>
//                      (Guaranteed pods have no QoS level: /kubepods/pod<uid>/…)
//   Kubernetes, systemd driver
//                      0::/kubepods.slice/kubepods-burstable.slice/
//                        kubepods-burstable-pod<uid with _ for ->.slice/cri-containerd-<id>.scope
//                      (also crio-<id>.scope, docker-<id>.scope)
//
// For Slurm the job id is the digits of the "job_<digits>" component that
// follows a "slurm…" or "…slurmstepd.scope" component; for Kubernetes it is
// the pod UID with its dashes restored. Anything else (a login shell, a
// systemd service, a container outside Kubernetes) names no job.
//
// Pure functions on text; no I/O. Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ofu::attribution {

struct CgroupJob {
  std::string scheduler;     // "slurm" or "kubernetes"
  std::string job_id;        // Slurm job id, or the pod UID (8-4-4-4-12 hex with dashes)
  std::string container_id;  // Kubernetes: the runtime's container id, when the path has it
};

// One line of /proc/PID/cgroup, without its newline.
std::optional<CgroupJob> ParseCgroupLine(std::string_view line);

// The whole file: the first line that names a job.
std::optional<CgroupJob> ParseCgroupFile(std::string_view content);

}  // namespace ofu::attribution
