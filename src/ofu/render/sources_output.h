// What `ofu sources` shows: the kinds found on this machine
// (sources_listing.h) and, with --cost, what a live source's library calls
// cost (source_cost.h), as a table for people or as JSON.
//
// Thread-safety: pure functions over values.
#pragma once

#include <string>

#include "ofu/sources/source_cost.h"
#include "ofu/sources/sources_listing.h"

namespace ofu::render {

// One line per kind, "nvml    unavailable <detail>", then, when no
// auto-detected kind works, a line saying what ofu can still do.
std::string FormatSourcesTable(const sources::SourcesListing& listing);

// [{"source": ..., "available": ..., "detail": ...}, ...], indented.
std::string FormatSourcesJson(const sources::SourcesListing& listing);

// The table for people: one row per call (calls, per window, wall and CPU
// microseconds per call, user and system per call where measured, share of
// the process CPU), a row for all calls, and a per-window summary line.
std::string FormatSourceCostTable(const sources::SourceCost& cost);

// {"source", "window_s", "windows", "gpus", "elapsed_s", "process_cpu_s"
// (null when absent), "per_window": {"calls", "wall_us", "cpu_us",
// "process_cpu_us" (null), "core_percent" (null)}, "calls": [{"call",
// "calls", "per_window", "wall_us_per_call", "cpu_us_per_call",
// "user_us_per_call", "system_us_per_call" (null when not measured),
// "process_cpu_share" (null)}]}
std::string FormatSourceCostJson(const sources::SourceCost& cost);

}  // namespace ofu::render
