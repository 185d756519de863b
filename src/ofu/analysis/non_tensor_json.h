// The "non_tensor" object of `ofu report`'s JSON (docs/cli.md) and of the
// HTML report's data: each CUDA-core pipe's activity under its sample
// field's name ("fp32_active"), in CudaCorePipe order, then the non-tensor
// bound (TFLOP/s) and its share of the CUDA-core peak; null where absent,
// never 0.
//
// A template over the JSON type: the report keeps its keys in order
// (nlohmann::ordered_json), the HTML data sorts them (nlohmann::json).
#pragma once

#include <optional>
#include <string>

#include "ofu/core/non_tensor.h"

namespace ofu::analysis {

template <typename Json>
Json NonTensorJson(const NonTensorFigures& figures) {
  auto value = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  Json out = Json::object();
  for (const CudaCorePipeInfo& pipe : CudaCorePipes()) out[std::string(pipe.key())] = value(figures[pipe.pipe]);
  out["flops_upper_bound_tflops"] = value(figures.flops_upper_bound_tflops);
  out["share_of_peak"] = value(figures.share_of_peak);
  return out;
}

}  // namespace ofu::analysis
