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

#include "ofu/core/gpu_key.h"
#include "ofu/formats/counter_table.h"
#include "ofu/formats/csv.h"
#include "ofu/formats/dcgmi_dmon.h"
#include "ofu/formats/nvidia_smi.h"
#include "ofu/formats/prometheus_api.h"
#include "ofu/formats/text_file.h"
#include "ofu/sources/counter_texts.h"
#include "ofu/sources/recording_builder.h"

namespace ofu::sources {
namespace {

// DCGM marks "no value" with sentinels at or above DCGM_FP64_BLANK
// (140737488355328.0); the int64 blanks are larger still.
constexpr double kDcgmBlankThreshold = 140737488355328.0;
// Timestamps from 1e11 s on (the year 5138) are certainly wrong, and keeping
// them out keeps window arithmetic far from integer overflow.
constexpr double kLatestTimestampS = 1e11;

std::string_view FirstLabel(std::span<const formats::Label> labels, std::initializer_list<std::string_view> names) {
  for (std::string_view wanted : names) {
    for (const auto& label : labels) {
      if (label.name == wanted && !label.value.empty()) return label.value;
    }
  }
  return {};
}

// A family dcgm-exporter writes (DCGM_FI_*, or dcgm_* of its 1.x names), in
// any case: its samples name GPUs even when ofu reads none of it.
bool IsDcgmFamily(std::string_view name) {
  if (name.size() < 5) return false;
  const std::string_view prefix = name.substr(0, 5);
  return prefix == "DCGM_" || prefix == "dcgm_";
}

std::string_view TensorMetricName() { return DcgmExporterNameFor(CounterField::kTensorActive)->name; }

// dmon's default interval: -d 1000 (dcgmi/CommandLineParser.cpp in NVIDIA/DCGM).
constexpr double kDmonDefaultDelayMs = 1000;

// Prometheus text, and a query API answer's series handed over as its
// samples: metric names to counters, labels to GPUs, timestamps (or, in a
// file without any, scrapes) to times, the recording's own info series, and
// notes on the samples skipped. The readings go to the builder.
class ExpositionReader final : public formats::TextVisitor {
 public:
  explicit ExpositionReader(RecordingBuilder& builder) : builder_(builder) {}

  void OnMetadata(const formats::TextMetadata& m) override {
    if (m.kind != formats::MetadataKind::kUnit) return;
    if (m.text == "ratio") builder_.SetUnitScale(m.family, ValueScale::kRatio);
    if (m.text == "percent") builder_.SetUnitScale(m.family, ValueScale::kPercent);
  }

  void OnSample(const formats::TextSample& s) override {
    if (builder_.failed()) return;  // the first error is the one reported
    ++builder_.recording().samples_read;
    if (s.name == kRecordingInfoName) {
      ReadRecordingInfo(s.labels);
      return;
    }
    if (s.name == kRecordingPhaseName) {
      ReadPhase(s.labels, s.line);
      return;
    }
    const std::optional<KnownMetric> metric = Lookup(s.name);
    if (!metric) {
      if (IsDcgmFamily(s.name)) NoteUnusedFamily(s.name, s.labels);
      return;
    }

    std::optional<double> time = SampleTime(s);
    if (!time) return;
    const std::optional<std::size_t> gpu = GpuFor(s.name, s.labels, s.line);
    if (!gpu) return;
    if (std::isnan(s.value) || s.value >= kDcgmBlankThreshold) {
      ++builder_.recording().blank_values;
      return;
    }
    std::optional<double> value = builder_.Scaled(s.name, s.value, s.line, *metric);
    if (!value) return;
    builder_.AddReading(*gpu, *time, metric->field, *value, s.line);
  }

