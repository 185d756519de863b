// --window's ranges in ofu: one of two, named here so that both are found in
// one place: a live source's sampling window (top, record, agent, sources
// --cost) and the window `ofu report` cuts a recording into. The flag itself
// is cli::AddWindowFlag (ofu/cli/window_flag.h), which ofu-gemm uses too.
#pragma once

#include "ofu/cli/window_flag.h"
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

}  // namespace ofu::cli
