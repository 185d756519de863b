#include "ofu/core/gpu_spec.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ofu {

std::string_view EmbeddedGpuSpecsJson();  // generated from data/gpu_specs.json

namespace {

constexpr std::string_view kSpecFileInRepo = "data/gpu_specs.json";

// Lower-cases, folds runs of white space to one space, trims, and drops a
// leading "nvidia " so that "NVIDIA H100 PCIe" and "H100  PCIe" compare equal.
std::string NormalizeModelName(std::string_view name) {
  std::string out;
  bool pending_space = false;
  for (char c : name) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  constexpr std::string_view kVendor = "nvidia ";
  if (out.starts_with(kVendor)) out.erase(0, kVendor.size());
  return out;
}

Error SpecError(std::string_view source, const std::string& what) {
  return Error{ErrorCode::kMalformedInput, fmt::format("{}: {}", source, what)};
}

// Reads one SKU entry; `where` is e.g. "skus[3]" for error messages.
Result<GpuSpec> ParseSku(const nlohmann::json& j, const nlohmann::json& architectures,
                         std::string_view source, const std::string& where) {
  GpuSpec spec;
  try {
    spec.id = j.at("id").get<std::string>();
    spec.name = j.at("name").get<std::string>();
    spec.architecture = j.at("architecture").get<std::string>();
    spec.sm_count = j.at("sm_count").get<int>();
    spec.basis_precision = j.at("basis_precision").get<std::string>();
    for (const auto& [precision, figures] : j.at("precisions").items()) {
      spec.precisions[precision] = PrecisionSpec{
          figures.at("flops_per_clock_per_sm").get<double>(),
          figures.at("peak_tflops").get<double>()};
    }
    spec.aliases = j.at("aliases").get<std::vector<std::string>>();
    spec.source = j.at("source").get<std::string>();
    spec.notes = j.value("notes", "");
    if (j.contains("mig_profiles")) spec.mig_profile_sms = j.at("mig_profiles").get<std::map<std::string, int>>();
    if (!architectures.contains(spec.architecture)) {
      return SpecError(source, fmt::format("{} ({}): architecture \"{}\" is not under \"architectures\"",
                                           where, spec.id, spec.architecture));
    }
    const auto& arch = architectures.at(spec.architecture);
    spec.k_arch = arch.at("k_arch").get<double>();
    spec.k_arch_source = arch.at("k_arch_source").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    return SpecError(source, fmt::format("{}: {}", where, e.what()));
  }
  if (spec.sm_count <= 0) {
    return SpecError(source, fmt::format("{} ({}): sm_count must be positive", where, spec.id));
  }
  auto basis = spec.precisions.find(spec.basis_precision);
  if (basis == spec.precisions.end()) {
    return SpecError(source, fmt::format("{} ({}): basis_precision \"{}\" is not among its precisions",
                                         where, spec.id, spec.basis_precision));
  }
  for (const auto& [precision, figures] : spec.precisions) {
    if (figures.flops_per_clock_per_sm <= 0 || figures.peak_tflops <= 0) {
      return SpecError(source, fmt::format("{} ({}): precision {} needs positive figures",
                                           where, spec.id, precision));
    }
  }
  if (spec.k_arch <= 0) {
    return SpecError(source, fmt::format("architecture {}: k_arch must be positive", spec.architecture));
  }
  return spec;
}

}  // namespace

double GpuSpec::ImpliedClockMhz(const std::string& p) const {
  auto it = precisions.find(p);
  if (it == precisions.end()) return 0;
  // TFLOPS / (SMs * FLOP per clock) = 1e12 / s per clock -> MHz is 1e6.
  return it->second.peak_tflops * 1e6 / (sm_count * it->second.flops_per_clock_per_sm);
}

std::optional<int> GpuSpec::MigSmCount(std::string_view profile) const {
  const std::string_view base = profile.substr(0, profile.find('+'));
  auto it = mig_profile_sms.find(std::string(base));
  if (it == mig_profile_sms.end()) return std::nullopt;
  return it->second;
}

double GpuSpec::SpecClockMhz() const { return ImpliedClockMhz(basis_precision); }

Result<GpuSpecDatabase> GpuSpecDatabase::Parse(std::string_view json_text, std::string_view source_name) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e999
    return SpecError(source_name, fmt::format("not valid JSON: {}", e.what()));
  }
  if (!root.is_object() || !root.contains("skus") || !root["skus"].is_array() ||
      !root.contains("architectures") || !root["architectures"].is_object()) {
    return SpecError(source_name, "expected an object with \"architectures\" and a \"skus\" array");
  }
  GpuSpecDatabase db;
  db.source_name_ = std::string(source_name);
  std::map<std::string, std::string> owner_of_name;  // normalized alias or id -> SKU id
  const auto& skus = root["skus"];
  for (std::size_t i = 0; i < skus.size(); ++i) {
    auto spec = ParseSku(skus[i], root["architectures"], source_name, fmt::format("skus[{}]", i));
    if (!spec.ok()) return spec.error();
    std::vector<std::string> names = spec->aliases;
    names.push_back(spec->id);
    for (const auto& name : names) {
      auto [it, inserted] = owner_of_name.emplace(NormalizeModelName(name), spec->id);
      if (!inserted && it->second != spec->id) {
        return SpecError(source_name, fmt::format("name \"{}\" is listed for both {} and {}",
                                                  name, it->second, spec->id));
      }
    }
    db.skus_.push_back(std::move(*spec));
  }
  return db;
}

Result<GpuSpecDatabase> GpuSpecDatabase::Embedded() {
  return Parse(EmbeddedGpuSpecsJson(), kSpecFileInRepo);
}

Result<const GpuSpec*> GpuSpecDatabase::Lookup(std::string_view model_or_id) const {
  const std::string wanted = NormalizeModelName(model_or_id);
  for (const auto& spec : skus_) {
    if (NormalizeModelName(spec.id) == wanted) return &spec;
    for (const auto& alias : spec.aliases) {
      if (NormalizeModelName(alias) == wanted) return &spec;
    }
  }
  return Error{ErrorCode::kUnknownModel,
               fmt::format("unknown GPU model \"{}\": it is not an id or alias in {}. "
                           "Add the SKU (or this name to its \"aliases\") there, or pass "
                           "--gpu-model with a known SKU id",
                           model_or_id, source_name_)};
}

}  // namespace ofu