  // A sample whose value is not a number: never a reading, so a counter ofu
  // uses is absent for that GPU at that instant. The GPU is still known (and
  // must be identifiable, as for any sample of a used family), and in a file
  // without timestamps the series still tells where a scrape ends.
  void OnNonNumericSample(const formats::NonNumericSample& s) override {
    if (builder_.failed()) return;
    ++builder_.recording().samples_read;
    if (s.name == kRecordingInfoName) {  // its labels are what it says; the value never mattered
      ReadRecordingInfo(s.labels);
      return;
    }
    if (s.name == kRecordingPhaseName) {
      ReadPhase(s.labels, s.line);
      return;
    }
    ++builder_.recording().non_numeric_values;
    const std::optional<KnownMetric> metric = Lookup(s.name);
    if (metric) {
      if (!GpuFor(s.name, s.labels, s.line)) return;
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

  void OnStrayLine(const formats::StrayLine& s) override { builder_.SkipStrayLine(s); }

  // The recording of a text of `lines` lines, after its last sample.
  Result<Recording> Finish(std::size_t lines) {
    for (const auto& family : non_numeric_) builder_.AddValueNote(NoteFor(family));
    AddUnusedGpuNotes();
    if (timing_ == Timing::kUnstamped) {
      Recording& recording = builder_.recording();
      recording.timestamps_assumed = true;
      recording.assumed_interval_s = builder_.options().untimestamped_interval_s;
      recording.scrapes = scrape_ + 1;
    }
    return builder_.Finish(lines);
  }

 private:
  enum class Timing { kUnknown, kStamped, kUnstamped };

  // The GPUs (and MIG instances) seen only in families ofu does not use.
  struct UnusedGpu {
    std::string key;
    std::string described;              // "gpu 0, NVIDIA A100-SXM4-80GB, MIG 1g.10gb"
    std::vector<std::string> families;  // in order of first sample
  };

  // The samples of one family whose values were not numbers.
  struct NonNumericFamily {
    std::string family;
    std::size_t first_line;
    std::string first_text;  // as ForNote shows it
    bool out_of_range;
    std::optional<CounterField> field;  // absent: a family ofu does not use
    std::size_t count;
  };

  void NoteUnusedFamily(std::string_view name, std::span<const formats::Label> labels) {
    const auto [key, parent] = KeyOf(labels);
    if (key.empty()) return;  // no identity: nothing to list
    auto [it, inserted] = unused_index_.emplace(key, unused_.size());
    if (inserted) {
      std::string described = ForNote(key);
      const std::string_view model = FirstLabel(labels, {"modelName"});
      const std::string_view profile = FirstLabel(labels, {"GPU_I_PROFILE"});
      if (!model.empty()) described += fmt::format(", {}", ForNote(model));
      if (!profile.empty()) described += fmt::format(", MIG {}", ForNote(profile));
      unused_.push_back(UnusedGpu{key, std::move(described), {}});
    }
    auto& families = unused_[it->second].families;
    if (std::find(families.begin(), families.end(), name) == families.end() && families.size() < 64) {
      families.emplace_back(ForNote(name));
    }
  }

  // One note per GPU that has samples but none of a counter ofu uses: which
  // families it has and which it lacks.
  void AddUnusedGpuNotes() {
    for (const UnusedGpu& gpu : unused_) {
      if (builder_.HasGpu(gpu.key)) continue;  // it has counters ofu reads
      std::string families;
      constexpr std::size_t kShown = 6;
      for (std::size_t i = 0; i < gpu.families.size() && i < kShown; ++i) {
        families += (i == 0 ? "" : ", ") + gpu.families[i];
      }
      if (gpu.families.size() > kShown) families += fmt::format(" and {} more", gpu.families.size() - kShown);
      builder_.AddGpuNote(fmt::format(
          "{}: GPU {}: no counter ofu uses, so no OFU: it has only {}; OFU needs tensor activity "
          "(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, DCGM field 1004) and the SM clock (DCGM_FI_DEV_SM_CLOCK, field 100)",
          builder_.source_name(), gpu.described, families));
    }
  }

  std::string NoteFor(const NonNumericFamily& f) const {
    const bool one = f.count == 1;
    std::string note = fmt::format("{}:{}: {}: value '{}' {}; {} such sample{} skipped", builder_.source_name(),
                                   f.first_line, f.family, f.first_text,
                                   f.out_of_range ? "is out of range" : "is not a number", f.count, one ? "" : "s");
    if (!f.field) return note + " (family not used by ofu)";
    const std::string_view described = builder_.fields()[*f.field].description;
    if (one) return note + fmt::format(", so that GPU's {} is absent at that instant", described);
    return note + fmt::format(", so those GPUs' {} is absent at those instants", described);
  }

  // The counter a metric carries: a dcgm-exporter name ofu knows, or the
  // metric of a row added to the table (an activity in 0..1, a reading as is).
  std::optional<KnownMetric> Lookup(std::string_view name) const {
    if (std::optional<KnownMetric> known = LookupDcgmExporterMetric(name)) return known;
    const CounterFieldInfo* row = builder_.fields().AddedForMetric(name);
    if (row == nullptr) return std::nullopt;
    return KnownMetric{row->field, row->is_activity ? ValueScale::kRatio : ValueScale::kAbsolute, row->dcgm_field_id};
  }

  void ReadRecordingInfo(std::span<const formats::Label> labels) {
    Recording& recording = builder_.recording();
    const std::string_view synthetic = FirstLabel(labels, {"synthetic"});
    if (!synthetic.empty()) recording.synthetic = synthetic == "true";
    recording.description = std::string(FirstLabel(labels, {"description"}));
  }

  // One ofu_recording_phase_info sample. Its labels are its content, so a
  // label that cannot be what it claims is an error, not a guess.
  void ReadPhase(std::span<const formats::Label> labels, std::size_t line) {
    RecordedPhase phase;
    phase.name = std::string(FirstLabel(labels, {"phase"}));
    phase.kind = std::string(FirstLabel(labels, {"kind"}));
    phase.precision = std::string(FirstLabel(labels, {"precision"}));
    phase.line = line;
    if (phase.name.empty()) return builder_.Fail(line, "ofu_recording_phase_info has no phase label");
    const std::optional<double> start = LabelNumber(labels, "start", line, phase.name, /*required=*/true);
    const std::optional<double> end = LabelNumber(labels, "end", line, phase.name, /*required=*/true);
    phase.mfu = LabelNumber(labels, "mfu", line, phase.name, /*required=*/false);
    phase.peak_tflops = LabelNumber(labels, "peak_tflops", line, phase.name, /*required=*/false);
    if (builder_.failed()) return;
    if (!(*end > *start)) {
      return builder_.Fail(line, fmt::format("phase {}: end {} is not after start {}", phase.name, *end, *start));
    }
    phase.start_s = *start;
    phase.end_s = *end;
    builder_.recording().phases.push_back(std::move(phase));
  }

  // A phase label that must be a finite number >= 0: absent when the label
  // is (and not required), else the number or a Fail.
  std::optional<double> LabelNumber(std::span<const formats::Label> labels, std::string_view name, std::size_t line,
                                    const std::string& phase, bool required) {
    const std::string_view text = FirstLabel(labels, {name});
    if (text.empty()) {
      if (required) builder_.Fail(line, fmt::format("phase {} has no {} label", phase, name));
      return std::nullopt;
    }
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0) {
      builder_.Fail(line, fmt::format("phase {}: {}=\"{}\" is not a finite number >= 0", phase, name, ForNote(text)));
      return std::nullopt;
    }
    return value;
  }

  // The sample's time: its own timestamp, or for a file without any, the
  // index of its scrape times the assumed interval.
  std::optional<double> SampleTime(const formats::TextSample& s) {
    const Timing timing = s.timestamp_s ? Timing::kStamped : Timing::kUnstamped;
    if (timing_ == Timing::kUnknown) timing_ = timing;
    if (timing != timing_) {
      builder_.Fail(s.line, timing_ == Timing::kStamped ? "sample has no timestamp, but earlier samples have one"
                                                        : "sample has a timestamp, but earlier samples have none");
      return std::nullopt;
    }
    if (s.timestamp_s) {
      if (!(*s.timestamp_s >= 0 && *s.timestamp_s < kLatestTimestampS)) {
        builder_.Fail(s.line, fmt::format("timestamp {} s is outside the years 1970 to 5138", *s.timestamp_s));
        return std::nullopt;
      }
      return *s.timestamp_s;
    }
    return static_cast<double>(ScrapeOf(s.name, s.labels)) * builder_.options().untimestamped_interval_s;
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

  // A sample's GPU key and, for a MIG instance, its parent's; an empty key
  // when the labels name no GPU.
  static std::pair<std::string, std::string> KeyOf(std::span<const formats::Label> labels) {
    return GpuKeyOfLabels(FirstLabel(labels, {"UUID", "uuid"}), FirstLabel(labels, {"Hostname", "hostname"}),
                          FirstLabel(labels, {"gpu"}), FirstLabel(labels, {"GPU_I_ID"}));
  }

  // The builder's GPU of a sample of `name`, its identity completed from the
  // labels; absent, after a Fail, when the labels name no GPU.
  std::optional<std::size_t> GpuFor(std::string_view name, std::span<const formats::Label> labels, std::size_t line) {
    auto [key, parent] = KeyOf(labels);
    if (key.empty()) {
      builder_.Fail(line, fmt::format("{} has neither a UUID/uuid nor a gpu label: cannot tell which GPU it is", name));
      return std::nullopt;
    }
    GpuIdentity identity;
    identity.key = std::move(key);
    identity.uuid = std::string(FirstLabel(labels, {"UUID", "uuid"}));
    identity.hostname = std::string(FirstLabel(labels, {"Hostname", "hostname"}));
    identity.gpu_index = std::string(FirstLabel(labels, {"gpu"}));
    identity.mig_instance = std::string(FirstLabel(labels, {"GPU_I_ID"}));
    const std::size_t gpu = builder_.GpuAt(std::move(identity), std::move(parent));
    // Not every metric carries every label (modelName was added later).
    GpuIdentity& known = builder_.identity(gpu);
    if (known.model.empty()) known.model = std::string(FirstLabel(labels, {"modelName"}));
    if (known.pci_bus_id.empty()) known.pci_bus_id = std::string(FirstLabel(labels, {"pci_bus_id"}));
    if (known.mig_profile.empty()) known.mig_profile = std::string(FirstLabel(labels, {"GPU_I_PROFILE"}));
    return gpu;
  }

  RecordingBuilder& builder_;
  Timing timing_ = Timing::kUnknown;
  std::unordered_set<std::string> series_in_scrape_;
  std::size_t scrape_ = 0;
  std::vector<NonNumericFamily> non_numeric_;  // in order of first line
  std::unordered_map<std::string, std::size_t> non_numeric_index_;
  std::vector<UnusedGpu> unused_;  // in order of first sample
  std::unordered_map<std::string, std::size_t> unused_index_;
};

// A dcgmi dmon table (formats/dcgmi_dmon.h), and the other counter tables
// (counter_texts.h) handed over as dmon rows: columns to counters, rows to
// GPUs, a new interval wherever a GPU repeats, and notes on what the table
// has. The readings go to the builder.
class DmonReader final : public formats::DmonVisitor {
 public:
  explicit DmonReader(RecordingBuilder& builder) : builder_(builder) {}

  // Before the rows: the interval between them, from the dmon command line in
  // the file or dmon's default.
  void StartDmon(std::optional<double> delay_ms, std::size_t delay_line) {
    interval_s_ = delay_ms.value_or(kDmonDefaultDelayMs) / 1000;
    delay_line_ = delay_ms ? delay_line : 0;
  }

  // Before the rows of another table (counter_texts.h): read through the
  // dmon rows' path, `interval_s` apart, its tensor values percent or not.
  void StartTable(const CounterTextFormat& format, bool tensor_percent) {
    StartDmon(format.row_interval_s * 1000, 0);
    table_format_ = &format;
    if (tensor_percent) builder_.SetUnitScale(TensorMetricName(), ValueScale::kPercent);
  }

  // A dmon header: which counter each column is.
  void OnHeader(const formats::DmonHeader& h) override {
    fields_.clear();
    for (std::string_view column : h.columns) {
      const std::optional<int> field = DcgmFieldOfDmonColumn(column);
      const std::optional<KnownMetric> metric = field ? LookupDcgmField(*field) : std::nullopt;
      fields_.push_back(metric);
      std::string label = field ? fmt::format("{} ({})", column, *field) : ForNote(column);
      auto& list = metric ? used_columns_ : unused_columns_;
      if (std::find(list.begin(), list.end(), label) == list.end()) list.push_back(std::move(label));
    }
  }

  // One dmon row: a GPU's (or a MIG instance's) values at one interval. A new
  // interval starts where an entity repeats.
  void OnRow(const formats::DmonRow& r) override {
    if (builder_.failed()) return;
    Recording& recording = builder_.recording();
    ++recording.samples_read;
    if (r.kind != formats::DmonEntityKind::kGpu && r.kind != formats::DmonEntityKind::kGpuInstance) {
      ++other_rows_;
      if (other_first_.empty()) other_first_ = fmt::format("{} (line {})", ForNote(r.entity), r.line);
      return;
    }
    const bool instance = r.kind == formats::DmonEntityKind::kGpuInstance;
    std::string key = instance ? fmt::format("GPU-I {}", r.id) : fmt::format("gpu{}", r.id);
    if (!in_interval_.insert(key).second) {
      in_interval_.clear();
      in_interval_.insert(key);
      ++interval_;
    }
    GpuIdentity identity;
    identity.key = key;
    if (instance) {
      identity.mig_instance = std::string(r.id);
    } else {
      identity.gpu_index = std::string(r.id);
    }
    const std::size_t gpu = builder_.GpuAt(std::move(identity), {});
    const double time = static_cast<double>(interval_) * interval_s_;
    for (std::size_t i = 0; i < r.values.size() && i < fields_.size(); ++i) {
      if (!fields_[i]) continue;
      if (!r.values[i]) {
        ++recording.blank_values;
        continue;
      }
      const KnownMetric& metric = *fields_[i];
      const std::string name(DcgmExporterNameFor(metric.field) ? DcgmExporterNameFor(metric.field)->name : "");
      if (*r.values[i] >= kDcgmBlankThreshold) {
        ++recording.blank_values;
        continue;
      }
      const std::optional<double> value = builder_.Scaled(name, *r.values[i], r.line, metric);
      if (!value) return;
      builder_.AddReading(gpu, time, metric.field, *value, r.line);
    }
  }

  void OnStrayLine(const formats::DmonStrayLine& s) override {
    if (builder_.options().strict_values) {
      return builder_.Fail(s.line, fmt::format("not a line of a dcgmi dmon table: '{}'", ForNote(s.text)));
    }
    builder_.SkipStrayLine(formats::StrayLine{s.text, s.line});
  }

  // The recording of a table of `lines` lines, after its last row.
  Result<Recording> Finish(std::size_t lines) {
    Recording& recording = builder_.recording();
    recording.timestamps_assumed = true;
    recording.dcgmi_dmon = table_format_ == nullptr;
    recording.assumed_interval_s = interval_s_;
    recording.scrapes = builder_.gpu_count() == 0 ? 0 : interval_ + 1;
    // Another table's reader says itself what it read.
    if (table_format_ == nullptr) AddDmonNotes();
    return builder_.Finish(lines);
  }

 private:
  void AddDmonNotes() {
    const std::string_view source = builder_.source_name();
    const auto join = [](const std::vector<std::string>& list) {
      std::string out;
      for (const auto& item : list) out += (out.empty() ? "" : ", ") + item;
      return out.empty() ? std::string("none") : out;
    };
    const std::string interval =
        delay_line_ > 0
            ? fmt::format("{} s apart, from the -d of the dmon command on line {}", interval_s_, delay_line_)
            : fmt::format(
                  "taken to be {} s apart: dmon's default -d 1000 ms (the file has no dmon command line to say; "
                  "if it ran with -d, the times are off by that factor)",
                  interval_s_);
    const std::size_t gpus = builder_.gpu_count();
    builder_.AddFormatNote(
        fmt::format("{}: a `dcgmi dmon` table, not a dcgm-exporter scrape: {} entities over {} intervals, rows {}; "
                    "columns read: {}; columns ofu does not use: {}",
                    source, gpus, gpus == 0 ? 0 : interval_ + 1, interval, join(used_columns_), join(unused_columns_)));
    const bool tensor = std::any_of(used_columns_.begin(), used_columns_.end(),
                                    [](const std::string& c) { return c.starts_with("TENSO"); });
    const bool clock = std::any_of(used_columns_.begin(), used_columns_.end(),
                                   [](const std::string& c) { return c.starts_with("SMCLK"); });
    if (!tensor || !clock) {
      builder_.AddFormatNote(fmt::format(
          "{}: OFU needs dmon's TENSO and SMCLK columns ({}missing): run `dcgmi dmon -e 1004,100 -d 1000 > dmon.txt` "
          "(add 155 for power), or scrape dcgm-exporter (`curl -s localhost:9400/metrics`) with the counters "
          "file lines below",
          source, !tensor && !clock ? "both " : (!tensor ? "TENSO " : "SMCLK ")));
    }
    if (other_rows_ > 0) {
      builder_.AddFormatNote(
          fmt::format("{}: {} rows of entities other than GPUs and GPU instances skipped, the first {}", source,
                      other_rows_, other_first_));
    }
  }

  RecordingBuilder& builder_;
  const CounterTextFormat* table_format_ = nullptr;  // another table than dmon's, read through its path
  double interval_s_ = kDmonDefaultDelayMs / 1000;
  std::size_t delay_line_ = 0;                      // 0: the default delay
  std::size_t interval_ = 0;                        // of the row being read
  std::unordered_set<std::string> in_interval_;     // the entities of that interval so far
  std::vector<std::optional<KnownMetric>> fields_;  // per column of the current header
  std::vector<std::string> used_columns_;           // "TENSO (1004)"
  std::vector<std::string> unused_columns_;
  std::size_t other_rows_ = 0;
  std::string other_first_;
};

// One GPU's values of a table, handed to the reader as a dmon row of the
// columns `header` names ("TENSO", "SMCLK"; the ones the table has).
void TableRow(DmonReader& reader, const std::string& id, std::span<const std::optional<double>> values,
              std::size_t line) {
  reader.OnRow(formats::DmonRow{formats::DmonEntityKind::kGpu, id, id, values, line});
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// The note a format without tensor activity gets: what it has, what it lacks.
std::string NoTensorNote(std::string_view source, const CounterTextFormat& format,
                         const std::vector<std::string>& has) {
  const std::string_view why =
      format.no_tensor.empty()
          ? std::string_view(
                "no tensor activity column (TENSO, tensor or PIPE_TENSOR_ACTIVE: DCGM field 1004), which "
                "OFU needs: add one from `dcgmi dmon -e 1004,100` or dcgm-exporter")
          : format.no_tensor;
  return fmt::format("{}: this {} has {} but {}", source, format.name, has.empty() ? "no SM clock" : Join(has), why);
}

// nvidia-smi dmon, --query-gpu CSV and tables with named columns (formats/counter_table.h).
Status ReadTable(std::string_view text, std::string_view source, const CounterTextFormat& format, DmonReader& reader,
                 RecordingBuilder& builder) {
  OFU_ASSIGN_OR_RETURN(const formats::CounterTable table, formats::ReadCounterTable(text, source));
  for (const auto& stray : table.stray) builder.SkipStrayLine(formats::StrayLine{stray.text, stray.line});
  const bool tensor = table.Has(formats::TableColumn::kTensor);
  const bool clock = table.Has(formats::TableColumn::kSmClock);
  reader.StartTable(format, table.tensor_percent);
  std::vector<std::string_view> columns;
  if (tensor) columns.push_back("TENSO");
  if (clock) columns.push_back("SMCLK");
  reader.OnHeader(formats::DmonHeader{columns, table.header_line});
  std::vector<std::optional<double>> values;
  for (const formats::CounterTableRow& row : table.rows) {
    values.clear();
    if (tensor) values.push_back(row.tensor);
    if (clock) values.push_back(row.sm_clock_mhz);
    const std::string id = row.gpu.value_or("0");
    TableRow(reader, id, values, row.line);
    builder.NameModel("gpu" + id, row.name, row.line, format.name);
  }
  std::vector<std::string> read, unused;
  const auto column = [&table](formats::TableColumn kind) { return "'" + table.NameOf(kind) + "'"; };
  if (table.Has(formats::TableColumn::kGpuIndex)) read.push_back("GPU from " + column(formats::TableColumn::kGpuIndex));
  if (table.Has(formats::TableColumn::kGpuName)) read.push_back("model from " + column(formats::TableColumn::kGpuName));
  if (clock) read.push_back("SM clock (MHz) from " + column(formats::TableColumn::kSmClock));
  if (tensor) {
    read.push_back(fmt::format("tensor activity ({}) from {}", table.tensor_percent ? "%" : "0..1",
                               column(formats::TableColumn::kTensor)));
  }
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    if (table.kinds[i] == formats::TableColumn::kOther || table.kinds[i] == formats::TableColumn::kGraphicsClock) {
      unused.push_back(table.columns[i]);
    }
  }
  builder.AddFormatNote(fmt::format(
      "{}: read as a {}{}: {} rows from line {}, taken to be {:g} s apart; {}; columns not used: {}", source,
      format.name,
      format.kind == CounterTextKind::kNamedColumnTable ? " (columns recognised by name: docs/formats.md)" : "",
      table.rows.size(), table.header_line, format.row_interval_s, read.empty() ? "no column ofu reads" : Join(read),
      unused.empty() ? "none" : Join(unused)));
  if (!tensor) {
    std::vector<std::string> has;
    if (clock) has.push_back(fmt::format("the SM clock ({})", table.NameOf(formats::TableColumn::kSmClock)));
    if (!clock && table.Has(formats::TableColumn::kGraphicsClock)) {
      has.push_back(fmt::format("the graphics clock ({}), which is not the SM clock (clocks.sm)",
                                table.NameOf(formats::TableColumn::kGraphicsClock)));
    }
    if (table.Has(formats::TableColumn::kGpuName)) has.push_back("GPU names");
    builder.AddFormatNote(NoTensorNote(source, format, has));
  }
  return OkStatus();
}

// nvidia-smi -q and the nvidia-smi table (formats/nvidia_smi.h): one reading per GPU.
void ReadNvidiaSmi(std::string_view text, std::string_view source, const CounterTextFormat& format, DmonReader& reader,
                   RecordingBuilder& builder) {
  const formats::NvidiaSmiText smi = format.kind == CounterTextKind::kNvidiaSmiQuery
                                         ? formats::ReadNvidiaSmiQuery(text)
                                         : formats::ReadNvidiaSmiTable(text);
  const bool clock = std::any_of(smi.gpus.begin(), smi.gpus.end(), [](const auto& g) { return g.sm_clock_mhz; });
  reader.StartTable(format, false);
  std::vector<std::string_view> columns;
  if (clock) columns.push_back("SMCLK");
  reader.OnHeader(formats::DmonHeader{columns, 1});
  std::vector<std::string> has;
  for (std::size_t i = 0; i < smi.gpus.size(); ++i) {
    const formats::NvidiaSmiGpu& gpu = smi.gpus[i];
    const std::string id = gpu.index.empty() ? std::to_string(i) : gpu.index;
    std::vector<std::optional<double>> values;
    if (clock) values.push_back(gpu.sm_clock_mhz);
    TableRow(reader, id, values, gpu.clock_line != 0 ? gpu.clock_line : gpu.line);
    builder.NameModel("gpu" + id, gpu.name.ends_with("...") ? "" : gpu.name, gpu.name_line, format.name);
    if (gpu.sm_clock_mhz)
      has.push_back(fmt::format("the SM clock of GPU {} ({:g} MHz, line {})", id, *gpu.sm_clock_mhz, gpu.clock_line));
  }
  builder.AddFormatNote(fmt::format("{}: read as a {}: {} GPU{}, one reading each", source, format.name,
                                    smi.gpus.size(), smi.gpus.size() == 1 ? "" : "s"));
  if (std::any_of(smi.gpus.begin(), smi.gpus.end(), [](const auto& g) { return !g.name.empty(); })) {
    has.push_back("GPU names");
  }
  builder.AddFormatNote(NoTensorNote(source, format, has));
}

// A pasted Prometheus query API answer (formats/prometheus_api.h): each
// series' samples as the exposition's samples of the same name and labels.
Status ReadApiAnswer(std::string_view text, std::string_view source, ExpositionReader& reader,
                     RecordingBuilder& builder) {
  const formats::PromApiSpan span = formats::FindPrometheusApiJson(text);
  const std::vector<std::string_view> lines = formats::TextLines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t number = i + 1;
    if (number >= span.first_line && number <= span.last_line) continue;
    const std::string_view trimmed = formats::TrimSpace(lines[i]);
    if (!trimmed.empty()) builder.SkipStrayLine(formats::StrayLine{trimmed, number});
  }
  OFU_ASSIGN_OR_RETURN(const formats::PromApiAnswer answer,
                       formats::ReadPrometheusApiAnswer(text.substr(span.begin, span.end - span.begin),
                                                        fmt::format("{}:{}", source, span.first_line)));
  if (answer.status != "success") {
    return Error::MalformedInput("{}:{}: the query failed: {}: {}", source, span.first_line, answer.error_type,
                                 answer.error);
  }
  std::size_t unnamed = 0;
  std::vector<formats::Label> labels;
  for (const formats::PromSeries& series : answer.series) {
    const std::string& name = series.Label("__name__");
    if (name.empty()) {
      ++unnamed;
      continue;
    }
    labels.clear();
    for (const auto& [key, value] : series.labels) {
      if (key != "__name__") labels.push_back(formats::Label{key, value});
    }
    for (const auto& [t, v] : series.samples) reader.OnSample(formats::TextSample{name, labels, v, t, span.first_line});
  }
  builder.AddFormatNote(fmt::format("{}: read as a Prometheus query API answer ({}, lines {} to {}): {} series", source,
                                    answer.result_type, span.first_line, span.last_line, answer.series.size()));
  if (unnamed > 0) {
    builder.AddFormatNote(fmt::format(
        "{}: {} series without __name__ skipped (an aggregation or a function drops it: query the metric itself, "
        "e.g. DCGM_FI_PROF_PIPE_TENSOR_ACTIVE)",
        source, unnamed));
  }
  return OkStatus();
}

// Serves `prefix` and then the rest of `in`: what ReadRecording read to tell
// the format is handed back to the Prometheus reader.
class PrefixedBuf final : public std::streambuf {
 public:
  PrefixedBuf(std::string prefix, std::streambuf* rest) : prefix_(std::move(prefix)), rest_(rest) {
    setg(prefix_.data(), prefix_.data(), prefix_.data() + prefix_.size());
  }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const std::streamsize n = rest_ != nullptr ? rest_->sgetn(chunk_, sizeof chunk_) : 0;
    if (n <= 0) return traits_type::eof();
    setg(chunk_, chunk_, chunk_ + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::string prefix_;
  std::streambuf* rest_;
  char chunk_[1 << 16];
};

// How much of a file is read to tell a dcgmi dmon table from Prometheus text.
constexpr std::size_t kSniffBytes = 1 << 16;

}  // namespace

Result<Recording> ReadRecording(std::istream& in, std::string_view source_name, const RecordingOptions& options) {
  RecordingBuilder builder(source_name, options);
  std::string head(kSniffBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad()) return Error::Io("{}: cannot read", source_name);
  const CounterTextFormat& format = RecogniseCounterText(head);
  if (format.kind != CounterTextKind::kExposition && format.kind != CounterTextKind::kDcgmiDmon) {
    std::string text = std::move(head);
    text.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) return Error::Io("{}: cannot read", source_name);
    if (format.kind == CounterTextKind::kPrometheusApiJson) {
      ExpositionReader reader(builder);
      OFU_RETURN_IF_ERROR(ReadApiAnswer(text, source_name, reader, builder));
      builder.ApplyModelMentions(formats::FindGpuModelMentions(text));
      return reader.Finish(formats::TextLines(text).size());
    }
    DmonReader reader(builder);
    switch (format.kind) {
      case CounterTextKind::kNvidiaSmiQuery:
      case CounterTextKind::kNvidiaSmiTable: ReadNvidiaSmi(text, source_name, format, reader, builder); break;
      default: OFU_RETURN_IF_ERROR(ReadTable(text, source_name, format, reader, builder)); break;
    }
    builder.ApplyModelMentions(formats::FindGpuModelMentions(text));
    return reader.Finish(formats::TextLines(text).size());
  }
  if (format.kind == CounterTextKind::kDcgmiDmon) {
    std::string text = std::move(head);
    text.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) return Error::Io("{}: cannot read", source_name);
    // The interval must be known before the first row: a first pass finds
    // the dmon command line, if any.
    formats::DmonVisitor* none = nullptr;
    struct Ignore final : formats::DmonVisitor {
      void OnHeader(const formats::DmonHeader&) override {}
      void OnRow(const formats::DmonRow&) override {}
    } ignore;
    none = &ignore;
    OFU_ASSIGN_OR_RETURN(const auto first, formats::ReadDcgmiDmon(text, source_name, *none));
    DmonReader reader(builder);
    reader.StartDmon(first.delay_ms, first.delay_line);
    OFU_ASSIGN_OR_RETURN(const auto stats, formats::ReadDcgmiDmon(text, source_name, reader));
    builder.ApplyModelMentions(formats::FindGpuModelMentions(text));
    return reader.Finish(stats.lines);
  }
  in.clear(in.rdstate() & ~std::ios::failbit & ~std::ios::eofbit);
  std::string head_copy = head;  // model names are looked for in the head
  PrefixedBuf buffer(std::move(head_copy), in.rdbuf());
  std::istream prefixed(&buffer);
  // Non-numeric values are decided here, where it is known which families
  // matter, never by the reader.
  formats::ParseOptions parse = options.parse;
  parse.non_numeric_values = options.strict_values ? formats::NonNumericValues::kError
                                                   : formats::NonNumericValues::kReport;
  parse.stray_lines = options.strict_values ? formats::StrayLines::kError : formats::StrayLines::kSkip;
  const std::vector<formats::GpuModelMention> mentions = formats::FindGpuModelMentions(head);
  ExpositionReader reader(builder);
  OFU_ASSIGN_OR_RETURN(auto stats, formats::ReadPrometheusText(prefixed, source_name, reader, parse));
  builder.ApplyModelMentions(mentions);
  return reader.Finish(stats.lines);
}

Result<Recording> ReadRecordingFile(const std::string& path, const RecordingOptions& options) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error::Io("{}: cannot open: {}", path, std::strerror(errno));
  return ReadRecording(file, path, options);
}

}  // namespace ofu::sources
