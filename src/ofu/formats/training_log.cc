#include "ofu/formats/training_log.h"

#include "ofu/formats/training_log_generic.h"

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
#include <nlohmann/json.hpp>

namespace ofu::formats {

std::string_view EmbeddedTrainingLogPatternsJson();  // generated from data/training_log_patterns.json

namespace {

constexpr std::string_view kTableFileInRepo = "data/training_log_patterns.json";

using nlohmann::json;

// How many impossible values are named one by one in TrainingLog::notes.
constexpr size_t kNamedImpossible = 5;

}  // namespace

struct TrainingLogPatterns::Compiled {
  // One line pattern, compiled: `line`'s group indices resolved once.
  struct Pattern {
    size_t framework = 0;  // index into Compiled::frameworks
    size_t info = 0;       // index into TrainingLogPatterns::patterns()
    std::vector<std::string> contains;
    std::shared_ptr<const RE2> line;
    int groups = 0;  // capturing groups of `line`
    int value_group = 0;
    int step_group = -1;  // -1: the line has no step number
    int unit_group = -1;  // kFlopsPerGpuSi and kFlopsTotalSi only
    TrainingLogUnit unit = TrainingLogUnit::kMfuPercent;
    bool human_format = false;        // nanotron's human_format (K, M, B/G, T, P, E)
    std::vector<std::string> absent;  // printed values that mean "not known"
    Precision precision = Precision::kBf16;
    bool summary = false;
  };

  // A line that states the denominator the framework used.
  struct PeakLine {
    std::vector<std::string> contains;
    std::shared_ptr<const RE2> line;
    int value_group = -1;         // -1: the line's peak is `flops`
    std::optional<double> flops;  // a fixed peak the line announces (torchtitan's A100 fallback)
    std::string basis;
  };

  // A line that states how many GPUs the job ran on (group "value").
  struct CountLine {
    std::vector<std::string> contains;
    std::shared_ptr<const RE2> line;
  };

  struct Framework {
    std::string name;
    std::vector<PeakLine> peak_lines;  // in priority order
    std::vector<CountLine> gpu_count_lines;
    std::optional<double> peak_flops;    // fixed by the framework when no peak line is printed
    std::string peak_basis;              // for people, when no peak line is printed
    std::vector<std::string> prefilter;  // its patterns', peak lines' and count lines' literals
  };

  std::vector<Framework> frameworks;
  std::vector<Pattern> patterns;       // in table order
  std::vector<std::string> prefilter;  // a line without any of these is not matched
  std::shared_ptr<const GenericTrainingLogRule::Patterns> generic = GenericTrainingLogRule::Compile();
};

namespace {

using CompiledPattern = TrainingLogPatterns::Compiled::Pattern;
using CompiledPeakLine = TrainingLogPatterns::Compiled::PeakLine;
using CompiledCountLine = TrainingLogPatterns::Compiled::CountLine;
using CompiledFramework = TrainingLogPatterns::Compiled::Framework;

Result<std::string> StringField(const json& object, std::string_view key, std::string_view where) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string() || it->get<std::string>().empty()) {
    return Error::MalformedInput("{}: \"{}\" is missing or not a non-empty string", where, key);
  }
  return it->get<std::string>();
}

Result<std::vector<std::string>> StringList(const json& object, std::string_view key, std::string_view where,
                                            bool required) {
  std::vector<std::string> out;
  const auto it = object.find(key);
  if (it == object.end()) {
    if (required) return Error::MalformedInput("{}: \"{}\" is missing", where, key);
    return out;
  }
  if (!it->is_array()) return Error::MalformedInput("{}: \"{}\" is not a list", where, key);
  for (const json& item : *it) {
    if (!item.is_string() || item.get<std::string>().empty()) {
      return Error::MalformedInput("{}: \"{}\" holds something that is not a non-empty string", where, key);
    }
    out.push_back(item.get<std::string>());
  }
  if (required && out.empty()) return Error::MalformedInput("{}: \"{}\" is empty", where, key);
  return out;
}

Result<std::shared_ptr<const RE2>> Compile(const std::string& pattern, std::string_view where) {
  // RE2: linear time in the line's length whatever the pattern, so a long
  // or hostile line cannot stall the read.
  auto re = std::make_shared<const RE2>(pattern, RE2::Quiet);
  if (!re->ok()) return Error::MalformedInput("{}: pattern does not compile: {}", where, re->error());
  return re;
}

