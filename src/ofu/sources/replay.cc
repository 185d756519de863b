#include "ofu/sources/replay.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

namespace ofu::sources {
namespace {

// DCGM marks "no value" with sentinels at or above DCGM_FP64_BLANK
// (140737488355328.0); the int64 blanks are larger still.
constexpr double kDcgmBlankThreshold = 140737488355328.0;
// Timestamps from 1e11 s on (the year 5138) are certainly wrong, and keeping
// them out keeps window arithmetic far from integer overflow.
constexpr double kLatestTimestampS = 1e11;

// One value of one counter of one GPU, before samples are assembled.
struct Point {
  double time_s;
  CounterField field;
  double value;
  std::size_t line;
};

struct GpuPoints {
  GpuIdentity identity;
  std::string parent_key;  // the whole GPU, for a MIG instance; else empty
  std::vector<Point> points;
};

std::string_view FirstLabel(std::span<const formats::Label> labels, std::initializer_list<std::string_view> names) {
  for (std::string_view wanted : names) {
    for (const auto& label : labels) {
      if (label.name == wanted && !label.value.empty()) return label.value;
    }
  }
  return {};
}

bool IsActivity(CounterField field) { return InfoFor(field).is_activity; }

std::string_view DescribeField(CounterField field) { return InfoFor(field).description; }

class RecordingBuilder final : public formats::TextVisitor {
 public:
  RecordingBuilder(std::string_view source_name, const RecordingOptions& options)
      : source_name_(source_name), options_(options) {
    recording_.source_name = std::string(source_name);
  }

  void OnMetadata(const formats::TextMetadata& m) override {
    if (m.kind != formats::MetadataKind::kUnit) return;
    if (m.text == "ratio") unit_scale_[std::string(m.family)] = ValueScale::kRatio;
    if (m.text == "percent") unit_scale_[std::string(m.family)] = ValueScale::kPercent;
  }

  void OnSample(const formats::TextSample& s) override {
    if (error_) return;  // the first error is the one reported
    ++recording_.samples_read;
    if (s.name == kRecordingInfoName) {
      ReadRecordingInfo(s.labels);
      return;
    }
    if (s.name == kRecordingPhaseName) {
      ReadPhase(s.labels, s.line);
      return;
    }
    const std::optional<KnownMetric> metric = LookupDcgmExporterMetric(s.name);
    if (!metric) return;

    std::optional<double> time = SampleTime(s);
    if (!time) return;
    GpuPoints* gpu = GpuFor(s.name, s.labels, s.line);
    if (gpu == nullptr) return;
    if (std::isnan(s.value) || s.value >= kDcgmBlankThreshold) {
      ++recording_.blank_values;
      return;
    }
    std::optional<double> value = Scaled(s, *metric);
    if (!value) return;
    gpu->points.push_back(Point{*time, metric->field, *value, s.line});
    ++recording_.samples_used;
  }

  // A sample whose value is not a number: never a point, so a counter ofu
  // uses is absent for that GPU at that instant. The GPU is still known (and
  // must be identifiable, as for any sample of a used family), and in a file
  // without timestamps the series still tells where a scrape ends.
  void OnNonNumericSample(const formats::NonNumericSample& s) override {
    if (error_) return;
    ++recording_.samples_read;
    if (s.name == kRecordingInfoName) {  // its labels are what it says; the value never mattered
      ReadRecordingInfo(s.labels);
      return;
    }
    if (s.name == kRecordingPhaseName) {
      ReadPhase(s.labels, s.line);
      return;
    }
    ++recording_.non_numeric_values;
    const std::optional<KnownMetric> metric = LookupDcgmExporterMetric(s.name);
    if (metric) {
      if (GpuFor(s.name, s.labels, s.line) == nullptr) return;
      // Its time is unknown (the reader looks for no timestamp after a text
      // value), but in a file with timestamps nothing depends on it.
      if (timing_ != Timing::kStamped) ScrapeOf(s.name, s.labels);
    }
    auto [it, inserted] = non_numeric_index_.emplace(std::string(s.name), non_numeric_.size());
    if (inserted) {
      non_numeric_.push_back(NonNumericFamily{std::string(s.name), s.line, ForNote(s.value_text), s.out_of_range,
                                              metric ? std::optional<CounterField>(metric->field) : std::nullopt, 0});
    }
    ++non_numeric_[it->second].count;
  }

