#include "ofu/render/fleet_sim_output.h"

#include <vector>

#include <nlohmann/json.hpp>

namespace ofu::render {
namespace {

using nlohmann::json;
using simulation::FleetSimOptions;
using simulation::FleetTruth;
using simulation::kSynthetic;
using simulation::PlantedChange;
using simulation::PlantedJob;
using simulation::PlantedRunChange;

json Changes(const std::vector<PlantedChange>& list) {
  json out = json::array();
  for (const PlantedChange& c : list) {
    out.push_back({{"job_id", c.job_id},
                   {"job_name", c.job_name},
                   {"time_s", c.time_s},
                   {"ratio", c.ratio},
                   {"what", c.what},
                   {"gpus", c.gpus}});
  }
  return out;
}

}  // namespace

std::string GroundTruthJson(const FleetTruth& truth) {
  const FleetSimOptions& options = truth.options;
  json jobs = json::array();
  for (const PlantedJob& job : truth.jobs) {
    jobs.push_back({{"job_id", job.job_id},
                    {"job_name", job.job_name},
                    {"gpus", job.gpus},
                    {"start_s", job.start_s},
                    {"end_s", job.end_s},
                    {"ofu_level", job.ofu_level},
                    {"realised_ofu", job.realised_ofu},
                    {"factor", job.factor},
                    {"correction_file", job.correction_file},
                    {"reference_precision", job.reference_precision},
                    {"recompute", job.recompute},
                    {"expected_mfu", job.expected_mfu},
                    {"reported_mfu", job.reported_mfu},
                    {"plant", job.plant},
                    {"planted_ratio", job.planted_ratio}});
  }
  json runs = json::array();
  for (const PlantedRunChange& r : truth.run_regressions) {
    runs.push_back({{"job_name", r.job_name}, {"first_job_id", r.first_job_id}, {"ratio", r.ratio}});
  }
  const json ground = {{"synthetic", kSynthetic},
                       {"generator", "ofu-fleet-sim"},
                       {"options",
                        {{"seed", options.seed},
                         {"gpus", options.gpus},
                         {"gpus_per_job", options.gpus_per_job},
                         {"jobs", options.jobs},
                         {"windows_per_job", options.windows_per_job},
                         {"window_s", options.window_s},
                         {"start_s", options.start_s},
                         {"ofu_noise", options.ofu_noise},
                         {"mfu_noise", options.mfu_noise}}},
                       {"end_s", truth.end_s},
                       {"jobs", jobs},
                       {"regressions", Changes(truth.regressions)},
                       {"precision_shifts", Changes(truth.precision_shifts)},
                       {"run_regressions", runs}};
  return ground.dump(2) + "\n";
}

}  // namespace ofu::render
