#include "ofu/formats/exposition.h"

#include <cmath>

#include <fmt/format.h>

namespace ofu::formats {

std::string_view ContentTypeOf(ExpositionFormat format) {
  return format == ExpositionFormat::kOpenMetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                                  : "text/plain; version=0.0.4; charset=utf-8";
}

ExpositionFormat NegotiateExposition(std::string_view accept_header) {
  return accept_header.find("application/openmetrics-text") != std::string_view::npos
             ? ExpositionFormat::kOpenMetrics
             : ExpositionFormat::kPrometheusText;
}

void AppendEscapedLabelValue(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

void ExpositionWriter::Family(std::string_view family, MetricType type, std::string_view help) {
  const bool open_metrics = format_ == ExpositionFormat::kOpenMetrics;
  std::string_view type_name = "gauge";
  sample_name_ = std::string(family);
  if (type == MetricType::kCounter) {
    type_name = "counter";
    sample_name_ += "_total";
  } else if (type == MetricType::kInfo) {
    type_name = open_metrics ? "info" : "gauge";
    sample_name_ += "_info";
  }
  const std::string_view family_name = open_metrics ? family : std::string_view(sample_name_);
  fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", family_name, help, family_name, type_name);
}

void ExpositionWriter::Sample(std::span<const LabelPair> labels, double value) {
  out_ += sample_name_;
  if (!labels.empty()) {
    out_ += '{';
    bool first = true;
    for (const auto& [name, label_value] : labels) {
      if (!first) out_ += ',';
      first = false;
      out_ += name;
      out_ += "=\"";
      AppendEscapedLabelValue(out_, label_value);
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
  if (std::isnan(value)) {
    out_ += "NaN";
  } else if (std::isinf(value)) {
    out_ += value > 0 ? "+Inf" : "-Inf";
  } else {
    fmt::format_to(std::back_inserter(out_), "{}", value);
  }
  out_ += '\n';
}

std::string ExpositionWriter::Finish() {
  if (format_ == ExpositionFormat::kOpenMetrics) out_ += "# EOF\n";
  return std::move(out_);
}

}  // namespace ofu::formats
