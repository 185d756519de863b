#include "ofu/render/kernels_output.h"

#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ofu::render {
namespace {

template <typename T>
nlohmann::ordered_json OrNull(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json ToJson(const ParsedKernel& parsed) {
  nlohmann::ordered_json out;
  out["name"] = parsed.name;
  out["parsed"] = parsed.info.ok();
  out["gemm"] = parsed.kind.gemm;
  if (!parsed.info.ok()) {
    out["reason"] = parsed.kind.reason;  // ClassifyKernelName's: one wording for every GEMM not read
    for (const char* key : {"family", "tile_m", "tile_n", "tile_k", "stages", "cluster_m", "cluster_n", "precision",
                            "tensor_core", "split_k", "two_cta", "sparse", "block_scaled"}) {
      out[key] = nullptr;
    }
    out["truncated"] = parsed.kind.truncated;
    out["tensor_core"] = OrNull(parsed.kind.tensor_core);  // what the name says of a GEMM it does not fully give
    out["unknown_flags"] = nlohmann::ordered_json::array();
    out["target_sm"] = nullptr;
    out["mma_shape"] = nullptr;
    out["alignment"] = nullptr;
    out["grouping"] = nullptr;
    out["findings"] = nlohmann::ordered_json::array();
    return out;
  }
  const kernels::KernelInfo& info = *parsed.info;
  out["family"] = kernels::FamilyName(info.family);
  out["tile_m"] = OrNull(info.tile_m);
  out["tile_n"] = OrNull(info.tile_n);
  out["tile_k"] = OrNull(info.tile_k);
  out["stages"] = OrNull(info.stages);
  out["cluster_m"] = OrNull(info.cluster_m);
  out["cluster_n"] = OrNull(info.cluster_n);
  out["precision"] = info.precision ? nlohmann::ordered_json(kernels::PrecisionName(*info.precision))
                                    : nlohmann::ordered_json(nullptr);
  out["tensor_core"] = OrNull(info.tensor_core);
  out["split_k"] = info.split_k;
  out["two_cta"] = info.two_cta;
  out["sparse"] = info.sparse;
  out["block_scaled"] = info.block_scaled;
  out["truncated"] = false;
  out["unknown_flags"] = info.unknown_flags;
  out["target_sm"] = OrNull(info.target_sm);
  out["mma_shape"] = info.mma_shape.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(info.mma_shape);
  out["alignment"] = OrNull(info.alignment);
  out["grouping"] = info.grouping.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(info.grouping);
  out["findings"] = parsed.findings;
  return out;
}

std::string Show(const std::optional<int>& value) { return value ? fmt::format("{}", *value) : "-"; }

}  // namespace

std::string FormatKernelsTable(const std::vector<ParsedKernel>& all) {
  std::string out = fmt::format("{:<10} {:<12} {:>6} {:>7} {:<9} {:<7} {:<12} {}\n", "family", "tile", "stages",
                                "cluster", "precision", "tensor", "flags", "name");
  for (const ParsedKernel& parsed : all) {
    if (!parsed.info.ok()) {
      const std::string_view kind = parsed.kind.helper
                                        ? "not a GEMM: a helper kernel (elementwise, copy, reduction, ...)"
                                    : !parsed.kind.gemm
                                        ? "not a GEMM by its name (in a trace, a GEMM op that launches it makes it one)"
                                    : !parsed.kind.tensor_core ? "a GEMM"
                                    : *parsed.kind.tensor_core ? "a GEMM on tensor cores"
                                                               : "a GEMM on CUDA cores (simt)";
      out += fmt::format("{:<10} {}\n{:<10} reason: {}\n{:<10} name says: {}\n",
                         parsed.kind.truncated ? "truncated" : "unparsed", parsed.name, "", parsed.kind.reason, "",
                         kind);
      continue;
    }
    const kernels::KernelInfo& info = *parsed.info;
    const std::string tile = fmt::format("{}x{}x{}", Show(info.tile_m), Show(info.tile_n), Show(info.tile_k));
    const std::string cluster = info.cluster_m ? fmt::format("{}x{}", *info.cluster_m, Show(info.cluster_n)) : "-";
    const std::string_view precision = info.precision ? kernels::PrecisionName(*info.precision) : "-";
    const std::string_view tensor = !info.tensor_core ? "-" : *info.tensor_core ? "tensor" : "simt";
    std::string flags;
    if (info.split_k) flags += "splitK ";
    if (info.two_cta) flags += "2cta ";
    if (info.sparse) flags += "sparse ";
    if (info.block_scaled) flags += "bscaled ";
    if (!info.grouping.empty() && info.grouping != "normal") flags += info.grouping + " ";
    for (const std::string& flag : info.unknown_flags) flags += fmt::format("{}? ", flag);  // kept, not understood
    // Without the last space; "-" for none.
    const std::string_view shown = flags.empty() ? std::string_view("-")
                                                 : std::string_view(flags).substr(0, flags.size() - 1);
    out += fmt::format("{:<10} {:<12} {:>6} {:>7} {:<9} {:<7} {:<12} {}\n", kernels::FamilyName(info.family), tile,
                       Show(info.stages), cluster, precision, tensor, shown, parsed.name);
    for (const std::string& finding : parsed.findings) out += fmt::format("{:<10} finding: {}\n", "", finding);
  }
  return out;
}

std::string FormatKernelsJson(const std::vector<ParsedKernel>& all) {
  auto out = nlohmann::ordered_json::array();
  for (const ParsedKernel& parsed : all) out.push_back(ToJson(parsed));
  // Names are echoed as given: bytes that are not UTF-8 are replaced, not fatal.
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace ofu::render
