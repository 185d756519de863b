// Reads the MFU, or the model FLOP/s per GPU, that a training framework
// prints, from its own log as the job wrote it (stdout or stderr captured by
// Slurm, torchrun or a container runtime), so that `ofu reconcile` and `ofu
// correct` take the log as it is instead of a hand-made MFU log.
// docs/fleet-analysis.md "Training logs".
//
// The line formats are data, not code: data/training_log_patterns.json
// (compiled in) holds one entry per framework, each with its line
// patterns: the line's shape (RE2 syntax, named groups "value" and, where the
// line has them, "step" and "unit"), what the number is ("unit":
// mfu_percent, mfu_ratio, tflops_per_gpu, flops_per_gpu_si or
// flops_total_si), the
// precision of the peak an MFU divides by where known, the printed values
// that mean "absent" (nanoGPT's and llm.c's "-100", torchtitan's "N/A"),
// and a real example line with its source and the value it must give (a
// test parses each). Two named number forms: "decimal" and nanotron's
// "human_format" (a number, then K, M, B or G, T, P, E for a power of 1000).
// A framework's denominator comes from the entry too: "peak_lines" the log
// prints (torchtitan's "Peak FLOPS used for computing MFU: 9.890e+14",
// nanochat's "Peak FLOPS (BF16): 9.89e+14", torchtitan's "Peak flops
// undefined for: <GPU>, fallback to A100" = 312 TFLOPS; the first listed
// that the log prints wins; "inf" means the framework did not know the GPU,
// so every MFU it prints is absent), else "peak_flops" fixed by the
// framework (nanoGPT 312 TFLOPS, nanochat before 2026-01-17 989 TFLOPS),
// else the GPU's own peak from the framework's table, not printed.
// A framework that prints the FLOP/s of all the job's GPUs together
// (tinygrad's "GFLOPS", unit flops_total_si) lists the lines that state the
// GPU count ("gpu_count_lines": tinygrad's "DP=8", "GPUS=6" on the command
// line, anywhere in the log, the first one stated wins); each value is
// divided by it. With no count stated the total is read as it is and
// TrainingLog::checks says so (it is per GPU only if the job ran on one).
// Frameworks today (the file is the list): torchtitan, nanoGPT, nanochat,
// llm.c, prime-rl, modula, OLMo-core, llama2.c (MFU, percent); verl (MFU, a
// ratio: 0.343 is 34.3 %); Megatron-LM, its progress.txt, Megatron-DeepSpeed,
// MaxText, nanotron, vLLM (whose "MFU: 6.6 TF/s/GPU" is TFLOP/s despite its
// label), Megatron-Bridge (TFLOP/s per GPU); DeepSpeed's flops profiler
// ("fwd+bwd FLOPS per GPU = ...: 102.0 TFLOPS") and GPT-NeoX ("approx flops
// per GPU: 112.9TFLOPS"), any SI prefix; tinygrad (GFLOPS of all GPUs). A format of FLOP/s per GPU is divided by the
// GPU's peak of the reference precision, which the caller gives (MfuOverOwnPeak in analysis/reconcile.h; the GPU and
// precision are named in the output, and a missing one is asked for, never guessed).
//
// Any text before the part a pattern shows, such as a timestamp, a logger
// prefix or "[rank0]:", is allowed. ANSI colour sequences (torchtitan colours
// its lines) are removed first. The first line that matches a framework's
// pattern fixes the framework; lines of the other frameworks are then ignored.
// When no line matches any framework's pattern, the generic rule
// (training_log_generic.h) reads what it can: a line naming an MFU or a
// FLOP/s per GPU in any common spelling; TrainingLog::format is then
// "generic rule" and TrainingLog::checks names the line to check. It
// refuses a benchmark's TFLOP/s (a matmul or attention kernel's timing).
//
// Steps: one value per step number, the first line that prints it (several
// ranks print the same step; a restart prints some again). A pattern without
// a step group (vLLM's interval lines, Megatron-Bridge's "Step Time" line,
// DeepSpeed's profile) numbers its lines 1, 2, ... in file order. A "summary"
// pattern (Megatron-Bridge's "Final-10: ... TFLOP/s/GPU", the mean of the last
// ten steps) is used only when the log has no step line of its framework.
// The job's figure is the median over the steps with a value: robust to the
// slow first steps, evaluation steps and stragglers, and what a steady-state
// OFU compares with. An MFU above 100 % (a ratio above 1) or below 0 (other
// than a framework's "absent" value), or a FLOP/s below 0, cannot be: such a
// step is flagged (a note names its line and value) and left out of the
// median; when every step is, the log is refused.
//
// Units: MFU as a ratio (0.1399 for "13.99%"); FLOP/s per GPU (234.4e12 for
// Megatron-LM's "234.4"); peaks in FLOP/s per GPU.
//
// Memory and speed: ReadTrainingLog reads line by line, so memory grows with
// the steps (about 70 bytes each, the value and a set entry), not with the
// file; only lines that contain one of the patterns' "contains" literals are
// matched, with RE2 (linear time in the line), each pattern compiled once per
// TrainingLogPatterns. Figures in docs/BENCHMARKS.md "Reader: training logs".
//
// Errors are values: kIo when the file cannot be read; kMalformedInput
// "<name>: ..." when no line has a value in a known format nor one the
// generic rule reads (naming the frameworks looked for); "<name>:<line>: a
// benchmark's TFLOP/s, not a training step (...)" (the generic rule); when every value is absent ("-100%", "N/A": the
// framework did not know the GPU's peak) or impossible, or
// "<name>:<line>: ..." for a value that does not parse; "<table>: ..." when
// a patterns file is malformed. Never a silent 0.
//
// Thread-safety: pure functions of their inputs; a TrainingLogPatterns is
// immutable and may be shared.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/precision.h"
#include "ofu/core/result.h"
#include "ofu/formats/mfu_log.h"