int GroupIndex(const RE2& re, const std::string& name) {
  const auto& groups = re.NamedCapturingGroups();
  const auto it = groups.find(name);
  return it == groups.end() ? -1 : it->second;
}

std::optional<TrainingLogUnit> UnitFromName(std::string_view name) {
  if (name == "mfu_percent") return TrainingLogUnit::kMfuPercent;
  if (name == "mfu_ratio") return TrainingLogUnit::kMfuRatio;
  if (name == "tflops_per_gpu") return TrainingLogUnit::kTflopsPerGpu;
  if (name == "flops_per_gpu_si") return TrainingLogUnit::kFlopsPerGpuSi;
  if (name == "flops_total_si") return TrainingLogUnit::kFlopsTotalSi;
  return std::nullopt;
}

Result<CompiledPeakLine> ParsePeakLine(const json& entry, std::string_view where) {
  CompiledPeakLine peak;
  OFU_ASSIGN_OR_RETURN(peak.contains, StringList(entry, "contains", where, /*required=*/true));
  OFU_ASSIGN_OR_RETURN(const std::string pattern, StringField(entry, "line", where));
  OFU_ASSIGN_OR_RETURN(peak.line, Compile(pattern, where));
  OFU_ASSIGN_OR_RETURN(peak.basis, StringField(entry, "basis", where));
  peak.value_group = GroupIndex(*peak.line, "value");
  const auto flops = entry.find("flops");
  if (flops != entry.end()) {
    if (!flops->is_number() || !(flops->get<double>() > 0) || !std::isfinite(flops->get<double>())) {
      return Error::MalformedInput("{}: \"flops\" is not a positive number", where);
    }
    peak.flops = flops->get<double>();
  }
  if ((peak.value_group < 0) == !peak.flops) {
    return Error::MalformedInput("{}: a peak line has either a group \"value\" or a fixed \"flops\"", where);
  }
  return peak;
}

Result<CompiledCountLine> ParseCountLine(const json& entry, std::string_view where) {
  CompiledCountLine count;
  OFU_ASSIGN_OR_RETURN(count.contains, StringList(entry, "contains", where, /*required=*/true));
  OFU_ASSIGN_OR_RETURN(const std::string pattern, StringField(entry, "line", where));
  OFU_ASSIGN_OR_RETURN(count.line, Compile(pattern, where));
  if (count.line->NumberOfCapturingGroups() != 1 || GroupIndex(*count.line, "value") != 1) {
    return Error::MalformedInput("{}: a GPU count line has one group, \"value\"", where);
  }
  return count;
}

// Whether the printed number carries an SI prefix in group "unit".
bool HasSiPrefix(TrainingLogUnit unit) {
  return unit == TrainingLogUnit::kFlopsPerGpuSi || unit == TrainingLogUnit::kFlopsTotalSi;
}

