// What `ofu-fleet-sim` writes beside its SYNTHETIC fleet: ground_truth.json,
// the options and everything the simulator planted (simulation/fleet_sim.h),
// which the fleet tests and benchmarks score ofu's findings against.
//
// Thread-safety: a pure function over values.
#pragma once

#include <string>

#include "ofu/simulation/fleet_sim.h"

namespace ofu::render {

// {"synthetic", "generator", "options", "end_s", "jobs", "regressions",
// "precision_shifts", "run_regressions"}, keys sorted, indented, ending in a
// newline. The same truth gives the same bytes.
std::string GroundTruthJson(const simulation::FleetTruth& truth);

}  // namespace ofu::render
