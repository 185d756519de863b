// Attribution: which job each GPU is running, for the node agent.
//
// Each method (the Slurm mapping directory, a scan of the GPU's processes,
// the kubelet's pod-resources API, static labels from the configuration) is
// an Attributor. The agent asks a ChainAttributor (chain_attributor.h) that
// tries the configured methods in order and keeps, per GPU, the first answer.
// The agent exports the answer as `ofu_gpu_job_info{uuid,job_id,user,
// job_name,scheduler} 1`, at most one series per uuid (docs/prometheus.md),
// so every method resolves a GPU shared by several jobs to one job by a
// documented rule and says so in a note (docs/attribution.md).
//
// What is an error: a GPU the method knows nothing about is simply absent
// from the answer. Attribute() returns an Error only when the method itself
// is broken (a socket that does not answer, a directory that cannot be
// read), with a message that names what to fix. Smaller trouble (a file
// that could not be read for lack of permission, two jobs on one GPU) is a
// note beside the answer.
//
// Thread-safety: an Attributor is used by one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ofu/core/result.h"

namespace ofu::attribution {

// The job on a GPU. Empty strings are unknown values.
struct JobInfo {
  std::string job_id;  // Slurm job id, Kubernetes pod UID or "<namespace>/<pod>", or configured
  std::string user;    // user name, or the uid in decimal when no name is known
  std::string job_name;
  std::string scheduler;  // "slurm" | "kubernetes" | "static"
  // Kubernetes only.
  std::string pod_namespace;
  std::string pod_name;
  std::string container;

  friend bool operator==(const JobInfo&, const JobInfo&) = default;
};

// A GPU as the counter source reports it (sources/source.h, GpuReading).
struct GpuRef {
  std::string uuid;                 // "GPU-…" or "MIG-…"; the key of the answer
  int index = -1;                   // the driver's index on this host; -1 unknown.
                                    // For a MIG device, its parent GPU's index.
  std::vector<std::uint32_t> pids;  // processes on the GPU, as the source reports them
};

struct Attribution {
  std::map<std::string, JobInfo> jobs;  // uuid -> job, only for GPUs the method could attribute
  std::vector<std::string> notes;       // for people: conflicts, permission trouble, …
};

class Attributor {
 public:
  virtual ~Attributor();

  // What this is, for people: "slurm mapping directory /run/ofu/job-map".
  virtual std::string Describe() const = 0;

  // See the file comment for what is an error.
  virtual Result<Attribution> Attribute(const std::vector<GpuRef>& gpus) = 0;
};

}  // namespace ofu::attribution
