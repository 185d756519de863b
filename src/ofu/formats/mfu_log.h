// Inputs of `ofu reconcile` besides the OFU itself: what each application
// reported as its MFU (an "MFU log"), and what `ofu correct` found for each
// job (its correction factor and precision mix). docs/fleet-analysis.md
// documents both formats with examples.
//
// MFU log: CSV with a header, or JSON lines (one object per line). Fields:
//   job_id                 the scheduler's job id, as the agent labels it (required)
//   mfu                    reported MFU as a ratio (0.42, not 42 %); above 1 is
//                          kept: it is what FLOPs bugs look like (required)
//   reference_precision    the precision whose peak the MFU divides by:
//                          bf16, fp16, tf32, fp8, fp4, fp32, int8 (required)
//   model_flops_per_token  model FLOPs per token the application counted (optional)
//   tokens_per_s           its throughput, whole job (optional)
//   recompute              activation recomputation on: true/false, 1/0, yes/no (optional)
//   peak_flops             FLOP/s per GPU the application divided by, when it is
//                          not the GPU's own peak of reference_precision (nanoGPT
//                          divides by the A100's on any GPU); reconcile rescales
//                          the MFU to the GPU's own peak (optional)
// An empty CSV cell, or a JSON null, is an absent optional field. Unknown
// columns or keys are ignored (logs carry more than ofu reads). A job listed
// twice is an error: which line is right cannot be guessed.
//
// Corrections: a directory of `<job_id>.json`, each the output of
// `ofu correct --format json` for a trace of that job (fields read: factor,
// reference_precision, mfu_scale, precision_mix), or a CSV with the columns
// job_id, factor and optionally mfu_scale and reference_precision.
//
// Errors are values: kIo when a file cannot be read; kMalformedInput naming
// the file, line (1-based) and field for anything that does not parse.
//
// Thread-safety: pure functions of their inputs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/precision.h"
#include "ofu/core/result.h"

namespace ofu::formats {

struct ReportedMfu {
  std::string job_id;
  double mfu = 0;
  Precision reference_precision = Precision::kBf16;
  std::optional<double> model_flops_per_token;
  std::optional<double> tokens_per_s;
  std::optional<bool> recompute;
  std::optional<double> peak_flops;  // FLOP/s per GPU the MFU divides by; absent: the GPU's own peak
  // Set for a training log that prints the model FLOP/s each GPU achieved
  // (Megatron-LM, MaxText, nanotron), not MFU: `mfu` is then 0 and unused,
  // and MfuOverOwnPeak (analysis/reconcile.h) divides this by the GPU's peak of
  // reference_precision. Absent for every MFU log row.
  std::optional<double> flops_per_gpu;
  int line = 0;        // where it came from, for messages
  std::string origin;  // a training log's summary (training_log.h); empty for MFU log rows
};

struct MfuLog {
  std::string path;
  std::vector<ReportedMfu> jobs;  // in file order
};

// `name` is used in messages and, when it ends in .jsonl, .ndjson or .json,
// selects JSON lines; otherwise the first non-blank character decides ('{':
// JSON lines, else CSV).
Result<MfuLog> ParseMfuLog(std::string_view text, const std::string& name);
Result<MfuLog> ReadMfuLog(const std::string& path);

struct JobCorrection {
  std::optional<double> factor;  // useful / executed tensor work; absent: not measured
  // Σ_p w_p · R_p / R_ref for `reference_precision`, the precision the trace
  // was corrected against; absent when the trace gave no mix.
  std::optional<double> mfu_scale;
  std::optional<Precision> reference_precision;
  // (precision, w_p, R_p relative to bf16), when the input had the mix: lets
  // reconcile rescale to the MFU log's reference precision.
  struct Share {
    Precision precision = Precision::kBf16;
    double share = 0;
    double relative_rate = 1;
  };
  std::vector<Share> precision_mix;
  std::string origin;  // file (and line) it came from
};

// One `ofu correct --format json` document.
Result<JobCorrection> ParseCorrectionJson(std::string_view text, const std::string& name);
// The keys of such a document that ParseCorrectionJson reads, for a
// correction made elsewhere (ofu-fleet-sim's): factor, mfu_scale,
// reference_precision and precision_mix where present, and "synthetic" when
// `synthetic` is not empty (what made it). Indented, ending in a newline.
std::string CorrectionJson(const JobCorrection& correction, std::string_view synthetic = {});
// The CSV form: job id -> correction.
Result<std::map<std::string, JobCorrection>> ParseCorrectionCsv(std::string_view text, const std::string& name);
// A directory of <job_id>.json or a .csv file, by what `path` is.
Result<std::map<std::string, JobCorrection>> ReadCorrections(const std::string& path);

}  // namespace ofu::formats
