// OFU <-> MFU reconciliation (`ofu reconcile`): per job, what the hardware
// did (OFU from the store or Prometheus, via BuildStoreReport) against what
// the application reported (the MFU log), with the most likely explanation
// of a gap, and fleet statistics. DESIGN.md §2 and §4 "FLOPs accounting".
//
// Per job:
//   corrected_ofu  = ofu × factor                   (tile quantization; factor
//                                                    from `ofu correct`, else 1)
//   mfu_scale      = Σ_p w_p · R_p / R_ref          (precision scaling to the
//                                                    job's reference precision;
//                                                    else 1: assumes the job ran
//                                                    its reference precision)
//   expected_mfu   = corrected_ofu × mfu_scale
//   residual       = reported_mfu − expected_mfu
//   ratio          = reported_mfu / expected_mfu
//
// Flags, by the ratio (T = tolerance, M = match; defaults 0.15 and 0.15):
//   ok                      |ratio − 1| ≤ T
//   units                   ratio ≥ 100: GFLOPs printed as TFLOPs (×1000)
//   wrong_precision_peak    |ratio/2 − 1| ≤ M or |ratio/0.5 − 1| ≤ M: divided
//                           by the peak of another precision (fp8 and bf16
//                           peaks differ 2×; so do bf16 and tf32)
//   causal_attention_full   1 + T < ratio < 2(1 − M): causal attention counted
//                           in full (up to 2× as attention dominates)
//   moe_total_params        2(1 + M) < ratio < 100: MoE FLOPs counted by total,
//                           not active, parameters (ratio = total / active)
//   recomputation           |ratio/0.75 − 1| ≤ M and recompute not declared
//                           off: OFU counts recomputed FLOPs (HFU ≈ 4/3 MFU
//                           with full recompute), MFU does not
//   non_tensor_work         ratio > 1 + T while one of the job's CUDA-core
//                           pipes (FP32/FP16/FP64) is at least
//                           kNonTensorBusyPipe active: the reported FLOPs ran
//                           on the CUDA cores, which OFU does not count (it
//                           takes precedence over the ratio flags above,
//                           which become alternatives)
//   under_counted           any other ratio < 1 − T: FLOPs the application
//                           does not count (attention, sliding windows,
//                           some layers), or undeclared recomputation
// Jobs of the log without an OFU are listed as no_ofu and take no part in
// the statistics.
//
// Fleet statistics over jobs with both figures (expected_mfu as x, reported
// as y): Pearson r, Spearman ρ (average ranks for ties), mean absolute error
// |y − x|; over all of them and over the unflagged (ok) ones. A statistic of
// fewer than 3 points, or of a constant series, is absent.
//
// Thread-safety: pure functions of their inputs.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/analysis/store_report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/formats/mfu_log.h"
#include "ofu/kernels/kernel_name.h"

namespace ofu::analysis {

// A CUDA-core pipe at least this active (job mean) is "busy" for non_tensor_work.
inline constexpr double kNonTensorBusyPipe = 0.30;

struct ReconcileOptions {
  double tolerance = 0.15;  // T
  double match = 0.15;      // M
};

struct ReconciledJob {
  std::string job_id;
  std::string job_name;
  int gpus = 0;
  std::optional<double> ofu;
  std::optional<double> factor;
  std::optional<double> corrected_ofu;
  double mfu_scale = 1;
  std::optional<double> expected_mfu;
  double reported_mfu = 0;  // over the job's GPUs' own peak (see logged_mfu); see reported_known
  // False when the log printed FLOP/s per GPU (flops_per_gpu) and no MFU
  // came of it (flag no_mfu, or no_ofu before the peak was looked up):
  // reported_mfu is then not a figure, and outputs print null / "-".
  bool reported_known = true;
  std::optional<double> flops_per_gpu;  // what such a log printed (median, FLOP/s per GPU)
  // When the application divides by a peak other than its GPUs' own
  // (ReportedMfu::peak_flops): the MFU as logged and that peak (FLOP/s per
  // GPU); reported_mfu is then logged_mfu × peak_flops / the GPUs' own peak,
  // or logged_mfu when that peak is not known (a note says so).
  std::optional<double> logged_mfu;
  std::optional<double> peak_flops;
  kernels::Precision reference_precision = kernels::Precision::kBf16;
  std::optional<bool> recompute;
  // flops_per_token × tokens_per_s / (gpus × peak of the reference precision),
  // when the log gives both and the GPUs' SKU lists that precision.
  std::optional<double> throughput_mfu;
  std::optional<double> residual;
  std::optional<double> ratio;
  std::string flag;         // ok, units, wrong_precision_peak, ... (see above)
  std::string explanation;  // the most likely one, for people
  std::vector<std::string> alternatives;
  std::vector<std::string> notes;

