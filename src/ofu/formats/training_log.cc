#include "ofu/formats/training_log.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <re2/re2.h>

namespace ofu::formats {
namespace {

// The fixed denominators, FLOP/s per GPU (see the header for the sources).
constexpr double kA100Bf16 = 312e12;
constexpr double kH100SxmBf16 = 989e12;

// One framework's step line: the step number is group 1, the value group 2;
// `scale` turns the printed number into a ratio (MFU) or FLOP/s per GPU.
struct StepPattern {
  TrainingLogFormat format;
  std::unique_ptr<RE2> line;
  double scale = 0.01;
};

// How many impossible values are named one by one in TrainingLog::notes.
constexpr size_t kNamedImpossible = 5;

// What one line says, when it says anything.
struct LineMfu {
  int64_t step = 0;
  std::optional<double> mfu;  // absent: the framework printed "-100 %" or "N/A"
};

std::string WithoutAnsi(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      // CSI: parameters and intermediates, then one final byte in @..~.
      size_t j = i + 2;
      while (j < line.size() && (line[j] < '@' || line[j] > '~')) ++j;
      i = j;
      continue;
    }
    if (line[i] != '\r') out += line[i];
  }
  return out;
}

std::optional<double> Number(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// nanotron's human_format: a number, then K, M, B (G in 2024-25 versions),
// T, P or E for a power of 1000.
std::optional<double> HumanNumber(std::string_view text) {
  static constexpr std::string_view kSuffixes = "KMGTPE";
  if (text.empty()) return std::nullopt;
  double scale = 1;
  const char last = text.back();
  const size_t power = last == 'B' ? 2 : kSuffixes.find(last);
  if (power != std::string_view::npos) {
    for (size_t i = 0; i <= power; ++i) scale *= 1000;
    text.remove_suffix(1);
  }
  const std::optional<double> value = Number(text);
  if (!value) return std::nullopt;
  return *value * scale;
}

class Reader {
 public:
  explicit Reader(const std::string& name) : name_(name) {
    // RE2: linear time in the line's length whatever the pattern, so a long
    // or hostile line cannot stall the read.
    const auto step = [&](TrainingLogFormat format, const char* pattern, double scale = 0.01) {
      patterns_.push_back({format, std::make_unique<RE2>(pattern, RE2::Quiet), scale});
    };
    step(TrainingLogFormat::kTorchtitan, R"(step:\s*(\d+)\s+loss:.*\bmfu:\s*(N/A|-?[0-9.]+)%?)");
    step(TrainingLogFormat::kNanoGpt, R"(\biter (\d+): loss [^,]*, time [^,]*ms, mfu (-?[0-9.]+)%)");
    step(TrainingLogFormat::kNanochat,
         R"(\bstep (\d+)(?:/\d+)? \([0-9.]+%\) \|.*\| (?:bf16_)?mfu: (-?[0-9.]+|inf|nan) \|)");
    step(TrainingLogFormat::kLlmC, R"(\bstep\s+(\d+)/\d+ \|.*\| (-?[0-9.]+)% bf16 MFU \|)");
    step(TrainingLogFormat::kPrimeRl, R"(\bstep: (\d+), loss: [^,]*,.*\bmfu: (-?[0-9.]+|inf|nan)\s*$)");
    step(TrainingLogFormat::kModula, R"(\bstep: (\d+)\s.*\bMFU: (-?[0-9.]+|inf|nan)%)");
    step(TrainingLogFormat::kMegatron,
         R"(\biteration\s+(\d+)/\s*\d+ \|.*\| throughput per GPU \(TFLOP/s/GPU\): (-?[0-9.]+|inf|nan) \|)", 1e12);
    step(TrainingLogFormat::kMaxText,
         R"(\bcompleted step: (\d+), seconds: [^,]*, TFLOP/s(?:/device)?: (-?[0-9.]+|inf|nan),)", 1e12);
    step(
        TrainingLogFormat::kNanotron,
        R"(\biteration: (\d+) / \d+ \|.*\| model_tflops_per_gpu: (-?[0-9.]+(?:e[-+]?\d+)?[KMBGTPE]?|inf|nan)(?: \||\s*$))",
        1e12);
    torchtitan_peak_ = std::make_unique<RE2>(R"(Peak FLOPS used for computing MFU: ([0-9.eE+-]+|inf))");
    nanochat_peak_ = std::make_unique<RE2>(R"(Peak FLOPS \(BF16\): ([0-9.eE+-]+|inf))");
    torchtitan_fallback_ = std::make_unique<RE2>(R"(Peak flops undefined for(?: TPU)?: .*, fallback to A100)");
  }

  Status Line(std::string_view raw, int number) {
    // Only lines that can carry an MFU or a peak are matched.
    if (raw.find("mfu") == std::string_view::npos && raw.find("MFU") == std::string_view::npos &&
        raw.find("Peak FLOPS") == std::string_view::npos && raw.find("Peak flops") == std::string_view::npos &&
        raw.find("TFLOP") == std::string_view::npos && raw.find("tflops") == std::string_view::npos) {
      return OkStatus();
    }
    const std::string line = WithoutAnsi(raw);
    OFU_RETURN_IF_ERROR(Peak(line, number));
    std::string step, mfu;
    for (const StepPattern& pattern : patterns_) {
      if (format_ && *format_ != pattern.format) continue;
      if (!RE2::PartialMatch(line, *pattern.line, &step, &mfu)) continue;
      format_ = pattern.format;
      OFU_ASSIGN_OR_RETURN(LineMfu value, Value(pattern, step, mfu, number));
      Add(value, mfu, number);
      return OkStatus();
    }
    return OkStatus();
  }

  Result<TrainingLog> Finish() {
    if (!format_) {
      return Error::MalformedInput(
          "{}: no line reports an MFU in a format ofu reads, nor a TFLOP/s per GPU (torchtitan 'step: N ... mfu: "
          "X%', nanoGPT 'iter N: ... mfu X%', nanochat 'step N/M (...) | ... | mfu: X |', llm.c 'step N/M | ... | "
          "X% bf16 MFU |', prime-rl 'step: N, loss: ..., mfu: X', modula 'step: N ... MFU: X%', Megatron-LM "
          "'iteration N/ M | ... | throughput per GPU (TFLOP/s/GPU): X |', MaxText 'completed step: N, seconds: "
          "..., TFLOP/s/device: X,', nanotron 'iteration: N / M | ... | model_tflops_per_gpu: X')",
          name_);
    }
    TrainingLog log;
    log.path = name_;
    log.format = *format_;
    log.quantity = QuantityOf(*format_);
    log.steps = std::move(steps_);
    log.absent_steps = absent_steps_;
    log.impossible_steps = impossible_steps_;
    log.repeated_lines = repeated_lines_;
    log.notes = std::move(notes_);
    if (impossible_steps_ > static_cast<int>(kNamedImpossible)) {
      log.notes.push_back(fmt::format("{} more impossible value(s) left out", impossible_steps_ - kNamedImpossible));
    }
    if (log.steps.empty() && impossible_steps_ > 0) {
      return Error::MalformedInput("{}: every value the log prints is absent or impossible, none can be used: {}",
                                   name_, fmt::join(log.notes, "; "));
    }
    if (log.steps.empty()) {
      return Error::MalformedInput(
          "{}: every MFU the log prints ({} step(s)) is absent ('-100%', 'N/A' or 0 with an unknown peak): {} did "
          "not know this GPU's peak, so the log gives no MFU to reconcile",
          name_, absent_steps_, TrainingLogFormatName(*format_));
    }
    std::vector<double> values;
    for (const TrainingLogStep& step : log.steps) values.push_back(step.value);
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    log.median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    SetPeak(log);
    return log;
  }

 private:
  // "Peak FLOPS ..." lines: the denominator the framework used.
  Status Peak(const std::string& line, int number) {
    std::string text;
    std::optional<double>* into = nullptr;
    if (RE2::PartialMatch(line, *torchtitan_fallback_)) {
      torchtitan_fallback_seen_ = true;
      return OkStatus();
    }
    if (RE2::PartialMatch(line, *torchtitan_peak_, &text)) {
      into = &torchtitan_peak_flops_;
    } else if (RE2::PartialMatch(line, *nanochat_peak_, &text)) {
      into = &nanochat_peak_flops_;
    } else {
      return OkStatus();
    }
    if (text == "inf") {
      *into = INFINITY;  // nanochat: an unknown GPU, every MFU it prints is 0
      return OkStatus();
    }
    const auto value = Number(text);
    if (!value || !(*value > 0) || !std::isfinite(*value)) {
      return Error::MalformedInput("{}:{}: peak FLOPS '{}' is not a positive number", name_, number, text);
    }
    *into = *value;
    return OkStatus();
  }

  Result<LineMfu> Value(const StepPattern& pattern, const std::string& step_text, const std::string& text,
                        int number) const {
    LineMfu out;
    const auto [end, ec] = std::from_chars(step_text.data(), step_text.data() + step_text.size(), out.step);
    if (ec != std::errc() || end != step_text.data() + step_text.size()) {
      return Error::MalformedInput("{}:{}: step '{}' is out of range", name_, number, step_text);
    }
    if (text == "N/A" || text == "inf" || text == "nan") return out;
    const bool flops = QuantityOf(pattern.format) == TrainingLogQuantity::kFlopsPerGpu;
    const auto value = pattern.format == TrainingLogFormat::kNanotron ? HumanNumber(text) : Number(text);
    if (!value || !std::isfinite(*value * pattern.scale)) {
      return Error::MalformedInput("{}:{}: {} '{}' is not a number", name_, number, flops ? "TFLOP/s" : "MFU", text);
    }
    // nanoGPT and llm.c print -100 % for "not known".
    if (!flops && *value == -100) return out;
    out.mfu = *value * pattern.scale;
    return out;
  }

  void Add(const LineMfu& value, const std::string& printed, int number) {
    if (!seen_steps_.insert(value.step).second) {
      ++repeated_lines_;
      return;
    }
    // nanochat prints 0 for every step when its table lacks the GPU (peak inf).
    const bool unknown_peak = format_ == TrainingLogFormat::kNanochat && nanochat_peak_flops_ &&
                              std::isinf(*nanochat_peak_flops_);
    if (!value.mfu || unknown_peak) {
      ++absent_steps_;
      return;
    }
    // No GPU does more than its peak or less than nothing: such a value is
    // a bug of the framework's FLOP count or peak (prime-rl#20 printed
    // "mfu: 337.59" before counting every GPU), not the job's MFU. A FLOP/s
    // per GPU is checked against the peak when one is known (analysis/reconcile.h).
    const bool flops = QuantityOf(*format_) == TrainingLogQuantity::kFlopsPerGpu;
    if (*value.mfu < 0 || (!flops && *value.mfu > 1)) {
      if (impossible_steps_++ < static_cast<int>(kNamedImpossible)) {
        notes_.push_back(fmt::format("{}:{}: {} {}{} is {}: impossible, left out", name_, number,
                                     flops ? "TFLOP/s per GPU" : "MFU", printed, flops ? "" : " %",
                                     *value.mfu < 0 ? "below 0" : "above 100 %"));
      }
      return;
    }
    steps_.push_back({value.step, *value.mfu, number});
  }

  void SetPeak(TrainingLog& log) const {
    switch (log.format) {
      case TrainingLogFormat::kTorchtitan:
        if (torchtitan_peak_flops_ && std::isfinite(*torchtitan_peak_flops_)) {
          log.peak_flops = torchtitan_peak_flops_;
          log.peak_basis = "torchtitan's 'Peak FLOPS used for computing MFU' line";
        } else if (torchtitan_fallback_seen_) {
          log.peak_flops = kA100Bf16;
          log.peak_basis = "torchtitan did not know the GPU and fell back to the A100's bf16 peak (312 TFLOPS)";
        } else {
          log.peak_basis = "torchtitan's table of the GPU's bf16 peak (the log does not print it)";
        }
        return;
      case TrainingLogFormat::kNanoGpt:
        log.peak_flops = kA100Bf16;
        log.peak_basis = "nanoGPT divides by the A100's bf16 peak (312 TFLOPS) whatever the GPU";
        return;
      case TrainingLogFormat::kNanochat:
        if (nanochat_peak_flops_ && std::isfinite(*nanochat_peak_flops_)) {
          log.peak_flops = nanochat_peak_flops_;
          log.peak_basis = "nanochat's 'Peak FLOPS (BF16)' line";
        } else {
          log.peak_flops = kH100SxmBf16;
          log.peak_basis =
              "no 'Peak FLOPS (BF16)' line: nanochat before 2026-01-17 divided by the H100 SXM's bf16 peak "
              "(989 TFLOPS) whatever the GPU";
        }
        return;
      case TrainingLogFormat::kLlmC:
        log.peak_basis = "llm.c's table of the GPU's peak (llmc/mfu.h; the line says bf16, the default build)";
        return;
      case TrainingLogFormat::kPrimeRl:
        log.peak_basis = "prime-rl's table of the GPU's bf16 peak (the log does not print it)";
        return;
      case TrainingLogFormat::kModula:
        log.peak_basis =
            "the 16-bit peak of the GPU named to modula's train-gpt.py (its own table; the log does not print it)";
        return;
      case TrainingLogFormat::kMegatron:
      case TrainingLogFormat::kMaxText:
      case TrainingLogFormat::kNanotron:
        log.peak_basis = fmt::format(
            "{} prints the model TFLOP/s per GPU, not MFU: it is divided by the GPU's peak of the reference precision",
            TrainingLogFormatName(log.format));
        return;
    }
  }

  const std::string& name_;
  std::vector<StepPattern> patterns_;
  std::unique_ptr<RE2> torchtitan_peak_, nanochat_peak_, torchtitan_fallback_;
  bool torchtitan_fallback_seen_ = false;
  std::optional<TrainingLogFormat> format_;
  std::optional<double> torchtitan_peak_flops_, nanochat_peak_flops_;
  std::vector<TrainingLogStep> steps_;
  std::set<int64_t> seen_steps_;
  int absent_steps_ = 0;
  int impossible_steps_ = 0;
  int repeated_lines_ = 0;
  std::vector<std::string> notes_;
};

}  // namespace

