// Live counters from NVML GPM (Hopper and later), loaded with dlopen.
//
// Open: loads options.nvml_library (default "libnvidia-ml.so.1"), calls
// nvmlInit and enumerates the GPUs: name, UUID, PCI bus id, architecture,
// SM count, maximum SM clock and whether GPM is supported. A GPU in MIG mode
// is reported as one reading per GPU instance (key "<UUID>/gi<N>", sampled
// with nvmlGpmMigSampleGet); the SM clock and clock event reasons of an
// instance are those of its physical GPU, and power and energy are left
// absent there because they belong to the whole board.
//
// Next() measures one window of options.window_s seconds that ends on a
// boundary of the previous window (time spent by the caller between two
// calls shortens the next window instead of shifting the grid; a caller late
// by whole windows skips them). Inside it the SM clock of every GPU is read
// options.clock_readings times, evenly spaced, the last at the window end:
// their mean is sample.sm_clock_mhz (basis kOversampled, or kPointReading
// for a single reading) and their extremes sm_clock_min/max_mhz. At the end
// one GPM sample per GPU is taken and the GPM metrics between it and the
// previous one are read; the first Next() takes its starting sample when it
// is called, so every window's metrics cover exactly that window.
//
// Only what options.fields lists is read (empty: every counter): GPM is
// asked only for the metrics of the listed fields (the exact-cycle pair only
// when tensor_active or sm_clock_mhz is listed), and power, energy and clock
// event reasons are read only when listed; the rest is absent. The SM clock
// and the GPM sample are read whatever the list: every window needs them.
// Per window and GPU that is clock_readings SM-clock reads, one GPM sample,
// at most one nvmlGpmMetricsGet, one call per listed board value and a
// process list every options.process_interval_s; the counts are pinned in
// tests/sources/nvml_call_count_test.cc.
//
// Units: activities are 0..1 (GPM gives percent), clocks MHz, power W (NVML
// gives mW), energy mJ since driver load, clock_event_reasons NVML's bitmask
// (the same bits as DCGM field 112), process memory bytes. time_s is
// Clock::NowS() at the window end.
//
// Exact-cycle mode. Where the driver delivers GPM metrics 248
// (SM_CYCLES_ELAPSED) and 250 (MMA_CYCLES_ACTIVE) -- probed once per GPU,
// each metric's own return code checked -- tensor_active and sm_clock_mhz
// come from DeriveExactCycles (exact_cycles.h) with the oversampled clock
// as the check of the counters' basis, and clock_basis is kExactCycles.
// ASSUMPTION, to be verified on hardware: like every GPM metric, these are
// computed by nvmlGpmMetricsGet from two samples, so ofu takes each value as
// the number of cycles counted between the two samples (a per-interval
// count, not a cumulative total and not a rate per second). If a driver
// reports them otherwise, DeriveExactCycles rejects the window (the cycle
// rate then fits neither basis), the sampled values are kept and the reason
// appears once in Snapshot.notes.
//
// Faults. GPU_IS_LOST or RESET_REQUIRED from any call for a GPU marks it
// kLost for good (its problem says to look for Xid 79 in dmesg, drain and
// reset it); the others go on. NO_PERMISSION on GPM gives kNoPermission
// (run as root or set NVreg_RestrictProfilingToAdminUsers=0) and is retried
// every window; a GPU without GPM on a node that has some is kNotSupported,
// with its clock and power still reported and the GPM fields absent. When
// the driver or library goes away (DRIVER_NOT_LOADED,
// LIB_RM_VERSION_MISMATCH, UNINITIALIZED) every GPU is kUnavailable with
// the reason, NVML is shut down, and nvmlInit is retried at window ends with
// back-off (1 s doubling to 60 s, on the injected Clock); after it succeeds
// the GPUs are enumerated again and a note says so. Next() never blocks for
// longer than its window and never fails for these faults. A counter not
// delivered is absent, never 0.
//
// Thread-safety: one thread at a time (see Source).
#pragma once

#include <memory>

#include "ofu/core/result.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/source.h"

namespace ofu::sources {

// Errors: kUnavailable when the library cannot be loaded or initialised, or
// no GPU is present, or no GPU supports GPM (then the message advises
// --source dcgm, and auto-detection falls through to DCGM); the message
// names the library and the NVML error.
Result<std::unique_ptr<Source>> OpenNvmlSource(const SourceOptions& options, Clock& clock);

}  // namespace ofu::sources
