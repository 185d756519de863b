// Slurm jobs from a GPU-to-job mapping directory, the convention of
// dcgm-exporter's --hpc-job-mapping-dir (DCGM_HPC_JOB_MAPPING_DIR):
//
//   * one regular file per GPU, named by the GPU's index on the host in
//     decimal ("0", "1", …); other names are ignored;
//   * each line holds the id of a job running on that GPU.
//
// deploy/slurm/prolog.sh and epilog.sh keep such a directory (default
// /run/ofu/job-map); one written for dcgm-exporter works as well.
//
// Rules (docs/attribution.md):
//   * blank lines and the line "0" are skipped ("0" is the "no job" filler
//     some mapping tools write; Slurm job ids start at 1);
//   * a file with several ids (a shared GPU) gives the LAST line, the job
//     that started last, and a note naming the others;
//   * a missing file, or a GPU whose index is unknown (-1), leaves the GPU
//     unattributed;
//   * a directory that does not exist yet is not an error (the prolog makes
//     it when the first GPU job starts; /run is empty after a boot) but adds
//     a note; one that exists and cannot be listed or read is an error.
//
// Only the job id is known: user and job_name stay empty, scheduler "slurm".
//
// Thread-safety: one thread at a time (see attributor.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ofu/attribution/attributor.h"

namespace ofu::attribution {

class SlurmMappingDirAttributor : public Attributor {
 public:
  static constexpr const char* kDefaultDir = "/run/ofu/job-map";

  explicit SlurmMappingDirAttributor(std::string dir);

  std::string Describe() const override;
  Result<Attribution> Attribute(const std::vector<GpuRef>& gpus) override;

 private:
  std::string dir_;
};

// The job ids of one mapping file, in file order, without blanks and "0".
std::vector<std::string> ParseMappingFile(std::string_view content);

}  // namespace ofu::attribution
