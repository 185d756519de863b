// What `ofu correct` shows, gathered: the trace, the correction report, the
// GPU whose rates were used, the OFU to correct and the job's own training
// log, with the figures derived from them (corrected OFU, predicted MFU, the
// reported MFU beside the predicted one). render/correction_output.h writes
// it as a table or JSON.
//
// Ownership: the pointers are borrowed; what they point to outlives the view.
// Thread-safety: const methods, pure functions of the fields.
#pragma once

#include <optional>
#include <string>

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
  // The clock the recording's OFU used (core/clock_model.h: "measured-model",
  // "reported", ...); empty for a figure given with --ofu.
  std::string ofu_clock_source;
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

}  // namespace ofu::analysis