Result<CompiledPattern> ParsePattern(const json& entry, std::string_view where, TrainingLogPatternInfo& info) {
  CompiledPattern out;
  OFU_ASSIGN_OR_RETURN(out.contains, StringList(entry, "contains", where, /*required=*/true));
  OFU_ASSIGN_OR_RETURN(const std::string pattern, StringField(entry, "line", where));
  OFU_ASSIGN_OR_RETURN(out.line, Compile(pattern, where));
  out.groups = out.line->NumberOfCapturingGroups();
  out.value_group = GroupIndex(*out.line, "value");
  out.step_group = GroupIndex(*out.line, "step");
  out.unit_group = GroupIndex(*out.line, "unit");
  if (out.value_group < 0) return Error::MalformedInput("{}: the pattern has no group \"value\"", where);
  OFU_ASSIGN_OR_RETURN(const std::string unit_name, StringField(entry, "unit", where));
  const auto unit = UnitFromName(unit_name);
  if (!unit) return Error::MalformedInput("{}: unit \"{}\" is not one ofu knows", where, unit_name);
  out.unit = *unit;
  if (HasSiPrefix(out.unit) != (out.unit_group >= 0)) {
    return Error::MalformedInput(
        "{}: a group \"unit\" goes with units flops_per_gpu_si and flops_total_si, and only with them", where);
  }
  const std::string number = entry.value("number", std::string("decimal"));
  if (number != "decimal" && number != "human_format") {
    return Error::MalformedInput("{}: number \"{}\" is neither decimal nor human_format", where, number);
  }
  out.human_format = number == "human_format";
  OFU_ASSIGN_OR_RETURN(out.absent, StringList(entry, "absent", where, /*required=*/false));
  if (entry.contains("precision")) {
    OFU_ASSIGN_OR_RETURN(const std::string precision, StringField(entry, "precision", where));
    const auto parsed = PrecisionFromName(precision);
    if (!parsed) return Error::MalformedInput("{}: precision \"{}\" is not one ofu knows", where, precision);
    out.precision = *parsed;
  }
  out.summary = entry.value("summary", false);
  const auto example = entry.find("example");
  if (example == entry.end() || !example->is_object()) {
    return Error::MalformedInput("{}: \"example\" (a real line, its value and source) is missing", where);
  }
  const std::string example_where = fmt::format("{}: example", where);
  OFU_ASSIGN_OR_RETURN(info.example_line, StringField(*example, "line", example_where));
  OFU_ASSIGN_OR_RETURN(info.source, StringField(*example, "source", example_where));
  const auto value = example->find("value");
  if (value == example->end() || !value->is_number()) {
    return Error::MalformedInput("{}: \"value\" is missing or not a number", example_where);
  }
  info.example_value = value->get<double>();
  const auto step = example->find("step");
  if (step != example->end()) {
    if (!step->is_number_integer()) return Error::MalformedInput("{}: \"step\" is not an integer", example_where);
    info.example_step = step->get<int64_t>();
  }
  if (info.example_step.has_value() != (out.step_group >= 0)) {
    return Error::MalformedInput("{}: \"step\" is given exactly when the pattern has a group \"step\"", example_where);
  }
  info.unit = out.unit;
  info.summary = out.summary;
  return out;
}

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

// The SI prefix DeepSpeed's flops_to_string writes before "FLOPS".
std::optional<double> SiPrefix(std::string_view prefix) {
  if (prefix.empty()) return 1.0;
  switch (prefix.front()) {
    case 'P': return 1e15;
    case 'T': return 1e12;
    case 'G': return 1e9;
    case 'M': return 1e6;
    case 'K': return 1e3;
    case 'm': return 1e-3;
    case 'u': return 1e-6;
    default: return std::nullopt;
  }
}

// The factor from the printed number to the quantity.
double ScaleOf(TrainingLogUnit unit) {
  switch (unit) {
    case TrainingLogUnit::kMfuPercent: return 0.01;
    case TrainingLogUnit::kMfuRatio: return 1;
    case TrainingLogUnit::kTflopsPerGpu: return 1e12;
    case TrainingLogUnit::kFlopsPerGpuSi:
    case TrainingLogUnit::kFlopsTotalSi: return 1;
  }
  return 1;
}

bool ContainsAny(std::string_view line, const std::vector<std::string>& literals) {
  return std::any_of(literals.begin(), literals.end(),
                     [&](const std::string& literal) { return line.find(literal) != std::string_view::npos; });
}

// What one line says, when it says anything.
struct LineValue {
  int64_t step = 0;
  std::optional<double> value;  // absent: the framework printed "-100 %", "N/A", inf or nan
};

// The GPU count a log states, checked.
Result<int64_t> GpuCountOf(const StatedGpuCount& count, const std::string& name) {
  int64_t gpus = 0;
  const auto [end, ec] = std::from_chars(count.text.data(), count.text.data() + count.text.size(), gpus);
  if (ec != std::errc() || end != count.text.data() + count.text.size() || gpus <= 0) {
    return Error::MalformedInput("{}:{}: GPU count '{}' is not a positive whole number", name, count.line, count.text);
  }
  return gpus;
}

class Reader {
 public:
  Reader(const std::string& name, const TrainingLogPatterns& table)
      : name_(name),
        table_(table.compiled()),
        peaks_seen_(table_.frameworks.size()),
        counts_seen_(table_.frameworks.size()),
        generic_(table_.generic) {
    for (size_t i = 0; i < table_.frameworks.size(); ++i) {
      peaks_seen_[i].resize(table_.frameworks[i].peak_lines.size());
    }
  }