  // A line that cannot be a sample: named in a note (the first few), never read.
  void OnStrayLine(const formats::StrayLine& s) override {
    ++recording_.stray_lines;
    if (stray_notes_.size() < kMaxStrayLineNotes) {
      stray_notes_.push_back(fmt::format("{}:{}: skipped a line that cannot be a sample: '{}'", source_name_, s.line,
                                         ForNote(s.text)));
    } else {
      if (more_stray_first_line_ == 0) more_stray_first_line_ = s.line;
      ++more_stray_lines_;
    }
  }

  Result<Recording> Finish(std::size_t lines) {
    if (error_) return *error_;
    recording_.notes = std::move(stray_notes_);
    if (more_stray_lines_ > 0) {
      recording_.notes.push_back(fmt::format(
          "{}: {} more line{} that cannot be a sample skipped, the first on line {} (--strict refuses them)",
          source_name_, more_stray_lines_, more_stray_lines_ == 1 ? "" : "s", more_stray_first_line_));
    }
    for (const auto& family : non_numeric_) recording_.notes.push_back(NoteFor(family));
    recording_.lines = lines;
    recording_.timestamps_assumed = timing_ == Timing::kUnstamped;
    if (recording_.timestamps_assumed) {
      recording_.assumed_interval_s = options_.untimestamped_interval_s;
      recording_.scrapes = scrape_ + 1;
    }
    LendParentReadings();
    for (auto& gpu : gpus_) {
      OFU_ASSIGN_OR_RETURN(auto samples, Assemble(gpu.points));
      recording_.gpus.push_back(GpuRecording{std::move(gpu.identity), std::move(samples)});
    }
    return std::move(recording_);
  }

 private:
  enum class Timing { kUnknown, kStamped, kUnstamped };

  // The samples of one family whose values were not numbers.
  struct NonNumericFamily {
    std::string family;
    std::size_t first_line;
    std::string first_text;  // as ForNote shows it
    bool out_of_range;
    std::optional<CounterField> field;  // absent: a family ofu does not use
    std::size_t count;
  };

  void Fail(std::size_t line, const std::string& what) {
    if (error_) return;  // the first error is the one reported
    error_ = Error::MalformedInput("{}:{}: {}", source_name_, line, what);
  }

  void ReadRecordingInfo(std::span<const formats::Label> labels) {
    const std::string_view synthetic = FirstLabel(labels, {"synthetic"});
    if (!synthetic.empty()) recording_.synthetic = synthetic == "true";
    recording_.description = std::string(FirstLabel(labels, {"description"}));
  }

  // One ofu_recording_phase_info sample. Its labels are its content, so a
  // label that cannot be what it claims is an error, not a guess.
  void ReadPhase(std::span<const formats::Label> labels, std::size_t line) {
    RecordedPhase phase;
    phase.name = std::string(FirstLabel(labels, {"phase"}));
    phase.kind = std::string(FirstLabel(labels, {"kind"}));
    phase.precision = std::string(FirstLabel(labels, {"precision"}));
    phase.line = line;
    if (phase.name.empty()) return Fail(line, "ofu_recording_phase_info has no phase label");
    const std::optional<double> start = LabelNumber(labels, "start", line, phase.name, /*required=*/true);
    const std::optional<double> end = LabelNumber(labels, "end", line, phase.name, /*required=*/true);
    phase.mfu = LabelNumber(labels, "mfu", line, phase.name, /*required=*/false);
    phase.peak_tflops = LabelNumber(labels, "peak_tflops", line, phase.name, /*required=*/false);
    if (error_) return;
    if (!(*end > *start)) {
      return Fail(line, fmt::format("phase {}: end {} is not after start {}", phase.name, *end, *start));
    }
    phase.start_s = *start;
    phase.end_s = *end;
    recording_.phases.push_back(std::move(phase));
  }

  // A phase label that must be a finite number >= 0: absent when the label
  // is (and not required), else the number or a Fail.
  std::optional<double> LabelNumber(std::span<const formats::Label> labels, std::string_view name, std::size_t line,
                                    const std::string& phase, bool required) {
    const std::string_view text = FirstLabel(labels, {name});
    if (text.empty()) {
      if (required) Fail(line, fmt::format("phase {} has no {} label", phase, name));
      return std::nullopt;
    }
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0) {
      Fail(line, fmt::format("phase {}: {}=\"{}\" is not a finite number >= 0", phase, name, ForNote(text)));
      return std::nullopt;
    }
    return value;
  }

  // A value's text as a note shows it: printable ASCII as is, other bytes as
  // \xNN, cut after 64 bytes, so a note stays one readable line whatever
  // the input held.
  static std::string ForNote(std::string_view text) {
    constexpr std::size_t kMaxShown = 64;
    std::string out;
    for (std::size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
      const auto byte = static_cast<unsigned char>(text[i]);
      if (byte >= 0x20 && byte < 0x7F) {
        out += text[i];
      } else {
        fmt::format_to(std::back_inserter(out), "\\x{:02x}", byte);
      }
    }
    if (text.size() > kMaxShown) out += "...";
    return out;
  }

