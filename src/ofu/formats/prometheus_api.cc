#include "ofu/formats/prometheus_api.h"

#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ofu/formats/csv.h"
#include "ofu/formats/text_file.h"

namespace ofu::formats {
namespace {

using nlohmann::json;

// The answer read as the parser meets it (nlohmann's SAX interface), without
// a document of the whole answer in memory: a fleet's answer holds 100,000
// series, and their document was the largest part of a report's heap
// (docs/BENCHMARKS.md, "The 100,000-GPU month as 10 shards").
//
// It keeps what the query API's grammar (prometheus_api.h) names and skips
// everything else, at any depth. A member given twice counts as its last
// occurrence, as a document would keep it. The first malformed series is
// remembered and returned only for a success with a vector or a matrix,
// after the checks of the answer as a whole, in the order a reader of the
// document would meet them.
class AnswerReader {
 public:
  explicit AnswerReader(std::string_view source) : source_(source) {}

  // The answer once the text is parsed (sax_parse returned true).
  Result<PromApiAnswer> Finish() {
    if (!top_is_object_) return Error::MalformedInput("{}", NotPrometheusApiJson(source_));
    if (answer_.status != "success") {
      PromApiAnswer failed;
      failed.status = std::move(answer_.status);
      failed.error_type = error_type_.value_or("error");
      failed.error = error_.value_or("(no message)");
      return failed;
    }
    if ((answer_.result_type != "matrix" && answer_.result_type != "vector") || !result_is_array_) {
      return Error::MalformedInput("{}: the answer is not a vector or a matrix", source_);
    }
    if (series_error_) return *series_error_;
    return std::move(answer_);
  }

  // nlohmann::json_sax: each returns false only to stop the parse.
  bool null() { return Scalar(nullptr, nullptr); }
  bool boolean(bool /*value*/) { return Scalar(nullptr, nullptr); }
  bool number_integer(json::number_integer_t value) { return Number(static_cast<double>(value)); }
  bool number_unsigned(json::number_unsigned_t value) { return Number(static_cast<double>(value)); }
  bool number_float(json::number_float_t value, const json::string_t& /*text*/) { return Number(value); }
  bool string(json::string_t& value) { return Scalar(nullptr, &value); }
  bool binary(json::binary_t& /*value*/) { return Scalar(nullptr, nullptr); }
  bool key(json::string_t& name) {
    key_ = std::move(name);
    return true;
  }
  bool start_object(std::size_t /*elements*/);
  bool end_object();
  bool start_array(std::size_t /*elements*/);
  bool end_array();
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/, const nlohmann::detail::exception& /*e*/) {
    return false;
  }

 private:
  // Where the parser is: what the innermost open object or array is.
  enum class At {
    kTop,     // the answer's object
    kData,    // "data"
    kResult,  // "data"."result": the series
    kItem,    // one series
    kMetric,  // its labels
    kValue,   // a vector's [time, "value"]
    kValues,  // a matrix's [[time, "value"], ...]
    kPair,    // one of those pairs
    kSkip,    // anything else
  };
  // A [time, "value"] pair as it is read: which elements came, of what kind.
  struct Pair {
    std::size_t elements = 0;
    bool well_formed = true;  // element 0 a number, element 1 a string, nothing nested
    double time_s = 0;
    std::string value;
  };
  // The series being read.
  struct Item {
    bool metric = false;        // "metric" is an object (its last occurrence)
    bool has_value = false;     // "value" is present
    bool values_array = false;  // "values" is an array
    Pair value;
    bool values_well_formed = true;
    PromSeries series;
  };

  // What a value of the innermost container is, when it is not a scalar.
  enum class Container { kNone, kObject, kArray };

  At Inner() const { return stack_.empty() ? At::kTop : stack_.back(); }
  // Where a value that opens `opened` leads, its effect on what is read done.
  At Open(Container opened);
  // A member of a series (key_): "metric", "value" or "values" given as
  // `value` (kNone: a scalar); where it leads.
  At ItemMember(Container value);

  bool Number(double value) { return Scalar(&value, nullptr); }

  // A scalar where the innermost container is, under `key_` in an object.
  bool Scalar(const double* number, json::string_t* text) {
    if (stack_.empty()) return true;  // the whole text is a scalar: top_is_object_ stays false
    switch (Inner()) {
      case At::kTop:
        if (key_ == "status") answer_.status = text != nullptr ? *text : std::string();
        if (key_ == "errorType") error_type_ = text != nullptr ? std::optional(*text) : std::nullopt;
        if (key_ == "error") error_ = text != nullptr ? std::optional(*text) : std::nullopt;
        if (key_ == "data") DataIsNot();
        break;
      case At::kData:
        if (key_ == "resultType") answer_.result_type = text != nullptr ? *text : std::string();
        if (key_ == "result") ResultIs(false);
        break;
      case At::kResult: SeriesFails("a series in the answer has no metric"); break;
      case At::kItem: ItemMember(Container::kNone); break;
      case At::kMetric:
        if (text != nullptr) {
          item_.series.labels[key_] = *text;
        } else {
          item_.series.labels.erase(key_);
        }
        break;
      case At::kValue: AddElement(item_.value, number, text); break;
      case At::kValues: item_.values_well_formed = false; break;
      case At::kPair: AddElement(pair_, number, text); break;
      case At::kSkip: break;
    }
    return true;
  }

