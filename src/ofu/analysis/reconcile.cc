#include "ofu/analysis/reconcile.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "ofu/analysis/correction.h"

namespace ofu::analysis {
namespace {

bool Near(double ratio, double characteristic, double match) { return std::abs(ratio / characteristic - 1) <= match; }

// Average ranks (1-based), ties sharing the mean of their positions.
std::vector<double> Ranks(std::span<const double> v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

FitStatistics Fit(const std::vector<const ReconciledJob*>& jobs) {
  FitStatistics out;
  std::vector<double> x, y;
  for (const ReconciledJob* job : jobs) {
    x.push_back(*job->expected_mfu);
    y.push_back(job->reported_mfu);
  }
  out.jobs = static_cast<int>(x.size());
  out.pearson_r = PearsonR(x, y);
  out.spearman_rho = SpearmanRho(x, y);
  if (!x.empty()) {
    double sum = 0;
    for (size_t i = 0; i < x.size(); ++i) sum += std::abs(y[i] - x[i]);
    out.mean_absolute_error = sum / static_cast<double>(x.size());
  }
  return out;
}

// The job's mfu_scale against `reference`, and a note on where it came from.
std::pair<double, std::string> ScaleFor(const formats::JobCorrection* correction, kernels::Precision reference) {
  const std::string ref_name(kernels::PrecisionName(reference));
  if (correction == nullptr) {
    return {1.0, fmt::format("no correction for this job: precision mix assumed all {} (mfu_scale 1)", ref_name)};
  }
  if (!correction->precision_mix.empty()) {
    // R_ref as the trace saw it when the mix has it, else the generic ratio.
    std::optional<double> ref_rate;
    double weighted = 0;
    for (const formats::JobCorrection::Share& share : correction->precision_mix) {
      weighted += share.share * share.relative_rate;
      if (share.precision == reference) ref_rate = share.relative_rate;
    }
    if (!ref_rate) ref_rate = GenericRelativeRate(reference);
    if (ref_rate && *ref_rate > 0) return {weighted / *ref_rate, ""};
  }
  if (correction->mfu_scale) {
    if (!correction->reference_precision || *correction->reference_precision == reference) {
      return {*correction->mfu_scale, ""};
    }
    const auto from = GenericRelativeRate(*correction->reference_precision), to = GenericRelativeRate(reference);
    if (from && to) {
      return {*correction->mfu_scale * *from / *to,
              fmt::format("mfu_scale rescaled from {} to {} with the generic rates",
                          kernels::PrecisionName(*correction->reference_precision), ref_name)};
    }
  }
  return {1.0, fmt::format("the correction has no precision mix: assumed all {} (mfu_scale 1)", ref_name)};
}

// The peak FLOP/s per GPU of `precision` on the job's GPUs: absent unless
// they are all one SKU that the database knows and that lists the precision.
std::optional<double> OwnPeakFlops(const GpuSpecDatabase* specs, const std::set<std::string>& skus,
                                   kernels::Precision precision) {
  if (specs == nullptr || skus.size() != 1 || skus.begin()->empty()) return std::nullopt;
  auto spec = specs->Lookup(*skus.begin());
  if (!spec.ok()) return std::nullopt;
  const std::optional<double> tflops = (*spec)->PeakTflops(kernels::PrecisionName(precision));
  if (!tflops) return std::nullopt;
  return *tflops * 1e12;
}

}  // namespace

OwnPeakMfu MfuOverOwnPeak(const formats::ReportedMfu& reported, std::optional<double> own_peak_flops,
                          const std::string& gpu, std::string_view missing) {
  OwnPeakMfu out;
  const std::string_view precision = kernels::PrecisionName(reported.reference_precision);
  if (reported.flops_per_gpu) {
    out.flops_per_gpu = reported.flops_per_gpu;
    const double tflops = *reported.flops_per_gpu / 1e12;
    if (!own_peak_flops) {
      out.note = fmt::format(
          "the log prints {:.4g} TFLOP/s per GPU, not MFU, and {}'s {} peak is not known, so there is no MFU{}{}",
          tflops, gpu, precision, missing.empty() ? "" : ": ", missing);
      return out;
    }
    out.own_peak_flops = own_peak_flops;
    const double mfu = *reported.flops_per_gpu / *own_peak_flops;
    if (mfu > 1) {
      out.note = fmt::format(
          "the log prints {:.4g} TFLOP/s per GPU, above {}'s {} peak ({:.1f} TFLOPS): MFU {:.1f} % is impossible "
          "and not used (another GPU or precision?){}{}",
          tflops, gpu, precision, *own_peak_flops / 1e12, mfu * 100, missing.empty() ? "" : ": ", missing);
      return out;
    }
    out.mfu = mfu;
    out.note =
        fmt::format("the log prints {:.4g} TFLOP/s per GPU; over {}'s {} peak ({:.1f} TFLOPS) that is MFU {:.4f}",
                    tflops, gpu, precision, *own_peak_flops / 1e12, mfu);
    return out;
  }
  out.mfu = reported.mfu;
  if (!reported.peak_flops) return out;
  out.logged_mfu = reported.mfu;
  out.peak_flops = reported.peak_flops;
  if (!own_peak_flops) {
    out.note = fmt::format(
        "the application divides by {:.1f} TFLOPS per GPU, and {}'s own {} peak is not known (one SKU in the spec "
        "database is needed): its MFU is compared as logged",
        *reported.peak_flops / 1e12, gpu, precision);
    return out;
  }
  out.own_peak_flops = own_peak_flops;
  out.mfu = reported.mfu * *reported.peak_flops / *own_peak_flops;
  out.note = fmt::format(
      "the application divides by {:.1f} TFLOPS per GPU; over {}'s {} peak ({:.1f} TFLOPS) its MFU "
      "{:.4f} is {:.4f}",
      *reported.peak_flops / 1e12, gpu, precision, *own_peak_flops / 1e12, reported.mfu, *out.mfu);
  return out;
}

std::optional<double> PearsonR(std::span<const double> x, std::span<const double> y) {
  const size_t n = std::min(x.size(), y.size());
  if (n < 3) return std::nullopt;
  const double mx = std::accumulate(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n), 0.0) /
                    static_cast<double>(n);
  const double my = std::accumulate(y.begin(), y.begin() + static_cast<std::ptrdiff_t>(n), 0.0) /
                    static_cast<double>(n);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx <= 0 || syy <= 0) return std::nullopt;
  return sxy / std::sqrt(sxx * syy);
}

