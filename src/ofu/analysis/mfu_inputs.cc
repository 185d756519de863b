#include "ofu/analysis/mfu_inputs.h"

#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ofu/formats/training_log.h"

namespace ofu::analysis {

Result<MfuInputs> ReadMfuInputs(const std::optional<std::string>& mfu_path,
                                const std::vector<std::string>& training_logs,
                                const std::optional<std::string>& corrections_path, Precision flops_precision) {
  MfuInputs inputs;
  if (mfu_path) {
    OFU_ASSIGN_OR_RETURN(auto log, formats::ReadMfuLog(*mfu_path));
    inputs.log = std::move(log);
  }
  std::set<std::string> jobs;
  for (const formats::ReportedMfu& row : inputs.log.jobs) jobs.insert(row.job_id);
  std::string log_path;  // the one training log's, to name the input when there is no MFU log
  for (const std::string& flag : training_logs) {
    const size_t equals = flag.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == flag.size()) {
      return Error::InvalidArgument("--training-log '{}': expected JOB=PATH (the scheduler's job id, then the log)",
                                    flag);
    }
    const std::string job_id = flag.substr(0, equals), path = flag.substr(equals + 1);
    if (!jobs.insert(job_id).second) {
      return Error::InvalidArgument("--training-log '{}': job {} already has a reported MFU", flag, job_id);
    }
    auto log = formats::ReadTrainingLog(path);
    if (!log.ok()) {
      inputs.refused_logs.push_back(log.error().WithContext(fmt::format("--training-log {}", flag)));
      continue;
    }
    if (log->quantity == formats::TrainingLogQuantity::kFlopsPerGpu) log->reference_precision = flops_precision;
    inputs.log.jobs.push_back(formats::ReportedMfuOf(*log, job_id));
    log_path = path;
  }
  if (inputs.log.jobs.empty() && !mfu_path && !inputs.refused_logs.empty()) {
    // Nothing left to reconcile: the refusals are the answer.
    std::vector<std::string> why;
    for (const Error& error : inputs.refused_logs) why.push_back(error.message);
    return Error{inputs.refused_logs.front().code, fmt::format("{}", fmt::join(why, "; "))};
  }
  if (inputs.log.path.empty()) {
    inputs.log.path = training_logs.size() == 1 ? log_path : fmt::format("{} training logs", training_logs.size());
  }
  if (corrections_path) {
    OFU_ASSIGN_OR_RETURN(auto corrections, formats::ReadCorrections(*corrections_path));
    inputs.corrections = std::move(corrections);
  }
  return inputs;
}

}  // namespace ofu::analysis
