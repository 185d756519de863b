#include "ofu/gemm/sweep.h"

#include <cmath>
#include <functional>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "ofu/formats/text_file.h"

namespace ofu::gemm {
namespace {

using kernels::Precision;

Error SweepError(std::string_view file, const toml::source_region& where, std::string_view what) {
  return Error::MalformedInput("{}:{}: {}", file, where.begin.line, what);
}

// Reads the fields of one table (the file's top level or a [[group]]),
// each with its own type check; keys never read are reported as unknown.
class FieldReader {
 public:
  FieldReader(std::string_view file, const toml::table& table, std::string context)
      : file_(file), table_(table), context_(std::move(context)) {}

  const toml::node* Get(std::string_view key) {
    known_.insert(std::string(key));
    return table_.get(key);
  }

  Error Fail(const toml::node& node, std::string_view key, std::string_view what) const {
    return SweepError(file_, node.source(), fmt::format("{}field '{}': {}", context_, key, what));
  }

  Status String(std::string_view key, std::string& out) {
    const toml::node* node = Get(key);
    if (node == nullptr) return OkStatus();
    auto v = node->value<std::string>();
    if (!v) return Fail(*node, key, "expected a string");
    out = *v;
    return OkStatus();
  }

  Status Seconds(std::string_view key, double& out) {
    const toml::node* node = Get(key);
    if (node == nullptr) return OkStatus();
    auto v = node->value<double>();  // integers convert too
    if (!v || !std::isfinite(*v)) return Fail(*node, key, "expected a number of seconds");
    if (*v < kMinSteadySeconds || *v > 3600) {
      return Fail(*node, key,
                  fmt::format("{} is out of range: the steady loop must last {} to 3600 s so that the counters "
                              "cover several windows",
                              *v, kMinSteadySeconds));
    }
    out = *v;
    return OkStatus();
  }

  Status Bool(std::string_view key, bool& out) {
    const toml::node* node = Get(key);
    if (node == nullptr) return OkStatus();
    auto v = node->value_exact<bool>();
    if (!v) return Fail(*node, key, "expected true or false");
    out = *v;
    return OkStatus();
  }

