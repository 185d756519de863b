#include "ofu/kernels/kernel_throughput.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ofu::kernels {

std::string_view EmbeddedKernelThroughputJson();  // generated from data/kernel_throughput.json

namespace {

constexpr std::string_view kTableFileInRepo = "data/kernel_throughput.json";

using nlohmann::json;

// A required field of `object`, or an error naming the file, entry and field.
Result<json> Field(const json& object, std::string_view key, std::string_view where) {
  if (!object.is_object() || !object.contains(key)) {
    return Error::MalformedInput("{}: missing field \"{}\"", where, key);
  }
  return object.at(key);
}

Result<std::string> StringField(const json& object, std::string_view key, std::string_view where) {
  OFU_ASSIGN_OR_RETURN(json value, Field(object, key, where));
  if (!value.is_string()) return Error::MalformedInput("{}: \"{}\" is not a string", where, key);
  return value.get<std::string>();
}

Result<int> PositiveIntField(const json& object, std::string_view key, std::string_view where) {
  OFU_ASSIGN_OR_RETURN(json value, Field(object, key, where));
  if (!value.is_number_integer() || value.get<int64_t>() <= 0 || value.get<int64_t>() > 10000) {
    return Error::MalformedInput("{}: \"{}\" is not a positive integer", where, key);
  }
  return value.get<int>();
}

// An optional string field: "" when absent.
std::string OptionalString(const json& object, std::string_view key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<ThroughputFigure> ParseFigure(const json& entry, std::string_view where) {
  ThroughputFigure figure;
  OFU_ASSIGN_OR_RETURN(figure.architecture, StringField(entry, "architecture", where));
  OFU_ASSIGN_OR_RETURN(figure.kernel_sm, PositiveIntField(entry, "kernel_sm", where));
  figure.mma_shape = OptionalString(entry, "mma_shape");
  OFU_ASSIGN_OR_RETURN(json precisions, Field(entry, "precisions", where));
  if (!precisions.is_array() || precisions.empty()) {
    return Error::MalformedInput("{}: \"precisions\" is not a non-empty list", where);
  }
  for (const json& p : precisions) {
    const auto precision = p.is_string() ? PrecisionFromName(p.get<std::string>()) : std::nullopt;
    if (!precision) return Error::MalformedInput("{}: precision {} is not one ofu knows", where, p.dump());
    figure.precisions.push_back(*precision);
  }
  OFU_ASSIGN_OR_RETURN(json throughput, Field(entry, "relative_throughput", where));
  if (!throughput.is_number() || !(throughput.get<double>() > 0) || throughput.get<double>() > 1) {
    return Error::MalformedInput("{}: \"relative_throughput\" must be a number in (0, 1]", where);
  }
  figure.relative_throughput = throughput.get<double>();
  OFU_ASSIGN_OR_RETURN(figure.source, StringField(entry, "source", where));
  figure.label = OptionalString(entry, "label");
  figure.measured_on = OptionalString(entry, "measured_on");
  return figure;
}

}  // namespace

double KernelGeneration::RelativeThroughput() const { return figure != nullptr ? figure->relative_throughput : 1.0; }

Result<KernelThroughputTable> KernelThroughputTable::Parse(std::string_view json_text, std::string_view source_name) {
  const json root = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    return Error::MalformedInput("{}: not a JSON object", source_name);
  }
  KernelThroughputTable table;
  const json architectures = root.value("architectures", json::array());
  const json figures = root.value("figures", json::array());
  if (!architectures.is_array()) return Error::MalformedInput("{}: \"architectures\" is not a list", source_name);
  if (!figures.is_array()) return Error::MalformedInput("{}: \"figures\" is not a list", source_name);
  for (size_t i = 0; i < architectures.size(); ++i) {
    const std::string where = fmt::format("{}: architectures[{}]", source_name, i);
    Architecture arch;
    OFU_ASSIGN_OR_RETURN(arch.name, StringField(architectures[i], "architecture", where));
    OFU_ASSIGN_OR_RETURN(arch.native_sm, PositiveIntField(architectures[i], "native_sm", where));
    table.architectures_.push_back(std::move(arch));
  }
  for (size_t i = 0; i < figures.size(); ++i) {
    const std::string where = fmt::format("{}: figures[{}]", source_name, i);
    OFU_ASSIGN_OR_RETURN(ThroughputFigure figure, ParseFigure(figures[i], where));
    const auto native = table.NativeSm(figure.architecture);
    if (!native) return Error::MalformedInput("{}: architecture \"{}\" is not listed", where, figure.architecture);
    if (figure.kernel_sm >= *native) {
      return Error::MalformedInput("{}: kernel_sm {} is native on {} (native_sm {}): a figure is for older kernels",
                                   where, figure.kernel_sm, figure.architecture, *native);
    }
    table.figures_.push_back(std::move(figure));
  }
  return table;
}