namespace ofu::formats {

// TrainingLog::format when the generic rule (training_log_generic.h), not a
// table entry, read the log; otherwise the entry's "framework" as
// data/training_log_patterns.json spells it ("torchtitan", "nanoGPT").
inline constexpr std::string_view kGenericRuleFormat = "generic rule";

// What a format's step lines print.
enum class TrainingLogQuantity {
  kMfu,          // MFU, a ratio
  kFlopsPerGpu,  // model FLOP/s each GPU achieved (Megatron-LM, MaxText, nanotron, vLLM, ...)
};

// How a pattern's printed number becomes the quantity.
enum class TrainingLogUnit {
  kMfuPercent,     // "12.01" or "12.01%": MFU 0.1201
  kMfuRatio,       // "0.343": MFU 0.343 (verl)
  kTflopsPerGpu,   // "234.4": 234.4e12 FLOP/s per GPU
  kFlopsPerGpuSi,  // "102.0" with SI prefix "T" in group "unit": 102.0e12 FLOP/s per GPU
  kFlopsTotalSi,   // "7654.11" with prefix "G": 7654.11e9 FLOP/s of all the job's GPUs, divided by their count
};
TrainingLogQuantity QuantityOf(TrainingLogUnit unit);

// One pattern of the table as people and tests see it.
struct TrainingLogPatternInfo {
  std::string framework;
  TrainingLogUnit unit = TrainingLogUnit::kMfuPercent;
  bool summary = false;  // used only when the log has no step line of its framework
  std::string example_line;
  double example_value = 0;             // what ofu reads from it: MFU ratio or FLOP/s per GPU
  std::optional<int64_t> example_step;  // absent: the line has no step number
  std::string source;                   // where the example line was printed (repository, issue or file@commit)
};

// The table of line patterns, compiled. Embedded(): data/training_log_patterns.json
// as compiled into the program.
class TrainingLogPatterns {
 public:
  static Result<TrainingLogPatterns> Parse(std::string_view json_text, std::string_view source_name);
  static Result<TrainingLogPatterns> Embedded();

  const std::vector<TrainingLogPatternInfo>& patterns() const { return patterns_; }
  // The frameworks in table order, each once.
  std::vector<std::string> Frameworks() const;

  struct Compiled;  // RE2 patterns and rules (training_log.cc)
  const Compiled& compiled() const { return *compiled_; }