std::string_view TrainingLogFormatName(TrainingLogFormat format) {
  switch (format) {
    case TrainingLogFormat::kTorchtitan: return "torchtitan";
    case TrainingLogFormat::kNanoGpt: return "nanoGPT";
    case TrainingLogFormat::kNanochat: return "nanochat";
    case TrainingLogFormat::kLlmC: return "llm.c";
    case TrainingLogFormat::kPrimeRl: return "prime-rl";
    case TrainingLogFormat::kModula: return "modula";
    case TrainingLogFormat::kMegatron: return "Megatron-LM";
    case TrainingLogFormat::kMaxText: return "MaxText";
    case TrainingLogFormat::kNanotron: return "nanotron";
  }
  return "unknown";
}

TrainingLogQuantity QuantityOf(TrainingLogFormat format) {
  switch (format) {
    case TrainingLogFormat::kMegatron:
    case TrainingLogFormat::kMaxText:
    case TrainingLogFormat::kNanotron: return TrainingLogQuantity::kFlopsPerGpu;
    case TrainingLogFormat::kTorchtitan:
    case TrainingLogFormat::kNanoGpt:
    case TrainingLogFormat::kNanochat:
    case TrainingLogFormat::kLlmC:
    case TrainingLogFormat::kPrimeRl:
    case TrainingLogFormat::kModula: return TrainingLogQuantity::kMfu;
  }
  return TrainingLogQuantity::kMfu;
}

