// The generic rule behind the table of training-log formats
// (training_log.h): how ofu reads an MFU, or a model FLOP/s, from the log
// of a framework that data/training_log_patterns.json does not list. The
// Reader in training_log.cc gives it every line until a framework's
// pattern matches; it is used only when none ever does, and what it reads
// is marked for a person to check (TrainingLog::format "generic rule",
// TrainingLog::checks). docs/fleet-analysis.md "Training logs".
//
// What a line must say to be read (any case):
//   - MFU: a key that is or ends in "mfu" ("mfu", "MFU", "bf16_mfu",
//     "throughput/device/MFU", "MFU (%)"), then ':', '=', '|', a TAB or
//     spaces, then a number, with or without '%'. A key with more words
//     after "MFU" ("MFU (actual avg)") is another quantity: not read. An
//     "MFU" followed by a FLOP/s unit (vLLM's "MFU: 6.6 TF/s/GPU") is a
//     FLOP/s.
//   - FLOP/s: a number and a unit with an SI prefix, "GFLOPS", "TFLOPS",
//     "TFLOPs", "TFLOP/s", "TF/s", "PFLOPS" (K, M, G, T, P), either as
//     "<number> <unit>" or "<unit>: <number>". It is per GPU when the unit
//     or its field says so ("/GPU", "per GPU", "_per_gpu", "/device"),
//     otherwise the job's total over its GPUs (KindOfValue::kFlopsTotal).
//   - A line that names a peak ("Peak FLOPS used for computing MFU") states
//     a denominator, not a step: not read.
// Steps: "step N", "iter N", "iteration N", "Iteration: N", "Step: N",
// "step=N" give the step number; when one line read has none, every line
// read is numbered 1, 2, ... in file order (and a check says so).
// One quantity per log: MFU when any line gives one, else FLOP/s.
// Percent or ratio: a '%' or "(%)" says percent; otherwise the log decides,
// any unmarked value above 1 makes them all percent, else all ratios, and a
// check says which.
// The GPU count, for a total: the first of "DP=N", "GPUS=N", "NGPU=N",
// "NUM_GPUS=N", "world_size=N", "# GPUs: N", "N GPUs", "world size N" the log
// states (GenericRead::gpu_count); the Reader divides (training_log.cc).
//
// Refused (kMalformedInput "<name>:<line>: a benchmark's TFLOP/s, not a
// training step (<why>): '<line>'"): a FLOP/s line that names a
// micro-benchmark (bench, benchmark, gemm, matmul, bmm, attention, flash,
// pct_peak; "tops/sec" counts as a FLOP/s there); and, when no line reads
// as a step, a FLOP/s line with no step, iteration, loss, learning rate,
// epoch, tokens or samples on it (a kernel's timing), the reason naming the
// log's own "benchmark" line when it has one.
//
// Memory: one entry per line read (about 40 bytes), the first line's text,
// and a few line numbers; only lines that contain one of a few literals
// ("mfu", "flop", "f/s", "ops/sec", "gpus", "dp=", "world", "bench", any
// case) are matched, with RE2 (linear time in the line).
//
// Thread-safety: a GenericTrainingLogRule is one log's state; its compiled
// patterns (GenericTrainingLogRule::Patterns) are immutable and shared.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/formats/training_log.h"

namespace ofu::formats {

// One value the rule read, normalised: an MFU as a ratio, or FLOP/s (per
// GPU, or the job's total when `unit` is kFlopsTotalSi).
struct GenericValue {
  int64_t step = 0;
  double value = 0;
  TrainingLogUnit unit = TrainingLogUnit::kMfuPercent;  // how it was printed, for notes
  std::string printed;                                  // the number as printed, with its SI prefix
  int line = 0;
};

// A GPU count the log states, as printed.
struct StatedGpuCount {
  std::string text;  // the digits
  int line = 0;
};

struct GenericRead {
  TrainingLogQuantity quantity = TrainingLogQuantity::kMfu;
  std::vector<GenericValue> values;         // in file order, at least one
  std::optional<StatedGpuCount> gpu_count;  // for kFlopsTotalSi values
  std::vector<std::string> checks;          // what a person should check, for TrainingLog::checks
};

class GenericTrainingLogRule {
 public:
  struct Patterns;  // RE2 patterns, compiled once (training_log_generic.cc)
  static std::shared_ptr<const Patterns> Compile();

  explicit GenericTrainingLogRule(std::shared_ptr<const Patterns> patterns);

  // Whether the rule may read `line`: it contains one of the literals
  // above. Cheap: no copy.
  static bool MayRead(std::string_view line);
  // Every line MayRead accepts, in order, ANSI sequences removed (1-based number).
  void Line(std::string_view line, int number);
  // Forgets what was read: a framework's pattern matched.
  void Drop();
  // What the log gives, or why it gives nothing: the benchmark refusal
  // above; std::nullopt when no line names an MFU or a FLOP/s at all.
  Result<std::optional<GenericRead>> Finish(const std::string& name) const;

 private:
  struct Read {
    std::optional<int64_t> step;
    double number = 0;  // as printed, times the SI prefix for a FLOP/s
    std::string printed;
    enum class Kind { kMfuPercent, kMfuUnmarked, kFlopsPerGpu, kFlopsTotal } kind = Kind::kMfuPercent;
    int line = 0;
  };
  // A line that is not read, and why it may be refused.
  struct Named {
    int line = 0;
    std::string text;
    std::string why;
  };

  std::shared_ptr<const Patterns> patterns_;
  std::vector<Read> reads_;
  std::string first_text_;               // the first line read, for the check
  std::optional<Named> benchmark_;       // the first FLOP/s line naming a micro-benchmark
  std::optional<Named> not_a_step_;      // the first FLOP/s line with nothing of a training step
  std::optional<Named> says_benchmark_;  // the first line saying "benchmark"
  std::optional<StatedGpuCount> gpu_count_;
};

}  // namespace ofu::formats
