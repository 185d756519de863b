#include "ofu/formats/mfu_log.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ofu/formats/csv.h"
#include "ofu/formats/text_file.h"

namespace ofu::formats {
namespace {

using nlohmann::json;

Error Malformed(const std::string& name, int line, std::string_view field, const std::string& what) {
  return Error::MalformedInput("{}", line > 0 ? fmt::format("{}:{}: field '{}': {}", name, line, field, what)
                                              : fmt::format("{}: field '{}': {}", name, field, what));
}

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::optional<double> ParseDouble(std::string_view text) {
  text = TrimSpace(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<bool> ParseBool(std::string_view text) {
  const std::string t = Lower(TrimSpace(text));
  if (t == "true" || t == "1" || t == "yes" || t == "on") return true;
  if (t == "false" || t == "0" || t == "no" || t == "off") return false;
  return std::nullopt;
}

// The lines of `text`, each with its 1-based number; blank lines and lines
// starting with '#' are skipped.
std::vector<std::pair<int, std::string_view>> Lines(std::string_view text) {
  std::vector<std::pair<int, std::string_view>> out;
  int number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    const std::string_view trimmed = TrimSpace(line);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    out.emplace_back(number, line);
  }
  return out;
}

// A CSV header's column names, lower case; an error names the first of
// `required` that it lacks.
Result<std::vector<std::string>> LowerHeader(const CsvRecord& header, const std::string& name,
                                             std::initializer_list<const char*> required) {
  std::vector<std::string> columns;
  for (const std::string& column : header.fields) columns.push_back(Lower(column));
  for (const char* column : required) {
    if (std::find(columns.begin(), columns.end(), column) == columns.end()) {
      return Malformed(name, header.line, column, "no such column in the header");
    }
  }
  return columns;
}

// A CSV row's fields by column name (a short row leaves the rest out).
std::map<std::string, std::string> FieldsOf(const std::vector<std::string>& header, const CsvRecord& row) {
  std::map<std::string, std::string> fields;
  for (size_t c = 0; c < row.fields.size(); ++c) fields[header[c]] = row.fields[c];
  return fields;
}

// A field's text from a CSV row or JSON object, before typing: absent when
// the column/key is missing, empty, or null.
class FieldReader {
 public:
  FieldReader(const std::string& name, int line) : name_(name), line_(line) {}

  Result<double> Number(std::string_view field, const std::optional<std::string>& text) const {
    if (!text) return Malformed(name_, line_, field, "missing");
    auto value = ParseDouble(*text);
    if (!value) return Malformed(name_, line_, field, fmt::format("'{}' is not a number", *text));
    return *value;
  }
  Result<ofu::Precision> Precision(std::string_view field, const std::string& text) const {
    auto precision = PrecisionFromName(Lower(TrimSpace(text)));
    if (!precision) {
      return Malformed(name_, line_, field,
                       fmt::format("'{}' is not a precision (bf16, fp16, tf32, fp8, fp4, fp32, int8)", text));
    }
    return *precision;
  }

 private:
  const std::string& name_;
  int line_;
};

// Typed checks shared by the CSV and JSON lines readers: one row's fields as text.
Result<ReportedMfu> RowFromFields(const std::map<std::string, std::string>& fields, const std::string& name, int line) {
  const FieldReader reader(name, line);
  const auto get = [&](const char* key) -> std::optional<std::string> {
    auto it = fields.find(key);
    if (it == fields.end() || TrimSpace(it->second).empty()) return std::nullopt;
    return it->second;
  };
  ReportedMfu row;
  row.line = line;
  auto job_id = get("job_id");
  if (!job_id) return Malformed(name, line, "job_id", "missing");
  row.job_id = std::string(TrimSpace(*job_id));
  OFU_ASSIGN_OR_RETURN(auto mfu, reader.Number("mfu", get("mfu")));
  if (mfu < 0) return Malformed(name, line, "mfu", fmt::format("{} is negative", mfu));
  row.mfu = mfu;
  auto precision_text = get("reference_precision");
  if (!precision_text) return Malformed(name, line, "reference_precision", "missing");
  OFU_ASSIGN_OR_RETURN(auto precision, reader.Precision("reference_precision", *precision_text));
  row.reference_precision = precision;
  for (auto [key, into] :
       {std::pair{"model_flops_per_token", &row.model_flops_per_token}, std::pair{"tokens_per_s", &row.tokens_per_s}}) {
    if (auto text = get(key)) {
      OFU_ASSIGN_OR_RETURN(auto value, reader.Number(key, text));
      if (value < 0) return Malformed(name, line, key, fmt::format("{} is negative", value));
      *into = value;
    }
  }
  if (auto text = get("peak_flops")) {
    OFU_ASSIGN_OR_RETURN(auto value, reader.Number("peak_flops", text));
    if (!(value > 0)) return Malformed(name, line, "peak_flops", fmt::format("{} is not positive", value));
    row.peak_flops = value;
  }
  if (auto text = get("recompute")) {
    row.recompute = ParseBool(*text);
    if (!row.recompute) return Malformed(name, line, "recompute", fmt::format("'{}' is not true or false", *text));
  }
  return row;
}

// A JSON value as the text the CSV reader would have seen.
std::optional<std::string> JsonText(const json& value) {
  if (value.is_null()) return std::nullopt;
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number()) return fmt::format("{}", value.get<double>());
  return value.dump();
}

}  // namespace

Result<MfuLog> ParseMfuLog(std::string_view text, const std::string& name) {
  MfuLog log;
  log.path = name;
  const auto lines = Lines(text);
  const bool json_lines = name.ends_with(".jsonl") || name.ends_with(".ndjson") || name.ends_with(".json") ||
                          (!lines.empty() && TrimSpace(lines.front().second).front() == '{');
  std::set<std::string> seen;
  const auto add = [&](Result<ReportedMfu> row) -> Status {
    if (!row.ok()) return row.error();
    if (!seen.insert(row->job_id).second) {
      return Malformed(name, row->line, "job_id", fmt::format("job {} is listed twice", row->job_id));
    }
    log.jobs.push_back(std::move(*row));
    return OkStatus();
  };
  if (json_lines) {
    for (const auto& [number, line] : lines) {
      const json object = json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (object.is_discarded() || !object.is_object()) {
        return Error::MalformedInput("{}:{}: not a JSON object", name, number);
      }
      std::map<std::string, std::string> fields;
      for (const auto& [key, value] : object.items()) {
        if (auto value_text = JsonText(value)) fields[key] = *value_text;
      }
      OFU_RETURN_IF_ERROR(add(RowFromFields(fields, name, number)));
    }
    return log;
  }
  OFU_ASSIGN_OR_RETURN(const auto records, ReadCsv(text, name, {.lenient = true}));
  if (records.empty()) return Error::MalformedInput("{}: empty (no CSV header)", name);
  OFU_ASSIGN_OR_RETURN(const auto header, LowerHeader(records.front(), name, {"job_id", "mfu", "reference_precision"}));
  for (size_t i = 1; i < records.size(); ++i) {
    const CsvRecord& record = records[i];
    if (record.fields.size() > header.size()) {
      return Error::MalformedInput("{}:{}: {} fields, the header has {}", name, record.line, record.fields.size(),
                                   header.size());
    }
    OFU_RETURN_IF_ERROR(add(RowFromFields(FieldsOf(header, record), name, record.line)));
  }
  return log;
}

Result<MfuLog> ReadMfuLog(const std::string& path) {
  OFU_ASSIGN_OR_RETURN(auto text, formats::ReadTextFile(path));
  return ParseMfuLog(text, path);
}

Result<JobCorrection> ParseCorrectionJson(std::string_view text, const std::string& name) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Error::MalformedInput(
        "{}: not a JSON object (expected `ofu correct --format json` "
        "output)",
        name);
  }
  JobCorrection out;
  out.origin = name;
  const auto number = [&](const char* key, std::optional<double>& into) -> Status {
    if (!doc.contains(key) || doc[key].is_null()) return OkStatus();
    if (!doc[key].is_number() || !std::isfinite(doc[key].get<double>()) || doc[key].get<double>() <= 0) {
      return Malformed(name, 0, key, "not a positive number or null");
    }
    into = doc[key].get<double>();
    return OkStatus();
  };
  OFU_RETURN_IF_ERROR(number("factor", out.factor));
  OFU_RETURN_IF_ERROR(number("mfu_scale", out.mfu_scale));
  if (doc.contains("reference_precision") && !doc["reference_precision"].is_null()) {
    if (!doc["reference_precision"].is_string()) return Malformed(name, 0, "reference_precision", "not a string");
    OFU_ASSIGN_OR_RETURN(auto precision, FieldReader(name, 0).Precision("reference_precision",
                                                                        doc["reference_precision"].get<std::string>()));
    out.reference_precision = precision;
  }
  if (doc.contains("precision_mix")) {
    if (!doc["precision_mix"].is_array()) return Malformed(name, 0, "precision_mix", "not an array");
    for (const json& item : doc["precision_mix"]) {
      if (!item.is_object() || !item.contains("precision") || !item["precision"].is_string() ||
          !item.contains("tensor_time_share") || !item["tensor_time_share"].is_number() ||
          !item.contains("relative_rate") || !item["relative_rate"].is_number()) {
        return Malformed(name, 0, "precision_mix",
                         "each entry needs precision (text), tensor_time_share and relative_rate (numbers)");
      }
      OFU_ASSIGN_OR_RETURN(auto precision, FieldReader(name, 0).Precision("precision_mix.precision",
                                                                          item["precision"].get<std::string>()));
      const double share = item["tensor_time_share"].get<double>(), rate = item["relative_rate"].get<double>();
      if (!std::isfinite(share) || share < 0 || share > 1 || !std::isfinite(rate) || rate <= 0) {
        return Malformed(name, 0, "precision_mix", "a share outside 0..1 or a rate that is not positive");
      }
      out.precision_mix.push_back({precision, share, rate});
    }
  }
  return out;
}

