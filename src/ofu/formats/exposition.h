// Writing metrics in the Prometheus text format 0.0.4 or OpenMetrics 1.0.
//
// The two differ in ways that matter to scrapers:
//   * counters: OpenMetrics names the family without `_total` and the sample
//     with it; 0.0.4 names both `…_total`;
//   * info metrics: OpenMetrics has the `info` type (family `x`, sample
//     `x_info`); 0.0.4 has no such type, so they are gauges named `x_info`;
//   * OpenMetrics ends with `# EOF`.
// The writer takes the OpenMetrics family name (`ofu_utilized_seconds`,
// `ofu_gpu` for info) and does the rest. Values are written in the shortest
// form that reads back to the same double; NaN and infinities as Prometheus
// spells them.
//
// Thread-safety: a writer belongs to one thread.
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace ofu::formats {

enum class ExpositionFormat { kPrometheusText, kOpenMetrics };

enum class MetricType { kCounter, kGauge, kInfo };

// The Content-Type header for a format.
std::string_view ContentTypeOf(ExpositionFormat format);

// The format a scraper asks for in its Accept header: OpenMetrics when it
// lists application/openmetrics-text (Prometheus does, with a q-value), else
// text 0.0.4.
ExpositionFormat NegotiateExposition(std::string_view accept_header);

// Appends `value` escaped for a label value (backslash, double quote, newline).
void AppendEscapedLabelValue(std::string& out, std::string_view value);

using LabelPair = std::pair<std::string_view, std::string_view>;
using LabelPairs = std::initializer_list<LabelPair>;

class ExpositionWriter {
 public:
  explicit ExpositionWriter(ExpositionFormat format) : format_(format) {}

  // Starts a family; its samples follow.
  void Family(std::string_view family, MetricType type, std::string_view help);
  // One sample of the current family (labels in the order given).
  void Sample(LabelPairs labels, double value) {
    Sample(std::span<const LabelPair>(labels.begin(), labels.size()), value);
  }
  // The same, for a label set built at run time.
  void Sample(std::span<const LabelPair> labels, double value);
  // The text, with `# EOF` for OpenMetrics. The writer is spent afterwards.
  std::string Finish();

 private:
  ExpositionFormat format_;
  std::string sample_name_;
  std::string out_;
};

}  // namespace ofu::formats
