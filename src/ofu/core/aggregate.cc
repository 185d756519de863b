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
    if (histogram_.empty() && window_ofus_.size() < kExactPercentileWindows) {
      window_ofus_.push_back(*w.ofu);
    } else {
      if (histogram_.empty()) {
        histogram_.assign(kHistogramBins, 0);
        for (double ofu : window_ofus_) AddToHistogram(ofu);
        window_ofus_ = {};
      }
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
  fp64_.Add(w.non_tensor.fp64_active, span * weight);
  fp32_.Add(w.non_tensor.fp32_active, span * weight);
  fp16_.Add(w.non_tensor.fp16_active, span * weight);
  share_.Add(w.non_tensor.share_of_peak, span * weight);
  if (w.non_tensor.flops_upper_bound_tflops) {
    bound_tflop_ += *w.non_tensor.flops_upper_bound_tflops * span;
    bound_seconds_ += span * weight;
  }
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
  s.non_tensor.fp64_active = fp64_.Get();
  s.non_tensor.fp32_active = fp32_.Get();
  s.non_tensor.fp16_active = fp16_.Get();
  s.non_tensor.share_of_peak = share_.Get();
  if (bound_seconds_ > 0) s.non_tensor.flops_upper_bound_tflops = bound_tflop_ / bound_seconds_;
  return s;
}

void Summarizer::AddToHistogram(double ofu) {
  const double bin = std::floor(std::max(0.0, ofu) / kHistogramBinWidth);
  ++histogram_[static_cast<std::size_t>(std::min(bin, static_cast<double>(kHistogramBins - 1)))];
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
