#include "ofu/formats/training_log_generic.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <re2/re2.h>

namespace ofu::formats {

namespace {

// A line without any of these (any case) is not matched.
constexpr std::array<std::string_view, 8> kPrefilter = {"mfu",  "flop", "f/s",   "ops/sec",
                                                        "gpus", "dp=",  "world", "bench"};

// How much of the first line read the check quotes.
constexpr size_t kQuoted = 240;

constexpr std::string_view kNumber = R"([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)";

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ContainsLower(std::string_view lower_line, std::string_view literal) {
  return lower_line.find(literal) != std::string_view::npos;
}

// `literal` (lower case) in `line`, in any case.
bool ContainsAnyCase(std::string_view line, std::string_view literal) {
  return std::search(line.begin(), line.end(), literal.begin(), literal.end(),
                     [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; }) != line.end();
}

std::optional<double> Number(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

double SiScale(char prefix) {
  switch (std::tolower(static_cast<unsigned char>(prefix))) {
    case 'k': return 1e3;
    case 'm': return 1e6;
    case 'g': return 1e9;
    case 't': return 1e12;
    case 'p': return 1e15;
    default: return 1;
  }
}

// "per GPU" and its spellings, in a lower-case field.
bool NamesPerGpu(std::string_view field) {
  static constexpr std::array<std::string_view, 6> kMarkers = {"per gpu",    "per_gpu",    "/gpu",
                                                               "per device", "per_device", "/device"};
  return std::any_of(kMarkers.begin(), kMarkers.end(),
                     [&](std::string_view marker) { return ContainsLower(field, marker); });
}

std::string_view Piece(const re2::StringPiece& piece) { return {piece.data(), piece.size()}; }

}  // namespace

struct GenericTrainingLogRule::Patterns {
  // Groups: 1 key, 2 "(%)", 3 value, 4 '%'. A number runs to a character
  // that cannot continue it ("1.2X" is not a number).
  RE2 mfu{fmt::format(R"((?i)(?:^|[^a-z0-9_])((?:[a-z0-9_]+/)*(?:[a-z0-9]+_)*mfu(?:_[a-z0-9]+)*)(\s*\(%\))?)"
                      R"(\s*(?:[:=|\t]\s*|\s+)({})(\s*%)?(?:[^a-z0-9.]|$))",
                      kNumber)};
  // "<number> <unit>" (groups 1 value, 2 prefix, 3 per GPU) or "<unit>:
  // <number>" (4 prefix, 5 per GPU, 6 value).
  RE2 flops{fmt::format(R"((?i)({0})\s*([kmgtp])(?:flops|flop/s|f/s)\b((?:\s*/\s*|\s+per\s+)(?:gpu|device))?)"
                        R"(|(?:\b|_)([kmgtp])(?:flops|flop/s|f/s)((?:/|_per_|\s+per\s+)(?:gpu|device))?\)?)"
                        R"(\s*(?:\([^)]*\))?\s*(?:[:=|\t]\s*|\s+)({0})(?:[^a-z0-9.]|$))",
                        kNumber)};
  RE2 step{R"((?i)\b(?:step|iter|iteration)\b\s*[:=]?\s*(\d+))"};
  RE2 training{R"((?i)\b(?:steps?|iters?|iteration|loss|lr|learning rate|epoch|tokens?|samples)\b)"};
  RE2 micro_benchmark{R"((?i)(benchmark|bench|gemm|matmul|bmm|attention|flash|pct_peak))"};
  RE2 gpu_count{R"((?i)(?:^|[^a-z0-9_])(?:dp|gpus|ngpus?|num_gpus|world_size)=(\d+))"
                R"(|#\s*gpus:\s*(\d+)|(?:^|[^a-z0-9_.])(\d+)\s+gpus\b|world size\s*[:=]?\s*(\d+))"};
};

std::shared_ptr<const GenericTrainingLogRule::Patterns> GenericTrainingLogRule::Compile() {
  return std::make_shared<const Patterns>();
}

GenericTrainingLogRule::GenericTrainingLogRule(std::shared_ptr<const Patterns> patterns)
    : patterns_(std::move(patterns)) {}

void GenericTrainingLogRule::Drop() {
  reads_ = {};
  first_text_.clear();
  benchmark_.reset();
  not_a_step_.reset();
}

bool GenericTrainingLogRule::MayRead(std::string_view line) {
  // One pass over the line (every line of a job's output comes here): only
  // where a literal's first letter stands are the literals compared.
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(line[i])));
    if (c != 'm' && c != 'f' && c != 'o' && c != 'g' && c != 'd' && c != 'w' && c != 'b') continue;
    for (const std::string_view literal : kPrefilter) {
      if (literal.front() == c && ContainsAnyCase(line.substr(i, literal.size()), literal)) return true;
    }
  }
  return false;
}