std::optional<double> SpearmanRho(std::span<const double> x, std::span<const double> y) {
  const size_t n = std::min(x.size(), y.size());
  if (n < 3) return std::nullopt;
  const std::vector<double> rx = Ranks(x.first(n)), ry = Ranks(y.first(n));
  return PearsonR(rx, ry);
}

Classification ClassifyRatio(double ratio, std::optional<bool> recompute, const ReconcileOptions& options) {
  const double t = options.tolerance, m = options.match;
  const std::string times = fmt::format("{:.2f}x", ratio);
  if (std::abs(ratio - 1) <= t) return {"ok", "reported MFU matches what the hardware did", {}};
  if (ratio > 1) {
    if (ratio >= 100) {
      return {"units",
              fmt::format("reported MFU is {} what the hardware did: a unit error (GFLOPs printed as "
                          "TFLOPs is 1000x)",
                          times),
              {}};
    }
    if (Near(ratio, 2, m)) {
      return {"wrong_precision_peak",
              fmt::format("reported MFU is {} what the hardware did, the ratio of two precisions' peaks: the MFU "
                          "divides by the wrong precision's peak (e.g. the bf16 peak for an fp8 run)",
                          times),
              {"causal attention counted in full, at long sequences",
               "MoE counted by total parameters (2x total/active)"}};
    }
    if (ratio < 2 * (1 - m)) {
      return {"causal_attention_full",
              fmt::format("reported MFU is {} what the hardware did: FLOPs over-counted, most likely causal "
                          "attention counted in full (it should be halved)",
                          times),
              {"sliding-window attention counted as full attention", "recomputation counted (HFU reported as MFU)"}};
    }
    return {"moe_total_params",
            fmt::format("reported MFU is {} what the hardware did: FLOPs over-counted, most likely an MoE model "
                        "counted by total instead of active parameters (ratio = total / active)",
                        times),
            {"several over-counts compounded (causal attention and wrong peak)"}};
  }
  if (ratio < 1) {
    if (Near(ratio, 0.75, m) && recompute != false) {
      return {"recomputation",
              fmt::format("reported MFU is {} what the hardware did: activation recomputation{} — OFU counts the "
                          "recomputed FLOPs (HFU, about 4/3 of MFU with full recompute), MFU does not",
                          times, recompute ? " (declared on)" : " (likely; the log does not say)"),
              {"FLOPs under-counted by the application"}};
    }
    if (Near(ratio, 0.5, m)) {
      return {"wrong_precision_peak",
              fmt::format("reported MFU is {} what the hardware did, the ratio of two precisions' peaks: the MFU "
                          "divides by a peak 2x too high (e.g. the fp8 peak for a bf16 run)",
                          times),
              {"FLOPs under-counted by the application"}};
    }
  }
  return {"under_counted",
          fmt::format("reported MFU is {} what the hardware did: FLOPs under-counted by the application "
                      "(attention or some layers left out){}",
                      times, recompute == true ? "" : ", or recomputation not declared"),
          {}};
}

