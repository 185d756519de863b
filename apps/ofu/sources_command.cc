#include "sources_command.h"

#include <fmt/format.h>

#include "exit_codes.h"
#include "format_flag.h"
#include "ofu/sources/builtin_sources.h"
#include "ofu/sources/sources_listing.h"

namespace ofu::cli {
namespace {

constexpr const char* kSourcesHelpIntro = R"(List the counter sources ofu can read on this machine.

For each source: whether it works here, and what was found (library,
driver, GPUs) or why it does not work and what to do about it. Nothing is
sampled; the live sources are only opened.

)";

constexpr const char* kSourcesHelpEnd = R"(
Examples:
  ofu sources
  ofu sources --format json
  ofu sources --nvml-library /opt/nvidia/lib/libnvidia-ml.so.1

Exit status: 0 when an auto-detected source ({}) works, 5 when none does.)";

}  // namespace

void AddSourcesFlags(CLI::App& cmd, SourcesArgs& args) {
  const sources::SourceRegistry registry = sources::BuiltinSourceRegistry();
  cmd.description(kSourcesHelpIntro + sources::FormatSourceKindsHelp(registry) +
                  fmt::format(kSourcesHelpEnd, registry.AutoDetectOrder()));
  AddFormatFlag(cmd, args.format, {"table", "json"}, "Output: table or json");
  AddLibraryFlags(cmd, args.source);
}

Result<int> RunSources(const SourcesArgs& args) {
  sources::SystemClock clock;
  const sources::SourcesListing listing = sources::ListSources(sources::BuiltinSourceRegistry(), args.source.options,
                                                               clock);
  fmt::print("{}", args.format == "json" ? sources::FormatSourcesJson(listing) : sources::FormatSourcesTable(listing));
  return listing.any_auto_detected ? kExitOk : kExitUnavailable;
}

}  // namespace ofu::cli