void GenericTrainingLogRule::Line(std::string_view line, int number) {
  const std::string lower = Lower(line);
  const Patterns& p = *patterns_;
  if (!gpu_count_) {
    std::array<re2::StringPiece, 5> count;
    if (p.gpu_count.Match(line, 0, line.size(), RE2::UNANCHORED, count.data(), count.size())) {
      for (size_t g = 1; g < count.size(); ++g) {
        if (!count[g].empty()) gpu_count_ = StatedGpuCount{std::string(Piece(count[g])), number};
      }
    }
  }
  if (!says_benchmark_ && ContainsLower(lower, "benchmark")) says_benchmark_ = Named{number, std::string(line), ""};

  std::array<re2::StringPiece, 7> flops;
  const bool has_flops = p.flops.Match(line, 0, line.size(), RE2::UNANCHORED, flops.data(), flops.size());
  const bool rate = has_flops || ContainsLower(lower, "ops/sec");
  std::string word;
  if (rate && RE2::PartialMatch(line, p.micro_benchmark, &word)) {
    if (!benchmark_) benchmark_ = Named{number, std::string(line), fmt::format("the line names '{}'", word)};
    return;
  }
  // A peak is the denominator a framework states, not a step's value.
  if (ContainsLower(lower, "peak")) return;

  std::array<re2::StringPiece, 5> mfu;
  const bool has_mfu = p.mfu.Match(line, 0, line.size(), RE2::UNANCHORED, mfu.data(), mfu.size());
  Read read;
  read.line = number;
  int64_t step = 0;
  if (RE2::PartialMatch(line, p.step, &step)) read.step = step;
  // vLLM's "MFU: 6.6 TF/s/GPU": the number is the FLOP/s's.
  if (has_mfu && !(has_flops && !flops[1].empty() && flops[1].data() == mfu[3].data())) {
    const auto value = Number(Piece(mfu[3]));
    if (!value || !std::isfinite(*value)) return;
    read.number = *value;
    read.printed = std::string(Piece(mfu[3]));
    read.kind = mfu[2].empty() && mfu[4].empty() ? Read::Kind::kMfuUnmarked : Read::Kind::kMfuPercent;
  } else if (has_flops) {
    const bool number_first = !flops[1].empty();
    const re2::StringPiece& printed = number_first ? flops[1] : flops[6];
    const re2::StringPiece& prefix = number_first ? flops[2] : flops[4];
    const re2::StringPiece& per = number_first ? flops[3] : flops[5];
    const auto value = Number(Piece(printed));
    if (!value || !std::isfinite(*value * SiScale(prefix[0]))) return;
    if (!RE2::PartialMatch(line, p.training)) {
      if (!not_a_step_) {
        not_a_step_ = Named{number, std::string(line), "no step, iteration, loss or learning rate on its line"};
      }
      return;
    }
    // The field the number is in: from the last separator before it.
    const size_t start = static_cast<size_t>(std::min(printed.data(), prefix.data()) - line.data());
    const size_t separator = start == 0 ? std::string::npos : lower.find_last_of("|\t,;", start - 1);
    const size_t from = separator == std::string::npos ? 0 : separator + 1;
    const bool per_gpu = !per.empty() || NamesPerGpu(std::string_view(lower).substr(from, start - from));
    read.number = *value * SiScale(prefix[0]);
    read.printed = fmt::format("{}{}", Piece(printed), Piece(prefix));
    read.kind = per_gpu ? Read::Kind::kFlopsPerGpu : Read::Kind::kFlopsTotal;
  } else {
    return;
  }
  if (first_text_.empty()) first_text_ = std::string(line.substr(0, kQuoted));
  reads_.push_back(std::move(read));
}

