#include "ofu/sources/builtin/builtin_sources.h"

#include <string>

#include "ofu/sources/dcgm/dcgm_source.h"
#include "ofu/sources/nvml/nvml_source.h"
#include "ofu/sources/replay_source.h"
#include "ofu/sources/scrape_source.h"

namespace ofu::sources {
namespace {

// A live kind's probe: open it as auto-detection would and say what was
// found; nothing is sampled.
SourceKind::ProbeFunction ProbeByOpening(SourceKind::OpenFunction open) {
  return [open = std::move(open)](const SourceOptions& options, Clock& clock) -> Result<std::string> {
    OFU_ASSIGN_OR_RETURN(const std::unique_ptr<Source> source, open("", options, clock));
    return source->Describe();
  };
}

// A kind that works wherever it is pointed: its probe says how to point it.
SourceKind::ProbeFunction AlwaysAvailable(std::string how_to_use) {
  return
      [how_to_use = std::move(how_to_use)](const SourceOptions&, Clock&) -> Result<std::string> { return how_to_use; };
}

SourceKind NvmlKind() {
  SourceKind kind;
  kind.scheme = "nvml";
  kind.help = "NVML GPM (Hopper and later), through libnvidia-ml.so.1";
  kind.auto_detect = true;
  kind.open = [](std::string_view, const SourceOptions& options, Clock& clock) {
    return OpenNvmlSource(options, clock);
  };
  kind.probe = ProbeByOpening(kind.open);
  return kind;
}

SourceKind DcgmKind() {
  SourceKind kind;
  kind.scheme = "dcgm";
  kind.argument = SourceArgument::kOptional;
  kind.argument_name = "ADDRESS";
  kind.argument_help = "host[:port] or unix:/path";
  kind.help = "DCGM hostengine or embedded DCGM, through libdcgm.so.4 / .so.3";
  kind.auto_detect = true;
  kind.open = [](std::string_view address, const SourceOptions& options, Clock& clock) {
    return OpenDcgmSource(address, options, clock);
  };
  kind.probe = ProbeByOpening(kind.open);
  return kind;
}

SourceKind ScrapeKind() {
  SourceKind kind;
  kind.scheme = "scrape";
  kind.argument = SourceArgument::kRequired;
  kind.argument_name = "URL";
  kind.argument_help = "a dcgm-exporter endpoint";
  kind.help = "a dcgm-exporter endpoint (always possible; needs a URL)";
  kind.open = [](std::string_view url, const SourceOptions& options, Clock& clock) {
    return OpenScrapeSource(std::string(url), options, clock);
  };
  kind.probe = AlwaysAvailable("reads a dcgm-exporter endpoint given as --source scrape:http://HOST:9400/metrics");
  return kind;
}

SourceKind ReplayKind() {
  SourceKind kind;
  kind.scheme = "replay";
  kind.argument = SourceArgument::kRequired;
  kind.argument_name = "FILE";
  kind.argument_help = "a recording";
  kind.help = "a recording (always possible; needs a file)";
  kind.open = [](std::string_view path, const SourceOptions& options, Clock& clock) {
    return OpenReplaySource(std::string(path), options, clock);
  };
  kind.probe = AlwaysAvailable("reads a recording given as --source replay:FILE");
  return kind;
}

}  // namespace

SourceRegistry BuiltinSourceRegistry() {
  SourceRegistry registry;
  // value() aborts on an error: the built-in kinds are distinct and complete,
  // so a failure here is a programming error caught by every test.
  for (SourceKind kind : {NvmlKind(), DcgmKind(), ScrapeKind(), ReplayKind()}) {
    registry.Register(std::move(kind)).value();
  }
  return registry;
}

}  // namespace ofu::sources
