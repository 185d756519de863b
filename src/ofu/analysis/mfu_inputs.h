// What the jobs reported, as `ofu reconcile` and `ofu report --html` read
// it: the MFU log, the training logs (one more job each) and the per-job
// corrections. Errors name the flag that gave the file (--training-log).
//
// Thread-safety: no shared state.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ofu/core/precision.h"
#include "ofu/core/result.h"
#include "ofu/formats/mfu_log.h"

namespace ofu::analysis {

// What the jobs reported: the MFU log (--mfu), the training logs
// (--training-log JOB=PATH, each one more job after the MFU log's) and,
// when given, the per-job corrections (--corrections), as `ofu reconcile`
// and `ofu report --html` read them. kInvalidArgument for a training log
// flag without "JOB=" or a job named twice; the readers' errors otherwise.
struct MfuInputs {
  formats::MfuLog log;
  std::map<std::string, formats::JobCorrection> corrections;
  // Training logs that could not be used (unreadable, no MFU, every value
  // impossible): their jobs are left out and the others reconciled. An
  // error only when nothing at all is left to reconcile.
  std::vector<Error> refused_logs;
};
// `flops_precision`: the precision whose peak divides a training log that
// prints FLOP/s per GPU (Megatron-LM, MaxText, nanotron).
Result<MfuInputs> ReadMfuInputs(const std::optional<std::string>& mfu_path,
                                const std::vector<std::string>& training_logs,
                                const std::optional<std::string>& corrections_path,
                                Precision flops_precision = Precision::kBf16);

}  // namespace ofu::analysis
