// The one interface every counter source implements: NVML GPM, DCGM, an
// HTTP scrape of a dcgm-exporter endpoint, and the replay of a recording.
// Every consumer (`ofu top`, `ofu record`, the agent) reads through it and
// never knows which source it has.
//
// A source yields Snapshots, one per window: for every GPU it knows, one
// GpuReading whose CounterSample holds the window's values and is stamped
// with the window's end. Live sources block inside Next() for the window,
// sleeping through the injected Clock; replay returns at once (or paces
// itself when asked).
//
// Faults are values, not exceptions and not zeros:
//   * one GPU failing (fell off the bus, no permission, counter not
//     supported) gives that GPU a non-ok `health` and a `problem` saying what
//     to do, while the other GPUs go on;
//   * the library or daemon going away gives every GPU health kUnavailable
//     and the source retries with back-off (see backoff.h) on later calls;
//   * a counter the source could not read this window is absent.
// Next() returns an error only when the source can never continue (a replay
// file that turns out malformed, say), and nullopt at the end of a finite
// source.
//
// Thread-safety: a Source is used by one thread at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/core/sample.h"

namespace ofu::sources {

class CallAccounting;  // call_accounting.h

enum class GpuHealth {
  kOk,
  kLost,          // fell off the bus (NVML GPU_IS_LOST, DCGM GPU lost); others continue
  kNoPermission,  // the counters need privileges this process lacks
  kNotSupported,  // this GPU cannot give the counters (e.g. no GPM before Hopper)
  kUnavailable,   // the library, driver or daemon is gone for now; retried
};
std::string_view HealthName(GpuHealth health);  // "ok", "lost", ...

// How a reading's SM clock was obtained; the better the basis, the closer
// f_SM is to the true mean clock of the window.
enum class ClockBasis {
  kNone,          // no clock this window
  kPointReading,  // one instantaneous reading (dcgm-exporter, DCGM field 100)
  kOversampled,   // the mean of several readings spread over the window
  kExactCycles,   // from elapsed-cycle counters: tensor_active and sm_clock_mhz
                  // are Δcycles-derived and exact for the window
};
std::string_view ClockBasisName(ClockBasis basis);  // "none", "point", "oversampled", "exact-cycles"

struct GpuProcess {
  std::uint32_t pid = 0;
  std::optional<std::uint64_t> used_memory_bytes;
};

struct GpuReading {
  GpuIdentity identity;
  GpuHealth health = GpuHealth::kOk;
  std::string problem;   // empty when ok: what went wrong and what to do
  CounterSample sample;  // the window's values, time_s = window end
  ClockBasis clock_basis = ClockBasis::kNone;
  int clock_readings = 0;  // readings behind sample.sm_clock_mhz
  std::optional<double> sm_clock_min_mhz;
  std::optional<double> sm_clock_max_mhz;
  std::optional<int> sm_count;  // from the driver, where it says
  std::vector<GpuProcess> processes;
};

struct Snapshot {
  double time_s = 0;    // end of the window, seconds since the epoch
  double window_s = 0;  // its length
  std::vector<GpuReading> gpus;
  std::vector<std::string> notes;  // source-level events, e.g. "reconnected to the hostengine"
  std::optional<bool> synthetic;   // replay: whether the recording says it is synthetic
};

// The spacing of SM clock readings when SourceOptions::clock_readings is 0.
inline constexpr double kClockReadingIntervalS = 0.1;

// The one range of each sampling setting, for flags and config files alike
// (CheckSamplingSettings): a window of kMinWindowS (core/windows.h) to
// kMaxSampledWindowS, one reading per window, so at most an hour between two
// updates of the agent's /metrics; and 0 (automatic) to kMaxClockReadings SM
// clock readings per window.
inline constexpr double kMaxSampledWindowS = 3600;
inline constexpr int kMaxClockReadings = 1000;

// kInvalidArgument naming the setting (`window_name`, `readings_name`: how the
// caller spells them, "--window" or "window") when either is out of its range.
Status CheckSamplingSettings(double window_s, int clock_readings, std::string_view window_name = "window",
                             std::string_view readings_name = "clock_readings");

// Knobs of every source; each source reads the ones that concern it.
struct SourceOptions {
  double window_s = 1;  // at least kMinWindowS (windows.h)
  // SM clock readings per window (NVML). 0: one per kClockReadingIntervalS
  // of window, at least one, so the clock is read ten times a second
  // whatever the window (ten per 1 s window, one per 100 ms window).
  int clock_readings = 0;
  // How often GPU process lists are read (NVML), in seconds; a window in
  // between repeats the last list. 0: every window. The agent needs them
  // only for attribution, every attribution interval; `ofu top` shows them
  // every window.
  double process_interval_s = 0;
  // The counters the consumer uses; a source may leave the others unread
  // (absent). NVML asks nvmlGpmMetricsGet only for the GPM metrics of these
  // and calls the power, energy and clock-event-reason functions only when
  // they are listed: every driver call costs CPU on the node (issue 29).
  // Empty: every counter, as `ofu top` and `ofu record` need.
  std::vector<CounterField> fields;
  // Whether `field` is asked for (every field is when `fields` is empty).
  bool Wants(CounterField field) const {
    return fields.empty() || std::find(fields.begin(), fields.end(), field) != fields.end();
  }
  std::string nvml_library;     // empty: "libnvidia-ml.so.1"
  std::string dcgm_library;     // empty: "libdcgm.so.4", then "libdcgm.so.3"
  bool pace_replay = false;     // replay sleeps one window per snapshot (for `top`)
  double scrape_timeout_s = 5;  // HTTP scrape
  // Where the NVML and DCGM sources count and time their library calls
  // (call_accounting.h); null: not accounted. Must outlive the source. The
  // agent keeps one across reloads so its counters never go back.
  CallAccounting* call_accounting = nullptr;
};

class Source {
 public:
  virtual ~Source() = default;

  // The scheme of the kind that opened it (source_registry.h): "nvml",
  // "dcgm", "scrape", "replay". Labels the agent's ofu_build_info{source}
  // and its error counters. Points to static storage.
  virtual std::string_view kind() const = 0;

  // What this is, for people: "nvml (libnvidia-ml.so.1, driver 550.54.15)".
  virtual std::string Describe() const = 0;

  // True for sources that read GPUs now (NVML, DCGM, scrape).
  virtual bool live() const = 0;

  // The next window; see the file comment for what is an error.
  virtual Result<std::optional<Snapshot>> Next() = 0;
};

}  // namespace ofu::sources
