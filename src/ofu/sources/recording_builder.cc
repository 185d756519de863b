#include "ofu/sources/recording_builder.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

namespace ofu::sources {

std::string ForNote(std::string_view text) {
  constexpr std::size_t kMaxShown = 64;
  std::string out;
  std::size_t i = 0;
  while (i < text.size() && i < kMaxShown) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const std::size_t length = byte >= 0x80 ? formats::Utf8CharLength(text, i) : 0;
    if (byte >= 0x20 && byte < 0x7F) {
      out += text[i++];
    } else if (length > 0) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", byte);
      ++i;
    }
  }
  if (i < text.size()) out += "...";
  return out;
}

RecordingBuilder::RecordingBuilder(std::string_view source_name, const RecordingOptions& options)
    : source_name_(source_name),
      options_(options),
      fields_(options.fields != nullptr ? *options.fields : CounterFieldTable::Builtin()) {
  recording_.source_name = std::string(source_name);
  recording_.added_fields.assign(fields_.added().begin(), fields_.added().end());
}

void RecordingBuilder::Fail(std::size_t line, std::string_view what) {
  if (error_) return;  // the first error is the one reported
  error_ = Error::MalformedInput("{}:{}: {}", source_name_, line, what);
}

void RecordingBuilder::SetUnitScale(std::string_view family, ValueScale scale) {
  unit_scale_[std::string(family)] = scale;
}

std::optional<double> RecordingBuilder::Scaled(std::string_view name, double value, std::size_t line,
                                               const KnownMetric& metric) {
  if (!fields_[metric.field].is_activity) {
    if (!(value >= 0) || std::isinf(value)) {
      Fail(line, fmt::format("{} value {} is not a valid {}", name, value, fields_[metric.field].description));
      return std::nullopt;
    }
    return value;
  }
  ValueScale scale = metric.scale;
  if (auto it = unit_scale_.find(std::string(name)); it != unit_scale_.end()) scale = it->second;
  if (options_.activity_scale) scale = *options_.activity_scale;
  // Counters are noisy at the top end; a little over full scale is real data.
  const double full = scale == ValueScale::kPercent ? 100.0 : 1.0;
  if (!(value >= 0) || value > full * 1.05) {
    Fail(line, fmt::format("{} value {} is outside 0..{} for a {} metric{}", name, value, full,
                           scale == ValueScale::kPercent ? "percent" : "ratio",
                           scale == ValueScale::kRatio && value > 1 && value <= 105
                               ? "; if this file holds percent, pass --activity-scale percent"
                               : ""));
    return std::nullopt;
  }
  return value / full;
}

std::size_t RecordingBuilder::GpuAt(GpuIdentity identity, std::string parent_key) {
  auto [it, inserted] = index_.emplace(identity.key, gpus_.size());
  if (inserted) {
    GpuPoints gpu;
    gpu.identity = std::move(identity);
    gpu.parent_key = std::move(parent_key);
    gpus_.push_back(std::move(gpu));
  }
  return it->second;
}

void RecordingBuilder::AddReading(std::size_t gpu, double time_s, CounterField field, double value, std::size_t line) {
  gpus_[gpu].points.push_back(Point{time_s, field, value, line});
  ++recording_.samples_used;
}

void RecordingBuilder::SkipStrayLine(const formats::StrayLine& line) {
  ++recording_.stray_lines;
  if (stray_notes_.size() < kMaxStrayLineNotes) {
    stray_notes_.push_back(fmt::format("{}:{}: skipped a line that cannot be a sample: '{}'", source_name_, line.line,
                                       ForNote(line.text)));
  } else {
    if (more_stray_first_line_ == 0) more_stray_first_line_ = line.line;
    ++more_stray_lines_;
  }
}

void RecordingBuilder::NameModel(const std::string& key, const std::string& model, std::size_t line,
                                 std::string_view where) {
  auto it = index_.find(key);
  if (it == index_.end() || model.empty() || !gpus_[it->second].identity.model.empty()) return;
  gpus_[it->second].identity.model = model;
  const std::string note = fmt::format("{}: GPU model '{}' from line {} ({})", source_name_, ForNote(model), line,
                                       where);
  if (std::find(model_notes_.begin(), model_notes_.end(), note) == model_notes_.end()) model_notes_.push_back(note);
}