  static void AddElement(Pair& pair, const double* number, json::string_t* text) {
    if (pair.elements == 0 && number != nullptr) pair.time_s = *number;
    if (pair.elements == 1 && text != nullptr) pair.value = std::move(*text);
    if ((pair.elements == 0 && number == nullptr) || (pair.elements == 1 && text == nullptr) || pair.elements > 1) {
      pair.well_formed = false;
    }
    ++pair.elements;
  }

  // An object or array as an element of a pair: never well formed.
  static void Nested(Pair& pair) {
    pair.well_formed = false;
    ++pair.elements;
  }

  static bool Complete(const Pair& pair) { return pair.well_formed && pair.elements == 2; }

  void DataIsNot() {
    answer_.result_type.clear();
    ResultIs(false);
  }
  void ResultIs(bool array) {
    result_is_array_ = array;
    answer_.series.clear();
    series_error_.reset();
  }
  // The first malformed series' error: "<source>: <what>".
  void SeriesFails(std::string_view what) {
    if (!series_error_) series_error_ = Error{ErrorCode::kMalformedInput, fmt::format("{}: {}", source_, what)};
  }

  // The series just closed: its samples, or why it has none.
  void EndItem() {
    Item& item = item_;
    if (!item.metric) return SeriesFails("a series in the answer has no metric");
    if (item.values_array) {
      if (!item.values_well_formed) return SeriesFails("a sample is not [time, \"value\"]");
    } else if (item.has_value) {
      if (!Complete(item.value)) return SeriesFails("a sample is not [time, \"value\"]");
      item.series.samples.clear();
      item.series.samples.emplace_back(item.value.time_s, std::strtod(item.value.value.c_str(), nullptr));
    } else {
      return SeriesFails("a series in the answer has no values");
    }
    if (!series_error_) answer_.series.push_back(std::move(item.series));
  }

  std::string_view source_;
  std::vector<At> stack_;
  std::string key_;  // the member being read, in the innermost object
  bool top_is_object_ = false;
  bool result_is_array_ = false;
  std::optional<std::string> error_type_, error_;
  std::optional<Error> series_error_;
  Item item_;
  Pair pair_;
  PromApiAnswer answer_;
};

bool AnswerReader::start_object(std::size_t /*elements*/) {
  if (stack_.empty()) {
    top_is_object_ = true;
    stack_.push_back(At::kTop);
    return true;
  }
  stack_.push_back(Open(Container::kObject));
  return true;
}

bool AnswerReader::end_object() {
  const At closed = Inner();
  stack_.pop_back();
  if (closed == At::kItem) EndItem();
  return true;
}

bool AnswerReader::start_array(std::size_t /*elements*/) {
  // A whole text that is an array is skipped: top_is_object_ stays false.
  stack_.push_back(stack_.empty() ? At::kSkip : Open(Container::kArray));
  return true;
}

AnswerReader::At AnswerReader::Open(Container opened) {
  const bool object = opened == Container::kObject, array = opened == Container::kArray;
  switch (Inner()) {
    case At::kTop:
      if (key_ != "data") return At::kSkip;
      DataIsNot();  // an object's "resultType" and "result" come next
      return object ? At::kData : At::kSkip;
    case At::kData:
      if (key_ != "result") return At::kSkip;
      ResultIs(array);
      return array ? At::kResult : At::kSkip;
    case At::kResult:
      if (!object) {
        SeriesFails("a series in the answer has no metric");
        return At::kSkip;
      }
      item_ = Item{};
      return At::kItem;
    case At::kItem: return ItemMember(opened);
    case At::kMetric: item_.series.labels.erase(key_); return At::kSkip;
    case At::kValue: Nested(item_.value); return At::kSkip;
    case At::kValues:
      if (!array) {
        item_.values_well_formed = false;
        return At::kSkip;
      }
      pair_ = Pair{};
      return At::kPair;
    case At::kPair: Nested(pair_); return At::kSkip;
    case At::kSkip: return At::kSkip;
  }
  return At::kSkip;
}

AnswerReader::At AnswerReader::ItemMember(Container value) {
  if (key_ == "metric") {
    item_.metric = value == Container::kObject;
    item_.series.labels.clear();
    return item_.metric ? At::kMetric : At::kSkip;
  }
  if (key_ == "value") {
    item_.has_value = true;
    item_.value = Pair{};
    item_.value.well_formed = value == Container::kArray;
    return value == Container::kArray ? At::kValue : At::kSkip;
  }
  if (key_ == "values") {
    item_.values_array = value == Container::kArray;
    if (!item_.values_array) return At::kSkip;
    item_.values_well_formed = true;
    item_.series.samples.clear();
    return At::kValues;
  }
  return At::kSkip;
}

bool AnswerReader::end_array() {
  const At closed = Inner();
  stack_.pop_back();
  if (closed == At::kPair) {
    if (!Complete(pair_)) {
      item_.values_well_formed = false;
    } else if (item_.values_well_formed) {
      item_.series.samples.emplace_back(pair_.time_s, std::strtod(pair_.value.c_str(), nullptr));
    }
  }
  return true;
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
  AnswerReader reader(source_name);
  if (!json::sax_parse(json_text.begin(), json_text.end(), &reader)) {
    return Error::MalformedInput("{}", NotPrometheusApiJson(source_name));
  }
  return reader.Finish();
}

}  // namespace ofu::formats
