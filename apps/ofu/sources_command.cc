#include "sources_command.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "format_flag.h"
#include "ofu/agent/run.h"
#include "ofu/cli/exit_codes.h"
#include "ofu/render/sources_output.h"
#include "ofu/sources/builtin/builtin_sources.h"
#include "ofu/sources/call_accounting.h"
#include "ofu/sources/source_cost.h"
#include "ofu/sources/sources_listing.h"
#include "window_flag.h"

namespace ofu::cli {
namespace {

constexpr const char* kSourcesHelpIntro = R"(List the counter sources ofu can read on this machine.

For each source: whether it works here, and what was found (library,
driver, GPUs) or why it does not work and what to do about it. Nothing is
sampled; the live sources are only opened.

)";

constexpr const char* kSourcesHelpEnd = R"(
With --cost, a live source (NVML or DCGM) is opened the way the agent
opens it (only the counters the agent exports, process lists every 10 s)
and read for --seconds at --window; then, for every library function it
called, the calls, calls per window, wall and CPU microseconds per call
(user and system where the platform says) and the share of this process's
CPU, and per window the calls, their CPU and the process's CPU. The first
window is read but not counted (one-time setup). The agent exports the
same figures on /metrics (ofu_source_calls_total, ofu_source_call_seconds_total).

Examples:
  ofu sources
  ofu sources --format json
  ofu sources --nvml-library /opt/nvidia/lib/libnvidia-ml.so.1
  ofu sources --cost --source nvml --window 0.1 --seconds 10

Exit status: 0 when an auto-detected source ({}) works, 5 when none does.)";

}  // namespace

void AddSourcesFlags(CLI::App& cmd, SourcesArgs& args) {
  const sources::SourceRegistry registry = sources::BuiltinSourceRegistry();
  cmd.description(kSourcesHelpIntro + sources::FormatSourceKindsHelp(registry) +
                  fmt::format(kSourcesHelpEnd, registry.AutoDetectOrder()));
  AddFormatFlag(cmd, args.format, {render::OutputFormat::kTable, render::OutputFormat::kJson}, "Output: table or json");
  AddLibraryFlags(cmd, args.source);
  cmd.add_flag("--cost", args.cost, "Run a source and print what each of its library calls costs");
  cmd.add_option("--seconds", args.seconds, "With --cost: how long to measure, in seconds")
      ->check(CLI::Range(0.1, 3600.0));
  cmd.add_option("--source", args.cost_source, "With --cost: nvml or dcgm (default: the first that works)")
      ->check(CLI::IsMember({"nvml", "dcgm"}));
  AddWindowFlag(cmd, "--window,-w", args.source.options.window_s, kMaxSampledWindowS, "With --cost: window length");
  AddClockReadingsFlag(cmd, args.source.options.clock_readings, "With --cost: SM clock readings per window (NVML)");
}

namespace {

// --cost: the source opened as the agent opens it, with its calls accounted.
Result<int> RunCost(const SourcesArgs& args) {
  sources::SourceOptions options = agent::AgentSourceOptions(args.source.options);
  sources::CallAccounting accounting;
  options.call_accounting = &accounting;
  sources::SystemClock clock;
  OFU_ASSIGN_OR_RETURN(auto source, sources::BuiltinSourceRegistry().Open(args.cost_source, options, clock));
  if (source->kind() != "nvml" && source->kind() != "dcgm") {
    return Error::InvalidArgument("--cost measures the nvml and dcgm sources, not {}", source->kind());
  }
  const int windows = std::max(1, static_cast<int>(std::lround(args.seconds / options.window_s)));
  OFU_ASSIGN_OR_RETURN(auto cost,
                       sources::MeasureSourceCost(*source, accounting, windows, sources::ProcessCpuSeconds, clock));
  fmt::print("{}", args.format == render::OutputFormat::kJson ? render::FormatSourceCostJson(cost)
                                                              : render::FormatSourceCostTable(cost));
  return kExitOk;
}

}  // namespace

Result<int> RunSources(const SourcesArgs& args) {
  if (args.cost) return RunCost(args);
  sources::SystemClock clock;
  const sources::SourcesListing listing = sources::ListSources(sources::BuiltinSourceRegistry(), args.source.options,
                                                               clock);
  fmt::print("{}", args.format == render::OutputFormat::kJson ? render::FormatSourcesJson(listing)
                                                              : render::FormatSourcesTable(listing));
  return listing.any_auto_detected ? kExitOk : kExitUnavailable;
}

}  // namespace ofu::cli