 private:
  std::vector<TrainingLogPatternInfo> patterns_;
  std::shared_ptr<const Compiled> compiled_;
};

struct TrainingLogStep {
  int64_t step = 0;
  double value = 0;  // MFU as a ratio, or FLOP/s per GPU: TrainingLog::quantity
  int line = 0;      // 1-based
  // When the line was printed, in epoch seconds on the clock of the
  // recording beside it (`ofu run` sets it: the end of the window during
  // which the line passed through); absent for a log read from a file.
  std::optional<double> printed_s;
};

struct TrainingLog {
  std::string path;
  std::string format;  // the framework, as the patterns file names it, or kGenericRuleFormat
  TrainingLogQuantity quantity = TrainingLogQuantity::kMfu;
  std::vector<TrainingLogStep> steps;  // one per step with a usable value, in file order
  int absent_steps = 0;                // steps printed with an absent MFU
  int impossible_steps = 0;            // steps whose MFU is above 100 % or below 0: not used
  int repeated_lines = 0;              // lines of a step already read (other ranks, restarts)
  bool from_summary = false;           // the values are the framework's summary lines (no step line)
  double median = 0;                   // over `steps` (there is at least one), in `quantity`'s unit
  // For people: the impossible values (first few, "line 1: mfu 337.59 %
  // is above 100 %"), each left out of the median.
  std::vector<std::string> notes;
  // What a person should check before trusting the median: the generic
  // rule's line and how it read it, a total FLOP/s divided by a GPU count
  // or left undivided because the log states none. Empty for a table
  // format whose values need no check.
  std::vector<std::string> checks;
  // The GPUs a total FLOP/s was divided by, as the log states them; absent
  // when the values were printed per GPU, or no count was stated.
  std::optional<int64_t> gpu_count;
  // The FLOP/s per GPU the framework divided by, when the log or the
  // framework fixes it; absent when it is the GPU's own peak from the
  // framework's table and the log does not print it.
  std::optional<double> peak_flops;
  std::string peak_basis;  // where the denominator comes from, for people
  // The precision whose peak the MFU divides by: the pattern's "precision"
  // (bf16 for every MFU format today). A log of FLOP/s per GPU says nothing
  // of it: the reader sets bf16 and the caller sets what the user gave
  // (--reference-precision).
  Precision reference_precision = Precision::kBf16;
};

// With the embedded table (TrainingLogPatterns::Embedded), or the one given.
Result<TrainingLog> ParseTrainingLog(std::string_view text, const std::string& name);
Result<TrainingLog> ParseTrainingLog(std::string_view text, const std::string& name, const TrainingLogPatterns& table);
Result<TrainingLog> ReadTrainingLog(const std::string& path);
Result<TrainingLog> ReadTrainingLog(const std::string& path, const TrainingLogPatterns& table);

// A log read line by line as it is written: `ofu run` hands it each line of
// the job's output as the line passes through. It reads as ReadTrainingLog
// does; the first error (a value that does not parse, a benchmark's line)
// ends the reading, and Finish() returns it. Memory grows with the steps,
// not with the log. Not thread-safe: one writer; `table` must outlive it.
class TrainingLogStream {
 public:
  TrainingLogStream(std::string name, const TrainingLogPatterns& table);
  ~TrainingLogStream();
  TrainingLogStream(const TrainingLogStream&) = delete;
  TrainingLogStream& operator=(const TrainingLogStream&) = delete;

  // One line, without its newline.
  void Line(std::string_view line);
  // What the lines so far say; call once.
  Result<TrainingLog> Finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The median of the steps' values (the middle one, or the mean of the two
// middle ones); 0 for no steps.
double MedianOfSteps(const std::vector<TrainingLogStep>& steps);

// `log` with only the steps `keep` says, its median theirs; absent when
// none is kept. Everything else (format, precision, peak, checks) is the
// log's: a part of a log divides by what the whole does.
std::optional<TrainingLog> LogOfSteps(const TrainingLog& log, const std::function<bool(const TrainingLogStep&)>& keep);

// The MFU log row `ofu reconcile` reads for `job_id`: the median MFU, the
// reference precision and the peak the framework divided by; for a log of
// FLOP/s per GPU, that median in ReportedMfu::flops_per_gpu (mfu unset), to
// be divided by the job's GPU's peak of the reference precision.
ReportedMfu ReportedMfuOf(const TrainingLog& log, const std::string& job_id);

}  // namespace ofu::formats
