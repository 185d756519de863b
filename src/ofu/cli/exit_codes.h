// What the exit status of every ofu program (ofu, ofu-gemm, ofu-gpm-probe,
// ofu-fleet-sim) means; documented in docs/cli.md.
#pragma once

#include "ofu/core/result.h"

namespace ofu::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 1,          // bad flags or arguments
  kExitBadInput = 2,       // an input file is unreadable or malformed
  kExitUnknownModel = 3,   // a GPU model is not in the spec database
  kExitNoData = 4,         // valid input, but no OFU could be computed from it
  kExitUnavailable = 5,    // no source could be opened (no driver, no permission, ...)
  kExitFindings = 6,       // `ofu regress --fail-on-finding` found a regression or shift
  kExitInterrupted = 130,  // stopped by SIGINT/SIGTERM before finishing (128 + SIGINT)
};

inline int ExitCodeFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return kExitUsage;
    case ErrorCode::kIo:
    case ErrorCode::kMalformedInput: return kExitBadInput;
    case ErrorCode::kUnknownModel: return kExitUnknownModel;
    case ErrorCode::kNoData: return kExitNoData;
    case ErrorCode::kUnavailable: return kExitUnavailable;
  }
  return kExitBadInput;
}

}  // namespace ofu::cli
