#include "ofu/analysis/report.h"

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ofu/core/gpu_share.h"
#include "ofu/sources/dcgm_exporter_names.h"

namespace ofu::analysis {
namespace {

// Seconds of data a window holds: its tensor coverage, else (a clock alone)
// one nominal interval per reading, at most its length. Without a known
// interval (a store's windows, which the agent sampled throughout) its length.
double DataSeconds(const OfuWindow& w, double interval_s) {
  if (w.tensor_active) return w.covered_s;
  const double length = w.end_s - w.start_s;
  if (!(interval_s > 0)) return length;
  return std::min(length, w.clock_readings * interval_s);
}

// Which of the counters OFU needs some device lacks altogether.
struct MissingCounters {
  bool tensor = false;
  bool clock = false;
};

void ExplainAbsences(GpuReport& gpu, MissingCounters& missing) {
  const Summary& s = gpu.summary;
  if (s.tensor_seconds == 0) {
    gpu.problems.push_back("no tensor activity samples (DCGM field 1004)");
    missing.tensor = true;
  }
  if (!s.sm_clock_mhz) {
    gpu.problems.push_back("no SM clock readings (DCGM field 100)");
    missing.clock = true;
  }
  if (s.windows_without_clock > 0 && s.sm_clock_mhz) {
    gpu.problems.push_back(fmt::format("{} window(s) with tensor activity but no clock reading: excluded",
                                       s.windows_without_clock));
  }
  if (!gpu.windowed.gaps.empty()) {
    double seconds = 0;
    for (const auto& gap : gpu.windowed.gaps) seconds += gap.seconds();
    gpu.problems.push_back(fmt::format("{} gap(s) in the data, {:.0f} s in all: excluded, not filled",
                                       gpu.windowed.gaps.size(), seconds));
  }
}

}  // namespace

void OverallBuilder::Add(const GpuReport& gpu, const std::vector<OfuWindow>& windows) {
  for (const OfuWindow& window : windows) AddWindow(gpu, window);
  EndGpu(gpu);
}

void OverallBuilder::AddWindow(const GpuReport& gpu, const OfuWindow& window) {
  const bool counted = gpu.share.has_value();
  if (counted) summarizer_.Add(window, *gpu.share);
  if (counted && window.ofu) {
    any_ofu_ = true;
    coverage_.gpu_seconds += window.covered_s * *gpu.share;
  } else {
    left_out_ += DataSeconds(window, gpu.windowed.interval_s);
  }
}

void OverallBuilder::AddTotals(const GpuReport& gpu, const WindowTotals& totals) {
  // AddWindow of each window: one with an OFU counts when the GPU does; the
  // rest is left out (DataSeconds).
  if (!gpu.share) {
    left_out_ += totals.seconds + totals.seconds_without_ofu;
    return;
  }
  summarizer_.Add(totals, *gpu.share);
  if (!totals.ofu_bins.empty()) {
    any_ofu_ = true;
    coverage_.gpu_seconds += totals.seconds * *gpu.share;
  }
  left_out_ += totals.seconds_without_ofu;
}

void OverallBuilder::EndGpu(const GpuReport& gpu) {
  ++coverage_.gpus;
  coverage_.seconds_left_out += left_out_;
  if (any_ofu_) {
    ++coverage_.gpus_with_ofu;
  } else if (left_out_ > 0) {
    coverage_.left_out.push_back(gpu.identity.key);
  }
  any_ofu_ = false;
  left_out_ = 0;
}

std::string MissingCountersAdvice(bool tensor_missing, bool clock_missing) {
  std::vector<CounterField> missing;
  if (tensor_missing) missing.push_back(CounterField::kTensorActive);
  if (clock_missing) missing.push_back(CounterField::kSmClockMhz);
  if (missing.empty()) return "";
  std::vector<std::string_view> names, lines;
  for (CounterField field : missing) {
    names.push_back(sources::DcgmExporterNameFor(field)->name);
    lines.push_back(*sources::DcgmExporterCountersLine(field));
  }
  const bool one = missing.size() == 1;
  return fmt::format(
      "OFU needs DCGM_FI_PROF_PIPE_TENSOR_ACTIVE and DCGM_FI_DEV_SM_CLOCK per GPU; missing: {}. dcgm-exporter "
      "exports {} with {} line{} in its counters file (-f FILE or DCGM_EXPORTER_COLLECTORS{}): {}",
      fmt::join(names, ", "), one ? "it" : "them", one ? "this" : "these", one ? "" : "s",
      tensor_missing ? "; the tensor field is a profiling field, on datacenter GPUs from Volta on" : "",
      fmt::join(lines, "; "));
}

Status ResolveSpec(GpuReport& gpu, const GpuSpec* given, const GpuSpecDatabase& specs, bool strict) {
  if (given != nullptr) {
    gpu.model = given->id;
    gpu.spec = given;
  } else if (gpu.model.empty()) {
    gpu.problems.push_back("the data name no GPU model (no modelName label): pass --gpu-model to get OFU");
    return OkStatus();
  } else {
    auto spec = specs.Lookup(gpu.model);
    if (!spec.ok()) {
      if (strict) return Error{spec.error().code, fmt::format("GPU {}: {}", gpu.identity.key, spec.error().message)};
      gpu.problems.push_back(fmt::format("no OFU: {}", spec.error().message));
      return OkStatus();
    }
    gpu.spec = *spec;
  }
  gpu.share = GpuShare(*gpu.spec, gpu.identity);
  if (!gpu.share) gpu.problems.push_back(WhyNoGpuShare(*gpu.spec, gpu.identity));
  return OkStatus();
}

Result<Report> BuildReport(const sources::Recording& recording, const GpuSpecDatabase& specs,
                           const ReportOptions& options) {
  if (!(options.windows.window_s >= kMinWindowS)) {
    return Error::InvalidArgument("the window length must be at least {} s", kMinWindowS);
  }
  Report report;
  report.source_name = recording.source_name;
  report.synthetic = recording.synthetic;
  report.description = recording.description;
  report.timestamps_assumed = recording.timestamps_assumed;
  report.assumed_interval_s = recording.assumed_interval_s;
  report.scrapes = recording.scrapes;
  report.dcgmi_dmon = recording.dcgmi_dmon;
  report.window_s = options.windows.window_s;
  report.notes = recording.notes;  // lines the reader skipped or blanked, per family

  // With MIG on, dcgm-exporter also writes the GPU itself (clocks, power)
  // beside its instances: the instances carry its OFU, so the GPU row is
  // neither a device of the fleet figures nor one left out of them.
  std::set<std::string> mig_parents;
  for (const auto& recorded : recording.gpus) {
    if (IsMigInstance(recorded.identity) && !recorded.identity.uuid.empty()) mig_parents.insert(recorded.identity.uuid);
  }

  // The counters added to the table the recording was read with: averaged
  // like the built-in ones, and each a key of every GPU's object.
  WindowOptions window_options = options.windows;
  window_options.added_fields = recording.added_fields;
  for (const CounterFieldInfo& row : recording.added_fields) report.added_counters.emplace_back(row.name);

  OverallBuilder overall;
  MissingCounters missing;
  std::vector<PhaseGpu> phase_gpus;
  for (const auto& recorded : recording.gpus) {
    GpuReport gpu;
    gpu.identity = recorded.identity;
    gpu.model = recorded.identity.model;
    OFU_RETURN_IF_ERROR(ResolveSpec(gpu, options.gpu_model, specs, options.strict));

    // Without a SKU there is no OFU, but activity and clocks still tell a story.
    std::optional<OfuScale> scale;
    if (gpu.spec != nullptr) scale = OfuScaleOf(*gpu.spec, gpu.identity);
    if (scale && options.reported_clock) scale->clock_model.reset();
    gpu.windowed = BuildWindows(recorded.samples, scale, window_options);
    Summarizer summarizer;
    for (const auto& window : gpu.windowed.windows) summarizer.Add(window);
    gpu.summary = summarizer.Finish();
    if (!IsMigInstance(gpu.identity) && mig_parents.count(gpu.identity.uuid) > 0) {
      gpu.problems.push_back("MIG is on: the GPU's OFU is its instances' (the gi rows), weighted by their SMs");
    } else {
      overall.Add(gpu, gpu.windowed.windows);
      ExplainAbsences(gpu, missing);
      phase_gpus.push_back(PhaseGpu{gpu.identity, recorded.samples, scale, gpu.windowed.interval_s});
    }
    report.gpus.push_back(std::move(gpu));
  }
  // Once for the file, not per GPU: the counters file is the exporter's.
  if (missing.tensor || missing.clock) report.notes.push_back(MissingCountersAdvice(missing.tensor, missing.clock));
  report.overall = overall.FinishSummary();
  report.coverage = overall.coverage();
  report.phases = BuildPhaseTable(recording.phases, phase_gpus, options.windows.busy_threshold);
  return report;
}

Status CheckReportHasOfu(const Report& report, const std::string& input, std::size_t samples_read) {
  if (report.gpus.empty()) {
    return Error::NoData(
        "{}: no GPU counters found (read {} samples, none from "
        "dcgm-exporter metrics ofu knows). {}",
        input, samples_read, MissingCountersAdvice(true, true));
  }
  if (!report.overall.ofu) {
    return Error::NoData(
        "{}: no GPU has both tensor activity and SM clock with a known "
        "model, so no OFU could be computed (see the notes above)",
        input);
  }
  return OkStatus();
}

}  // namespace ofu::analysis