  std::string NoteFor(const NonNumericFamily& f) const {
    const bool one = f.count == 1;
    std::string note = fmt::format("{}:{}: {}: value '{}' {}; {} such sample{} skipped", source_name_, f.first_line,
                                   f.family, f.first_text, f.out_of_range ? "is out of range" : "is not a number",
                                   f.count, one ? "" : "s");
    if (!f.field) return note + " (family not used by ofu)";
    if (one) return note + fmt::format(", so that GPU's {} is absent at that instant", DescribeField(*f.field));
    return note + fmt::format(", so those GPUs' {} is absent at those instants", DescribeField(*f.field));
  }

  // The sample's time: its own timestamp, or for a file without any, the
  // index of its scrape times the assumed interval.
  std::optional<double> SampleTime(const formats::TextSample& s) {
    const Timing timing = s.timestamp_s ? Timing::kStamped : Timing::kUnstamped;
    if (timing_ == Timing::kUnknown) timing_ = timing;
    if (timing != timing_) {
      Fail(s.line, timing_ == Timing::kStamped ? "sample has no timestamp, but earlier samples have one"
                                               : "sample has a timestamp, but earlier samples have none");
      return std::nullopt;
    }
    if (s.timestamp_s) {
      if (!(*s.timestamp_s >= 0 && *s.timestamp_s < kLatestTimestampS)) {
        Fail(s.line, fmt::format("timestamp {} s is outside the years 1970 to 5138", *s.timestamp_s));
        return std::nullopt;
      }
      return *s.timestamp_s;
    }
    return static_cast<double>(ScrapeOf(s.name, s.labels)) * options_.untimestamped_interval_s;
  }

  // In a file without timestamps, the index of the scrape a series belongs
  // to: a new scrape begins whenever a series repeats.
  std::size_t ScrapeOf(std::string_view name, std::span<const formats::Label> labels) {
    std::string series(name);
    for (const auto& label : labels) fmt::format_to(std::back_inserter(series), ",{}={}", label.name, label.value);
    if (!series_in_scrape_.insert(series).second) {  // the series repeats: a new scrape began
      series_in_scrape_.clear();
      series_in_scrape_.insert(std::move(series));
      ++scrape_;
    }
    return scrape_;
  }

  GpuPoints* GpuFor(std::string_view name, std::span<const formats::Label> labels, std::size_t line) {
    const std::string_view uuid = FirstLabel(labels, {"UUID", "uuid"});
    const std::string_view host = FirstLabel(labels, {"Hostname", "hostname"});
    const std::string_view index = FirstLabel(labels, {"gpu"});
    const std::string_view mig_id = FirstLabel(labels, {"GPU_I_ID"});
    std::string key;
    if (!uuid.empty()) {
      key = std::string(uuid);
    } else if (!index.empty()) {
      key = host.empty() ? fmt::format("gpu{}", index) : fmt::format("{}/gpu{}", host, index);
    } else {
      Fail(line, fmt::format("{} has neither a UUID/uuid nor a gpu label: cannot tell which GPU it is", name));
      return nullptr;
    }
    std::string parent;
    if (!mig_id.empty()) {
      parent = key;
      key += fmt::format("/gi{}", mig_id);
    }
    auto [it, inserted] = index_.emplace(key, gpus_.size());
    if (inserted) {
      GpuPoints gpu;
      gpu.identity.key = key;
      gpu.identity.uuid = std::string(uuid);
      gpu.identity.hostname = std::string(host);
      gpu.identity.gpu_index = std::string(index);
      gpu.identity.mig_instance = std::string(mig_id);
      gpu.parent_key = std::move(parent);
      gpus_.push_back(std::move(gpu));
    }
    GpuPoints& gpu = gpus_[it->second];
    // Not every metric carries every label (modelName was added later).
    if (gpu.identity.model.empty()) gpu.identity.model = std::string(FirstLabel(labels, {"modelName"}));
    if (gpu.identity.pci_bus_id.empty()) gpu.identity.pci_bus_id = std::string(FirstLabel(labels, {"pci_bus_id"}));
    if (gpu.identity.mig_profile.empty()) gpu.identity.mig_profile = std::string(FirstLabel(labels, {"GPU_I_PROFILE"}));
    return &gpu;
  }

