#include "ofu/core/gpu_spec.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

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

// The GPU-instance profile a MIG profile name stands for: "1g.10gb" from
// "1g.10gb", "MIG 1g.10gb+me", " 1G.10GB-me " or "1g.24gb+me.all"; nullopt
// when the name is not <slices>g.<memory>gb with an optional suffix that
// starts with '+' or '-'.
std::optional<std::string> GpuInstanceProfile(std::string_view name) {
  std::string s;
  for (char c : name) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return std::nullopt;
  s.erase(0, first);
  s.erase(s.find_last_not_of(" \t") + 1);
  constexpr std::string_view kMig = "mig ";
  if (s.starts_with(kMig)) s.erase(0, s.find_first_not_of(' ', kMig.size()));
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i > start;
  };
  auto literal = [&](std::string_view lit) {
    if (s.compare(i, lit.size(), lit) != 0) return false;
    i += lit.size();
    return true;
  };
  if (!digits() || !literal("g.") || !digits() || !literal("gb")) return std::nullopt;
  if (i < s.size() && s[i] != '+' && s[i] != '-') return std::nullopt;
  return s.substr(0, i);
}

Error SpecError(std::string_view source, const std::string& what) {
  return Error::MalformedInput("{}: {}", source, what);
}

// Reads the "non_tensor" object of a SKU (see gpu_spec.h).
Result<NonTensorSpec> ParseNonTensor(const nlohmann::json& j, std::string_view source, const std::string& where) {
  NonTensorSpec spec;
  spec.source = j.at("source").get<std::string>();
  spec.notes = j.value("notes", "");
  if (spec.source.empty()) return SpecError(source, fmt::format("{}: non_tensor needs a source", where));
  for (const auto& [name, field] : {std::pair{"fp64", &NonTensorSpec::fp64}, std::pair{"fp32", &NonTensorSpec::fp32},
                                    std::pair{"fp16", &NonTensorSpec::fp16}}) {
    if (!j.contains(name)) continue;
    const auto& pipe = j.at(name);
    PipeSpec p{pipe.at("lanes_per_sm").get<int>(), pipe.at("peak_tflops").get<double>()};
    if (p.lanes_per_sm <= 0 || p.peak_tflops <= 0) {
      return SpecError(source,
                       fmt::format("{}: non_tensor.{} needs positive lanes_per_sm and peak_tflops", where, name));
    }
    spec.*field = p;
  }
  if (!spec.fp64 && !spec.fp32 && !spec.fp16) {
    return SpecError(source, fmt::format("{}: non_tensor lists none of fp64, fp32, fp16", where));
  }
  return spec;
}

// Reads the "clock_model" object of a SKU (see clock_model.h) into `spec`.
Status ParseClockModel(const nlohmann::json& j, std::string_view source, const std::string& where, GpuSpec& spec) {
  ClockModel m;
  m.steady_ratio = j.at("steady_ratio").get<double>();
  m.burst_ratio_at_power_cap = j.at("burst_ratio_at_power_cap").get<double>();
  m.burst_ratio_below_power_cap = j.at("burst_ratio_below_power_cap").get<double>();
  m.idle_tensor_below = j.at("idle_tensor_below").get<double>();
  m.burst_tensor_at_most = j.at("burst_tensor_at_most").get<double>();
  m.steady_tensor_at_least = j.at("steady_tensor_at_least").get<double>();
  spec.clock_model_measured_on = j.at("measured_on").get<std::vector<std::string>>();
  spec.clock_model_source = j.at("source").get<std::string>();
  for (double ratio : {m.steady_ratio, m.burst_ratio_at_power_cap, m.burst_ratio_below_power_cap}) {
    if (!(ratio >= 0.5 && ratio <= 2)) {
      return SpecError(source, fmt::format("{}: clock_model ratios must lie in [0.5, 2], not {}", where, ratio));
    }
  }
  if (!(m.idle_tensor_below >= 0 && m.idle_tensor_below < m.burst_tensor_at_most &&
        m.burst_tensor_at_most < m.steady_tensor_at_least && m.steady_tensor_at_least <= 1)) {
    return SpecError(source, fmt::format("{}: clock_model needs 0 <= idle_tensor_below < burst_tensor_at_most < "
                                         "steady_tensor_at_least <= 1",
                                         where));
  }
  if (spec.clock_model_source.empty() || spec.clock_model_measured_on.empty()) {
    return SpecError(source, fmt::format("{}: clock_model needs a source and the boards it was measured_on", where));
  }
  spec.clock_model = m;
  return OkStatus();
}

