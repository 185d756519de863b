// ofu-fleet-sim: a SYNTHETIC GPU fleet with planted problems, for testing and
// demonstrating `ofu reconcile` and `ofu regress` (src/ofu/simulation/fleet_sim.h).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "ofu/cli/exit_codes.h"
#include "ofu/cli/parse_command_line.h"
#include "ofu/formats/text_file.h"
#include "ofu/render/fleet_sim_output.h"
#include "ofu/simulation/fleet_sim.h"

namespace {

constexpr const char* kHelp = R"(ofu-fleet-sim -- write a SYNTHETIC fleet with planted problems.

N jobs run on M H100 GPUs (groups of --gpus-per-job, back to back). Planted,
chosen by --seed: four FLOPs-accounting errors in the MFU log (causal
attention counted in full, MoE by total parameters, wrong-precision peak,
recomputation), a 2.5x OFU regression inside one job, an HMMA -> IMMA
precision switch inside another, and a 2.5x regression across the later runs
of one job name. The same seed gives the same files.

Written to --out DIR:
  history.sqlite     the agent's history store (ofu report/reconcile/regress --store)
  metrics.om         OpenMetrics of the agent's counters, ofu_gpu_info and
                     ofu_gpu_job_info, with timestamps, for
                     promtool tsdb create-blocks-from openmetrics metrics.om TSDB_DIR
                     (with --openmetrics-slice S: metrics-<start>.om, one per slice)
  mfu.csv            the MFU log (ofu reconcile --mfu)
  corrections/       <job_id>.json as `ofu correct --format json` writes them
  ground_truth.json  what was planted
Everything is labelled SYNTHETIC.

Example:
  ofu-fleet-sim --out /tmp/fleet --seed 7
  ofu reconcile --store /tmp/fleet/history.sqlite --mfu /tmp/fleet/mfu.csv --corrections /tmp/fleet/corrections
  ofu regress --store /tmp/fleet/history.sqlite

Exit status, as for every ofu program (docs/cli.md): 0 written, 1 bad
options, 2 a file could not be written.)";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(kHelp, "ofu-fleet-sim");
  ofu::simulation::FleetSimOptions options;
  std::string out;
  app.add_option("--out,-o", out, "Directory to write into (created if missing)")->required();
  app.add_option("--seed", options.seed, "Random seed")->capture_default_str();
  app.add_option("--gpus", options.gpus, "GPUs in the fleet (a multiple of --gpus-per-job)")->capture_default_str();
  app.add_option("--gpus-per-job", options.gpus_per_job, "GPUs per job")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--jobs", options.jobs, "Jobs")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--windows-per-job", options.windows_per_job, "Windows each job runs")->capture_default_str();
  app.add_option("--window", options.window_s, "Window length, whole seconds")->capture_default_str();
  app.add_option("--start", options.start_s, "Start time, Unix seconds")->capture_default_str();
  app.add_option("--ofu-noise", options.ofu_noise, "Relative OFU noise per window")->capture_default_str();
  app.add_option("--mfu-noise", options.mfu_noise, "Relative noise of reported MFU per job")->capture_default_str();
  app.add_option("--openmetrics-slice", options.openmetrics_slice_s,
                 "0: one metrics.om. Otherwise seconds: one metrics-<start>.om per slice of that length, aligned to "
                 "its multiples, written as the simulation passes it. 7200 matches promtool's 2 h blocks: promtool "
                 "re-reads its whole input once per block, so a week in one file is read 84 times")
      ->capture_default_str();
  if (auto exit_status = ofu::cli::ParseCommandLine(app, argc, argv)) return *exit_status;
  auto truth = ofu::simulation::SimulateFleet(options, out);
  if (!truth.ok()) {
    fmt::print(stderr, "ofu-fleet-sim: {}\n", truth.error().message);
    return ofu::cli::ExitCodeFor(truth.error().code);
  }
  const std::string ground_truth = out + "/ground_truth.json";
  if (auto written = ofu::formats::WriteFileAtomically(ground_truth, ofu::render::GroundTruthJson(*truth));
      !written.ok()) {
    fmt::print(stderr, "ofu-fleet-sim: {}\n", written.error().message);
    return ofu::cli::ExitCodeFor(written.error().code);
  }
  fmt::print("SYNTHETIC fleet: {} jobs on {} GPUs, {:.0f} s to {:.0f} s, written to {}\n", truth->jobs.size(),
             options.gpus, options.start_s, truth->end_s, out);
  for (const auto& job : truth->jobs) {
    if (job.plant != "none") fmt::print("  planted {} in {} (x{})\n", job.plant, job.job_id, job.planted_ratio);
  }
  for (const auto& c : truth->regressions) fmt::print("  planted OFU regression x{:.2f} in {}\n", c.ratio, c.job_id);
  for (const auto& c : truth->precision_shifts) fmt::print("  planted precision switch {} in {}\n", c.what, c.job_id);
  for (const auto& r : truth->run_regressions) {
    fmt::print("  planted regression x{:.2f} across runs of {} from {}\n", r.ratio, r.job_name, r.first_job_id);
  }
  return ofu::cli::kExitOk;
}
