#include "ofu/analysis/run_page.h"

#include <algorithm>

#include "ofu/core/gpu_key.h"

namespace ofu::analysis {
namespace {

PagePhase PageOfFound(const std::string& gpu, const FoundPhase& phase, const PhaseMfu* mfu) {
  PagePhase page;
  page.gpu = gpu;
  page.name = std::string(PhaseKindWord(phase.kind));
  page.kind = page.name;
  page.start_s = phase.start_s;
  page.end_s = phase.end_s;
  page.seconds = phase.seconds;
  page.ofu = phase.ofu;
  if (mfu != nullptr) {
    page.mfu = mfu->mfu;
    page.mfu_steps = mfu->steps;
  }
  return page;
}

// The found phases of one GPU, with the MFU printed in each where known.
void AddFound(const std::string& gpu, const PhaseFinding& finding, const std::vector<PhaseMfu>& mfu,
              std::vector<PagePhase>& out) {
  for (std::size_t i = 0; i < finding.phases.size(); ++i) {
    out.push_back(PageOfFound(gpu, finding.phases[i], i < mfu.size() ? &mfu[i] : nullptr));
  }
}

}  // namespace

RunPage RunPageOfRecording(const Report& report, const sources::Recording& recording) {
  RunPage page;
  if (!report.phases.empty()) {
    page.phases_basis = "recorded";
    for (const PhaseRow& row : report.phases) {
      PagePhase phase;
      phase.gpu = GpuKey(row.gpu);
      phase.name = row.phase;
      phase.kind = row.kind;
      phase.start_s = row.start_s;
      phase.end_s = row.end_s;
      phase.seconds = row.seconds;
      phase.ofu = row.ofu;
      phase.mfu = row.mfu;
      page.phases.push_back(std::move(phase));
    }
    // By GPU in the report's order, then by time, as the page lists them.
    const auto rank = [&](const PagePhase& phase) {
      return std::find_if(report.gpus.begin(), report.gpus.end(),
                          [&](const GpuReport& gpu) { return GpuKey(gpu.identity) == phase.gpu; }) -
             report.gpus.begin();
    };
    std::stable_sort(page.phases.begin(), page.phases.end(), [&](const PagePhase& a, const PagePhase& b) {
      return rank(a) != rank(b) ? rank(a) < rank(b) : a.start_s < b.start_s;
    });
    return page;
  }
  page.phases_basis = "found";
  for (const GpuReport& gpu : report.gpus) {
    if (const auto finding = FindPhasesOfGpu(gpu, recording)) {
      AddFound(GpuKey(gpu.identity), *finding, {}, page.phases);
    }
  }
  return page;
}

RunPage RunPageOfRun(const RunReport& run, const Report& report) {
  RunPage page;
  page.phases_basis = "found";
  for (const RunGpuFigures& figures : run.figures) {
    const auto gpu = std::find_if(report.gpus.begin(), report.gpus.end(),
                                  [&](const GpuReport& g) { return g.identity.key == figures.key; });
    AddFound(gpu == report.gpus.end() ? figures.key : GpuKey(gpu->identity), figures.phases, figures.phase_mfu,
             page.phases);
  }
  PageRun summary;
  summary.command = run.command;
  summary.exit_status = run.exit_status;
  summary.seconds = run.seconds;
  summary.gpu_rule = run.gpus.rule;
  summary.gpu_why = run.gpus.why;
  summary.shared = run.gpus.shared;
  summary.stall_share = run.stall_share;
  summary.stall_s = run.stall_s;
  summary.mfu_missing = run.mfu_missing;
  if (run.mfu) {
    summary.mfu = run.mfu->mfu.mfu;
    summary.framework = run.mfu->framework;
    summary.steps = run.mfu->steps;
    summary.mfu_ofu = run.mfu->ofu;
    summary.ofu_basis = run.mfu->ofu_basis;
    if (run.mfu->verdict) {
      summary.verdict = run.mfu->verdict->flag;
      summary.explanation = run.mfu->verdict->explanation;
    }
  }
  page.run = std::move(summary);
  return page;
}

double OwnResolutionS(const Report& report) {
  double shortest = 0;
  for (const GpuReport& gpu : report.gpus) {
    const double interval = gpu.windowed.interval_s;
    if (interval > 0 && (shortest == 0 || interval < shortest)) shortest = interval;
  }
  return shortest > 0 ? std::max(shortest, kMinWindowS) : report.window_s;
}

}  // namespace ofu::analysis