// Reads one SKU entry; `where` is e.g. "skus[3]" for error messages.
Result<GpuSpec> ParseSku(const nlohmann::json& j, const nlohmann::json& architectures, std::string_view source,
                         const std::string& where) {
  GpuSpec spec;
  try {
    spec.id = j.at("id").get<std::string>();
    spec.name = j.at("name").get<std::string>();
    spec.architecture = j.at("architecture").get<std::string>();
    spec.sm_count = j.at("sm_count").get<int>();
    spec.basis_precision = j.at("basis_precision").get<std::string>();
    for (const auto& [precision, figures] : j.at("precisions").items()) {
      spec.precisions[precision] = PrecisionSpec{figures.at("flops_per_clock_per_sm").get<double>(),
                                                 figures.at("peak_tflops").get<double>()};
    }
    spec.aliases = j.at("aliases").get<std::vector<std::string>>();
    spec.source = j.at("source").get<std::string>();
    spec.notes = j.value("notes", "");
    if (j.contains("peak_tolerance")) {
      spec.peak_tolerance = j.at("peak_tolerance").get<double>();
      spec.peak_tolerance_reason = j.value("peak_tolerance_reason", "");
    }
    if (j.contains("mig_profiles")) {
      for (const auto& [profile, sms] : j.at("mig_profiles").items()) {
        if (!sms.is_number_integer()) {
          return SpecError(source, fmt::format("{} ({}): mig_profiles[\"{}\"] must be a whole number of SMs", where,
                                               spec.id, profile));
        }
        spec.mig_profile_sms[profile] = sms.get<int>();
      }
    }
    spec.mig_source = j.value("mig_source", "");
    if (j.contains("non_tensor")) {
      OFU_ASSIGN_OR_RETURN(spec.non_tensor,
                           ParseNonTensor(j.at("non_tensor"), source, fmt::format("{} ({})", where, spec.id)));
    }
    if (j.contains("clock_model")) {
      OFU_RETURN_IF_ERROR(ParseClockModel(j.at("clock_model"), source, fmt::format("{} ({})", where, spec.id), spec));
    }
    if (!architectures.contains(spec.architecture)) {
      return SpecError(source, fmt::format("{} ({}): architecture \"{}\" is not under \"architectures\"", where,
                                           spec.id, spec.architecture));
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
    return SpecError(source, fmt::format("{} ({}): basis_precision \"{}\" is not among its precisions", where, spec.id,
                                         spec.basis_precision));
  }
  for (const auto& [precision, figures] : spec.precisions) {
    if (figures.flops_per_clock_per_sm <= 0 || figures.peak_tflops <= 0) {
      return SpecError(source, fmt::format("{} ({}): precision {} needs positive figures", where, spec.id, precision));
    }
  }
  if (!(spec.peak_tolerance > 0 && spec.peak_tolerance <= 0.1)) {
    return SpecError(source, fmt::format("{} ({}): peak_tolerance must be above 0 and at most 0.1", where, spec.id));
  }
  if (spec.peak_tolerance != 0.01 && spec.peak_tolerance_reason.empty()) {
    return SpecError(source, fmt::format("{} ({}): peak_tolerance needs a peak_tolerance_reason", where, spec.id));
  }
  for (const auto& [profile, sms] : spec.mig_profile_sms) {
    if (GpuInstanceProfile(profile) != profile) {
      return SpecError(source, fmt::format("{} ({}): mig_profiles key \"{}\" is not a GPU-instance profile "
                                           "such as \"1g.10gb\" (lower case, no suffix)",
                                           where, spec.id, profile));
    }
    if (sms <= 0 || sms > spec.sm_count) {
      return SpecError(source, fmt::format("{} ({}): mig_profiles[\"{}\"] = {} must be between 1 and sm_count ({})",
                                           where, spec.id, profile, sms, spec.sm_count));
    }
  }
  if (!spec.mig_profile_sms.empty() && spec.mig_source.empty()) {
    return SpecError(source, fmt::format("{} ({}): mig_profiles needs a mig_source", where, spec.id));
  }
  if (spec.k_arch <= 0) {
    return SpecError(source, fmt::format("architecture {}: k_arch must be positive", spec.architecture));
  }
  return spec;
}

}  // namespace

