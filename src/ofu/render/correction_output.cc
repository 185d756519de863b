#include "ofu/render/correction_output.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ofu/analysis/cuda_core_advice.h"
#include "ofu/render/json_fields.h"

namespace ofu::render {
namespace {

using analysis::CorrectionReport;
using analysis::CorrectionView;
using analysis::Coverage;
using analysis::HasTf32;
using analysis::kBusyPipe;
using analysis::LeftOut;
using analysis::OwnPeakMfu;
using analysis::PrecisionShare;
using analysis::PrecisionTime;
using analysis::PreNativeGemm;
using analysis::WastefulGemm;
using nlohmann::json;

json Optional(const std::optional<double>& value) { return OrNull<json>(value); }

std::string Percent(double ratio) { return fmt::format("{:.1f} %", 100.0 * ratio); }

std::string Shape(const kernels::GemmProblem& p) {
  std::string shape = fmt::format("{}x{}x{}", p.m, p.n, p.k);
  if (p.batch != 1) shape += fmt::format(" (x{})", p.batch);
  return shape;
}

json DimJson(const kernels::PaddedDim& d) {
  return json{{"size", d.size}, {"padded", d.padded}, {"step", d.step}, {"tile", d.tile}, {"cluster", d.cluster}};
}

std::string Bytes(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30));
  if (bytes >= (uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  return fmt::format("{} B", bytes);
}

// The recording's FP32 pipe beside the trace's GEMM time on CUDA cores. The
// two need not cover the same minutes, so this says what agrees, not more.
// `gpu` (null: not known) decides the remedy: a GPU whose tensor cores take
// FP16 only (V100, T4) has no TF32 or bf16 to offer.
std::string Fp32PipeLine(double fp32_active, const std::optional<double>& simt_gemm_share, const GpuSpec* gpu) {
  std::string line = fmt::format("{} active", Percent(fp32_active));
  if (fp32_active < kBusyPipe || !simt_gemm_share) return line;
  if (*simt_gemm_share >= 0.5) {
    const bool fp16_only = gpu != nullptr && !HasTf32(*gpu);
    return line + (fp16_only ? "  (busy, and most GEMM time is on CUDA cores: FP32 GEMMs; this GPU's tensor cores "
                               "take FP16 only, so fp16 autocast moves them there)"
                             : "  (busy, and most GEMM time is on CUDA cores: FP32 GEMMs; TF32 or bf16/fp16 autocast "
                               "moves them to the tensor cores)");
  }
  return line + "  (busy, but most GEMM time is on tensor cores: FP32 work other than these GEMMs)";
}

}  // namespace

namespace {

// The training log's line of the table, and of the notes.
std::string ReportedSource(const formats::TrainingLog& log) {
  return fmt::format("{} log {}, median of {} step(s)", log.format, log.path, log.steps.size());
}

std::string TrainingLogRefusedNote(const CorrectionView& view) {
  return fmt::format(
      "--training-log was refused, so no reported MFU is set beside the prediction (the rest of "
      "this report does not depend on it): {}",
      view.training_log_error);
}

// What the table's and the JSON's notes say of the log: impossible values
// left out, how its figure became an MFU (the GPU, precision and peak).
std::vector<std::string> ReportedNotes(const CorrectionView& view, const CorrectionView::Reported& reported) {
  const formats::TrainingLog& log = *view.training_log;
  std::vector<std::string> notes;
  if (log.impossible_steps > 0) {
    notes.push_back(fmt::format("{} impossible value(s) of the training log left out: {}", log.impossible_steps,
                                fmt::join(log.notes, "; ")));
  }
  if (!reported.mfu.note.empty()) notes.push_back(reported.mfu.note);
  if (log.quantity == formats::TrainingLogQuantity::kFlopsPerGpu) {
    notes.push_back(
        fmt::format("{} prints FLOP/s, not MFU, and not the precision it trained in: the peak is the {} one "
                    "(--reference-precision, default bf16); pass the job's own precision if it is another",
                    log.format, kernels::PrecisionName(log.reference_precision)));
  }
  return notes;
}

}  // namespace

std::string RenderCorrectionJson(const CorrectionView& view) {
  const CorrectionReport& r = *view.report;
  json out;
  out["trace"] = {{"path", view.trace_path},
                  {"format", view.trace->format},
                  {"kernels", view.trace->kernels.size()},
                  {"bytes_read", view.trace->bytes_read}};
  out["gpu"] = view.gpu
                   ? json{{"sku", view.gpu->id}, {"name", view.gpu->name}, {"rates", "spec"}, {"from", view.gpu_origin}}
                   : json{{"sku", nullptr}, {"name", nullptr}, {"rates", "generic"}, {"from", nullptr}};
  out["reference_precision"] = kernels::PrecisionName(r.reference_precision);
  out["factor"] = Optional(r.factor);
  out["padding_factor"] = Optional(r.padding_factor);
  out["throughput_factor"] = Optional(r.throughput_factor);
  out["ofu"] = Optional(view.ofu);
  out["ofu_source"] = view.ofu ? json(view.ofu_source) : json(nullptr);
  out["ofu_clock_source"] = view.ofu_clock_source.empty() ? json(nullptr) : json(view.ofu_clock_source);
  out["corrected_ofu"] = Optional(view.CorrectedOfu());
  out["mfu_scale"] = Optional(r.mfu_scale);
  out["predicted_mfu"] = Optional(view.PredictedMfu());
  out["non_tensor_gemm_share"] = Optional(r.non_tensor_gemm_share);
  out["fp32_pipe_active"] = Optional(view.fp32_pipe_active);
  json mix = json::array();
  for (const PrecisionShare& share : r.precision_mix) {
    mix.push_back({{"precision", kernels::PrecisionName(share.precision)},
                   {"tensor_time_share", share.tensor_time_share},
                   {"relative_rate", share.relative_rate}});
  }
  out["precision_mix"] = mix;
  const Coverage& c = r.coverage;
  json left_out = json::array();
  for (const LeftOut& row : c.left_out) {
    left_out.push_back(
        {{"reason", row.reason}, {"kernels", row.kernels}, {"time_us", row.time_us}, {"example", row.example}});
  }
  out["coverage"] = {{"kernels", c.kernels},
                     {"kernel_time_us", c.kernel_time_us},
                     {"gemm_kernels", c.gemm_kernels},
                     {"gemm_time_us", c.gemm_time_us},
                     {"corrected_kernels", c.corrected_kernels},
                     {"corrected_time_us", c.corrected_time_us},
                     {"simt_kernels", c.simt_kernels},
                     {"simt_time_us", c.simt_time_us},
                     {"left_out", left_out}};
  json by_precision = json::array();
  for (const PrecisionTime& row : c.gemm_time_by_precision) {
    by_precision.push_back({{"precision", row.precision ? json(kernels::PrecisionName(*row.precision)) : json(nullptr)},
                            {"time_us", row.time_us},
                            {"gemm_time_share", row.gemm_time_share}});
  }
  out["coverage"]["gemm_time_by_precision"] = by_precision;
  out["coverage"]["block_scaled_without_shape_kernels"] = c.block_scaled_without_shape_kernels;
  out["coverage"]["block_scaled_without_shape_time_us"] = c.block_scaled_without_shape_time_us;
  json wasteful = json::array();
  for (const WastefulGemm& w : r.wasteful) {
    json row = GemmIdentityJson<json>(w);
    row["wasted_share"] = w.wasted_share;
    row["advice"] = w.advice;
    row["kernel_m"] = DimJson(w.padded.m);
    row["kernel_n"] = DimJson(w.padded.n);
    row["kernel_k"] = DimJson(w.padded.k);
    wasteful.push_back(std::move(row));
  }
  out["wasteful"] = wasteful;
  json pre_native = json::array();
  for (const PreNativeGemm& g : r.pre_native) {
    json unaligned = json::array();
    for (const std::string& dim : g.unaligned) unaligned.push_back(dim);
    json row = GemmIdentityJson<json>(g);
    row["family"] = g.family;
    row["kernel_sm"] = g.kernel_sm;
    row["native_sm"] = g.native_sm;
    row["relative_throughput"] = Optional(g.relative_throughput);
    row["throughput_source"] = g.relative_throughput ? json(g.throughput_source) : json(nullptr);
    row["lost_share"] = Optional(g.lost_share);
    row["unaligned"] = unaligned;
    row["advice"] = g.advice;
    pre_native.push_back(std::move(row));
  }
  out["pre_native"] = pre_native;
  out["reported"] = nullptr;
  out["notes"] = view.trace->notes;
  for (const std::string& note : r.notes) out["notes"].push_back(note);
  out["training_log_error"] = view.training_log_error.empty() ? json(nullptr) : json(view.training_log_error);
  if (!view.training_log_error.empty()) out["notes"].push_back(TrainingLogRefusedNote(view));
  if (const std::optional<CorrectionView::Reported> reported = view.ReportedBesidePredicted()) {
    const OwnPeakMfu& mfu = reported->mfu;
    out["reported"] = {{"source", view.training_log->path},
                       {"format", view.training_log->format},
                       {"steps", view.training_log->steps.size()},
                       {"impossible_steps", view.training_log->impossible_steps},
                       {"mfu", Optional(mfu.mfu)},
                       {"logged_mfu", Optional(mfu.logged_mfu)},
                       {"peak_flops", Optional(mfu.peak_flops)},
                       {"flops_per_gpu", Optional(mfu.flops_per_gpu)},
                       {"gpu_peak_flops", Optional(mfu.own_peak_flops)},
                       {"gpu", view.gpu != nullptr ? json(view.gpu->id) : json(nullptr)},
                       {"precision", kernels::PrecisionName(view.training_log->reference_precision)},
                       {"ratio", Optional(reported->ratio)},
                       {"flag", reported->verdict ? json(reported->verdict->flag) : json(nullptr)},
                       {"explanation", reported->verdict ? json(reported->verdict->explanation) : json(nullptr)}};
    for (const std::string& note : ReportedNotes(view, *reported)) out["notes"].push_back(note);
  }
  return out.dump(2) + "\n";
}

std::string RenderCorrectionTable(const CorrectionView& view) {
  const CorrectionReport& r = *view.report;
  const Coverage& c = r.coverage;
  std::string out;
  const auto line = [&](std::string_view label, const std::string& value) {
    out += fmt::format("{:<22}{}\n", label, value);
  };
  line("Trace", fmt::format("{} ({}, {} kernels{})", view.trace_path, view.trace->format, c.kernels,
                            view.trace->bytes_read ? ", " + Bytes(view.trace->bytes_read) + " of text" : ""));
  line("Tensor rates", view.gpu ? fmt::format("{} (from {})", view.gpu->name, view.gpu_origin)
                                : std::string("generic (GPU model unknown; pass --gpu-model)"));
  if (r.factor) {
    line("Correction factor",
         fmt::format("{:.4f}  (useful / executed tensor work over {} GEMM kernels, {} of GEMM time)", *r.factor,
                     c.corrected_kernels, c.gemm_time_us > 0 ? Percent(c.corrected_time_us / c.gemm_time_us) : "—"));
    if (r.throughput_factor && *r.throughput_factor < 1.0) {
      line("", fmt::format("= tiles {:.4f} x pre-native kernels {:.4f} (their FLOPs per tensor-active cycle)",
                           r.padding_factor.value_or(1.0), *r.throughput_factor));
    }
  } else {
    line("Correction factor", "—  (no GEMM kernel could be corrected)");
  }
  if (!r.precision_mix.empty()) {
    std::string mix;
    for (const PrecisionShare& share : r.precision_mix) {
      mix += fmt::format("{}{} {}", mix.empty() ? "" : ", ", kernels::PrecisionName(share.precision),
                         Percent(share.tensor_time_share));
    }
    line("Precision mix", mix + "  (share of tensor time)");
  }
  if (!c.gemm_time_by_precision.empty()) {
    std::string by_precision;
    for (const PrecisionTime& row : c.gemm_time_by_precision) {
      by_precision += fmt::format("{}{} {}", by_precision.empty() ? "" : ", ",
                                  row.precision ? kernels::PrecisionName(*row.precision) : "not named",
                                  Percent(row.gemm_time_share));
    }
    line("GEMMs by precision", by_precision + "  (share of GEMM time, every GEMM kernel, by its name)");
  }
  line("GEMMs on CUDA cores", r.non_tensor_gemm_share ? fmt::format("{} of GEMM time ({} kernels; not in OFU)",
                                                                    Percent(*r.non_tensor_gemm_share), c.simt_kernels)
                                                      : std::string("—"));
  if (view.fp32_pipe_active)
    line("FP32 pipe (recording)", Fp32PipeLine(*view.fp32_pipe_active, r.non_tensor_gemm_share, view.gpu));
  if (view.ofu) {
    line("OFU", view.ofu_clock_source.empty()
                    ? fmt::format("{:.3f}  (from {})", *view.ofu, view.ofu_source)
                    : fmt::format("{:.3f}  (from {}; clock: {})", *view.ofu, view.ofu_source, view.ofu_clock_source));
    const std::optional<double> corrected = view.CorrectedOfu();
    line("Corrected OFU", corrected ? fmt::format("{:.3f}", *corrected) : std::string("—"));
    const std::optional<double> mfu = view.PredictedMfu();
    line(fmt::format("Predicted MFU ({})", kernels::PrecisionName(r.reference_precision)),
         mfu ? fmt::format("{:.3f}", *mfu) : std::string("—"));
  } else if (r.mfu_scale) {
    line("Predicted MFU", fmt::format("OFU x {:.4f} against {} (pass --ofu X or --input RECORDING)",
                                      *r.factor * *r.mfu_scale, kernels::PrecisionName(r.reference_precision)));
  }
  std::vector<std::string> reported_notes;
  if (const std::optional<CorrectionView::Reported> reported = view.ReportedBesidePredicted()) {
    const formats::TrainingLog& log = *view.training_log;
    line(fmt::format("Reported MFU ({})", kernels::PrecisionName(log.reference_precision)),
         reported->mfu.mfu ? fmt::format("{:.3f}  ({})", *reported->mfu.mfu, ReportedSource(log))
                           : fmt::format("—  ({}: no MFU, see the notes)", ReportedSource(log)));
    reported_notes = ReportedNotes(view, *reported);
    if (reported->ratio) {
      line("Reported / predicted",
           fmt::format("{:.2f}x  {}: {}", *reported->ratio, reported->verdict->flag, reported->verdict->explanation));
    } else if (reported->mfu.mfu && log.reference_precision != r.reference_precision) {
      reported_notes.push_back(fmt::format(
          "the log's MFU is quoted against {} and the prediction against {}: pass --reference-precision {} to "
          "compare them",
          kernels::PrecisionName(log.reference_precision), kernels::PrecisionName(r.reference_precision),
          kernels::PrecisionName(log.reference_precision)));
    }
  }

  if (!r.wasteful.empty()) {
    out += "\nGEMMs that waste the most tensor time (padding of tiles and clusters)\n";
    out += fmt::format("  {:>7}  {:>7}  {:>8}  {:<16} {:<20} {:<5} {}\n", "wasted", "tensor", "launches", "op",
                       "shape MxNxK", "prec", "advice / kernel");
    for (const WastefulGemm& w : r.wasteful) {
      out += fmt::format("  {:>7}  {:>7}  {:>8}  {:<16} {:<20} {:<5} {}\n", Percent(w.wasted_share),
                         Percent(w.tensor_time_share), w.launches, w.op_name, Shape(w.problem),
                         kernels::PrecisionName(w.precision), w.advice);
      out += fmt::format("  {:>7}  {:>7}  {:>8}  {:<16} {:<20} {:<5} {}\n", "", "", "", "", "", "", w.kernel_name);
    }
  }
  if (!r.pre_native.empty()) {
    out += "\nGEMMs on kernels built for an older architecture (fewer FLOPs per tensor-active cycle)\n";
    out += fmt::format("  {:>7}  {:>7}  {:>8}  {:<16} {:<20} {:<5} {}\n", "lost", "tensor", "launches", "op",
                       "shape MxNxK", "prec", "finding / kernel");
    for (const PreNativeGemm& g : r.pre_native) {
      out += fmt::format("  {:>7}  {:>7}  {:>8}  {:<16} {:<20} {:<5} {}\n",
                         g.lost_share ? Percent(*g.lost_share) : std::string("?"), Percent(g.tensor_time_share),
                         g.launches, g.op_name, Shape(g.problem), kernels::PrecisionName(g.precision), g.advice);
      out += fmt::format("  {:>7}  {:>7}  {:>8}  {:<16} {:<20} {:<5} {}\n", "", "", "", "", "", "", g.kernel_name);
    }
  }
  if (!c.left_out.empty()) {
    out += "\nGEMM kernels left out of the factor\n";
    out += fmt::format("  {:>8}  {:>12}  {}\n", "kernels", "time", "reason (example)");
    for (const LeftOut& row : c.left_out) {
      out += fmt::format("  {:>8}  {:>9.1f} ms  {} (e.g. {})\n", row.kernels, row.time_us / 1000.0, row.reason,
                         row.example);
    }
  }
  if (!view.training_log_error.empty()) reported_notes.push_back(TrainingLogRefusedNote(view));
  if (!view.trace->notes.empty() || !r.notes.empty() || !reported_notes.empty()) {
    out += "\nNotes\n";
    for (const std::string& note : view.trace->notes) out += fmt::format("  - {}\n", note);
    for (const std::string& note : r.notes) out += fmt::format("  - {}\n", note);
    for (const std::string& note : reported_notes) out += fmt::format("  - {}\n", note);
  }
  return out;
}

}  // namespace ofu::render