void RecordingBuilder::ApplyModelMentions(const std::vector<formats::GpuModelMention>& mentions) {
  const bool unnamed = std::any_of(gpus_.begin(), gpus_.end(),
                                   [](const GpuPoints& g) { return g.identity.model.empty(); });
  if (!unnamed || mentions.empty()) return;
  std::vector<const formats::GpuModelMention*> distinct;
  const formats::GpuModelMention* cut = nullptr;
  for (const auto& m : mentions) {
    if (m.truncated) {
      if (cut == nullptr) cut = &m;
      continue;
    }
    const auto same = [&m](const formats::GpuModelMention* d) { return d->model == m.model; };
    if (std::none_of(distinct.begin(), distinct.end(), same)) distinct.push_back(&m);
  }
  if (distinct.size() == 1) {
    for (auto& gpu : gpus_) NameModel(gpu.identity.key, distinct[0]->model, distinct[0]->line, distinct[0]->where);
  } else if (distinct.size() > 1) {
    std::string named;
    for (const auto* m : distinct) {
      named += fmt::format("{}'{}' on line {}", named.empty() ? "" : ", ", ForNote(m->model), m->line);
    }
    model_notes_.push_back(fmt::format(
        "{}: the text names {} different GPU models ({}) and its data do not say which GPU is which: no model "
        "taken from the text; pass --gpu-model",
        source_name_, distinct.size(), named));
  } else if (cut != nullptr) {
    model_notes_.push_back(
        fmt::format("{}:{}: GPU model '{}' ({}) is cut short, so it names no model ofu can look up: pass --gpu-model",
                    source_name_, cut->line, ForNote(cut->model), cut->where));
  }
}

Result<Recording> RecordingBuilder::Finish(std::size_t lines) {
  if (error_) return *error_;
  std::vector<std::string>& notes = recording_.notes;
  notes = std::move(format_notes_);
  notes.insert(notes.end(), stray_notes_.begin(), stray_notes_.end());
  if (more_stray_lines_ > 0) {
    notes.push_back(
        fmt::format("{}: {} more line{} that cannot be a sample skipped, the first on line {} (--strict refuses them)",
                    source_name_, more_stray_lines_, more_stray_lines_ == 1 ? "" : "s", more_stray_first_line_));
  }
  notes.insert(notes.end(), value_notes_.begin(), value_notes_.end());
  notes.insert(notes.end(), model_notes_.begin(), model_notes_.end());
  notes.insert(notes.end(), gpu_notes_.begin(), gpu_notes_.end());
  recording_.lines = lines;
  LendParentReadings();
  for (auto& gpu : gpus_) {
    OFU_ASSIGN_OR_RETURN(auto samples, Assemble(gpu.points));
    recording_.gpus.push_back(GpuRecording{std::move(gpu.identity), std::move(samples)});
  }
  return std::move(recording_);
}

// A MIG instance's clock, power and clock reasons are the chip's: where the
// data give them only for the whole GPU, the instance uses those.
void RecordingBuilder::LendParentReadings() {
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

Result<std::vector<CounterSample>> RecordingBuilder::Assemble(std::vector<Point>& points) const {
  std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    return a.time_s != b.time_s ? a.time_s < b.time_s : a.field < b.field;
  });
  std::vector<CounterSample> samples;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    if (i > 0 && points[i - 1].time_s == p.time_s && points[i - 1].field == p.field) {
      return Error::MalformedInput("{}:{}: a second {} value for the same GPU at the same instant (first on line {})",
                                   source_name_, std::max(p.line, points[i - 1].line), fields_[p.field].description,
                                   std::min(p.line, points[i - 1].line));
    }
    if (samples.empty() || samples.back().time_s != p.time_s) {
      samples.emplace_back();
      samples.back().time_s = p.time_s;
    }
    fields_[p.field].Set(samples.back(), p.value);
  }
  return samples;
}

}  // namespace ofu::sources