double PipeSpec::QuotedClockMhz(int sm_count) const {
  // TFLOPS / (SMs * lanes * 2 FLOP) = 1e12 / s per clock -> MHz is 1e6.
  return peak_tflops * 1e6 / (sm_count * lanes_per_sm * 2.0);
}

std::optional<double> GpuSpec::PeakTflops(std::string_view p) const {
  auto it = precisions.find(std::string(p));
  if (it == precisions.end() || !(it->second.peak_tflops > 0)) return std::nullopt;
  return it->second.peak_tflops;
}

double GpuSpec::ImpliedClockMhz(const std::string& p) const {
  auto it = precisions.find(p);
  if (it == precisions.end()) return 0;
  // TFLOPS / (SMs * FLOP per clock) = 1e12 / s per clock -> MHz is 1e6.
  return it->second.peak_tflops * 1e6 / (sm_count * it->second.flops_per_clock_per_sm);
}

double GpuSpec::SpecClockMhz() const { return ImpliedClockMhz(basis_precision); }

std::optional<int> GpuSpec::MigSmCount(std::string_view profile) const {
  const std::optional<std::string> gi = GpuInstanceProfile(profile);
  if (!gi) return std::nullopt;
  auto it = mig_profile_sms.find(*gi);
  if (it == mig_profile_sms.end()) return std::nullopt;
  return it->second;
}

Result<GpuSpecDatabase> GpuSpecDatabase::Parse(std::string_view json_text, std::string_view source_name) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e999
    return SpecError(source_name, fmt::format("not valid JSON: {}", e.what()));
  }
  if (!root.is_object() || !root.contains("skus") || !root["skus"].is_array() || !root.contains("architectures") ||
      !root["architectures"].is_object()) {
    return SpecError(source_name, "expected an object with \"architectures\" and a \"skus\" array");
  }
  GpuSpecDatabase db;
  db.source_name_ = std::string(source_name);
  std::map<std::string, std::string> owner_of_name;  // normalized alias or id -> SKU id
  const auto& skus = root["skus"];
  for (std::size_t i = 0; i < skus.size(); ++i) {
    OFU_ASSIGN_OR_RETURN(auto spec, ParseSku(skus[i], root["architectures"], source_name, fmt::format("skus[{}]", i)));
    std::vector<std::string> names = spec.aliases;
    names.push_back(spec.id);
    for (const auto& name : names) {
      auto [it, inserted] = owner_of_name.emplace(NormalizeModelName(name), spec.id);
      if (!inserted && it->second != spec.id) {
        return SpecError(source_name,
                         fmt::format("name \"{}\" is listed for both {} and {}", name, it->second, spec.id));
      }
    }
    db.skus_.push_back(std::move(spec));
  }
  return db;
}

Result<GpuSpecDatabase> GpuSpecDatabase::Embedded() { return Parse(EmbeddedGpuSpecsJson(), kSpecFileInRepo); }

std::optional<ClockModel> GpuSpec::ClockModelFor(std::string_view model_name) const {
  if (!clock_model) return std::nullopt;
  const std::string wanted = NormalizeModelName(model_name);
  for (const auto& measured : clock_model_measured_on) {
    if (NormalizeModelName(measured) == wanted) return clock_model;
  }
  return std::nullopt;
}

Result<const GpuSpec*> GpuSpecDatabase::Lookup(std::string_view model_or_id) const {
  const std::string wanted = NormalizeModelName(model_or_id);
  for (const auto& spec : skus_) {
    if (NormalizeModelName(spec.id) == wanted) return &spec;
    for (const auto& alias : spec.aliases) {
      if (NormalizeModelName(alias) == wanted) return &spec;
    }
  }
  return Error::UnknownModel(
      "unknown GPU model \"{}\": it is not an id or alias in {}. "
      "Add the SKU (or this name to its \"aliases\") there, or pass "
      "--gpu-model with a known SKU id",
      model_or_id, source_name_);
}

}  // namespace ofu
