#include "ofu/render/run_output.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ofu/core/clock_model.h"
#include "ofu/render/json_fields.h"
#include "ofu/render/report_output.h"

namespace ofu::render {
namespace {

using json = nlohmann::ordered_json;
using analysis::FoundPhase;

std::string Percent(const std::optional<double>& value) {
  return value ? fmt::format("{:.1f} %", 100 * *value) : std::string("-");
}

// The MFU the job printed during phase `i`, when it printed one then.
const analysis::PhaseMfu* MfuOfPhase(const analysis::RunGpuFigures& gpu, std::size_t i) {
  return i < gpu.phase_mfu.size() && gpu.phase_mfu[i].mfu ? &gpu.phase_mfu[i] : nullptr;
}

json PhasesJson(const analysis::RunGpuFigures& gpu, double start_s) {
  json out = json::array();
  for (std::size_t i = 0; i < gpu.phases.phases.size(); ++i) {
    const FoundPhase& phase = gpu.phases.phases[i];
    const analysis::PhaseMfu* mfu = MfuOfPhase(gpu, i);
    out.push_back({{"kind", analysis::PhaseKindWord(phase.kind)},
                   {"start_s", phase.start_s - start_s},
                   {"end_s", phase.end_s - start_s},
                   {"seconds", phase.seconds},
                   {"windows", phase.windows},
                   {"ofu", phase.ofu},
                   {"mfu", mfu ? json(*mfu->mfu) : json(nullptr)},
                   {"mfu_steps", i < gpu.phase_mfu.size() ? gpu.phase_mfu[i].steps : 0}});
  }
  return out;
}

json MfuJson(const analysis::RunMfu& m) {
  json out = {{"framework", m.framework},
              {"steps", m.steps},
              {"mfu", OrNull<json>(m.mfu.mfu)},
              {"logged_mfu", OrNull<json>(m.mfu.logged_mfu)},
              {"flops_per_gpu", OrNull<json>(m.mfu.flops_per_gpu)},
              {"ofu", OrNull<json>(m.ofu)},
              {"ofu_basis", m.ofu_basis},
              {"ratio", OrNull<json>(m.ratio)},
              {"verdict", m.verdict ? json(m.verdict->flag) : json(nullptr)},
              {"explanation", m.verdict ? json(m.verdict->explanation) : json(nullptr)},
              {"alternatives", m.verdict ? json(m.verdict->alternatives) : json::array()}};
  std::vector<std::string> notes = m.notes;
  if (!m.mfu.note.empty()) notes.push_back(m.mfu.note);
  out["notes"] = notes;
  return out;
}

}  // namespace

std::string RenderRunText(const analysis::RunReport& run, double start_s) {
  std::string out = fmt::format("\nofu run: '{}' exited {} after {:.1f} s ({} windows)\n", fmt::join(run.command, " "),
                                run.exit_status, run.seconds, run.windows);
  out += fmt::format("GPUs      {} ({})\n",
                     run.gpus.keys.empty() ? "none" : fmt::format("{}", fmt::join(run.gpus.keys, ", ")), run.gpus.why);
  for (const std::string& shared : run.gpus.shared)
    out += fmt::format("          shared with other processes: {}\n", shared);
  out += fmt::format("OFU       {} over the run, {} over its busy part\n", Percent(run.ofu), Percent(run.active_ofu));
  for (const analysis::RunGpuFigures& gpu : run.figures) {
    out += fmt::format("  {:<12} {:<24} OFU {:>7}  busy {:>7}  clock: {}\n", gpu.key, gpu.model, Percent(gpu.ofu),
                       Percent(gpu.active_ofu), gpu.clock_sources == 0 ? "-" : ClockSourcesName(gpu.clock_sources));
    for (std::size_t i = 0; i < gpu.phases.phases.size(); ++i) {
      const FoundPhase& phase = gpu.phases.phases[i];
      const analysis::PhaseMfu* mfu = MfuOfPhase(gpu, i);
      out += fmt::format("    {:<8} {:>7.1f} s to {:>7.1f} s  {:>7.1f} s  OFU {:>7}{}\n",
                         analysis::PhaseKindWord(phase.kind), phase.start_s - start_s, phase.end_s - start_s,
                         phase.seconds, Percent(std::optional<double>(phase.ofu)),
                         mfu ? fmt::format("  MFU {:>7} ({} step{} printed)", Percent(mfu->mfu), mfu->steps,
                                           mfu->steps == 1 ? "" : "s")
                             : "");
    }
  }
  if (run.stall_share) {
    out += fmt::format(
        "Stalls    {:.1f} s, {} of the GPU time with an OFU (stretches near zero between the job's "
        "busy phases)\n",
        run.stall_s, Percent(run.stall_share));
  }
  if (run.mfu) {
    const analysis::RunMfu& m = *run.mfu;
    out += fmt::format("MFU       {} as the job printed it ({}, {} steps), beside OFU {} over its {}\n",
                       Percent(m.mfu.mfu), m.framework, m.steps, Percent(m.ofu), m.ofu_basis);
    if (m.verdict) out += fmt::format("          {}: {}\n", m.verdict->flag, m.verdict->explanation);
    if (!m.mfu.note.empty()) out += fmt::format("          {}\n", m.mfu.note);
    for (const std::string& note : m.notes) out += fmt::format("          {}\n", note);
  } else {
    out += fmt::format("MFU       none read: {}\n", run.mfu_missing);
  }
  for (const std::string& note : run.gpus.notes) out += fmt::format("Note      {}\n", note);
  for (const std::string& note : run.notes) out += fmt::format("Note      {}\n", note);
  out += "Next      ofu correct --trace TRACE.json --input RUN.om: why, kernel by kernel (tiles, precision)\n";
  return out;
}

std::string RenderRunJson(const analysis::Report& report, const analysis::RunReport& run, double start_s) {
  json root = json::parse(RenderJson(report));
  json per_gpu = json::array();
  for (const analysis::RunGpuFigures& gpu : run.figures) {
    per_gpu.push_back({{"key", gpu.key},
                       {"model", gpu.model},
                       {"ofu", OrNull<json>(gpu.ofu)},
                       {"active_ofu", OrNull<json>(gpu.active_ofu)},
                       {"clock_source",
                        gpu.clock_sources == 0 ? json(nullptr) : json(ClockSourcesName(gpu.clock_sources))},
                       {"stall_share", OrNull<json>(gpu.phases.stall_share)},
                       {"phases", PhasesJson(gpu, start_s)}});
  }
  root["run"] = {{"command", run.command},
                 {"exit_status", run.exit_status},
                 {"seconds", run.seconds},
                 {"windows", run.windows},
                 {"gpus",
                  {{"rule", run.gpus.rule},
                   {"why", run.gpus.why},
                   {"keys", run.gpus.keys},
                   {"shared", run.gpus.shared},
                   {"notes", run.gpus.notes}}},
                 {"ofu", OrNull<json>(run.ofu)},
                 {"active_ofu", OrNull<json>(run.active_ofu)},
                 {"stall_share", OrNull<json>(run.stall_share)},
                 {"stall_s", run.stall_s},
                 {"per_gpu", std::move(per_gpu)},
                 {"mfu", run.mfu ? MfuJson(*run.mfu) : json(nullptr)},
                 {"mfu_missing", run.mfu ? json(nullptr) : json(run.mfu_missing)},
                 {"notes", run.notes}};
  return root.dump(2) + "\n";
}

}  // namespace ofu::render