  // no_ofu: the job has no OFU; no_mfu: its log printed FLOP/s per GPU and
  // the job's GPU peak is not known (ReportedMfu::flops_per_gpu).
  bool flagged() const { return flag != "ok" && flag != "no_ofu" && flag != "no_mfu"; }
};

struct FitStatistics {
  int jobs = 0;
  std::optional<double> pearson_r;
  std::optional<double> spearman_rho;
  std::optional<double> mean_absolute_error;
};

struct ReconcileReport {
  std::string source;   // the store path or Prometheus URL
  std::string mfu_log;  // its path
  std::string method;   // how the OFU was summed: HistoryRead::method (report.h)
  ReconcileOptions options;
  std::vector<ReconciledJob> jobs;   // in the MFU log's order
  FitStatistics all;                 // jobs with both figures
  FitStatistics unflagged;           // the same without flagged jobs
  int jobs_without_mfu = 0;          // in the OFU data, not in the log
  std::map<std::string, int> flags;  // flag -> jobs
  // About the inputs, for people: a training log that was refused (its job
  // is then not in `jobs`; the others are), set by the caller.
  std::vector<std::string> notes;
};

// `specs` may be null (no throughput_mfu then). `history` gives each job's
// GPUs' SKU; `store` the job totals (BuildStoreReport of the same history).
ReconcileReport Reconcile(const history::StoredHistory& history, const Report& store, const formats::MfuLog& log,
                          const std::map<std::string, formats::JobCorrection>& corrections,
                          const GpuSpecDatabase* specs, const ReconcileOptions& options);

// The flag of a ratio reported/expected (see the header comment).
struct Classification {
  std::string flag;
  std::string explanation;
  std::vector<std::string> alternatives;
};
Classification ClassifyRatio(double ratio, std::optional<bool> recompute, const ReconcileOptions& options);

// A reported MFU over its GPU's own peak of its reference precision, so that
// it compares with OFU. When the application divided by another peak
// (ReportedMfu::peak_flops: nanoGPT always uses the A100's) it is
// mfu × peak_flops / own_peak_flops; without own_peak_flops (an unknown GPU)
// it stays as logged and the note says so. When the log printed FLOP/s per
// GPU (ReportedMfu::flops_per_gpu: Megatron-LM, MaxText, nanotron) it is
// flops_per_gpu / own_peak_flops, and the note names the GPU, precision and
// peak; without own_peak_flops, or when that MFU is above 1 (the GPU or the
// precision is not the job's), there is no MFU and the note says why and,
// with `missing`, how to give what is missing (the flags of the command).
// `gpu` names the GPU in the note, with where it comes from.
struct OwnPeakMfu {
  std::optional<double> mfu;             // absent: FLOP/s per GPU with no usable peak (see the note)
  std::optional<double> logged_mfu;      // set when the application used another peak
  std::optional<double> peak_flops;      // that peak, FLOP/s per GPU
  std::optional<double> flops_per_gpu;   // what the log printed, when FLOP/s per GPU
  std::optional<double> own_peak_flops;  // the peak it was divided by
  std::string note;                      // empty when the MFU is already over its GPU's peak
};
OwnPeakMfu MfuOverOwnPeak(const formats::ReportedMfu& reported, std::optional<double> own_peak_flops,
                          const std::string& gpu, std::string_view missing = {});

// Statistics of paired samples; absent below 3 points or with no variance.
std::optional<double> PearsonR(std::span<const double> x, std::span<const double> y);
std::optional<double> SpearmanRho(std::span<const double> x, std::span<const double> y);

}  // namespace ofu::analysis