std::string CorrectionJson(const JobCorrection& correction, std::string_view synthetic) {
  json doc = json::object();
  if (!synthetic.empty()) doc["synthetic"] = synthetic;
  if (correction.reference_precision) doc["reference_precision"] = PrecisionName(*correction.reference_precision);
  if (correction.factor) doc["factor"] = *correction.factor;
  if (correction.mfu_scale) doc["mfu_scale"] = *correction.mfu_scale;
  if (!correction.precision_mix.empty()) {
    json mix = json::array();
    for (const JobCorrection::Share& share : correction.precision_mix) {
      mix.push_back({{"precision", PrecisionName(share.precision)},
                     {"tensor_time_share", share.share},
                     {"relative_rate", share.relative_rate}});
    }
    doc["precision_mix"] = std::move(mix);
  }
  return doc.dump(2) + "\n";
}

Result<std::map<std::string, JobCorrection>> ParseCorrectionCsv(std::string_view text, const std::string& name) {
  std::map<std::string, JobCorrection> out;
  OFU_ASSIGN_OR_RETURN(const auto records, ReadCsv(text, name, {.lenient = true}));
  if (records.empty()) return Error::MalformedInput("{}: empty (no CSV header)", name);
  OFU_ASSIGN_OR_RETURN(const auto header, LowerHeader(records.front(), name, {"job_id", "factor"}));
  for (size_t i = 1; i < records.size(); ++i) {
    const int number = records[i].line;
    if (records[i].fields.size() > header.size()) {
      return Error::MalformedInput("{}:{}: not a CSV row of the header's columns", name, number);
    }
    std::map<std::string, std::string> fields = FieldsOf(header, records[i]);
    const FieldReader reader(name, number);
    const std::string job_id = fields["job_id"];
    if (job_id.empty()) return Malformed(name, number, "job_id", "missing");
    JobCorrection correction;
    correction.origin = fmt::format("{}:{}", name, number);
    for (auto [key, into] : {std::pair{"factor", &correction.factor}, std::pair{"mfu_scale", &correction.mfu_scale}}) {
      if (fields[key].empty()) continue;
      OFU_ASSIGN_OR_RETURN(auto value, reader.Number(key, fields[key]));
      if (value <= 0) return Malformed(name, number, key, fmt::format("{} is not positive", value));
      *into = value;
    }
    if (!fields["reference_precision"].empty()) {
      OFU_ASSIGN_OR_RETURN(auto precision, reader.Precision("reference_precision", fields["reference_precision"]));
      correction.reference_precision = precision;
    }
    if (!out.emplace(job_id, correction).second) {
      return Malformed(name, number, "job_id", fmt::format("job {} is listed twice", job_id));
    }
  }
  return out;
}

Result<std::map<std::string, JobCorrection>> ReadCorrections(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::map<std::string, JobCorrection> out;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
    if (ec) return Error::Io("{}: cannot list: {}", path, ec.message());
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      OFU_ASSIGN_OR_RETURN(auto text, formats::ReadTextFile(file.string()));
      OFU_ASSIGN_OR_RETURN(auto correction, ParseCorrectionJson(text, file.string()));
      out.emplace(file.stem().string(), std::move(correction));
    }
    return out;
  }
  OFU_ASSIGN_OR_RETURN(auto text, formats::ReadTextFile(path));
  return ParseCorrectionCsv(text, path);
}

}  // namespace ofu::formats
