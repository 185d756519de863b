#include "ofu/gemm/evaluate.h"

#include <algorithm>

#include <fmt/format.h>

#include "ofu/core/ofu_math.h"
#include "ofu/kernels/gemm_padding.h"

namespace ofu::gemm {
namespace {

using kernels::Precision;

// The mean over the windows of A_tensor · clock(window), scaled to OFU;
// absent unless every window gives both.
template <typename ClockOf>
std::optional<double> MeanOfu(const std::vector<CounterWindow>& windows, const OfuScale& scale, ClockOf clock_of) {
  if (windows.empty()) return std::nullopt;
  double sum = 0;
  for (const CounterWindow& w : windows) {
    const std::optional<double> clock = clock_of(w);
    if (!w.tensor_active || !clock) return std::nullopt;
    sum += ComputeOfu(*w.tensor_active, *clock, scale);
  }
  return sum / static_cast<double>(windows.size());
}

template <typename ValueOf>
std::optional<double> Mean(const std::vector<CounterWindow>& windows, ValueOf value_of) {
  if (windows.empty()) return std::nullopt;
  double sum = 0;
  for (const CounterWindow& w : windows) {
    const std::optional<double> v = value_of(w);
    if (!v) return std::nullopt;
    sum += *v;
  }
  return sum / static_cast<double>(windows.size());
}

std::optional<double> ErrorPp(const std::optional<double>& ofu, const std::optional<double>& mfu) {
  if (!ofu || !mfu) return std::nullopt;
  return (*ofu - *mfu) * 100.0;
}

void AddNote(std::string& note, const std::string& text) {
  if (!note.empty()) note += "; ";
  note += text;
}

// The interval the MFU covers: the windows' span with the iterations the
// GPU did in it, or the reason it cannot be had (then the whole loop).
struct MfuSpan {
  double seconds = 0;
  double iterations = 0;  // interpolated: a fraction of an iteration is real work done
};

// Iterations done by time t, linear between the two checkpoints around it;
// t must lie within [first, last] checkpoint.
double IterationsAt(const std::vector<LoopCheckpoint>& checkpoints, double t) {
  for (std::size_t i = 1; i < checkpoints.size(); ++i) {
    const LoopCheckpoint& a = checkpoints[i - 1];
    const LoopCheckpoint& b = checkpoints[i];
    if (t > b.time_s) continue;
    const double fraction = b.time_s > a.time_s ? (t - a.time_s) / (b.time_s - a.time_s) : 1.0;
    return static_cast<double>(a.iterations) + fraction * static_cast<double>(b.iterations - a.iterations);
  }
  return static_cast<double>(checkpoints.back().iterations);
}

Result<MfuSpan> WindowSpan(const Measurement& measured) {
  const std::vector<CounterWindow>& windows = measured.windows;
  const std::vector<LoopCheckpoint>& checkpoints = measured.checkpoints;
  if (checkpoints.size() < 2) return Error::InvalidArgument("the loop has no checkpoints");
  for (std::size_t i = 1; i < checkpoints.size(); ++i) {
    if (checkpoints[i].time_s < checkpoints[i - 1].time_s ||
        checkpoints[i].iterations < checkpoints[i - 1].iterations) {
      return Error::InvalidArgument("the loop's checkpoints are out of order");
    }
  }
  double begin = 0, end = 0;
  for (std::size_t i = 0; i < windows.size(); ++i) {
    if (!windows[i].start_s || !windows[i].end_s) return Error::InvalidArgument("a window has no times");
    begin = i == 0 ? *windows[i].start_s : std::min(begin, *windows[i].start_s);
    end = i == 0 ? *windows[i].end_s : std::max(end, *windows[i].end_s);
  }
  if (!(end > begin)) return Error::InvalidArgument("the windows' span is empty");
  if (begin < checkpoints.front().time_s || end > checkpoints.back().time_s) {
    return Error::InvalidArgument("the windows' span is not inside the checkpoints");
  }
  return MfuSpan{end - begin, IterationsAt(checkpoints, end) - IterationsAt(checkpoints, begin)};
}

}  // namespace

std::optional<CorrectionTile> ChooseCorrectionTile(const Tiling& name, const Tiling& algorithm) {
  CorrectionTile chosen;
  const Tiling* tile_side = nullptr;
  if (name.tile_m && name.tile_n) {
    tile_side = &name;
    chosen.origin = "name";
  } else if (algorithm.tile_m && algorithm.tile_n) {
    tile_side = &algorithm;
    chosen.origin = "algorithm";
  } else {
    return std::nullopt;
  }
  chosen.shape.tile_m = *tile_side->tile_m;
  chosen.shape.tile_n = *tile_side->tile_n;
  chosen.shape.tile_k = tile_side->tile_k.value_or(0);
  if (tile_side->cluster_m && tile_side->cluster_n) {
    chosen.shape.cluster_m = *tile_side->cluster_m;
    chosen.shape.cluster_n = *tile_side->cluster_n;
  } else if (tile_side == &name && algorithm.cluster_m && algorithm.cluster_n) {
    chosen.shape.cluster_m = *algorithm.cluster_m;
    chosen.shape.cluster_n = *algorithm.cluster_n;
    chosen.origin = "name+algorithm-cluster";
  }
  return chosen;
}

std::optional<double> PeakTflops(const GpuSpec& spec, Precision precision) {
  if (precision == Precision::kFp32) return std::nullopt;  // SIMT: no tensor peak
  return spec.PeakTflops(kernels::PrecisionName(precision));
}

CaseResult SkippedCase(const GemmCase& c, std::string gpu_model, std::string reason) {
  CaseResult row;
  row.sweep = c.sweep;
  row.group = c.group;
  row.m = c.m;
  row.n = c.n;
  row.k = c.k;
  row.precision = c.precision;
  row.layout = c.layout;
  row.gpu = std::move(gpu_model);
  row.note = "skipped: " + std::move(reason);
  return row;
}

Result<CaseResult> EvaluateCase(const CaseRun& run, const GpuSpec& spec,
                                const kernels::KernelThroughputTable* throughput) {
  const Measurement& measured = run.measurement;
  if (measured.iterations <= 0 || !(measured.elapsed_s > 0)) {
    return Error::InvalidArgument("{}: the steady loop needs iterations > 0 and a positive time (got {} in {} s)",
                                  DescribeCase(run.gemm_case), measured.iterations, measured.elapsed_s);
  }
  CaseResult row = SkippedCase(run.gemm_case, run.gpu_model, "");
  row.note = run.note;
  row.power_limit_w = run.power_limit_w;
  row.kernel_name = run.kernel_name;
  row.algorithm_tiling = run.algorithm_tiling;

  // The kernel name, through ofu's own parser.
  if (!run.kernel_name.empty()) {
    auto info = kernels::ParseKernelName(run.kernel_name);
    if (info.ok()) {
      row.kernel_family = std::string(kernels::FamilyName(info->family));
      row.tensor_core = info->tensor_core;
      row.name_tiling = Tiling{info->tile_m, info->tile_n,    info->tile_k,
                               info->stages, info->cluster_m, info->cluster_n};
      if (info->split_k) AddNote(row.note, "split-K kernel: K is padded once, a lower bound on the executed work");
    } else {
      AddNote(row.note, "kernel name not parsed: " + info.error().message);
    }
  }
  row.tile_check = CompareTiling(row.algorithm_tiling, row.name_tiling);

  // True MFU: over the windows' span where the checkpoints give it, else
  // over the whole loop (its CUDA events).
  const GemmCase& c = run.gemm_case;
  const std::vector<CounterWindow>& windows = measured.windows;
  const double useful_per_iteration = 2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) *
                                      static_cast<double>(c.k);
  row.iterations = measured.iterations;
  row.elapsed_s = measured.elapsed_s;
  row.time_per_iteration_us = measured.elapsed_s / static_cast<double>(measured.iterations) * 1e6;
  MfuSpan span{measured.elapsed_s, static_cast<double>(measured.iterations)};
  if (!windows.empty()) {
    if (auto within = WindowSpan(measured); within.ok()) {
      span = *within;
      row.mfu_span_s = span.seconds;
    } else {
      AddNote(row.note, "MFU over the whole loop, not the windows' span: " + within.error().message);
    }
  }
  row.achieved_tflops = useful_per_iteration * span.iterations / span.seconds / 1e12;
  row.peak_tflops = PeakTflops(spec, c.precision);
  if (row.peak_tflops) row.mfu = row.achieved_tflops / *row.peak_tflops;

