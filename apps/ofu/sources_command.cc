#include "sources_command.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "exit_codes.h"
#include "format_flag.h"
#include "ofu/sources/source_factory.h"

namespace ofu::cli {
namespace {

constexpr const char* kSourcesHelp = R"(List the counter sources ofu can read on this machine.

For each source: whether it works here, and what was found (library,
driver, GPUs) or why it does not work and what to do about it. Nothing is
sampled; the live sources are only opened.

  nvml     NVML GPM (Hopper and later), through libnvidia-ml.so.1
  dcgm     DCGM hostengine or embedded DCGM, through libdcgm.so.4 / .so.3
  scrape   a dcgm-exporter endpoint (always possible; needs a URL)
  replay   a recording (always possible; needs a file)

Examples:
  ofu sources
  ofu sources --format json
  ofu sources --nvml-library /opt/nvidia/lib/libnvidia-ml.so.1

Exit status: 0 when NVML or DCGM works, 5 when neither does.)";

}  // namespace

void AddSourcesFlags(CLI::App& cmd, SourcesArgs& args) {
  cmd.description(kSourcesHelp);
  AddFormatFlag(cmd, args.format, {"table", "json"}, "Output: table or json");
  AddLibraryFlags(cmd, args.source);
}

Result<int> RunSources(const SourcesArgs& args) {
  sources::SystemClock clock;
  const auto probes = sources::ProbeSources(args.source.options, clock);
  bool live = false;
  for (const auto& probe : probes) {
    if ((probe.name == "nvml" || probe.name == "dcgm") && probe.available) live = true;
  }
  if (args.format == "json") {
    auto out = nlohmann::ordered_json::array();
    for (const auto& probe : probes) {
      out.push_back({{"source", probe.name}, {"available", probe.available}, {"detail", probe.detail}});
    }
    fmt::print("{}\n", out.dump(2));
  } else {
    for (const auto& probe : probes) {
      fmt::print("{:<7} {:<11} {}\n", probe.name, probe.available ? "available" : "unavailable", probe.detail);
    }
    if (!live) {
      fmt::print("\nNo live source on this machine: ofu can still replay recordings "
                 "(ofu report --input FILE, ofu top --source replay:FILE).\n");
    }
  }
  return live ? kExitOk : kExitUnavailable;
}

}  // namespace ofu::cli
