#include "ofu/gemm/result_csv.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "ofu/formats/csv.h"
#include "ofu/formats/text_file.h"

namespace ofu::gemm {
namespace {

// A column's name, how a row gives its text, and how its text sets a row.
// A setter returns an error message (empty: fine).
struct Column {
  std::string_view name;
  bool required;
  std::function<std::string(const CaseResult&)> get;
  std::function<std::string(std::string_view, CaseResult&)> set;
};

std::string FormatNumber(double value) { return fmt::format("{}", value); }

std::string FormatOptional(const std::optional<double>& value) { return value ? FormatNumber(*value) : std::string(); }
std::string FormatOptional(const std::optional<int>& value) {
  return value ? fmt::format("{}", *value) : std::string();
}
std::string FormatOptional(const std::optional<bool>& value) {
  return value ? std::string(*value ? "true" : "false") : std::string();
}

std::optional<double> ParseNumber(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

template <typename Int>
std::optional<Int> ParseInteger(std::string_view text) {
  Int value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

Column Text(std::string_view name, bool required, std::string CaseResult::*field) {
  return Column{name, required, [field](const CaseResult& r) { return r.*field; },
                [field](std::string_view text, CaseResult& r) {
                  r.*field = std::string(text);
                  return std::string();
                }};
}

Column Size(std::string_view name, int64_t CaseResult::*field) {
  return Column{name, true, [field](const CaseResult& r) { return fmt::format("{}", r.*field); },
                [field](std::string_view text, CaseResult& r) {
                  auto v = ParseInteger<int64_t>(text);
                  if (!v || *v < 0) return fmt::format("'{}' is not a size (a whole number, 0 or more)", text);
                  r.*field = *v;
                  return std::string();
                }};
}

Column Count(std::string_view name, int64_t CaseResult::*field) {
  Column c = Size(name, field);
  c.required = false;
  return c;
}

Column Number(std::string_view name, double CaseResult::*field) {
  return Column{name, false, [field](const CaseResult& r) { return FormatNumber(r.*field); },
                [field](std::string_view text, CaseResult& r) {
                  auto v = ParseNumber(text);
                  if (!v) return fmt::format("'{}' is not a number", text);
                  r.*field = *v;
                  return std::string();
                }};
}

Column OptionalNumber(std::string_view name, std::optional<double> CaseResult::*field) {
  return Column{name, false, [field](const CaseResult& r) { return FormatOptional(r.*field); },
                [field](std::string_view text, CaseResult& r) {
                  if (text.empty()) {
                    (r.*field).reset();
                    return std::string();
                  }
                  auto v = ParseNumber(text);
                  if (!v) return fmt::format("'{}' is not a number (leave it empty when absent)", text);
                  r.*field = *v;
                  return std::string();
                }};
}

// A field of one of the row's two tilings.
Column TileField(std::string_view name, Tiling CaseResult::*tiling, std::optional<int> Tiling::*field) {
  return Column{name, false, [tiling, field](const CaseResult& r) { return FormatOptional((r.*tiling).*field); },
                [tiling, field](std::string_view text, CaseResult& r) {
                  if (text.empty()) {
                    ((r.*tiling).*field).reset();
                    return std::string();
                  }
                  auto v = ParseInteger<int>(text);
                  if (!v || *v <= 0) return fmt::format("'{}' is not a positive whole number", text);
                  (r.*tiling).*field = *v;
                  return std::string();
                }};
}

std::vector<Column> Columns() {
  using R = CaseResult;
  std::vector<Column> c;
  c.push_back(Text("sweep", true, &R::sweep));
  c.push_back(Text("group", true, &R::group));
  c.push_back(Size("m", &R::m));
  c.push_back(Size("n", &R::n));
  c.push_back(Size("k", &R::k));
  c.push_back(Column{"precision", true, [](const R& r) { return std::string(kernels::PrecisionName(r.precision)); },
                     [](std::string_view text, R& r) {
                       auto p = kernels::PrecisionFromName(text);
                       if (!p) return fmt::format("'{}' is not a precision (fp16, bf16, tf32, fp8, fp4, fp32)", text);
                       r.precision = *p;
                       return std::string();
                     }});
  c.push_back(Column{"layout", true, [](const R& r) { return r.layout; },
                     [](std::string_view text, R& r) {
                       if (text != "nn" && text != "nt" && text != "tn" && text != "tt") {
                         return fmt::format("'{}' is not a layout (nn, nt, tn, tt)", text);
                       }
                       r.layout = std::string(text);
                       return std::string();
                     }});
  c.push_back(OptionalNumber("power_limit_w", &R::power_limit_w));
  c.push_back(Text("gpu", false, &R::gpu));
  c.push_back(Text("kernel_name", false, &R::kernel_name));
  c.push_back(Text("kernel_family", false, &R::kernel_family));
  c.push_back(Column{"tensor_core", false, [](const R& r) { return FormatOptional(r.tensor_core); },
                     [](std::string_view text, R& r) {
                       if (text.empty()) {
                         r.tensor_core.reset();
                       } else if (text == "true" || text == "false") {
                         r.tensor_core = text == "true";
                       } else {
                         return fmt::format("'{}' is not true, false or empty", text);
                       }
                       return std::string();
                     }});
  const std::pair<std::string_view, Tiling R::*> sides[] = {{"algo", &R::algorithm_tiling}, {"name", &R::name_tiling}};
  const std::pair<std::string_view, std::optional<int> Tiling::*> fields[] = {
      {"tile_m", &Tiling::tile_m}, {"tile_n", &Tiling::tile_n},       {"tile_k", &Tiling::tile_k},
      {"stages", &Tiling::stages}, {"cluster_m", &Tiling::cluster_m}, {"cluster_n", &Tiling::cluster_n}};
  // Column names must outlive the table: they come from a fixed list.
  static constexpr std::string_view kTileNames[2][6] = {
      {"algo_tile_m", "algo_tile_n", "algo_tile_k", "algo_stages", "algo_cluster_m", "algo_cluster_n"},
      {"name_tile_m", "name_tile_n", "name_tile_k", "name_stages", "name_cluster_m", "name_cluster_n"}};
  for (std::size_t s = 0; s < 2; ++s) {
    for (std::size_t f = 0; f < 6; ++f) c.push_back(TileField(kTileNames[s][f], sides[s].second, fields[f].second));
  }
  c.push_back(Column{"tile_check", false, [](const R& r) { return std::string(TileCheckName(r.tile_check)); },
                     [](std::string_view text, R& r) {
                       auto check = text.empty() ? std::optional<TileCheck>(TileCheck::kUnknown)
                                                 : TileCheckFromName(text);
                       if (!check) return fmt::format("'{}' is not agree, swapped, disagree or unknown", text);
                       r.tile_check = *check;
                       return std::string();
                     }});
  c.push_back(Text("correction_tiling", false, &R::correction_tiling));
  c.push_back(Count("iterations", &R::iterations));
  c.push_back(Number("elapsed_s", &R::elapsed_s));
  c.push_back(Number("time_per_iteration_us", &R::time_per_iteration_us));
  c.push_back(Number("achieved_tflops", &R::achieved_tflops));
  c.push_back(OptionalNumber("peak_tflops", &R::peak_tflops));
  c.push_back(OptionalNumber("mfu", &R::mfu));
  c.push_back(OptionalNumber("mfu_span_s", &R::mfu_span_s));
  c.push_back(Column{"windows", false, [](const R& r) { return fmt::format("{}", r.windows); },
                     [](std::string_view text, R& r) {
                       auto v = ParseInteger<int>(text);
                       if (!v || *v < 0) return fmt::format("'{}' is not a count", text);
                       r.windows = *v;
                       return std::string();
                     }});
  c.push_back(OptionalNumber("tensor_active", &R::tensor_active));
  c.push_back(OptionalNumber("sm_clock_mhz", &R::sm_clock_mhz));
  c.push_back(OptionalNumber("sm_clock_point_mhz", &R::sm_clock_point_mhz));
  c.push_back(OptionalNumber("source_clock_mhz", &R::source_clock_mhz));
  c.push_back(OptionalNumber("sm_clock_run_mhz", &R::sm_clock_run_mhz));
  c.push_back(OptionalNumber("sm_clock_run_min_mhz", &R::sm_clock_run_min_mhz));
  c.push_back(OptionalNumber("sm_clock_run_max_mhz", &R::sm_clock_run_max_mhz));
  c.push_back(OptionalNumber("nvml_over_run", &R::nvml_over_run));
  c.push_back(OptionalNumber("padding_factor", &R::padding_factor));
  c.push_back(OptionalNumber("throughput_factor", &R::throughput_factor));
  c.push_back(OptionalNumber("ofu_raw", &R::ofu_raw));
  c.push_back(OptionalNumber("ofu_point", &R::ofu_point));
  c.push_back(OptionalNumber("ofu_oversampled", &R::ofu_oversampled));
  c.push_back(OptionalNumber("ofu_exact", &R::ofu_exact));
  c.push_back(OptionalNumber("ofu_run", &R::ofu_run));
  c.push_back(OptionalNumber("ofu_corrected", &R::ofu_corrected));
  c.push_back(OptionalNumber("err_raw_pp", &R::err_raw_pp));
  c.push_back(OptionalNumber("err_point_pp", &R::err_point_pp));
  c.push_back(OptionalNumber("err_oversampled_pp", &R::err_oversampled_pp));
  c.push_back(OptionalNumber("err_exact_pp", &R::err_exact_pp));
  c.push_back(OptionalNumber("err_corrected_pp", &R::err_corrected_pp));
  c.push_back(OptionalNumber("err_run_pp", &R::err_run_pp));
  c.push_back(Text("note", false, &R::note));
  return c;
}

}  // namespace

std::vector<std::string_view> ResultColumns() {
  std::vector<std::string_view> names;
  for (const Column& c : Columns()) names.push_back(c.name);
  return names;
}

std::string ResultCsvHeader() {
  std::string line;
  for (const Column& c : Columns()) {
    if (!line.empty()) line += ',';
    line += c.name;
  }
  return line + "\n";
}

std::string ResultCsvRow(const CaseResult& row) {
  std::string line;
  bool first = true;
  for (const Column& c : Columns()) {
    if (!first) line += ',';
    first = false;
    line += formats::CsvField(c.get(row));
  }
  return line + "\n";
}

Result<std::vector<CaseResult>> ParseResultCsv(std::string_view text, std::string_view source_name) {
  OFU_ASSIGN_OR_RETURN(auto records, formats::ReadCsv(text, source_name));
  if (records.empty()) {
    return Error::MalformedInput("{}: empty file: expected a header line", source_name);
  }
  const std::vector<Column> columns = Columns();
  const formats::CsvRecord& header = records.front();
  // Which known column each field of a row goes to (nullptr: ignored).
  std::vector<const Column*> field_column(header.fields.size(), nullptr);
  std::map<std::string_view, std::size_t> seen;
  for (std::size_t f = 0; f < header.fields.size(); ++f) {
    for (const Column& c : columns) {
      if (c.name != header.fields[f]) continue;
      if (seen.count(c.name) > 0) {
        return Error::MalformedInput("{}:{}: column '{}' appears twice", source_name, header.line, c.name);
      }
      seen[c.name] = f;
      field_column[f] = &c;
    }
  }
  for (const Column& c : columns) {
    if (c.required && seen.count(c.name) == 0) {
      return Error::MalformedInput("{}:{}: the header lacks required column '{}' (is this an ofu-gemm result file?)",
                                   source_name, header.line, c.name);
    }
  }
  std::vector<CaseResult> rows;
  for (std::size_t r = 1; r < records.size(); ++r) {
    const formats::CsvRecord& record = records[r];
    if (record.fields.size() != header.fields.size()) {
      return Error::MalformedInput("{}:{}: {} fields where the header has {}", source_name, record.line,
                                   record.fields.size(), header.fields.size());
    }
    CaseResult row;
    for (std::size_t f = 0; f < record.fields.size(); ++f) {
      if (field_column[f] == nullptr) continue;
      const std::string problem = field_column[f]->set(record.fields[f], row);
      if (!problem.empty()) {
        return Error::MalformedInput("{}:{}: column '{}': {}", source_name, record.line, field_column[f]->name,
                                     problem);
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<std::vector<CaseResult>> ReadResultCsvFile(const std::string& path) {
  OFU_ASSIGN_OR_RETURN(std::string text, formats::ReadTextFile(path));
  return ParseResultCsv(text, path);
}

}  // namespace ofu::gemm