Result<KernelThroughputTable> KernelThroughputTable::Embedded() {
  return Parse(EmbeddedKernelThroughputJson(), kTableFileInRepo);
}

std::optional<int> KernelThroughputTable::NativeSm(std::string_view architecture) const {
  for (const Architecture& arch : architectures_) {
    if (arch.name == architecture) return arch.native_sm;
  }
  return std::nullopt;
}

KernelGeneration KernelThroughputTable::Classify(const KernelInfo& info, Precision precision,
                                                 std::string_view architecture) const {
  KernelGeneration out;
  const auto native = NativeSm(architecture);
  if (!native || !info.target_sm || *info.target_sm >= *native || info.tensor_core != true) return out;
  out.pre_native = true;
  out.kernel_sm = *info.target_sm;
  out.native_sm = *native;
  out.family = fmt::format("sm{}{}{} {}", out.kernel_sm, info.mma_shape.empty() ? "" : " s", info.mma_shape,
                           PrecisionName(precision));
  for (const ThroughputFigure& figure : figures_) {
    if (figure.architecture != architecture || figure.kernel_sm != out.kernel_sm) continue;
    if (!figure.mma_shape.empty() && figure.mma_shape != info.mma_shape) continue;
    if (std::find(figure.precisions.begin(), figure.precisions.end(), precision) == figure.precisions.end()) continue;
    out.figure = &figure;
    break;
  }
  return out;
}

int NativeAlignment(Precision precision) {
  switch (precision) {
    case Precision::kFp8:
    case Precision::kInt8: return 16;
    case Precision::kFp4: return 32;
    case Precision::kFp16:
    case Precision::kBf16:
    case Precision::kTf32:
    case Precision::kFp32: return 8;
  }
  return 8;
}

std::optional<std::string> PreNativeFinding(const KernelThroughputTable& table, const KernelInfo& info,
                                            std::string_view architecture, std::string_view gpu_name) {
  if (!info.precision) return std::nullopt;
  const KernelGeneration g = table.Classify(info, *info.precision, architecture);
  if (!g.pre_native) return std::nullopt;
  const int step = NativeAlignment(*info.precision);
  const std::string why =
      info.alignment && *info.alignment < step
          ? fmt::format("align{}: cuBLAS picks such kernels when a dimension is not a multiple of {}", *info.alignment,
                        step)
          : std::string("cuBLAS picks such kernels for unaligned or small shapes");
  if (g.figure == nullptr) {
    return fmt::format(
        "on {} ({}, own kernels sm{}): built for sm{}, so it issues older MMA instructions ({}); its "
        "FLOPs per tensor-active cycle there are not measured",
        gpu_name, architecture, g.native_sm, g.kernel_sm, why);
  }
  return fmt::format(
      "on {} ({}, own kernels sm{}): built for sm{}, it did {:.3f} of the native FLOPs per "
      "tensor-active cycle (measured on {}), so OFU reads {:.1f}x its MFU ({}); make M, N and K "
      "multiples of {}",
      gpu_name, architecture, g.native_sm, g.kernel_sm, g.figure->relative_throughput, g.figure->measured_on,
      1.0 / g.figure->relative_throughput, why, step);
}

std::vector<std::string> PreNativeFindingsWhereMeasured(const KernelThroughputTable& table, const KernelInfo& info) {
  std::vector<std::string> findings;
  std::vector<std::string_view> seen;
  for (const ThroughputFigure& figure : table.figures()) {
    if (std::find(seen.begin(), seen.end(), figure.architecture) != seen.end()) continue;
    seen.push_back(figure.architecture);
    auto finding = PreNativeFinding(table, info, figure.architecture, "a " + figure.architecture + " GPU");
    if (finding) findings.push_back(std::move(*finding));
  }
  return findings;
}

}  // namespace ofu::kernels
