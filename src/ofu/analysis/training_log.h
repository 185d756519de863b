// Reads the MFU that a training framework prints each step, from its own log
// as the job wrote it (stdout or stderr captured by Slurm, torchrun or a
// container runtime), so that `ofu reconcile` takes the log as it is instead
// of a hand-made MFU log. docs/fleet-analysis.md "Training logs".
//
// Formats (the line formats below are those of the frameworks' own print
// statements, cited per format; any text before the part shown, such as a
// timestamp, a logger prefix or "[rank0]:", is allowed):
//   torchtitan  "step: 10  loss: ...  tps: 7,282  tflops: 0.52  mfu: 0.17%"
//               (torchtitan/components/metrics.py); "mfu: N/A" (quantized
//               runs) is absent. The denominator is the GPU's bf16 peak from
//               torchtitan's own table; the log states it in "Peak FLOPS used
//               for computing MFU: 9.890e+14", which is read when present,
//               and for a GPU missing from the table warns "Peak flops
//               undefined for: <GPU>, fallback to A100" (312 TFLOPS)
//               (torchtitan/tools/utils.py get_peak_flops).
//   nanoGPT     "iter 340: loss 5.4983, time 33785.52ms, mfu 0.96%" (train.py);
//               "mfu -100.00%" (its running MFU before the 5th iteration) is
//               absent. The denominator is always 312 TFLOPS, the A100's bf16
//               peak, whatever the GPU (model.py estimate_mfu).
//   nanochat    "step 00010/21400 (0.05%) | ... | mfu: 73.58 | ..." or, since
//               2026-02, "| bf16_mfu: 73.58 |" (scripts/base_train.py, a
//               percentage without '%'). The denominator: the
//               "Peak FLOPS (BF16): 9.89e+14" line when the log has it
//               (versions since 2026-01-17 print it), else 989 TFLOPS, the
//               H100 SXM's bf16 peak that earlier versions always used.
//   llm.c       "step   61/74 | loss ... | 44.57 ms | 51.2% bf16 MFU | 91886 tok/s"
//               (train_gpt2.cu); "-100.0% bf16 MFU" (a GPU its table lacks)
//               is absent. The denominator is the GPU's own peak from llm.c's
//               table (llmc/mfu.h) for the build's precision; the line always
//               says bf16, the default build.
// ANSI colour sequences (torchtitan colours its lines) are removed first.
// The first line that matches a format fixes the format; lines of the other
// formats are then ignored.
//
// Steps: one value per step number, the first line that prints it (several
// ranks print the same step; a restart prints some again). The job's MFU is
// the median over the steps with a value: robust to the slow first steps,
// evaluation steps and stragglers, and what a steady-state OFU compares with.
//
// Units: MFU as a ratio (0.1399 for "13.99%"); peaks in FLOP/s per GPU.
//
// Memory and speed: ReadTrainingLog reads line by line, so memory grows with
// the steps (about 70 bytes each, the value and a set entry), not with the
// file; only lines that contain "mfu", "MFU" or "Peak F" are matched, with
// RE2 (linear time in the line).
// Figures in docs/BENCHMARKS.md "Reader: training logs".
//
// Errors are values: kIo when the file cannot be read; kMalformedInput
// "<name>: ..." when no line has an MFU in a known format (naming the
// formats looked for), when every MFU line is absent ("-100%", "N/A": the
// framework did not know the GPU's peak), or "<name>:<line>: ..." for a
// value that does not parse or is negative. Never a silent 0.
//
// Thread-safety: pure functions of their inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/analysis/mfu_log.h"
#include "ofu/core/result.h"
#include "ofu/kernels/kernel_name.h"

namespace ofu::analysis {

enum class TrainingLogFormat { kTorchtitan, kNanoGpt, kNanochat, kLlmC };

// "torchtitan", "nanoGPT", "nanochat", "llm.c".
std::string_view TrainingLogFormatName(TrainingLogFormat format);

struct TrainingLogStep {
  int64_t step = 0;
  double mfu = 0;  // ratio
  int line = 0;    // 1-based
};

struct TrainingLog {
  std::string path;
  TrainingLogFormat format = TrainingLogFormat::kTorchtitan;
  std::vector<TrainingLogStep> steps;  // one per step with a value, in file order
  int absent_steps = 0;                // steps printed with an absent MFU
  int repeated_lines = 0;              // lines of a step already read (other ranks, restarts)
  double median_mfu = 0;               // over `steps`; there is at least one
  // The FLOP/s per GPU the framework divided by, when the log or the
  // framework fixes it; absent when it is the GPU's own peak from the
  // framework's table and the log does not print it.
  std::optional<double> peak_flops;
  std::string peak_basis;  // where the denominator comes from, for people
  kernels::Precision reference_precision = kernels::Precision::kBf16;
};

Result<TrainingLog> ParseTrainingLog(std::string_view text, const std::string& name);
Result<TrainingLog> ReadTrainingLog(const std::string& path);

// The MFU log row `ofu reconcile` reads for `job_id`: the median MFU, the
// reference precision and the peak the framework divided by.
ReportedMfu ReportedMfuOf(const TrainingLog& log, const std::string& job_id);

}  // namespace ofu::analysis
