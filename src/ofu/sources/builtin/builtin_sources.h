// The source kinds ofu ships with, registered in the order auto-detection
// tries them and `ofu sources` lists them:
//
//   nvml                  NVML GPM through libnvidia-ml.so.1
//   dcgm                  DCGM: the hostengine on localhost, else embedded
//   dcgm:ADDRESS          DCGM hostengine at host[:port] or unix:/path
//   scrape:URL            a dcgm-exporter /metrics endpoint over HTTP
//   replay:FILE           a recording (Prometheus text or OpenMetrics)
//
// With no --source, nvml is tried, then dcgm; scrape and replay must be named.
// To add a kind, register it here (see source_registry.h and docs/sources.md).
//
// Thread-safety: returns a new value on every call; nothing is shared.
#pragma once

#include "ofu/sources/source_registry.h"

namespace ofu::sources {

SourceRegistry BuiltinSourceRegistry();

}  // namespace ofu::sources
