#include "ofu/core/aggregate.h"

#include <algorithm>
#include <cmath>

#include "ofu/core/ofu_math.h"

namespace ofu {

void Summarizer::Add(const OfuWindow& w, double weight) {
  const double seconds = w.covered_s * weight;
  if (w.tensor_active) {
    tensor_weighted_ += *w.tensor_active * seconds;
    tensor_seconds_ += seconds;
    if (!w.busy) idle_seconds_ += seconds;
    if (!w.sm_clock_mhz) ++without_clock_;
  } else if (w.sm_clock_mhz) {
    ++without_tensor_;
  }
  if (w.ofu) {
    ofu_weighted_ += *w.ofu * seconds;
    seconds_ += seconds;
    ++windows_;
    if (w.ofu_low && w.ofu_high) {
      ofu_low_weighted_ += *w.ofu_low * seconds;
      ofu_high_weighted_ += *w.ofu_high * seconds;
      range_seconds_ += seconds;
    }
    if (w.ofu_clock_mhz && w.tensor_active) {
      clock_activity_weighted_ += *w.ofu_clock_mhz * *w.tensor_active * seconds;
      activity_seconds_weighted_ += *w.tensor_active * seconds;
    }
    if (w.clock_source) clock_sources_ |= static_cast<std::uint8_t>(*w.clock_source);
    if (histogram_.empty() && window_ofus_.size() < kExactPercentileWindows) {
      window_ofus_.push_back(*w.ofu);
    } else {
      UseHistogram();
      AddToHistogram(*w.ofu);
    }
    if (w.busy) {
      active_weighted_ += *w.ofu * seconds;
      busy_seconds_ += seconds;
    }
  }
  if (w.sm_clock_mhz) {
    clock_sum_ += *w.sm_clock_mhz * w.clock_readings;
    clock_readings_ += w.clock_readings;
    clock_min_ = std::min(clock_min_.value_or(*w.sm_clock_min_mhz), *w.sm_clock_min_mhz);
    clock_max_ = std::max(clock_max_.value_or(*w.sm_clock_max_mhz), *w.sm_clock_max_mhz);
  }
  if (w.power_w) {
    power_sum_ += *w.power_w;
    ++power_windows_;
  }
  if (w.clock_event_reasons) reasons_ = reasons_.value_or(0) | *w.clock_event_reasons;
  const double span = w.covered_s > 0 ? w.covered_s : w.end_s - w.start_s;
  for (std::size_t i = 0; i < kCudaCorePipes; ++i) pipes_[i].Add(w.non_tensor.active[i], span * weight);
  share_.Add(w.non_tensor.share_of_peak, span * weight);
  if (!w.added.empty()) {
    for (const auto& [name, value] : w.added.all()) added_[name].Add(value, span * weight);
  }
  if (w.non_tensor.flops_upper_bound_tflops) {
    bound_tflop_ += *w.non_tensor.flops_upper_bound_tflops * span;
    bound_seconds_ += span * weight;
  }
}

void Summarizer::Add(const WindowTotals& t, double weight) {
  tensor_weighted_ += t.tensor_active_seconds * weight;
  tensor_seconds_ += t.tensor_seconds * weight;
  idle_seconds_ += t.idle_seconds * weight;
  without_clock_ += static_cast<int>(t.windows_without_clock);
  without_tensor_ += static_cast<int>(t.windows_without_tensor);
  ofu_weighted_ += t.ofu_seconds * weight;
  seconds_ += t.seconds * weight;
  active_weighted_ += t.busy_ofu_seconds * weight;
  busy_seconds_ += t.busy_seconds * weight;
  if (!t.ofu_bins.empty()) UseHistogram();
  for (const auto& [bin, count] : t.ofu_bins) {
    histogram_[static_cast<std::size_t>(std::clamp(bin, 0, kHistogramBins - 1))] += static_cast<std::uint32_t>(count);
    windows_ += count;
  }
  if (t.clock_readings > 0) {
    clock_sum_ += t.clock_sum_mhz;
    clock_readings_ += static_cast<int>(t.clock_readings);
    if (t.clock_min_mhz) clock_min_ = std::min(clock_min_.value_or(*t.clock_min_mhz), *t.clock_min_mhz);
    if (t.clock_max_mhz) clock_max_ = std::max(clock_max_.value_or(*t.clock_max_mhz), *t.clock_max_mhz);
  }
  auto add = [weight](Mean& into, const WindowTotals::Weighted& part) {
    into.weighted += part.value_seconds * weight;
    into.seconds += part.seconds * weight;
  };
  for (std::size_t i = 0; i < kCudaCorePipes; ++i) add(pipes_[i], t.pipes[i]);
  add(share_, t.share_of_peak);
  bound_tflop_ += t.bound_tflop;  // TFLOP are not weighted, their seconds are (as in Add of a window)
  bound_seconds_ += t.bound_seconds * weight;
}

Summary Summarizer::Finish() const {
  Summary s;
  s.seconds = seconds_;
  s.busy_seconds = busy_seconds_;
  s.tensor_seconds = tensor_seconds_;
  s.windows = static_cast<int>(windows_);
  s.windows_without_clock = without_clock_;
  s.windows_without_tensor = without_tensor_;
  if (seconds_ > 0) s.ofu = ofu_weighted_ / seconds_;
  // Every window's range, or none: a range over part of the seconds would
  // not bound the whole.
  if (seconds_ > 0 && range_seconds_ >= seconds_ * (1 - 1e-12)) {
    s.ofu_low = ofu_low_weighted_ / range_seconds_;
    s.ofu_high = ofu_high_weighted_ / range_seconds_;
  }
  if (activity_seconds_weighted_ > 0) s.ofu_clock_mhz = clock_activity_weighted_ / activity_seconds_weighted_;
  s.clock_sources = clock_sources_;
  if (busy_seconds_ > 0) s.active_ofu = active_weighted_ / busy_seconds_;
  if (!histogram_.empty()) {
    s.p10 = HistogramPercentile(0.10);
    s.p50 = HistogramPercentile(0.50);
    s.p90 = HistogramPercentile(0.90);
  } else if (!window_ofus_.empty()) {
    s.p10 = Percentile(window_ofus_, 0.10);
    s.p50 = Percentile(window_ofus_, 0.50);
    s.p90 = Percentile(window_ofus_, 0.90);
  }
  if (tensor_seconds_ > 0) {
    s.tensor_active = tensor_weighted_ / tensor_seconds_;
    s.idle_fraction = idle_seconds_ / tensor_seconds_;
  }
  if (clock_readings_ > 0) s.sm_clock_mhz = clock_sum_ / clock_readings_;
  s.sm_clock_min_mhz = clock_min_;
  s.sm_clock_max_mhz = clock_max_;
  if (power_windows_ > 0) s.power_w = power_sum_ / power_windows_;
  s.clock_event_reasons = reasons_;
  for (std::size_t i = 0; i < kCudaCorePipes; ++i) s.non_tensor.active[i] = pipes_[i].Get();
  s.non_tensor.share_of_peak = share_.Get();
  if (bound_seconds_ > 0) s.non_tensor.flops_upper_bound_tflops = bound_tflop_ / bound_seconds_;
  for (const auto& [name, mean] : added_) {
    if (const std::optional<double> value = mean.Get()) s.added.emplace(name, *value);
  }
  return s;
}

int Summarizer::HistogramBin(double ofu) {
  const double bin = std::floor(std::max(0.0, ofu) / kHistogramBinWidth);
  return static_cast<int>(std::min(bin, static_cast<double>(kHistogramBins - 1)));
}

void Summarizer::AddToHistogram(double ofu) { ++histogram_[static_cast<std::size_t>(HistogramBin(ofu))]; }

void Summarizer::UseHistogram() {
  if (!histogram_.empty()) return;
  histogram_.assign(kHistogramBins, 0);
  for (double ofu : window_ofus_) AddToHistogram(ofu);
  window_ofus_ = {};
}

// The rule of Percentile (linear between the ranks around q·(n − 1)), with
// each value taken as the middle of its bin.
double Summarizer::HistogramPercentile(double q) const {
  const double rank = q * static_cast<double>(windows_ - 1);
  const auto value_at = [&](std::int64_t k) {
    std::int64_t seen = 0;
    for (int bin = 0; bin < kHistogramBins; ++bin) {
      seen += histogram_[static_cast<std::size_t>(bin)];
      if (seen > k) return (bin + 0.5) * kHistogramBinWidth;
    }
    return (kHistogramBins - 0.5) * kHistogramBinWidth;
  };
  const auto lower = static_cast<std::int64_t>(std::floor(rank));
  const auto upper = static_cast<std::int64_t>(std::ceil(rank));
  const double low = value_at(lower);
  return low + (value_at(upper) - low) * (rank - static_cast<double>(lower));
}

}  // namespace ofu