  // OFU, each clock basis.
  const OfuScale scale{spec.SpecClockMhz(), spec.k_arch};
  row.windows = static_cast<int>(windows.size());
  if (windows.empty()) AddNote(row.note, "no counter window lay wholly inside the steady loop");
  row.tensor_active = Mean(windows, [](const CounterWindow& w) { return w.tensor_active; });
  row.sm_clock_mhz = Mean(windows, [](const CounterWindow& w) { return w.oversampled_clock_mhz; });
  row.sm_clock_point_mhz = Mean(windows, [](const CounterWindow& w) { return w.point_clock_mhz; });
  row.source_clock_mhz = Mean(windows, [](const CounterWindow& w) { return w.source_clock_mhz; });
  row.ofu_raw = MeanOfu(windows, scale, [](const CounterWindow& w) { return w.source_clock_mhz; });
  row.ofu_point = MeanOfu(windows, scale, [](const CounterWindow& w) { return w.point_clock_mhz; });
  row.ofu_oversampled = MeanOfu(windows, scale, [](const CounterWindow& w) { return w.oversampled_clock_mhz; });
  // The SMs' own clock over the loop, beside NVML's.
  if (measured.probes.size() >= 2) {
    if (auto run_clock = ClockBetween(measured.probes.front(), measured.probes.back()); run_clock.ok()) {
      row.sm_clock_run_mhz = run_clock->median_mhz;
      row.sm_clock_run_min_mhz = run_clock->min_mhz;
      row.sm_clock_run_max_mhz = run_clock->max_mhz;
      if (row.sm_clock_mhz) row.nvml_over_run = *row.sm_clock_mhz / run_clock->median_mhz;
      if (row.tensor_active) row.ofu_run = ComputeOfu(*row.tensor_active, run_clock->median_mhz, scale);
    } else {
      AddNote(row.note, "no SM clock from the probe: " + run_clock.error().message);
    }
  }
  bool all_exact = !windows.empty();
  for (const CounterWindow& w : windows) all_exact = all_exact && w.exact_cycles;
  if (all_exact) row.ofu_exact = row.ofu_raw;