ReconcileReport Reconcile(const history::StoredHistory& history, const Report& store, const formats::MfuLog& log,
                          const std::map<std::string, formats::JobCorrection>& corrections,
                          const GpuSpecDatabase* specs, const ReconcileOptions& options) {
  ReconcileReport out;
  out.source = history.path;
  out.method = store.history_read ? store.history_read->method : HistoryRead{}.method;
  out.mfu_log = log.path;
  out.options = options;
  std::map<std::string, const JobTotals*> totals;
  for (const JobTotals& job : store.jobs) totals[job.job_id] = &job;
  // Each job's SKUs (the GPUs it had).
  std::map<std::int64_t, std::string> sku_of;
  for (const history::StoredGpu& gpu : history.gpus) sku_of[gpu.id] = gpu.sku;
  std::map<std::string, std::set<std::string>> skus_of_job;
  for (const history::StoredJob& job : history.jobs) skus_of_job[job.job_id].insert(sku_of[job.gpu_id]);

  std::set<std::string> in_log;
  for (const formats::ReportedMfu& reported : log.jobs) {
    in_log.insert(reported.job_id);
    ReconciledJob job;
    job.job_id = reported.job_id;
    job.reported_mfu = reported.mfu;
    job.reported_known = !reported.flops_per_gpu;
    job.flops_per_gpu = reported.flops_per_gpu;
    job.reference_precision = reported.reference_precision;
    job.recompute = reported.recompute;
    auto total = totals.find(reported.job_id);
    if (total == totals.end() || !total->second->ofu) {
      job.flag = "no_ofu";
      job.explanation = total == totals.end() ? "the job is not in the OFU data for this range"
                                              : "the job has no window with an OFU";
      out.flags[job.flag] += 1;
      out.jobs.push_back(std::move(job));
      continue;
    }
    job.job_name = total->second->job_name;
    job.gpus = total->second->gpus;
    job.ofu = total->second->ofu;
    const std::set<std::string>& skus = skus_of_job[job.job_id];
    const std::optional<double> own_peak = OwnPeakFlops(specs, skus, reported.reference_precision);
    if (!reported.origin.empty()) job.notes.push_back(reported.origin);
    const bool one_sku = skus.size() == 1 && !skus.begin()->empty();
    const OwnPeakMfu own = MfuOverOwnPeak(
        reported, own_peak,
        one_sku ? fmt::format("{} (the job's GPUs in the OFU data)", *skus.begin()) : "the job's GPUs",
        one_sku ? "check --reference-precision (default bf16), or add the GPU's peaks to the spec database (--spec-db)"
                : "the job's GPUs are not one model known to the spec database, so no one peak applies");
    job.logged_mfu = own.logged_mfu;
    job.peak_flops = own.peak_flops;
    if (!own.note.empty()) job.notes.push_back(own.note);
    if (!own.mfu) {
      job.flag = "no_mfu";
      job.explanation = own.note;
      out.flags[job.flag] += 1;
      out.jobs.push_back(std::move(job));
      continue;
    }
    job.reported_mfu = *own.mfu;
    job.reported_known = true;
    auto correction = corrections.find(reported.job_id);
    const formats::JobCorrection* c = correction == corrections.end() ? nullptr : &correction->second;
    job.factor = c != nullptr ? c->factor : std::nullopt;
    job.corrected_ofu = *job.ofu * job.factor.value_or(1.0);
    if (!job.factor) job.notes.push_back("no tile-quantization factor for this job: corrected OFU = OFU");
    auto [scale, note] = ScaleFor(c, reported.reference_precision);
    job.mfu_scale = scale;
    if (!note.empty()) job.notes.push_back(note);
    job.expected_mfu = *job.corrected_ofu * job.mfu_scale;
    job.residual = job.reported_mfu - *job.expected_mfu;

    if (own_peak && reported.model_flops_per_token && reported.tokens_per_s && job.gpus > 0) {
      job.throughput_mfu = *reported.model_flops_per_token * *reported.tokens_per_s / (job.gpus * *own_peak);
      if (std::abs(*job.throughput_mfu / std::max(job.reported_mfu, 1e-12) - 1) > options.tolerance) {
        job.notes.push_back(
            fmt::format("the log's own figures disagree: model FLOPs/token x tokens/s gives "
                        "MFU {:.3f}, the log says {:.3f}",
                        *job.throughput_mfu, job.reported_mfu));
      }
    }

    // The busiest CUDA-core pipe of the job (store_report.h's job non_tensor).
    const NonTensorFigures& nt = total->second->non_tensor;
    const std::optional<CudaCorePipe> busy_pipe = BusiestPipe(nt, kNonTensorBusyPipe);
    if (*job.expected_mfu > 0) {
      job.ratio = job.reported_mfu / *job.expected_mfu;
      Classification verdict = ClassifyRatio(*job.ratio, job.recompute, options);
      job.flag = verdict.flag;
      job.explanation = verdict.explanation;
      job.alternatives = verdict.alternatives;
      // Reported well above what OFU allows while the CUDA cores are busy:
      // the application counts FLOPs the tensor pipes never saw.
      if (*job.ratio > 1 + options.tolerance && busy_pipe) {
        if (job.flag != "ok") job.alternatives.insert(job.alternatives.begin(), job.explanation);
        job.flag = "non_tensor_work";
        job.explanation = fmt::format(
            "the {} CUDA-core pipe is {:.0f}% active: the job's math runs largely outside the tensor cores "
            "(FP32 GEMMs without TF32/bf16), which OFU does not count; the non-tensor bound is {} TFLOP/s per GPU",
            InfoFor(*busy_pipe).label, *nt[*busy_pipe] * 100,
            nt.flops_upper_bound_tflops ? fmt::format("{:.1f}", *nt.flops_upper_bound_tflops) : "unknown");
      }
    } else {
      job.flag = job.reported_mfu > 0 ? "under_counted" : "ok";
      job.explanation = job.reported_mfu > 0 ? "the hardware did no tensor work, yet the job reports an MFU"
                                             : "no tensor work and none reported";
    }
    out.flags[job.flag] += 1;
    out.jobs.push_back(std::move(job));
  }
  for (const JobTotals& job : store.jobs) {
    if (in_log.count(job.job_id) == 0) ++out.jobs_without_mfu;
  }
  std::vector<const ReconciledJob*> all, unflagged;
  for (const ReconciledJob& job : out.jobs) {
    if (!job.expected_mfu) continue;
    all.push_back(&job);
    if (!job.flagged()) unflagged.push_back(&job);
  }
  out.all = Fit(all);
  out.unflagged = Fit(unflagged);
  return out;
}

}  // namespace ofu::analysis