  // The value in ofu's units (activities as 0..1), or an error for a value
  // the metric cannot hold.
  std::optional<double> Scaled(const formats::TextSample& s, const KnownMetric& metric) {
    const double v = s.value;
    if (!IsActivity(metric.field)) {
      if (!(v >= 0) || std::isinf(v)) {
        Fail(s.line, fmt::format("{} value {} is not a valid {}", s.name, v, DescribeField(metric.field)));
        return std::nullopt;
      }
      return v;
    }
    ValueScale scale = metric.scale;
    if (auto it = unit_scale_.find(std::string(s.name)); it != unit_scale_.end()) scale = it->second;
    if (options_.activity_scale) scale = *options_.activity_scale;
    // Counters are noisy at the top end; a little over full scale is real data.
    const double full = scale == ValueScale::kPercent ? 100.0 : 1.0;
    if (!(v >= 0) || v > full * 1.05) {
      Fail(s.line, fmt::format("{} value {} is outside 0..{} for a {} metric{}", s.name, v, full,
                               scale == ValueScale::kPercent ? "percent" : "ratio",
                               scale == ValueScale::kRatio && v > 1 && v <= 105
                                   ? "; if this file holds percent, pass --activity-scale percent"
                                   : ""));
      return std::nullopt;
    }
    return v / full;
  }

  // A MIG instance's clock, power and clock reasons are the chip's: where the
  // data give them only for the whole GPU, the instance uses those.
  void LendParentReadings() {
    for (auto& gpu : gpus_) {
      if (gpu.parent_key.empty()) continue;
      auto parent = index_.find(gpu.parent_key);
      if (parent == index_.end()) continue;
      for (CounterField field : {CounterField::kSmClockMhz, CounterField::kMaxSmClockMhz, CounterField::kPowerW,
                                 CounterField::kClockEventReasons}) {
        const auto has = [field](const Point& p) { return p.field == field; };
        if (std::any_of(gpu.points.begin(), gpu.points.end(), has)) continue;
        const auto& from = gpus_[parent->second].points;
        std::copy_if(from.begin(), from.end(), std::back_inserter(gpu.points), has);
      }
    }
  }

  Result<std::vector<CounterSample>> Assemble(std::vector<Point>& points) {
    std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
      return a.time_s != b.time_s ? a.time_s < b.time_s : a.field < b.field;
    });
    std::vector<CounterSample> samples;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const Point& p = points[i];
      if (i > 0 && points[i - 1].time_s == p.time_s && points[i - 1].field == p.field) {
        return Error::MalformedInput("{}:{}: a second {} value for the same GPU at the same instant (first on line {})",
                                     source_name_, std::max(p.line, points[i - 1].line), DescribeField(p.field),
                                     std::min(p.line, points[i - 1].line));
      }
      if (samples.empty() || samples.back().time_s != p.time_s) {
        samples.emplace_back();
        samples.back().time_s = p.time_s;
      }
      SetField(samples.back(), p.field, p.value);
    }
    return samples;
  }

  std::string source_name_;
  RecordingOptions options_;
  Recording recording_;
  std::optional<Error> error_;
  std::vector<GpuPoints> gpus_;
  std::unordered_map<std::string, std::size_t> index_;
  std::unordered_map<std::string, ValueScale> unit_scale_;
  Timing timing_ = Timing::kUnknown;
  std::unordered_set<std::string> series_in_scrape_;
  std::size_t scrape_ = 0;
  std::vector<std::string> stray_notes_;  // the first kMaxStrayLineNotes, in line order
  std::size_t more_stray_lines_ = 0;      // past those
  std::size_t more_stray_first_line_ = 0;
  std::vector<NonNumericFamily> non_numeric_;  // in order of first line
  std::unordered_map<std::string, std::size_t> non_numeric_index_;
};

}  // namespace

Result<Recording> ReadRecording(std::istream& in, std::string_view source_name, const RecordingOptions& options) {
  RecordingBuilder builder(source_name, options);
  // Non-numeric values are decided here, where it is known which families
  // matter, never by the reader.
  formats::ParseOptions parse = options.parse;
  parse.non_numeric_values = options.strict_values ? formats::NonNumericValues::kError
                                                   : formats::NonNumericValues::kReport;
  parse.stray_lines = options.strict_values ? formats::StrayLines::kError : formats::StrayLines::kSkip;
  OFU_ASSIGN_OR_RETURN(auto stats, formats::ReadPrometheusText(in, source_name, builder, parse));
  return builder.Finish(stats.lines);
}

Result<Recording> ReadRecordingFile(const std::string& path, const RecordingOptions& options) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error::Io("{}: cannot open: {}", path, std::strerror(errno));
  return ReadRecording(file, path, options);
}

}  // namespace ofu::sources
