// --window: the window length in seconds, for every command that takes one.
// Its range is one of two, named here so that both are found in one place:
// a live source's sampling window (top, record, agent, sources --cost) and
// the window `ofu report` cuts a recording into.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "ofu/sources/source.h"

namespace ofu::cli {

// The longest window a live source reads counters over (top, record, agent,
// run, sources --cost): sources::kMaxSampledWindowS, the one range the
// config file is checked against too (sources::CheckSamplingSettings).
using sources::kMaxSampledWindowS;

// The longest window `ofu report` cuts a stored recording into: long enough
// for one window over a year of data (leap day included), and a bound that
// keeps the window arithmetic on epoch seconds finite (found by fuzzing).
inline constexpr double kMaxReportWindowS = 86400.0 * 366;

// Adds the option `names` ("--window" or "--window,-w") to `cmd`, bound to
// `window_s`: seconds from kMinWindowS (ofu/core/windows.h) to `max_s`, one
// of the constants above. The help is `what` followed by the range and the
// default. Returns the option so that a caller can add checks.
CLI::Option* AddWindowFlag(CLI::App& cmd, const std::string& names, double& window_s, double max_s,
                           const std::string& what);

}  // namespace ofu::cli
