// Choosing and opening a source from the command line's --source value.
//
//   nvml                  NVML GPM through libnvidia-ml.so.1
//   dcgm                  DCGM: the hostengine on localhost, else embedded
//   dcgm:ADDRESS          DCGM hostengine at host[:port] or unix:/path
//   scrape:URL            a dcgm-exporter /metrics endpoint over HTTP
//   replay:FILE           a recording (Prometheus text or OpenMetrics)
//
// With no --source, AutoDetectSource tries NVML GPM, then DCGM, and when
// neither works its error says what was tried and why each failed.
// ProbeSources is `ofu sources`: every source kind, whether it works on this
// machine, and why not.
//
// Thread-safety: no shared state; the Clock must outlive the source.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/source.h"

namespace ofu::sources {

enum class SourceKind { kNvml, kDcgm, kScrape, kReplay };

struct SourceSpec {
  SourceKind kind = SourceKind::kNvml;
  std::string argument;  // DCGM address, URL or file; empty where none
};

// Errors: kInvalidArgument naming the accepted forms.
Result<SourceSpec> ParseSourceSpec(std::string_view text);

Result<std::unique_ptr<Source>> OpenSource(const SourceSpec& spec, const SourceOptions& options, Clock& clock);

// Errors: kUnavailable, one line per source tried with its reason.
Result<std::unique_ptr<Source>> AutoDetectSource(const SourceOptions& options, Clock& clock);

struct SourceProbe {
  std::string name;       // "nvml", "dcgm", "scrape", "replay"
  bool available = false;
  std::string detail;     // what was found, or why it is unavailable and what to do
};
std::vector<SourceProbe> ProbeSources(const SourceOptions& options, Clock& clock);

}  // namespace ofu::sources
