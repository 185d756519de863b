// `ofu sources`: every registered source kind, whether it works on this
// machine, and what was found or why not. Nothing is sampled; the kinds'
// probes only open what they would read (source_registry.h).
//
// The command line only parses its flags, builds the registry and prints
// what these functions return; the exit status follows any_auto_detected.
//
// Thread-safety: plain functions over values.
#pragma once

#include <string>
#include <vector>

#include "ofu/sources/clock.h"
#include "ofu/sources/source.h"
#include "ofu/sources/source_registry.h"

namespace ofu::sources {

struct SourceProbe {
  std::string name;  // the kind's scheme: "nvml", "dcgm", "scrape", "replay"
  bool available = false;
  std::string detail;  // what was found, or why it is unavailable and what to do
};

struct SourcesListing {
  std::vector<SourceProbe> probes;  // one per kind, in registration order
  // Some kind that auto-detection tries (nvml, dcgm) works here: ofu can
  // read this machine's GPUs without being told where.
  bool any_auto_detected = false;
};

// Probes every kind of `registry` with `options` (library paths).
SourcesListing ListSources(const SourceRegistry& registry, const SourceOptions& options, Clock& clock);

// Shown by render/sources_output.h.

// For `ofu sources --help`: "  nvml     NVML GPM (...)", one line per kind.
std::string FormatSourceKindsHelp(const SourceRegistry& registry);

}  // namespace ofu::sources