  Status Line(std::string_view raw, int number) {
    // Only lines that can carry a value, a peak or a GPU count are matched:
    // once the framework is known, of that framework; until then the
    // generic rule's lines too.
    const bool table_may_match = ContainsAny(raw,
                                             framework_ ? table_.frameworks[*framework_].prefilter : table_.prefilter);
    const bool generic_may_read = !framework_ && GenericTrainingLogRule::MayRead(raw);
    if (!table_may_match && !generic_may_read) return OkStatus();
    const std::string line = WithoutAnsi(raw);
    if (table_may_match) {
      OFU_RETURN_IF_ERROR(Stated(line, number));
      OFU_ASSIGN_OR_RETURN(const bool matched, Match(line, number));
      if (matched) return OkStatus();
    }
    if (generic_may_read) generic_.Line(line, number);
    return OkStatus();
  }

  Result<TrainingLog> Finish() {
    TrainingLog log;
    log.path = name_;
    Values* used = &steps_;
    std::optional<StatedGpuCount> count;
    if (framework_) {
      const CompiledFramework& framework = table_.frameworks[*framework_];
      log.format = framework.name;
      log.quantity = quantity_.value_or(TrainingLogQuantity::kMfu);
      if (steps_.seen.empty() && !summary_.seen.empty()) used = &summary_;
      log.from_summary = used == &summary_;
      count = counts_seen_[*framework_];
    } else {
      OFU_ASSIGN_OR_RETURN(std::optional<GenericRead> generic, generic_.Finish(name_));
      if (!generic) return NothingRead();
      log.format = kGenericRuleFormat;
      log.quantity = generic->quantity;
      log.checks = std::move(generic->checks);
      for (const GenericValue& value : generic->values) {
        Add(value.unit, /*numbered=*/true, value.step, value.value, /*unknown_peak=*/false, value.printed, value.line,
            steps_);
        total_ = total_ || value.unit == TrainingLogUnit::kFlopsTotalSi;
      }
      count = generic->gpu_count;
    }
    log.steps = std::move(used->steps);
    log.absent_steps = used->absent;
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
          name_, log.absent_steps, log.format);
    }
    OFU_RETURN_IF_ERROR(PerGpu(count, log));
    log.median = MedianOfSteps(log.steps);
    log.reference_precision = precision_.value_or(Precision::kBf16);
    SetPeak(log);
    return log;
  }

 private:
  // Step or summary values of the framework found.
  struct Values {
    std::vector<TrainingLogStep> steps;
    std::set<int64_t> seen;
    int absent = 0;
    int64_t unnumbered = 0;  // lines of patterns without a step number so far
  };

  Error NothingRead() const {
    std::vector<std::string> names;
    for (const CompiledFramework& framework : table_.frameworks) names.push_back(framework.name);
    return Error::MalformedInput(
        "{}: no line reports an MFU in a format ofu reads, nor a TFLOP/s per GPU (frameworks looked for, from {}: {}; "
        "nor any line ofu's generic rule reads)",
        name_, kTableFileInRepo, fmt::join(names, ", "));
  }

  // A framework's line patterns, in table order: whether one matched.
  Result<bool> Match(const std::string& line, int number) {
    std::vector<re2::StringPiece>& groups = groups_;
    for (const CompiledPattern& pattern : table_.patterns) {
      if (framework_ && *framework_ != pattern.framework) continue;
      if (!ContainsAny(line, pattern.contains)) continue;
      groups.assign(static_cast<size_t>(pattern.groups) + 1, re2::StringPiece());
      if (!pattern.line->Match(line, 0, line.size(), RE2::UNANCHORED, groups.data(), pattern.groups + 1)) continue;
      if (!framework_) generic_.Drop();
      framework_ = pattern.framework;
      const std::string printed(groups[pattern.value_group].data(), groups[pattern.value_group].size());
      const std::string unit = pattern.unit_group >= 0
                                   ? std::string(groups[pattern.unit_group].data(), groups[pattern.unit_group].size())
                                   : std::string();
      std::optional<std::string> step;
      if (pattern.step_group >= 0) {
        step = std::string(groups[pattern.step_group].data(), groups[pattern.step_group].size());
      }
      OFU_ASSIGN_OR_RETURN(LineValue value, Value(pattern, step, printed, unit, number));
      // A peak line with "inf": the framework did not know the GPU, and the
      // MFU it prints (nanochat: 0) means nothing.
      const auto& seen = peaks_seen_[pattern.framework];
      const bool unknown_peak = std::any_of(seen.begin(), seen.end(), [](const std::optional<double>& peak) {
        return peak && std::isinf(*peak);
      });
      Add(pattern.unit, pattern.step_group >= 0, value.step, value.value, unknown_peak, printed + unit, number,
          pattern.summary ? summary_ : steps_);
      if (!pattern.summary) {
        precision_ = pattern.precision;
        quantity_ = QuantityOf(pattern.unit);
      }
      if (!quantity_) quantity_ = QuantityOf(pattern.unit);
      if (!precision_) precision_ = pattern.precision;
      total_ = total_ || pattern.unit == TrainingLogUnit::kFlopsTotalSi;
      return true;
    }
    return false;
  }

  // Peak lines (the denominator the framework used) and GPU count lines.
  // Read before the framework is known (they come at start-up, or on the
  // command line at the end), for every framework.
  Status Stated(const std::string& line, int number) {
    for (size_t f = 0; f < table_.frameworks.size(); ++f) {
      if (framework_ && *framework_ != f) continue;
      const CompiledFramework& framework = table_.frameworks[f];
      for (size_t p = 0; p < framework.peak_lines.size(); ++p) {
        const CompiledPeakLine& peak = framework.peak_lines[p];
        if (!ContainsAny(line, peak.contains)) continue;
        if (peak.flops) {
          if (RE2::PartialMatch(line, *peak.line)) peaks_seen_[f][p] = *peak.flops;
          continue;
        }
        std::string text;
        if (!RE2::PartialMatch(line, *peak.line, &text)) continue;
        if (text == "inf") {
          peaks_seen_[f][p] = INFINITY;  // an unknown GPU: every MFU the framework prints is absent
          continue;
        }
        const auto value = Number(text);
        if (!value || !(*value > 0) || !std::isfinite(*value)) {
          return Error::MalformedInput("{}:{}: peak FLOPS '{}' is not a positive number", name_, number, text);
        }
        peaks_seen_[f][p] = *value;
      }
      for (const CompiledCountLine& count : framework.gpu_count_lines) {
        if (counts_seen_[f] || !ContainsAny(line, count.contains)) continue;
        std::string text;
        if (!RE2::PartialMatch(line, *count.line, &text)) continue;
        counts_seen_[f] = StatedGpuCount{text, number};  // checked when used (PerGpu)
      }
    }
    return OkStatus();
  }

  Result<LineValue> Value(const CompiledPattern& pattern, const std::optional<std::string>& step_text,
                          const std::string& text, const std::string& unit, int number) const {
    LineValue out;
    if (step_text) {
      const auto [end, ec] = std::from_chars(step_text->data(), step_text->data() + step_text->size(), out.step);
      if (ec != std::errc() || end != step_text->data() + step_text->size()) {
        return Error::MalformedInput("{}:{}: step '{}' is out of range", name_, number, *step_text);
      }
    }
    if (text == "inf" || text == "nan") return out;
    const bool flops = QuantityOf(pattern.unit) == TrainingLogQuantity::kFlopsPerGpu;
    const auto value = pattern.human_format ? HumanNumber(text) : Number(text);
    for (const std::string& absent : pattern.absent) {
      const auto absent_value = Number(absent);
      if (text == absent || (value && absent_value && *value == *absent_value)) return out;
    }
    const auto prefix = SiPrefix(unit);
    if (!value || !prefix || !std::isfinite(*value * ScaleOf(pattern.unit) * *prefix)) {
      return Error::MalformedInput("{}:{}: {} '{}{}' is not a number", name_, number, flops ? "TFLOP/s" : "MFU", text,
                                   unit);
    }
    out.value = *value * ScaleOf(pattern.unit);
    if (pattern.unit_group >= 0) out.value = *value * *prefix;
    return out;
  }

  // One step's value (not `numbered`: the line has no step number, it is
  // numbered in file order).
  void Add(TrainingLogUnit unit, bool numbered, int64_t step, std::optional<double> value, bool unknown_peak,
           const std::string& printed, int number, Values& into) {
    const int64_t key = numbered ? step : ++into.unnumbered;
    if (!into.seen.insert(key).second) {
      ++repeated_lines_;
      return;
    }
    const bool flops = QuantityOf(unit) == TrainingLogQuantity::kFlopsPerGpu;
    if (!value || (unknown_peak && !flops)) {
      ++into.absent;
      return;
    }
    // No GPU does more than its peak or less than nothing: such a value is
    // a bug of the framework's FLOP count or peak (prime-rl#20 printed
    // "mfu: 337.59" before counting every GPU; verl#1208 "perf/mfu/actor:
    // 1.018" on a GH200), not the job's MFU. A FLOP/s per GPU is checked
    // against the peak when one is known (analysis/reconcile.h).
    if (*value < 0 || (!flops && *value > 1)) {
      if (impossible_steps_++ < static_cast<int>(kNamedImpossible)) {
        notes_.push_back(fmt::format("{}:{}: {} is {}: impossible, left out", name_, number, Printed(unit, printed),
                                     *value < 0                           ? "below 0"
                                     : unit == TrainingLogUnit::kMfuRatio ? "above 1 (100 %)"
                                                                          : "above 100 %"));
      }
      return;
    }
    into.steps.push_back({key, *value, number, std::nullopt});
  }

  // A FLOP/s of all the job's GPUs becomes per GPU: divided by the count
  // the log states, or read as it is and flagged when it states none.
  Status PerGpu(const std::optional<StatedGpuCount>& count, TrainingLog& log) const {
    if (!total_) return OkStatus();
    if (!count) {
      log.checks.push_back(fmt::format(
          "{} prints the FLOP/s of all the job's GPUs together and the log states no GPU count: read as it is, the "
          "job's total (per GPU only if the job ran on one GPU); check it",
          log.format));
      return OkStatus();
    }
    OFU_ASSIGN_OR_RETURN(const int64_t gpus, GpuCountOf(*count, name_));
    for (TrainingLogStep& step : log.steps) step.value /= static_cast<double>(gpus);
    log.gpu_count = gpus;
    return OkStatus();
  }

  // The value as the log printed it, with what it is.
  static std::string Printed(TrainingLogUnit unit, const std::string& printed) {
    switch (unit) {
      case TrainingLogUnit::kMfuPercent: return fmt::format("MFU {} %", printed);
      case TrainingLogUnit::kMfuRatio: return fmt::format("MFU {} (a ratio)", printed);
      case TrainingLogUnit::kTflopsPerGpu: return fmt::format("TFLOP/s per GPU {}", printed);
      case TrainingLogUnit::kFlopsPerGpuSi: return fmt::format("FLOP/s per GPU {}FLOPS", printed);
      case TrainingLogUnit::kFlopsTotalSi: return fmt::format("FLOP/s of all GPUs {}FLOPS", printed);
    }
    return printed;
  }

  void SetPeak(TrainingLog& log) const {
    if (log.quantity == TrainingLogQuantity::kFlopsPerGpu) {
      log.peak_basis = fmt::format(
          "{} prints the model TFLOP/s per GPU, not MFU: it is divided by the GPU's peak of the reference precision",
          log.format);
      if (log.gpu_count) {
        log.peak_basis += fmt::format(" (the FLOP/s of all GPUs it prints divided by the {} GPU(s) the log states)",
                                      *log.gpu_count);
      }
      return;
    }
    if (!framework_) {
      log.peak_basis = "not known: the log does not say what its MFU divides by (read by ofu's generic rule)";
      return;
    }
    const CompiledFramework& framework = table_.frameworks[*framework_];
    const auto& seen = peaks_seen_[*framework_];
    for (size_t p = 0; p < framework.peak_lines.size(); ++p) {
      if (seen[p] && std::isfinite(*seen[p])) {
        log.peak_flops = seen[p];
        log.peak_basis = framework.peak_lines[p].basis;
        return;
      }
    }
    log.peak_flops = framework.peak_flops;
    log.peak_basis = framework.peak_basis;
  }

  const std::string& name_;
  const TrainingLogPatterns::Compiled& table_;
  // Per framework, per peak line: the last peak it printed (inf: unknown GPU).
  std::vector<std::vector<std::optional<double>>> peaks_seen_;
  // Per framework: the first GPU count the log states.
  std::vector<std::optional<StatedGpuCount>> counts_seen_;
  GenericTrainingLogRule generic_;  // until a framework's pattern matches
  std::optional<size_t> framework_;
  std::optional<TrainingLogQuantity> quantity_;
  std::optional<Precision> precision_;
  Values steps_, summary_;
  bool total_ = false;  // the values are FLOP/s of all GPUs (kFlopsTotalSi)
  int impossible_steps_ = 0;
  int repeated_lines_ = 0;
  std::vector<std::string> notes_;
  std::vector<re2::StringPiece> groups_;  // a matched line's groups, reused line after line
};

}  // namespace

