#include "ofu/sources/recording_writer.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include "ofu/formats/exposition.h"
#include "ofu/sources/dcgm_exporter_names.h"

namespace ofu::sources {
namespace {

// The reader rejects activities above this (counters overshoot a little).
constexpr double kMaxActivity = 1.05;

void AppendLabel(std::string& out, std::string_view name, std::string_view value) {
  if (value.empty()) return;
  out += out.size() > 1 ? "," : "";
  out += name;
  out += "=\"";
  formats::AppendEscapedLabelValue(out, value);
  out += '"';
}

// The value as it goes in the file, or nullopt for one the reader would not
// take back.
std::optional<double> Writable(CounterField field, double value, ValueScale scale) {
  if (!std::isfinite(value) || value < 0) return std::nullopt;
  if (!InfoFor(field).is_activity) return value;
  if (value > kMaxActivity) return std::nullopt;
  return scale == ValueScale::kPercent ? value * 100 : value;
}

}  // namespace

std::uint32_t RecordingWriter::SeriesFor(const GpuReading& gpu, std::size_t position) {
  const GpuIdentity& id = gpu.identity;
  std::string labels = "{";
  // The reader needs a UUID or a gpu index to tell GPUs apart; a source that
  // gives neither still gets distinct series from the GPU's position.
  AppendLabel(labels, "gpu", id.gpu_index.empty() ? fmt::format("{}", position) : id.gpu_index);
  AppendLabel(labels, "UUID", id.uuid);
  AppendLabel(labels, "pci_bus_id", id.pci_bus_id);
  AppendLabel(labels, "device", id.gpu_index.empty() ? "" : "nvidia" + id.gpu_index);
  AppendLabel(labels, "modelName", id.model);
  AppendLabel(labels, "Hostname", id.hostname);
  AppendLabel(labels, "GPU_I_PROFILE", id.mig_profile);
  AppendLabel(labels, "GPU_I_ID", id.mig_instance);
  labels += '}';
  auto [it, inserted] = series_index_.emplace(labels, static_cast<std::uint32_t>(series_labels_.size()));
  if (inserted) series_labels_.push_back(std::move(labels));
  return it->second;
}

void RecordingWriter::Add(const Snapshot& snapshot) {
  if (families_.empty()) families_.resize(AllCounterFields().size());
  for (std::size_t g = 0; g < snapshot.gpus.size(); ++g) {
    const GpuReading& gpu = snapshot.gpus[g];
    const std::uint32_t series = SeriesFor(gpu, g);
    for (const CounterFieldInfo& info : AllCounterFields()) {
      const std::optional<double> value = GetField(gpu.sample, info.field);
      if (!value) continue;
      const std::optional<ExporterName> name = DcgmExporterNameFor(info.field);
      if (!name) continue;
      const std::optional<double> written = Writable(info.field, *value, name->scale);
      if (!written) {
        ++skipped_values_;
        continue;
      }
      if (!first_time_s_) first_time_s_ = gpu.sample.time_s;
      families_[static_cast<std::size_t>(info.field)].push_back(Point{series, gpu.sample.time_s, *written});
      ++samples_;
    }
  }
  if (!first_time_s_ && !snapshot.gpus.empty()) first_time_s_ = snapshot.time_s;
}

void RecordingWriter::Write(const RecordingInfo& info, std::ostream& out) const {
  std::string description;
  formats::AppendEscapedLabelValue(description, info.description);
  fmt::print(out,
             "# TYPE ofu_recording info\n"
             "# HELP ofu_recording What this recording is and how it was made.\n"
             "ofu_recording_info{{synthetic=\"{}\",description=\"{}\"}} 1 {}\n",
             info.synthetic ? "true" : "false", description, info.time_s.value_or(first_time_s_.value_or(0)));
  std::string line;
  for (std::size_t f = 0; f < families_.size(); ++f) {
    const std::vector<Point>& points = families_[f];
    if (points.empty()) continue;
    const CounterFieldInfo& field = AllCounterFields()[f];
    const std::string_view name = DcgmExporterNameFor(field.field)->name;
    fmt::print(out, "# TYPE {} gauge\n# HELP {} {} (DCGM field {}), written by ofu record.\n", name, name,
               field.description, field.dcgm_field_id);
    for (const Point& p : points) {
      line.clear();
      // {} is fmt's shortest representation that reads back to the same double.
      fmt::format_to(std::back_inserter(line), "{}{} {} {}\n", name, series_labels_[p.series], p.value, p.time_s);
      out << line;
    }
  }
  out << "# EOF\n";
}

Status RecordingWriter::WriteFile(const RecordingInfo& info, const std::string& path) const {
  const std::string temporary = fmt::format("{}.tmp-{}", path, ::getpid());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) return Error::Io("{}: cannot create: {}", temporary, std::strerror(errno));
    Write(info, file);
    file.flush();
    if (!file) {
      std::remove(temporary.c_str());
      return Error::Io("{}: write failed: {}", temporary, std::strerror(errno));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    std::remove(temporary.c_str());
    return Error::Io("{}: cannot rename {} to it: {}", path, temporary, std::strerror(saved));
  }
  return OkStatus();
}

}  // namespace ofu::sources
