// The clock the SMs ran, from a probe kernel's records (gpu/clock_probe.cu).
//
// NVML's SM clock is not the clock the SMs run while tensor cores work
// (docs/metrics.md#the-sm-clock), so ofu-gemm measures the SMs' own: a probe
// kernel launched on the workload's stream before and after the timed work
// records, for each of its blocks, the SM it ran on, that SM's cycle counter
// (clock64) and the global nanosecond timer (%globaltimer). Between two
// launches, on one SM,
//
//     clock (MHz) = Δcycles / Δglobal_ns × 1000
//
// is the clock that SM ran, averaged over the span. An SM that ran several
// blocks of a launch is taken at its earliest record of that launch; an SM
// seen in only one of the two launches, or whose counters did not advance,
// gives nothing. The span's figure is the median over the SMs, with their
// minimum and maximum (on an H100 and an H200 all 132 agreed within ±5 MHz).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "ofu/core/result.h"

namespace ofu::gemm {

// One block's record, as the device wrote it.
struct ProbeRecord {
  int sm = 0;                  // %smid
  std::int64_t cycles = 0;     // clock64()
  std::int64_t global_ns = 0;  // %globaltimer
};

// One launch: every block's record.
using ProbeLaunch = std::vector<ProbeRecord>;

struct SpanClock {
  double start_ns = 0, end_ns = 0;  // the global timer over the span (earliest record of each launch)
  int sms = 0;                      // SMs seen in both launches with advancing counters
  double median_mhz = 0, min_mhz = 0, max_mhz = 0;
};

// Errors (kNoData, naming why): a launch without records, no SM in both, or
// no SM whose cycles and time both advanced.
Result<SpanClock> ClockBetween(const ProbeLaunch& before, const ProbeLaunch& after);

}  // namespace ofu::gemm