TrainingLogQuantity QuantityOf(TrainingLogUnit unit) {
  switch (unit) {
    case TrainingLogUnit::kMfuPercent:
    case TrainingLogUnit::kMfuRatio: return TrainingLogQuantity::kMfu;
    case TrainingLogUnit::kTflopsPerGpu:
    case TrainingLogUnit::kFlopsPerGpuSi:
    case TrainingLogUnit::kFlopsTotalSi: return TrainingLogQuantity::kFlopsPerGpu;
  }
  return TrainingLogQuantity::kMfu;
}

Result<TrainingLogPatterns> TrainingLogPatterns::Parse(std::string_view json_text, std::string_view source_name) {
  const json root = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) return Error::MalformedInput("{}: not a JSON object", source_name);
  const auto frameworks = root.find("frameworks");
  if (frameworks == root.end() || !frameworks->is_array() || frameworks->empty()) {
    return Error::MalformedInput("{}: \"frameworks\" is missing or not a non-empty list", source_name);
  }
  TrainingLogPatterns table;
  auto compiled = std::make_shared<Compiled>();
  std::set<std::string> prefilter;
  for (size_t f = 0; f < frameworks->size(); ++f) {
    const json& entry = (*frameworks)[f];
    const std::string where = fmt::format("{}: frameworks[{}]", source_name, f);
    if (!entry.is_object()) return Error::MalformedInput("{}: not an object", where);
    CompiledFramework framework;
    OFU_ASSIGN_OR_RETURN(framework.name, StringField(entry, "framework", where));
    for (const CompiledFramework& other : compiled->frameworks) {
      if (other.name == framework.name) return Error::MalformedInput("{}: \"{}\" twice", where, framework.name);
    }
    // A list of lines the log states ("peak_lines", "gpu_count_lines"):
    // each parsed, its literals added to the prefilters.
    const auto stated_lines = [&](const std::string& key, auto parse, auto& into) -> Status {
      const json list = entry.value(key, json::array());
      if (!list.is_array()) return Error::MalformedInput("{}: \"{}\" is not a list", where, key);
      for (size_t i = 0; i < list.size(); ++i) {
        OFU_ASSIGN_OR_RETURN(auto line, parse(list[i], fmt::format("{}: {}[{}]", where, key, i)));
        prefilter.insert(line.contains.begin(), line.contains.end());
        framework.prefilter.insert(framework.prefilter.end(), line.contains.begin(), line.contains.end());
        into.push_back(std::move(line));
      }
      return OkStatus();
    };
    OFU_RETURN_IF_ERROR(stated_lines("peak_lines", ParsePeakLine, framework.peak_lines));
    const auto peak_flops = entry.find("peak_flops");
    if (peak_flops != entry.end()) {
      if (!peak_flops->is_number() || !(peak_flops->get<double>() > 0) || !std::isfinite(peak_flops->get<double>())) {
        return Error::MalformedInput("{}: \"peak_flops\" is not a positive number", where);
      }
      framework.peak_flops = peak_flops->get<double>();
    }
    framework.peak_basis = entry.value("peak_basis", std::string());
    OFU_RETURN_IF_ERROR(stated_lines("gpu_count_lines", ParseCountLine, framework.gpu_count_lines));
    const auto patterns = entry.find("patterns");
    if (patterns == entry.end() || !patterns->is_array() || patterns->empty()) {
      return Error::MalformedInput("{}: \"patterns\" is missing or not a non-empty list", where);
    }
    bool mfu = false;
    bool total = false;
    for (size_t p = 0; p < patterns->size(); ++p) {
      TrainingLogPatternInfo info;
      info.framework = framework.name;
      OFU_ASSIGN_OR_RETURN(CompiledPattern pattern,
                           ParsePattern((*patterns)[p], fmt::format("{}: patterns[{}]", where, p), info));
      mfu = mfu || QuantityOf(pattern.unit) == TrainingLogQuantity::kMfu;
      total = total || pattern.unit == TrainingLogUnit::kFlopsTotalSi;
      pattern.framework = f;
      pattern.info = table.patterns_.size();
      prefilter.insert(pattern.contains.begin(), pattern.contains.end());
      framework.prefilter.insert(framework.prefilter.end(), pattern.contains.begin(), pattern.contains.end());
      compiled->patterns.push_back(std::move(pattern));
      table.patterns_.push_back(std::move(info));
    }
    if (total && framework.gpu_count_lines.empty()) {
      return Error::MalformedInput("{}: unit flops_total_si needs \"gpu_count_lines\" (where the log states its GPUs)",
                                   where);
    }
    if (mfu && framework.peak_basis.empty()) {
      return Error::MalformedInput("{}: \"peak_basis\" (what the MFU divides by) is missing", where);
    }
    compiled->frameworks.push_back(std::move(framework));
  }
  compiled->prefilter.assign(prefilter.begin(), prefilter.end());
  table.compiled_ = std::move(compiled);
  return table;
}

