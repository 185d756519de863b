// JSON pieces that more than one writer puts in its output, written once:
// the "non_tensor" object (`ofu report`'s JSON and the HTML page's data),
// the fields of a piece of CUDA-core advice (the report's "advice" and the
// page's "cuda_core_advice"), and a GEMM's identity (`ofu correct`'s
// "wasteful" and "pre_native", the page's "kernel_findings").
//
// Templates over the JSON type: the report keeps its keys in the order it
// writes them (nlohmann::ordered_json), the page's data sorts them
// (nlohmann::json). An absent figure is null, never 0.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <optional>
#include <string>

#include "ofu/analysis/correction.h"
#include "ofu/analysis/cuda_core_advice.h"
#include "ofu/core/non_tensor.h"
#include "ofu/core/precision.h"

namespace ofu::render {

// The value, or null when absent.
template <typename Json, typename T>
Json OrNull(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

// Each CUDA-core pipe's activity under its sample field's name
// ("fp32_active"), in CudaCorePipe order, then the non-tensor bound
// (TFLOP/s) and its share of the CUDA-core peak (docs/cli.md, "non_tensor").
template <typename Json>
Json NonTensorJson(const NonTensorFigures& figures) {
  Json out = Json::object();
  for (const CudaCorePipeInfo& pipe : CudaCorePipes()) out[std::string(pipe.key())] = OrNull<Json>(figures[pipe.pipe]);
  out["flops_upper_bound_tflops"] = OrNull<Json>(figures.flops_upper_bound_tflops);
  out["share_of_peak"] = OrNull<Json>(figures.share_of_peak);
  return out;
}

// What a piece of advice says, after the fields that name its subject
// (which differ: the report names the GPU, the page the job and the GPU).
template <typename Json>
void AddCudaCoreAdviceFields(const analysis::CudaCoreAdvice& advice, Json& out) {
  out["pipe"] = advice.pipe;
  out["pipe_active"] = advice.pipe_active;
  out["ofu"] = advice.ofu;
  out["tensor_precision"] = advice.tensor_precision;
  out["gain_upper_bound"] = OrNull<Json>(advice.gain_upper_bound);
  out["bf16_gain_upper_bound"] = OrNull<Json>(advice.bf16_gain_upper_bound);
  out["text"] = advice.text;
}

// kernel, op, m, n, k, batch, precision, launches, tensor_time_share; the
// caller adds what its list says about the GEMM.
template <typename Json>
Json GemmIdentityJson(const analysis::GemmIdentity& gemm) {
  Json out = Json::object();
  out["kernel"] = gemm.kernel_name;
  out["op"] = gemm.op_name;
  out["m"] = gemm.problem.m;
  out["n"] = gemm.problem.n;
  out["k"] = gemm.problem.k;
  out["batch"] = gemm.problem.batch;
  out["precision"] = kernels::PrecisionName(gemm.precision);
  out["launches"] = gemm.launches;
  out["tensor_time_share"] = gemm.tensor_time_share;
  return out;
}

}  // namespace ofu::render
