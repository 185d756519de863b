// A SYNTHETIC fleet from ofu-fleet-sim (OFU_FLEET_SIM) for the tests that
// load it into servers: its files under dir/fleet and the range its ground
// truth spans.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace ofu::testing {

// The first of `programs` (paths found at configure time) that is not
// there, for GTEST_SKIP; empty when all are.
inline std::string FirstMissing(std::initializer_list<const char*> programs) {
  for (const char* program : programs) {
    if (!ProgramFound(program)) return program;
  }
  return "";
}

struct SimulatedFleet {
  std::filesystem::path dir;  // metrics.om, ground_truth.json, mfu.csv, corrections/, history.sqlite
  nlohmann::json truth;
  double start_s = 0;
  double end_s = 0;
};

// ofu-fleet-sim `flags` --out dir/fleet; a failure says what it printed.
inline ::testing::AssertionResult SimulateFleet(const std::filesystem::path& dir, const std::string& flags,
                                                SimulatedFleet& fleet) {
  fleet.dir = dir / "fleet";
  const auto sim = RunShell(fmt::format("'{}' --out '{}' {}", OFU_FLEET_SIM, fleet.dir.string(), flags), dir);
  if (sim.exit_code != 0) return ::testing::AssertionFailure() << "ofu-fleet-sim " << flags << ": " << sim.err;
  fleet.truth = nlohmann::json::parse(Slurp(fleet.dir / "ground_truth.json"));
  fleet.start_s = fleet.truth["options"]["start_s"].get<double>();
  fleet.end_s = fleet.truth["end_s"].get<double>();
  return ::testing::AssertionSuccess();
}

// The lines of an OpenMetrics file that belong to the GPUs in `uuids`
// (their `uuid` label), and every line that names no GPU (comments, the
// fleet's own series): one shard of the fleet.
inline std::string LinesOfGpus(const std::string& om, const std::set<std::string>& uuids) {
  std::istringstream in(om);
  std::string line, out;
  while (std::getline(in, line)) {
    const auto at = line.find("uuid=\"");
    if (at != std::string::npos && !uuids.contains(line.substr(at + 6, line.find('"', at + 6) - at - 6))) continue;
    out += line + "\n";
  }
  return out;
}

}  // namespace ofu::testing