Result<TrainingLogPatterns> TrainingLogPatterns::Embedded() {
  return Parse(EmbeddedTrainingLogPatternsJson(), kTableFileInRepo);
}

std::vector<std::string> TrainingLogPatterns::Frameworks() const {
  std::vector<std::string> out;
  for (const CompiledFramework& framework : compiled_->frameworks) out.push_back(framework.name);
  return out;
}

Result<TrainingLog> ParseTrainingLog(std::string_view text, const std::string& name) {
  OFU_ASSIGN_OR_RETURN(const TrainingLogPatterns table, TrainingLogPatterns::Embedded());
  return ParseTrainingLog(text, name, table);
}

Result<TrainingLog> ParseTrainingLog(std::string_view text, const std::string& name, const TrainingLogPatterns& table) {
  Reader reader(name, table);
  int number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    OFU_RETURN_IF_ERROR(reader.Line(line, ++number));
  }
  return reader.Finish();
}

struct TrainingLogStream::State {
  State(std::string log_name, const TrainingLogPatterns& table) : name(std::move(log_name)), reader(name, table) {}
  std::string name;  // before the reader, which holds a reference to it
  Reader reader;
  int number = 0;
  std::optional<Error> error;
};

TrainingLogStream::TrainingLogStream(std::string name, const TrainingLogPatterns& table)
    : state_(std::make_unique<State>(std::move(name), table)) {}