Result<TrainingLog> ParseTrainingLog(std::string_view text, const std::string& name) {
  Reader reader(name);
  int number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    OFU_RETURN_IF_ERROR(reader.Line(line, ++number));
  }
  return reader.Finish();
}

Result<TrainingLog> ReadTrainingLog(const std::string& path) {
  // Line by line: a job's log can be gigabytes, and only the MFU lines stay.
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::Io("{}: cannot open: {}", path, std::strerror(errno));
  Reader reader(path);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) OFU_RETURN_IF_ERROR(reader.Line(line, ++number));
  if (in.bad()) return Error::Io("{}: cannot read: {}", path, std::strerror(errno));
  return reader.Finish();
}

ReportedMfu ReportedMfuOf(const TrainingLog& log, const std::string& job_id) {
  ReportedMfu row;
  row.job_id = job_id;
  if (log.quantity == TrainingLogQuantity::kFlopsPerGpu) {
    row.flops_per_gpu = log.median;
  } else {
    row.mfu = log.median;
  }
  row.reference_precision = log.reference_precision;
  row.peak_flops = log.peak_flops;
  row.origin = fmt::format("{}: {}, median of {} step(s); denominator: {}", log.path, TrainingLogFormatName(log.format),
                           log.steps.size(), log.peak_basis);
  if (log.impossible_steps > 0) {
    row.origin += fmt::format("; {} impossible value(s) left out ({})", log.impossible_steps,
                              fmt::join(log.notes, "; "));
  }
  return row;
}

}  // namespace ofu::formats
