#include "ofu/analysis/prometheus_recording.h"

#include <cmath>
#include <map>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "ofu/sources/dcgm_exporter_names.h"

namespace ofu::analysis {
namespace {

// A label value as the text format quotes it: backslash, quote and newline escaped.
std::string Quoted(const std::string& value) {
  std::string out;
  out.reserve(value.size() + 2);
  out += '"';
  for (const char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string ValueText(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

}  // namespace

std::string DcgmExporterSelector() {
  std::vector<std::string> names;
  for (const std::string_view name : sources::DcgmExporterMetricNames()) names.emplace_back(name);
  names.emplace_back(sources::kRecordingInfoName);
  names.emplace_back(sources::kRecordingPhaseName);
  return fmt::format("{{__name__=~\"{}\"}}", history::PromExactAlternatives(names));
}

std::string ScrapeTextOfSeries(const std::vector<history::PromSeries>& series) {
  // A family's lines together, as a scrape has them.
  std::map<std::string, std::vector<const history::PromSeries*>> by_name;
  for (const history::PromSeries& s : series) by_name[s.Label("__name__")].push_back(&s);
  std::string out;
  for (const auto& [name, of_name] : by_name) {
    for (const history::PromSeries* s : of_name) {
      std::string labels;
      for (const auto& [key, value] : s->labels) {
        if (key == "__name__") continue;
        labels += fmt::format("{}{}={}", labels.empty() ? "" : ",", key, Quoted(value));
      }
      for (const auto& [t, v] : s->samples) {
        // Seconds with a fraction: the reader takes them as seconds (formats/prometheus_text.h).
        out += fmt::format("{}{{{}}} {} {:.3f}\n", name, labels, ValueText(v), t);
      }
    }
  }
  return out;
}

Result<sources::Recording> ReadPrometheusRecording(const std::string& url, double since_s, double until_s,
                                                   const sources::RecordingOptions& recording,
                                                   const history::RawSeriesOptions& read) {
  OFU_ASSIGN_OR_RETURN(auto series, history::ReadRawSeries(url, DcgmExporterSelector(), since_s, until_s, read));
  std::istringstream text(ScrapeTextOfSeries(series));
  return sources::ReadRecording(text, url, recording);
}

}  // namespace ofu::analysis