TrainingLogStream::~TrainingLogStream() = default;

void TrainingLogStream::Line(std::string_view line) {
  if (state_->error) return;
  Status read = state_->reader.Line(line, ++state_->number);
  if (!read.ok()) state_->error = read.error();
}

Result<TrainingLog> TrainingLogStream::Finish() {
  if (state_->error) return *state_->error;
  return state_->reader.Finish();
}

double MedianOfSteps(const std::vector<TrainingLogStep>& steps) {
  if (steps.empty()) return 0;
  std::vector<double> values;
  for (const TrainingLogStep& step : steps) values.push_back(step.value);
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::optional<TrainingLog> LogOfSteps(const TrainingLog& log, const std::function<bool(const TrainingLogStep&)>& keep) {
  TrainingLog part = log;
  std::erase_if(part.steps, [&](const TrainingLogStep& step) { return !keep(step); });
  if (part.steps.empty()) return std::nullopt;
  part.median = MedianOfSteps(part.steps);
  return part;
}

Result<TrainingLog> ReadTrainingLog(const std::string& path) {
  OFU_ASSIGN_OR_RETURN(const TrainingLogPatterns table, TrainingLogPatterns::Embedded());
  return ReadTrainingLog(path, table);
}

Result<TrainingLog> ReadTrainingLog(const std::string& path, const TrainingLogPatterns& table) {
  // Line by line: a job's log can be gigabytes, and only the MFU lines stay.
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::Io("{}: cannot open: {}", path, std::strerror(errno));
  Reader reader(path, table);
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
  row.origin = fmt::format("{}: {}, median of {} step(s); denominator: {}", log.path, log.format, log.steps.size(),
                           log.peak_basis);
  if (log.impossible_steps > 0) {
    row.origin += fmt::format("; {} impossible value(s) left out ({})", log.impossible_steps,
                              fmt::join(log.notes, "; "));
  }
  if (!log.checks.empty()) row.origin += fmt::format("; check: {}", fmt::join(log.checks, "; "));
  return row;
}

}  // namespace ofu::formats