Result<std::optional<GenericRead>> GenericTrainingLogRule::Finish(const std::string& name) const {
  const auto refuse = [&](const Named& line, const std::string& why) -> Error {
    return Error::MalformedInput("{}:{}: a benchmark's TFLOP/s, not a training step ({}): '{}'", name, line.line, why,
                                 line.text.substr(0, kQuoted));
  };
  if (benchmark_) return refuse(*benchmark_, benchmark_->why);
  if (reads_.empty()) {
    if (!not_a_step_) return std::optional<GenericRead>();
    return refuse(*not_a_step_,
                  says_benchmark_ ? fmt::format("line {} says 'benchmark'", says_benchmark_->line) : not_a_step_->why);
  }
  GenericRead out;
  const bool mfu = std::any_of(reads_.begin(), reads_.end(), [](const Read& read) {
    return read.kind == Read::Kind::kMfuPercent || read.kind == Read::Kind::kMfuUnmarked;
  });
  out.quantity = mfu ? TrainingLogQuantity::kMfu : TrainingLogQuantity::kFlopsPerGpu;
  std::vector<const Read*> used;
  for (const Read& read : reads_) {
    const bool is_mfu = read.kind == Read::Kind::kMfuPercent || read.kind == Read::Kind::kMfuUnmarked;
    if (is_mfu == mfu) used.push_back(&read);
  }
  out.checks.push_back(fmt::format("read by ofu's generic rule from line {}: {}; check it", used.front()->line,
                                   used.front()->line == reads_.front().line ? first_text_ : "(see the log)"));
  const bool numbered = std::all_of(used.begin(), used.end(), [](const Read* read) { return read->step.has_value(); });
  if (!numbered) out.checks.push_back("not every line read names its step: the lines are numbered 1, 2, ... in order");
  const bool unmarked_percent = std::any_of(used.begin(), used.end(), [](const Read* read) {
    return read->kind == Read::Kind::kMfuUnmarked && read->number > 1;
  });
  if (std::any_of(used.begin(), used.end(), [](const Read* read) { return read->kind == Read::Kind::kMfuUnmarked; })) {
    out.checks.push_back(unmarked_percent
                             ? "the MFU is printed without '%' and a value is above 1: read as a percent"
                             : "the MFU is printed without '%' and no value is above 1: read as a ratio (0.4 = 40 %)");
  }
  bool total = false;
  int64_t position = 0;
  for (const Read* read : used) {
    GenericValue value;
    value.step = numbered ? *read->step : ++position;
    value.line = read->line;
    value.printed = read->printed;
    switch (read->kind) {
      case Read::Kind::kMfuPercent:
        value.unit = TrainingLogUnit::kMfuPercent;
        value.value = read->number / 100;
        break;
      case Read::Kind::kMfuUnmarked:
        value.unit = unmarked_percent ? TrainingLogUnit::kMfuPercent : TrainingLogUnit::kMfuRatio;
        value.value = unmarked_percent ? read->number / 100 : read->number;
        break;
      case Read::Kind::kFlopsPerGpu:
        value.unit = TrainingLogUnit::kFlopsPerGpuSi;
        value.value = read->number;
        break;
      case Read::Kind::kFlopsTotal:
        value.unit = TrainingLogUnit::kFlopsTotalSi;
        value.value = read->number;
        total = true;
        break;
    }
    out.values.push_back(std::move(value));
  }
  if (total) out.gpu_count = gpu_count_;
  return std::optional<GenericRead>(std::move(out));
}

}  // namespace ofu::formats
