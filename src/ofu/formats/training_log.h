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
//   prime-rl    "[Rank 0] step: 8, loss: 975.9991, tokens_per_second: 76957.79, mfu: 42.46"
//               (PrimeIntellect's trainers: prime-rl, prime-diloco/zeroband;
//               a percentage without '%').
//   modula      "step: 100   train loss: 2.77 ... tokens/gpu/sec: 14982.88  MFU: 43.46%"
//               (modula's examples/train-gpt.py, modula-systems/modula#1);
//               it divides by the peak of a table keyed by a GPU name the
//               script is given, not printed.
// Three frameworks print the model FLOP/s each GPU achieved, not MFU; ofu
// divides it by the GPU's peak of the reference precision, which the caller
// gives (MfuOverOwnPeak in analysis/reconcile.h; the GPU and precision are named in
// the output, and a missing one is asked for, never guessed):
//   Megatron-LM "iteration 30/ 100 | ... | throughput per GPU (TFLOP/s/GPU): 234.4 | ..."
//               (megatron/training/training.py training_log).
//   MaxText     "completed step: 9, seconds: 1.341, TFLOP/s/device: 257.929, ..."
//               and, before mid-2023, "..., TFLOP/s: 36.722, loss: ..."
//               (MaxText/metric_logger.py, train.py).
//   nanotron    "iteration: 991 / 1000 | ... | model_tflops_per_gpu: 0.00744 | ..."
//               (nanotron/trainer.py); numbers go through human_format:
//               "{:.3g}" below 1, else 3 significant digits with a suffix
//               K, M, B (G in 2024-25 versions), T, P, E for powers of 1000
//               (nanotron/logging/base.py).
// ANSI colour sequences (torchtitan colours its lines) are removed first.
// The first line that matches a format fixes the format; lines of the other
// formats are then ignored.
//
// Steps: one value per step number, the first line that prints it (several
// ranks print the same step; a restart prints some again). The job's figure is
// the median over the steps with a value: robust to the slow first steps,
// evaluation steps and stragglers, and what a steady-state OFU compares with.
// An MFU above 100 % or below 0 (other than the frameworks' "-100" for "not
// known") cannot be: such a step is flagged (a note names its line and
// value) and left out of the median; when every step is, the log is refused.
//
// Units: MFU as a ratio (0.1399 for "13.99%"); FLOP/s per GPU (Megatron-LM,
// MaxText, nanotron: 234.4e12 for "234.4"); peaks in FLOP/s per GPU.
//
// Memory and speed: ReadTrainingLog reads line by line, so memory grows with
// the steps (about 70 bytes each, the value and a set entry), not with the
// file; only lines that contain "mfu", "MFU", "Peak F", "TFLOP" or "tflops"
// are matched, with RE2 (linear time in the line).
// Figures in docs/BENCHMARKS.md "Reader: training logs".
//
// Errors are values: kIo when the file cannot be read; kMalformedInput
// "<name>: ..." when no line has an MFU in a known format (naming the
// formats looked for), when every MFU line is absent ("-100%", "N/A": the
// framework did not know the GPU's peak) or impossible (above 100 %, below
// 0), or "<name>:<line>: ..." for a value that does not parse. Never a
// silent 0.
//
// Thread-safety: pure functions of their inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/precision.h"
#include "ofu/core/result.h"
#include "ofu/formats/mfu_log.h"

namespace ofu::formats {

enum class TrainingLogFormat {
  kTorchtitan,
  kNanoGpt,
  kNanochat,
  kLlmC,
  kPrimeRl,
  kModula,
  kMegatron,
  kMaxText,
  kNanotron,
};

// "torchtitan", "nanoGPT", "nanochat", "llm.c", "prime-rl", "modula",
// "Megatron-LM", "MaxText", "nanotron".
std::string_view TrainingLogFormatName(TrainingLogFormat format);

// What a format's step lines print.
enum class TrainingLogQuantity {
  kMfu,          // MFU, a ratio
  kFlopsPerGpu,  // model FLOP/s each GPU achieved (Megatron-LM, MaxText, nanotron)
};
TrainingLogQuantity QuantityOf(TrainingLogFormat format);

struct TrainingLogStep {
  int64_t step = 0;
  double value = 0;  // MFU as a ratio, or FLOP/s per GPU: TrainingLog::quantity
  int line = 0;      // 1-based
};

struct TrainingLog {
  std::string path;
  TrainingLogFormat format = TrainingLogFormat::kTorchtitan;
  TrainingLogQuantity quantity = TrainingLogQuantity::kMfu;
  std::vector<TrainingLogStep> steps;  // one per step with a usable value, in file order
  int absent_steps = 0;                // steps printed with an absent MFU
  int impossible_steps = 0;            // steps whose MFU is above 100 % or below 0: not used
  int repeated_lines = 0;              // lines of a step already read (other ranks, restarts)
  double median = 0;                   // over `steps` (there is at least one), in `quantity`'s unit
  // For people: the impossible values (first few, "line 1: mfu 337.59 %
  // is above 100 %"), each left out of the median.
  std::vector<std::string> notes;
  // The FLOP/s per GPU the framework divided by, when the log or the
  // framework fixes it; absent when it is the GPU's own peak from the
  // framework's table and the log does not print it.
  std::optional<double> peak_flops;
  std::string peak_basis;  // where the denominator comes from, for people
  // The precision whose peak the MFU divides by: bf16 for every MFU format
  // above. A log of FLOP/s per GPU says nothing of it: the reader sets bf16
  // and the caller sets what the user gave (--reference-precision).
  Precision reference_precision = Precision::kBf16;
};

Result<TrainingLog> ParseTrainingLog(std::string_view text, const std::string& name);
Result<TrainingLog> ReadTrainingLog(const std::string& path);

// The MFU log row `ofu reconcile` reads for `job_id`: the median MFU, the
// reference precision and the peak the framework divided by; for a log of
// FLOP/s per GPU, that median in ReportedMfu::flops_per_gpu (mfu unset), to
// be divided by the job's GPU's peak of the reference precision.
ReportedMfu ReportedMfuOf(const TrainingLog& log, const std::string& job_id);

}  // namespace ofu::formats