  // Tile padding.
  if (auto tile = ChooseCorrectionTile(row.name_tiling, row.algorithm_tiling)) {
    auto padded = kernels::PadGemm(kernels::GemmProblem{c.m, c.n, c.k, 1}, tile->shape);
    if (padded.ok() && padded->executed_flops > 0) {
      row.padding_factor = padded->useful_flops / padded->executed_flops;
      row.correction_tiling = tile->origin;
    } else if (!padded.ok()) {
      AddNote(row.note, "no padding correction: " + padded.error().message);
    }
  } else {
    AddNote(row.note, "no tile from the kernel name or the algorithm: no padding correction");
  }
  // Kernel family: a kernel built for an older architecture does fewer
  // FLOPs per tensor-active cycle (data/kernel_throughput.json).
  if (throughput != nullptr && !run.kernel_name.empty()) {
    const auto info = kernels::ParseKernelName(run.kernel_name);
    if (info.ok() && info->tensor_core == true) {
      const kernels::Precision p = c.precision == kernels::Precision::kFp32 ? kernels::Precision::kTf32 : c.precision;
      const kernels::KernelGeneration g = throughput->Classify(*info, p, spec.architecture);
      if (!g.pre_native || g.figure != nullptr) {
        row.throughput_factor = g.RelativeThroughput();
      } else {
        AddNote(row.note, fmt::format("kernel built for sm{} ({}): its throughput on {} is not measured, so the "
                                      "corrected OFU counts it as native",
                                      g.kernel_sm, g.family, spec.architecture));
      }
    }
  }
  if (row.ofu_raw && row.padding_factor) {
    row.ofu_corrected = *row.ofu_raw * *row.padding_factor * row.throughput_factor.value_or(1.0);
  }

  row.err_raw_pp = ErrorPp(row.ofu_raw, row.mfu);
  row.err_point_pp = ErrorPp(row.ofu_point, row.mfu);
  row.err_oversampled_pp = ErrorPp(row.ofu_oversampled, row.mfu);
  row.err_exact_pp = ErrorPp(row.ofu_exact, row.mfu);
  row.err_corrected_pp = ErrorPp(row.ofu_corrected, row.mfu);
  row.err_run_pp = ErrorPp(row.ofu_run, row.mfu);
  return row;
}

}  // namespace ofu::gemm
