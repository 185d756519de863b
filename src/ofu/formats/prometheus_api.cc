#include "ofu/formats/prometheus_api.h"

#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ofu/formats/csv.h"
#include "ofu/formats/text_file.h"

namespace ofu::formats {
namespace {

using nlohmann::json;

Result<PromSeries> SeriesOf(const json& item, std::string_view source) {
  PromSeries series;
  if (!item.is_object() || !item.contains("metric") || !item["metric"].is_object()) {
    return Error::MalformedInput("{}: a series in the answer has no metric", source);
  }
  for (const auto& [name, value] : item["metric"].items()) {
    if (value.is_string()) series.labels[name] = value.get<std::string>();
  }
  const auto add = [&](const json& pair) -> Status {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_string()) {
      return Error::MalformedInput("{}: a sample is not [time, \"value\"]", source);
    }
    series.samples.emplace_back(pair[0].get<double>(), std::strtod(pair[1].get<std::string>().c_str(), nullptr));
    return OkStatus();
  };
  if (item.contains("values") && item["values"].is_array()) {
    for (const json& pair : item["values"]) OFU_RETURN_IF_ERROR(add(pair));
  } else if (item.contains("value")) {
    OFU_RETURN_IF_ERROR(add(item["value"]));
  } else {
    return Error::MalformedInput("{}: a series in the answer has no values", source);
  }
  return series;
}

}  // namespace

const std::string& PromSeries::Label(const std::string& name) const {
  static const std::string kEmpty;
  auto it = labels.find(name);
  return it == labels.end() ? kEmpty : it->second;
}

PromApiSpan FindPrometheusApiJson(std::string_view text) {
  PromApiSpan span;
  const std::vector<std::string_view> lines = TextLines(text);
  for (std::size_t i = 0; i < lines.size() && !span.found; ++i) {
    const std::string_view trimmed = TrimSpace(lines[i]);
    if (trimmed.starts_with("# HELP") || trimmed.starts_with("# TYPE")) return span;
    if (!trimmed.starts_with("{")) continue;
    span.found = true;
    span.first_line = i + 1;
    span.begin = static_cast<std::size_t>(trimmed.data() - text.data());
  }
  if (!span.found) return span;
  const std::size_t close = text.rfind('}');
  if (close == std::string_view::npos || close < span.begin) return PromApiSpan{};
  span.end = close + 1;
  span.last_line = span.first_line;
  for (std::size_t i = span.begin; i < close; ++i) span.last_line += text[i] == '\n' ? 1 : 0;
  return span;
}

bool LooksLikePrometheusApiJson(std::string_view head) {
  const PromApiSpan span = FindPrometheusApiJson(head);
  if (!span.found) return false;
  const std::string_view object = head.substr(span.begin);
  return object.find("\"status\"") != std::string_view::npos &&
         (object.find("\"data\"") != std::string_view::npos || object.find("\"resultType\"") != std::string_view::npos);
}

std::string NotPrometheusApiJson(std::string_view source_name) {
  return fmt::format("{}: not the query API's JSON", source_name);
}

Result<PromApiAnswer> ReadPrometheusApiAnswer(std::string_view json_text, std::string_view source_name) {
  const json body = json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    return Error::MalformedInput("{}", NotPrometheusApiJson(source_name));
  }
  PromApiAnswer answer;
  answer.status = body.value("status", "");
  if (answer.status != "success") {
    answer.error_type = body.value("errorType", "error");
    answer.error = body.value("error", "(no message)");
    return answer;
  }
  const json& data = body.contains("data") ? body["data"] : json();
  answer.result_type = data.is_object() ? data.value("resultType", "") : "";
  if ((answer.result_type != "matrix" && answer.result_type != "vector") || !data.contains("result") ||
      !data["result"].is_array()) {
    return Error::MalformedInput("{}: the answer is not a vector or a matrix", source_name);
  }
  for (const json& item : data["result"]) {
    OFU_ASSIGN_OR_RETURN(auto series, SeriesOf(item, source_name));
    answer.series.push_back(std::move(series));
  }
  return answer;
}

}  // namespace ofu::formats
