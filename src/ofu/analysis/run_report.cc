#include "ofu/analysis/run_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ofu/core/gpu_share.h"
#include "ofu/formats/csv.h"

namespace ofu::analysis {
namespace {

std::string Trim(std::string_view text) { return std::string(formats::TrimSpace(text)); }

bool AllDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The keys CUDA_VISIBLE_DEVICES names, in its order; notes for entries
// that name nothing the source saw.
std::vector<std::string> VisibleKeys(const std::string& value, const std::vector<RunGpu>& gpus,
                                     std::vector<std::string>& notes) {
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t comma = value.find(',', start);
    const std::string entry = Trim(value.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    start = comma == std::string::npos ? value.size() + 1 : comma + 1;
    std::vector<const RunGpu*> matches;
    if (AllDigits(entry)) {
      for (const RunGpu& gpu : gpus) {
        if (gpu.identity.gpu_index == entry && gpu.identity.mig_instance.empty()) matches.push_back(&gpu);
      }
    } else if (entry.starts_with("GPU-")) {
      for (const RunGpu& gpu : gpus) {
        if (gpu.identity.uuid.starts_with(entry) && gpu.identity.mig_instance.empty()) matches.push_back(&gpu);
      }
    } else if (entry.starts_with("MIG-")) {
      notes.push_back(fmt::format("CUDA_VISIBLE_DEVICES entry {} is a MIG UUID, which the source does not report",
                                  entry));
      continue;
    } else {
      // CUDA stops at the first entry it cannot read and ignores the rest.
      notes.push_back(
          fmt::format("CUDA_VISIBLE_DEVICES entry '{}' is not an index or a UUID: CUDA ignores it and "
                      "every entry after it",
                      entry));
      break;
    }
    if (matches.size() == 1) {
      if (std::find(keys.begin(), keys.end(), matches[0]->identity.key) == keys.end()) {
        keys.push_back(matches[0]->identity.key);
      }
    } else {
      notes.push_back(fmt::format("CUDA_VISIBLE_DEVICES entry {} matches {} GPU{} the source saw", entry,
                                  matches.size(), matches.size() == 1 ? "" : "s"));
    }
  }
  return keys;
}

}  // namespace

RunGpuChoice ChooseRunGpus(const std::optional<std::string>& cuda_visible_devices, const std::vector<RunGpu>& gpus,
                           const std::set<int>& job_pids) {
  RunGpuChoice choice;
  if (cuda_visible_devices) {
    if (Trim(*cuda_visible_devices).empty()) {
      choice.rule = "CUDA_VISIBLE_DEVICES";
      choice.why = "CUDA_VISIBLE_DEVICES is set and empty: the job saw no GPU";
      return choice;
    }
    choice.keys = VisibleKeys(*cuda_visible_devices, gpus, choice.notes);
    if (!choice.keys.empty()) {
      choice.rule = "CUDA_VISIBLE_DEVICES";
      choice.why = fmt::format("CUDA_VISIBLE_DEVICES={}", *cuda_visible_devices);
    }
  }
  if (choice.keys.empty()) {
    std::vector<int> seen;
    for (const RunGpu& gpu : gpus) {
      bool used = false;
      for (const int pid : gpu.pids) {
        if (!job_pids.contains(pid)) continue;
        used = true;
        if (std::find(seen.begin(), seen.end(), pid) == seen.end()) seen.push_back(pid);
      }
      if (used) choice.keys.push_back(gpu.identity.key);
    }
    if (!choice.keys.empty()) {
      std::sort(seen.begin(), seen.end());
      choice.rule = "processes";
      choice.why = fmt::format("NVML listed the job's processes (pid {}) on them", fmt::join(seen, ", "));
    }
  }
  if (choice.keys.empty()) {
    for (const RunGpu& gpu : gpus) choice.keys.push_back(gpu.identity.key);
    choice.rule = "all";
    choice.why = "neither CUDA_VISIBLE_DEVICES nor NVML's process lists name the job's GPUs: every GPU";
  }
  for (const RunGpu& gpu : gpus) {
    if (std::find(choice.keys.begin(), choice.keys.end(), gpu.identity.key) == choice.keys.end()) continue;
    std::vector<int> others;
    for (const int pid : gpu.pids) {
      if (!job_pids.contains(pid)) others.push_back(pid);
    }
    if (!others.empty()) choice.shared.push_back(fmt::format("{} (pid {})", gpu.identity.key, fmt::join(others, ", ")));
  }
  return choice;
}

std::optional<PhaseFinding> FindPhasesOfGpu(const GpuReport& gpu, const sources::Recording& recording) {
  const auto recorded = std::find_if(recording.gpus.begin(), recording.gpus.end(), [&](const sources::GpuRecording& g) {
    return g.identity.key == gpu.identity.key;
  });
  if (recorded == recording.gpus.end() || gpu.spec == nullptr || gpu.windowed.interval_s <= 0) return std::nullopt;
  const PhaseSeries series = PhaseSeriesOf(recorded->samples, gpu.windowed.interval_s,
                                           OfuScaleOf(*gpu.spec, gpu.identity), DefaultPhaseCounters());
  return FindPhases(series.windows, series.signals);
}

namespace {

// The peak of the log's precision on `spec`, FLOP/s; absent without one.
std::optional<double> OwnPeakOf(const GpuSpec* spec, const formats::TrainingLog& log) {
  if (spec == nullptr) return std::nullopt;
  const auto tflops = spec->PeakTflops(PrecisionName(log.reference_precision));
  return tflops ? std::optional<double>(*tflops * 1e12) : std::nullopt;
}

std::string GpuName(const GpuSpec* spec) { return spec != nullptr ? spec->id : std::string("the job's GPU"); }

// What the job printed during each phase, over `spec`'s own peak.
std::vector<PhaseMfu> MfuOfPhases(const PhaseFinding& phases, const formats::TrainingLog& log, const GpuSpec* spec) {
  std::vector<PhaseMfu> out;
  for (const FoundPhase& phase : phases.phases) {
    PhaseMfu mfu;
    const auto part = formats::LogOfSteps(log, [&](const formats::TrainingLogStep& step) {
      return step.printed_s && *step.printed_s > phase.start_s && *step.printed_s <= phase.end_s;
    });
    if (part) {
      mfu.steps = static_cast<int>(part->steps.size());
      mfu.mfu = MfuOverOwnPeak(formats::ReportedMfuOf(*part, ""), OwnPeakOf(spec, *part), GpuName(spec)).mfu;
    }
    out.push_back(mfu);
  }
  return out;
}

}  // namespace

RunReport BuildRunReport(const Report& report, const sources::Recording& recording, const RunGpuChoice& choice,
                         const std::optional<formats::TrainingLog>& log, const std::optional<Error>& log_error) {
  RunReport run;
  run.gpus = choice;
  run.ofu = report.overall.ofu;
  run.active_ofu = report.overall.active_ofu;
  double seconds = 0, steady_s = 0, steady_ofu_s = 0;
  const GpuSpec* spec = nullptr;
  for (const GpuReport& gpu : report.gpus) {
    RunGpuFigures figures;
    figures.key = gpu.identity.key;
    figures.model = gpu.model;
    figures.ofu = gpu.summary.ofu;
    figures.active_ofu = gpu.summary.active_ofu;
    figures.clock_sources = gpu.summary.clock_sources;
    if (auto phases = FindPhasesOfGpu(gpu, recording)) {
      figures.phases = std::move(*phases);
      seconds += figures.phases.seconds;
      run.stall_s += figures.phases.low_s;
      for (const FoundPhase& phase : figures.phases.phases) {
        if (phase.kind != PhaseKind::kSteady) continue;
        steady_s += phase.seconds;
        steady_ofu_s += phase.ofu * phase.seconds;
      }
      if (log) figures.phase_mfu = MfuOfPhases(figures.phases, *log, gpu.spec);
    }
    if (spec == nullptr) spec = gpu.spec;
    run.figures.push_back(std::move(figures));
  }
  if (seconds > 0) run.stall_share = run.stall_s / seconds;

  if (!log) {
    run.mfu_missing = log_error ? log_error->message : "the job printed no MFU";
    return run;
  }
  RunMfu mfu;
  mfu.framework = log->format;
  mfu.steps = static_cast<int>(log->steps.size());
  mfu.notes = log->checks;
  mfu.notes.insert(mfu.notes.end(), log->notes.begin(), log->notes.end());
  mfu.mfu = MfuOverOwnPeak(formats::ReportedMfuOf(*log, ""), OwnPeakOf(spec, *log), GpuName(spec),
                           spec != nullptr ? "" : "give the GPU model with --gpu-model");
  if (steady_s > 0) {
    mfu.ofu = steady_ofu_s / steady_s;
    mfu.ofu_basis = "steady phases";
  } else {
    mfu.ofu = run.active_ofu;
    mfu.ofu_basis = "busy part";
  }
  if (mfu.mfu.mfu && mfu.ofu && *mfu.ofu > 0) {
    mfu.ratio = *mfu.mfu.mfu / *mfu.ofu;
    mfu.verdict = ClassifyRatio(*mfu.ratio, std::nullopt, ReconcileOptions{});
  }
  run.mfu = std::move(mfu);
  return run;
}

}  // namespace ofu::analysis
