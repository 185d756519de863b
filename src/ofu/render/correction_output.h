// Writing what `ofu correct` found, for people (table) and programs (JSON).
//
// JSON contract (docs/cli.md, `ofu correct`):
//   {"trace": {"path","format","kernels","bytes_read"},
//    "gpu": {"sku","name","rates"},            rates: "spec" or "generic"
//    "reference_precision": "bf16",
//    "factor", "padding_factor", "throughput_factor", "ofu", "ofu_source", "corrected_ofu", "mfu_scale",
//    "predicted_mfu", "non_tensor_gemm_share", "fp32_pipe_active", "precision_mix":
//    [{"precision","tensor_time_share","relative_rate"}], "coverage":
//    {"kernels","kernel_time_us","gemm_kernels","gemm_time_us",
//                 "corrected_kernels","corrected_time_us","simt_kernels","simt_time_us",
//                 "left_out": [{"reason","kernels","time_us","example"}]},
//    "wasteful": [{"kernel","op","m","n","k","batch","precision","launches",
//                  "tensor_time_share","wasted_share","advice",
//                  "kernel_m","kernel_n","kernel_k": {"size","padded","step","tile","cluster"}}],
//    "pre_native": [{"kernel","op","m","n","k","batch","precision","family",
//                    "kernel_sm","native_sm","relative_throughput","throughput_source",
//                    "launches","tensor_time_share","lost_share","unaligned": ["K = 8191"],
//                    "advice"}],
//    "reported": null, or with --training-log
//      {"source","format","steps","mfu","logged_mfu","peak_flops",
//       "ratio","flag","explanation"},   mfu over the GPU's own peak;
//                                        ratio = reported / predicted MFU
//    "notes": [...]}
// Ratios are numbers in 0..1; an absent figure is null, never 0.
//
// Thread-safety: pure functions of their arguments, callable from any thread.
#pragma once

#include <string>

#include "ofu/analysis/correction_view.h"

namespace ofu::render {

std::string RenderCorrectionTable(const analysis::CorrectionView& view);
std::string RenderCorrectionJson(const analysis::CorrectionView& view);

}  // namespace ofu::render
