#include "ofu/core/windows.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>

namespace ofu {
namespace {

// The products that make a window's OFU, summed over the pieces of tensor
// samples that have a clock: activity x run clock x seconds (at the run
// clock's estimate and at both ends of its range), activity x seconds, run
// clock x seconds, and the seconds.
struct ProductSums {
  double product = 0, product_low = 0, product_high = 0;
  double activity = 0, clock = 0, seconds = 0;

  // One piece of `seconds` with tensor activity `a` whose reported clock is
  // `mhz`: the SKU's clock model, where there is one, says what the SMs ran.
  void Add(double a, double mhz, std::optional<std::uint64_t> reasons, const ClockModel* model, double piece_s) {
    const RunClock f = model != nullptr ? EstimateRunClock(*model, a, mhz, reasons) : RunClock{mhz, mhz, mhz};
    product += a * f.mhz * piece_s;
    product_low += a * f.low_mhz * piece_s;
    product_high += a * f.high_mhz * piece_s;
    activity += a * piece_s;
    clock += f.mhz * piece_s;
    seconds += piece_s;
  }
};

// The clock model a window applies: the SKU's, unless there is none.
const ClockModel* ModelOf(const std::optional<OfuScale>& scale) {
  return scale && scale->clock_model ? &*scale->clock_model : nullptr;
}

// A piece of a tensor sample that has no clock reading of its own.
struct UnpairedPiece {
  double tensor_active = 0;
  double seconds = 0;
};

// Running sums for one window; turned into an OfuWindow at the end.
struct WindowSums {
  ProductSums products;
  std::vector<UnpairedPiece> unpaired;  // paired with the window's mean clock at the end
  double tensor_weighted = 0, tensor_seconds = 0;
  double engine_weighted = 0, engine_seconds = 0;
  std::array<double, kCudaCorePipes> pipe_weighted{}, pipe_seconds{};  // by CudaCorePipe
  double clock_sum = 0, clock_min = 0, clock_max = 0;
  int clock_count = 0;
  double power_sum = 0;
  int power_count = 0;
  std::optional<std::uint64_t> reasons;
  // By added row (WindowOptions::added_fields): value x seconds and seconds
  // for an activity, sum and count of readings otherwise. Empty until one
  // is added.
  std::vector<std::pair<double, double>> added;
};

using WindowMap = std::map<std::int64_t, WindowSums>;

// The window (kW, (k+1)W] that holds the instant t.
std::int64_t WindowOf(double t, double w) { return static_cast<std::int64_t>(std::ceil(t / w)) - 1; }

// Spreads value over (from, to] into the windows it overlaps.
template <typename AddFn>
void SpreadInterval(double from, double to, double w, WindowMap& windows, AddFn add) {
  const auto first = static_cast<std::int64_t>(std::floor(from / w));
  const std::int64_t last = WindowOf(to, w);
  for (std::int64_t k = first; k <= last; ++k) {
    const double lo = std::max(from, static_cast<double>(k) * w);
    const double hi = std::min(to, static_cast<double>(k + 1) * w);
    if (hi > lo) add(windows[k], hi - lo);
  }
}

double MedianSpacing(const std::vector<double>& times) {
  std::vector<double> spacing;
  for (std::size_t i = 1; i < times.size(); ++i) {
    if (times[i] > times[i - 1]) spacing.push_back(times[i] - times[i - 1]);
  }
  if (spacing.empty()) return 0;
  return Percentile(std::move(spacing), 0.5);
}

// The interval each activity sample covers: (end - length, end].
struct Coverage {
  double end = 0;
  double length = 0;
};

// Works out what each sample of an activity field covers, and where the gaps
// are. `times` are the timestamps of the samples that have the field.
std::vector<Coverage> CoverSamples(const std::vector<double>& times, double interval, double gap_factor,
                                   std::vector<Gap>* gaps) {
  std::vector<Coverage> out;
  out.reserve(times.size());
  for (std::size_t i = 0; i < times.size(); ++i) {
    double length = interval;
    if (i > 0) {
      const double spacing = times[i] - times[i - 1];
      if (spacing <= gap_factor * interval) {
        length = spacing;
      } else if (gaps != nullptr) {
        gaps->push_back(Gap{times[i - 1], times[i] - interval});
      }
    }
    out.push_back(Coverage{times[i], length});
  }
  return out;
}

// `field` is a member of CounterSample, or a function of one, that gives an
// optional value.
template <typename Field>
std::vector<double> TimesWith(std::span<const CounterSample> samples, Field field) {
  std::vector<double> times;
  for (const auto& s : samples) {
    if (std::invoke(field, s).has_value()) times.push_back(s.time_s);
  }
  return times;
}

// Adds a time-weighted activity field into the window sums.
template <typename Field, typename AddFn>
void AddActivity(std::span<const CounterSample> samples, Field field, double interval, const WindowOptions& options,
                 std::vector<Gap>* gaps, WindowMap& windows, AddFn add) {
  const std::vector<double> times = TimesWith(samples, field);
  const std::vector<Coverage> cover = CoverSamples(times, interval, options.gap_factor, gaps);
  std::size_t next = 0;
  for (const auto& s : samples) {
    const auto& got = std::invoke(field, s);  // a member of s, or a getter's value
    if (!got) continue;
    const Coverage& c = cover[next++];
    const double value = *got;
    SpreadInterval(c.end - c.length, c.end, options.window_s, windows,
                   [&](WindowSums& sums, double seconds) { add(sums, value, seconds); });
  }
}

// Tensor activity, time-weighted like the other activities, and each
// sample's product with the clock of its own interval: the mean of the clock
// readings whose timestamps fall in (start, end] of what the sample covers.
// Coverage intervals are disjoint and in time order, so one pass pairs them.
void AddTensor(std::span<const CounterSample> samples, double interval, const WindowOptions& options,
               const std::optional<OfuScale>& scale, std::vector<Gap>* gaps, WindowMap& windows) {
  const std::vector<double> times = TimesWith(samples, &CounterSample::tensor_active);
  const std::vector<Coverage> cover = CoverSamples(times, interval, options.gap_factor, gaps);
  std::vector<const CounterSample*> clocks;
  for (const auto& s : samples) {
    if (s.sm_clock_mhz) clocks.push_back(&s);
  }
  std::size_t first_clock = 0;
  std::size_t next = 0;
  for (const auto& s : samples) {
    if (!s.tensor_active) continue;
    const Coverage& c = cover[next++];
    const double from = c.end - c.length;
    while (first_clock < clocks.size() && clocks[first_clock]->time_s <= from) ++first_clock;
    double clock_sum = 0;
    int readings = 0;
    std::optional<std::uint64_t> reasons;
    for (std::size_t k = first_clock; k < clocks.size() && clocks[k]->time_s <= c.end; ++k) {
      clock_sum += *clocks[k]->sm_clock_mhz;
      ++readings;
      if (clocks[k]->clock_event_reasons) reasons = reasons.value_or(0) | *clocks[k]->clock_event_reasons;
    }
    const double a = *s.tensor_active;
    SpreadInterval(from, c.end, options.window_s, windows, [&](WindowSums& sums, double seconds) {
      sums.tensor_weighted += a * seconds;
      sums.tensor_seconds += seconds;
      if (readings > 0) {
        sums.products.Add(a, clock_sum / readings, reasons, ModelOf(scale), seconds);
      } else {
        sums.unpaired.push_back(UnpairedPiece{a, seconds});
      }
    });
  }
}

void AddPointReadings(std::span<const CounterSample> samples, double w, WindowMap& windows) {
  for (const auto& s : samples) {
    if (!s.sm_clock_mhz && !s.power_w && !s.clock_event_reasons) continue;
    WindowSums& sums = windows[WindowOf(s.time_s, w)];
    if (s.sm_clock_mhz) {
      const double f = *s.sm_clock_mhz;
      sums.clock_min = sums.clock_count == 0 ? f : std::min(sums.clock_min, f);
      sums.clock_max = sums.clock_count == 0 ? f : std::max(sums.clock_max, f);
      sums.clock_sum += f;
      ++sums.clock_count;
    }
    if (s.power_w) {
      sums.power_sum += *s.power_w;
      ++sums.power_count;
    }
    if (s.clock_event_reasons) sums.reasons = sums.reasons.value_or(0) | *s.clock_event_reasons;
  }
}

// The added counters (WindowOptions::added_fields): activities time-weighted
// like the pipes, readings into the window their timestamp falls in.
[[gnu::noinline]] void AddAddedFields(std::span<const CounterSample> samples, double interval,
                                      const WindowOptions& options, WindowMap& windows) {
  const std::size_t rows = options.added_fields.size();
  const auto sums_of = [rows](WindowSums& sums) -> std::vector<std::pair<double, double>>& {
    if (sums.added.empty()) sums.added.resize(rows);
    return sums.added;
  };
  for (std::size_t i = 0; i < rows; ++i) {
    const CounterFieldInfo& row = options.added_fields[i];
    const auto get = [&row](const CounterSample& s) { return row.Get(s); };
    if (row.is_activity) {
      AddActivity(samples, get, interval, options, nullptr, windows, [&](WindowSums& sums, double value, double s) {
        sums_of(sums)[i].first += value * s;
        sums_of(sums)[i].second += s;
      });
      continue;
    }
    for (const CounterSample& s : samples) {
      if (const std::optional<double> value = get(s)) {
        auto& sum = sums_of(windows[WindowOf(s.time_s, options.window_s)])[i];
        sum.first += *value;
        sum.second += 1;
      }
    }
  }
}

// OFU from the window's products, their clock from `source`, and busy from
// the window's means: shared by recorded and live windows.
void CompleteWindow(OfuWindow& win, const ProductSums& products, const std::optional<OfuScale>& scale,
                    ClockSource source, double busy_threshold) {
  if (win.tensor_active && products.seconds > 0 && scale) {
    // The mean of the products A x f is what OFU multiplies: activity 1 at
    // that "clock".
    win.ofu = ComputeOfu(1, products.product / products.seconds, *scale);
    win.ofu_low = ComputeOfu(1, products.product_low / products.seconds, *scale);
    win.ofu_high = ComputeOfu(1, products.product_high / products.seconds, *scale);
    // The clock that, times the mean activity, gives the OFU; the plain mean
    // of the run clock when the tensor pipes were idle throughout.
    win.ofu_clock_mhz = products.activity > 0 ? products.product / products.activity
                                              : products.clock / products.seconds;
    win.clock_source = source;
  }
  CompleteNonTensor(win.non_tensor, win.sm_clock_mhz, scale ? scale->non_tensor : std::nullopt);
  const std::optional<double>& activity = win.gr_engine_active ? win.gr_engine_active : win.tensor_active;
  win.busy = activity && *activity >= busy_threshold;
}

OfuWindow Finish(std::int64_t k, const WindowSums& sums, const std::optional<OfuScale>& scale,
                 const WindowOptions& options) {
  OfuWindow win;
  win.start_s = static_cast<double>(k) * options.window_s;
  win.end_s = static_cast<double>(k + 1) * options.window_s;
  win.covered_s = sums.tensor_seconds;
  if (sums.tensor_seconds > 0) win.tensor_active = sums.tensor_weighted / sums.tensor_seconds;
  if (sums.engine_seconds > 0) win.gr_engine_active = sums.engine_weighted / sums.engine_seconds;
  for (std::size_t i = 0; i < kCudaCorePipes; ++i) {
    if (sums.pipe_seconds[i] > 0) win.non_tensor.active[i] = sums.pipe_weighted[i] / sums.pipe_seconds[i];
  }
  if (sums.clock_count > 0) {
    win.sm_clock_mhz = sums.clock_sum / sums.clock_count;
    win.sm_clock_min_mhz = sums.clock_min;
    win.sm_clock_max_mhz = sums.clock_max;
  }
  win.clock_readings = sums.clock_count;
  if (sums.power_count > 0) win.power_w = sums.power_sum / sums.power_count;
  win.clock_event_reasons = sums.reasons;
  for (std::size_t i = 0; i < sums.added.size(); ++i) {
    const auto& [sum, weight] = sums.added[i];
    if (weight > 0) win.added.Set(options.added_fields[i].name, sum / weight);
  }
  ProductSums products = sums.products;
  if (win.sm_clock_mhz) {
    for (const UnpairedPiece& piece : sums.unpaired) {
      products.Add(piece.tensor_active, *win.sm_clock_mhz, sums.reasons, ModelOf(scale), piece.seconds);
    }
  }
  CompleteWindow(win, products, scale, ModelOf(scale) ? ClockSource::kMeasuredModel : ClockSource::kReported,
                 options.busy_threshold);
  return win;
}

}  // namespace

WindowedGpu BuildWindows(std::span<const CounterSample> samples, const std::optional<OfuScale>& scale,
                         const WindowOptions& options) {
  WindowedGpu out;
  const double measured = MedianSpacing(TimesWith(samples, &CounterSample::tensor_active));
  if (options.interval_s) {
    out.interval_s = std::min(*options.interval_s, kMaxIntervalS);
  } else if (measured > 0) {
    out.interval_s = std::min(measured, kMaxIntervalS);
  } else {
    out.interval_s = options.fallback_interval_s;
    out.interval_assumed = true;
  }

  WindowMap windows;
  AddTensor(samples, out.interval_s, options, scale, &out.gaps, windows);
  AddActivity(samples, &CounterSample::gr_engine_active, out.interval_s, options, nullptr, windows,
              [](WindowSums& sums, double value, double seconds) {
                sums.engine_weighted += value * seconds;
                sums.engine_seconds += seconds;
              });
  // The CUDA-core pipes: gaps are the tensor field's to report.
  for (const CudaCorePipeInfo& pipe : CudaCorePipes()) {
    const std::size_t i = IndexOf(pipe.pipe);
    AddActivity(samples, InfoFor(pipe.activity).member, out.interval_s, options, nullptr, windows,
                [i](WindowSums& sums, double value, double s) {
                  sums.pipe_weighted[i] += value * s;
                  sums.pipe_seconds[i] += s;
                });
  }
  AddPointReadings(samples, options.window_s, windows);
  if (!options.added_fields.empty()) AddAddedFields(samples, out.interval_s, options, windows);

  out.windows.reserve(windows.size());
  for (const auto& [k, sums] : windows) {
    if (sums.tensor_seconds > 0 || sums.clock_count > 0) out.windows.push_back(Finish(k, sums, scale, options));
  }
  return out;
}

OfuWindow WindowOfSample(const CounterSample& sample, double window_s, const std::optional<OfuScale>& scale,
                         double busy_threshold, bool exact_cycles) {
  OfuWindow win;
  win.start_s = sample.time_s - window_s;
  win.end_s = sample.time_s;
  win.tensor_active = sample.tensor_active;
  win.covered_s = sample.tensor_active ? window_s : 0;
  win.gr_engine_active = sample.gr_engine_active;
  for (const CudaCorePipeInfo& pipe : CudaCorePipes()) win.non_tensor[pipe.pipe] = GetField(sample, pipe.activity);
  win.sm_clock_mhz = sample.sm_clock_mhz;
  win.clock_readings = sample.sm_clock_mhz ? 1 : 0;
  win.power_w = sample.power_w;
  win.clock_event_reasons = sample.clock_event_reasons;
  win.added = sample.added;
  const ClockModel* model = exact_cycles ? nullptr : ModelOf(scale);
  ProductSums products;
  if (sample.tensor_active && sample.sm_clock_mhz) {
    products.Add(*sample.tensor_active, *sample.sm_clock_mhz, sample.clock_event_reasons, model, window_s);
  }
  const ClockSource source = exact_cycles ? ClockSource::kExactCycles
                             : model      ? ClockSource::kMeasuredModel
                                          : ClockSource::kReported;
  CompleteWindow(win, products, scale, source, busy_threshold);
  return win;
}

}  // namespace ofu