  Status Iterations(std::string_view key, int64_t& out) {
    const toml::node* node = Get(key);
    if (node == nullptr) return OkStatus();
    auto v = node->value_exact<int64_t>();
    if (!v || *v < 0 || *v > 1'000'000'000) return Fail(*node, key, "expected an integer from 0 to 1000000000");
    out = *v;
    return OkStatus();
  }

  // An array (possibly absent) whose items `read` converts one by one.
  template <typename Item>
  Status Array(std::string_view key, std::vector<Item>& out,
               const std::function<Result<Item>(const toml::node&)>& read) {
    const toml::node* node = Get(key);
    if (node == nullptr) return OkStatus();
    const toml::array* array = node->as_array();
    if (array == nullptr) return Fail(*node, key, "expected an array");
    for (const toml::node& item : *array) {
      Result<Item> value = read(item);
      if (!value.ok()) return Fail(item, key, value.error().message);
      out.push_back(std::move(value).value());
    }
    return OkStatus();
  }

  Status RejectUnknown() const {
    for (const auto& [key, node] : table_) {
      const std::string name(key.str());
      if (known_.count(name) == 0)
        return SweepError(file_, node.source(), fmt::format("{}unknown key '{}'", context_, name));
    }
    return OkStatus();
  }

 private:
  std::string_view file_;
  const toml::table& table_;
  std::string context_;
  std::set<std::string> known_;
};

Result<int64_t> ReadDimension(const toml::node& node) {
  auto v = node.value_exact<int64_t>();
  if (!v || *v < 1 || *v > kMaxDimension) {
    return Error::MalformedInput("expected a size from 1 to {}", kMaxDimension);
  }
  return *v;
}

struct Shape {
  int64_t m = 0, n = 0, k = 0;
};

Result<Shape> ReadShape(const toml::node& node) {
  const toml::array* triple = node.as_array();
  if (triple == nullptr || triple->size() != 3) {
    return Error::MalformedInput("expected [M, N, K]");
  }
  Shape shape;
  int64_t* dims[3] = {&shape.m, &shape.n, &shape.k};
  for (std::size_t i = 0; i < 3; ++i) {
    auto dim = ReadDimension(*triple->get(i));
    if (!dim.ok()) return Error::MalformedInput("[M, N, K]: {}", dim.error().message);
    *dims[i] = *dim;
  }
  return shape;
}

Result<Precision> ReadPrecision(const toml::node& node) {
  auto text = node.value<std::string>();
  std::optional<Precision> precision = text ? kernels::PrecisionFromName(*text) : std::nullopt;
  if (!precision || !IsSweepPrecision(*precision)) {
    return Error::MalformedInput("{} is not a sweep precision (expected fp16, bf16, tf32, fp8, fp4 or fp32)",
                                 text ? "'" + *text + "'" : std::string("a non-string"));
  }
  return *precision;
}

Result<std::string> ReadLayout(const toml::node& node) {
  auto text = node.value<std::string>();
  if (!text || (*text != "nn" && *text != "nt" && *text != "tn" && *text != "tt")) {
    return Error::MalformedInput("expected a layout: nn, nt, tn or tt (the ops of A and B)");
  }
  return *text;
}

Result<double> ReadFraction(const toml::node& node) {
  auto v = node.value<double>();
  if (!v || !(*v > 0.1 && *v < 1.0)) {
    return Error::MalformedInput("expected a fraction of the default power limit, above 0.1 and below 1");
  }
  return *v;
}

struct Defaults {
  double min_seconds = kDefaultSteadySeconds;
};

Status ReadGroup(std::string_view file, const toml::table& table, std::size_t index, const Sweep& sweep,
                 const Defaults& defaults, std::vector<GemmCase>& out) {
  FieldReader fields(file, table, fmt::format("group {}: ", index + 1));
  GemmCase base;
  base.sweep = sweep.name;
  base.group = fmt::format("group-{}", index + 1);
  base.min_seconds = defaults.min_seconds;
  std::vector<int64_t> square;
  std::vector<Shape> shapes;
  std::vector<Precision> precisions;
  std::vector<std::string> layouts;
  std::vector<double> fractions;
  OFU_RETURN_IF_ERROR(fields.String("name", base.group));
  OFU_RETURN_IF_ERROR(fields.Array<int64_t>("square", square, ReadDimension));
  OFU_RETURN_IF_ERROR(fields.Array<Shape>("shapes", shapes, ReadShape));
  OFU_RETURN_IF_ERROR(fields.Array<Precision>("precisions", precisions, ReadPrecision));
  OFU_RETURN_IF_ERROR(fields.Array<std::string>("layouts", layouts, ReadLayout));
  OFU_RETURN_IF_ERROR(fields.Iterations("iterations", base.min_iterations));
  OFU_RETURN_IF_ERROR(fields.Seconds("min_seconds", base.min_seconds));
  OFU_RETURN_IF_ERROR(fields.Bool("clock_study", base.clock_study));
  OFU_RETURN_IF_ERROR(fields.Array<double>("power_limit_fractions", fractions, ReadFraction));
  OFU_RETURN_IF_ERROR(fields.RejectUnknown());

  // Square sizes first, then the explicit shapes, each in file order.
  std::vector<Shape> squares;
  for (int64_t size : square) squares.push_back(Shape{size, size, size});
  shapes.insert(shapes.begin(), squares.begin(), squares.end());
  if (shapes.empty()) {
    return SweepError(file, table.source(),
                      fmt::format("group {} ('{}'): no shapes (give 'square' or 'shapes')", index + 1, base.group));
  }
  if (precisions.empty()) {
    return SweepError(file, table.source(),
                      fmt::format("group {} ('{}'): field 'precisions' is missing or empty", index + 1, base.group));
  }
  if (layouts.empty()) layouts.push_back("tn");
  if (!fractions.empty() && !base.clock_study) {
    return SweepError(file, table.source(),
                      fmt::format("group {} ('{}'): field 'power_limit_fractions' needs clock_study = true", index + 1,
                                  base.group));
  }
  for (Precision precision : precisions) {
    const bool narrow = precision == Precision::kFp8 || precision == Precision::kFp4;
    for (const std::string& layout : layouts) {
      if (narrow && layout != "tn") {
        return SweepError(file, table.source(),
                          fmt::format("group {} ('{}'): precision {} takes only layout \"tn\" (cuBLASLt needs A "
                                      "transposed and B not), not \"{}\"",
                                      index + 1, base.group, kernels::PrecisionName(precision), layout));
      }
    }
  }

  std::vector<std::optional<double>> limits{std::nullopt};
  for (double f : fractions) limits.emplace_back(f);
  for (const Shape& shape : shapes) {
    for (Precision precision : precisions) {
      for (const std::string& layout : layouts) {
        for (const std::optional<double>& limit : limits) {
          if (out.size() >= kMaxCases) {
            return SweepError(file, table.source(), fmt::format("the sweep expands to more than {} cases", kMaxCases));
          }
          GemmCase c = base;
          c.m = shape.m;
          c.n = shape.n;
          c.k = shape.k;
          c.precision = precision;
          c.layout = layout;
          c.power_limit_fraction = limit;
          out.push_back(std::move(c));
        }
      }
    }
  }
  return OkStatus();
}

}  // namespace

bool IsSweepPrecision(Precision precision) {
  switch (precision) {
    case Precision::kFp16:
    case Precision::kBf16:
    case Precision::kTf32:
    case Precision::kFp8:
    case Precision::kFp4:
    case Precision::kFp32: return true;
    case Precision::kInt8: return false;
  }
  return false;
}

Result<Sweep> ParseSweep(std::string_view toml_text, std::string_view source_name) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& e) {
    return Error::MalformedInput("{}:{}: {}", source_name, e.source().begin.line, e.description());
  }
  Sweep sweep;
  sweep.source_name = std::string(source_name);
  Defaults defaults;
  FieldReader fields(source_name, root, "");
  OFU_RETURN_IF_ERROR(fields.String("name", sweep.name));
  std::string description;  // for people reading the file; not used
  OFU_RETURN_IF_ERROR(fields.String("description", description));
  OFU_RETURN_IF_ERROR(fields.Seconds("min_seconds", defaults.min_seconds));
  const toml::node* groups = fields.Get("group");
  OFU_RETURN_IF_ERROR(fields.RejectUnknown());
  if (sweep.name.empty()) {
    return Error::MalformedInput("{}:1: field 'name' is missing or empty", source_name);
  }
  const toml::array* group_array = groups != nullptr ? groups->as_array() : nullptr;
  if (group_array == nullptr || group_array->empty()) {
    return Error::MalformedInput("{}:1: no [[group]] tables: a sweep needs at least one", source_name);
  }
  for (std::size_t i = 0; i < group_array->size(); ++i) {
    const toml::table* table = group_array->get(i)->as_table();
    if (table == nullptr)
      return SweepError(source_name, group_array->get(i)->source(), "field 'group': expected [[group]] tables");
    OFU_RETURN_IF_ERROR(ReadGroup(source_name, *table, i, sweep, defaults, sweep.cases));
  }
  return sweep;
}

Result<Sweep> ReadSweepFile(const std::string& path) {
  OFU_ASSIGN_OR_RETURN(std::string text, formats::ReadTextFile(path));
  return ParseSweep(text, path);
}

std::string DescribeCase(const GemmCase& c) {
  std::string text = fmt::format("{}x{}x{} {} {}", c.m, c.n, c.k, kernels::PrecisionName(c.precision), c.layout);
  if (c.power_limit_fraction) text += fmt::format(" @{:.0f}% power", *c.power_limit_fraction * 100);
  return text;
}

}  // namespace ofu::gemm
