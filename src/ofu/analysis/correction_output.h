// Rendering what `ofu correct` found, for people (table) and programs (JSON).
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

#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "ofu/analysis/correction.h"
#include "ofu/analysis/reconcile.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/formats/kernel_trace.h"
#include "ofu/formats/training_log.h"

namespace ofu::analysis {

struct CorrectionView {
  std::string trace_path;
  const formats::KernelTrace* trace = nullptr;
  const CorrectionReport* report = nullptr;
  const GpuSpec* gpu = nullptr;  // whose rates were used; null: generic
  std::string gpu_origin;        // "--gpu-model", "the trace", "the recording"
  std::optional<double> ofu;     // the measured OFU to correct
  std::string ofu_source;        // "--ofu" or the recording's path
  // The recording's mean FP32 (CUDA-core) pipe activity, 0..1; absent without
  // a recording or when it lacks the counter. Set beside the trace's share of
  // GEMM time on CUDA cores, which it confirms or not (see the table's line).
  std::optional<double> fp32_pipe_active;
  // The job's own training log (--training-log), to set its reported MFU
  // beside the predicted one; null without.
  const formats::TrainingLog* training_log = nullptr;
  // Why --training-log was refused (unreadable, no MFU, every value
  // impossible); empty when it was read or not given. The rest of the
  // report stands and the notes say so.
  std::string training_log_error;

  std::optional<double> CorrectedOfu() const;
  std::optional<double> PredictedMfu() const;

  // The training log's MFU beside the predicted one; absent without a log.
  struct Reported {
    OwnPeakMfu mfu;  // MfuOverOwnPeak with `gpu`'s peak of the log's precision
    // reported / predicted MFU and what it most likely means (ClassifyRatio,
    // default thresholds); absent without a prediction, or when the log
    // quotes another precision than the prediction.
    std::optional<double> ratio;
    std::optional<Classification> verdict;
  };
  std::optional<Reported> ReportedBesidePredicted() const;
};

std::string RenderCorrectionTable(const CorrectionView& view);
std::string RenderCorrectionJson(const CorrectionView& view);

// A GEMM's identity as every JSON list of GEMMs writes it (correct's
// "wasteful" and "pre_native", the HTML report's "kernel_findings"): kernel,
// op, m, n, k, batch, precision, launches, tensor_time_share. Callers add
// what their list says about it.
nlohmann::json GemmIdentityJson(const GemmIdentity& gemm);

}  // namespace ofu::analysis
