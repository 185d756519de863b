#include "ofu/sources/nvml/nvml_gpm.h"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "ofu/sources/exact_cycles.h"

namespace ofu::sources {

bool NvmlGpm::Sample(NvmlDevice& device, double now) {
  const int next = device.latest == 0 ? 1 : 0;
  const nvmlReturn_t got = device.gpu_instance
                               ? fn().GpmMigSampleGet(device.handle, *device.gpu_instance, device.samples[next])
                               : fn().GpmSampleGet(device.handle, device.samples[next]);
  switch (ClassifyNvml(got)) {
    case NvmlOutcome::kOk:
      if (device.health == GpuHealth::kNoPermission) {
        device.health = GpuHealth::kOk;
        device.problem.clear();
      }
      device.latest = next;
      device.latest_time_s = now;
      return true;
    case NvmlOutcome::kLibraryGone: faults_.LibraryGone(got); return false;
    case NvmlOutcome::kLost: faults_.MarkLost(device.handle); return true;
    case NvmlOutcome::kNoPermission:
      device.health = GpuHealth::kNoPermission;
      device.problem = kNvmlNoPermissionAdvice;
      device.latest = -1;
      return true;
    case NvmlOutcome::kAbsent:
      if (got == NVML_ERROR_NOT_SUPPORTED) {
        device.gpm = false;
        device.health = GpuHealth::kNotSupported;
        device.problem = kNvmlNotSupportedAdvice;
      }
      device.latest = -1;
      return true;
  }
  return true;
}

bool NvmlGpm::Read(NvmlDevice& device, double now, GpuReading& reading) {
  const int before = device.latest;
  const double before_time = device.latest_time_s;
  if (!Sample(device, now)) return false;
  if (before < 0 || device.latest < 0 || device.health == GpuHealth::kLost) return true;

  // The request is 24 KiB, nearly all of it metric slots NVML never
  // touches: reuse one and clear only the slots asked for.
  nvmlGpmMetricsGet_t& request = *gpm_request_;
  request.version = NVML_GPM_METRICS_GET_VERSION;
  request.sample1 = device.samples[before];
  request.sample2 = device.samples[device.latest];
  unsigned n = 0;
  const auto ask = [&](unsigned id) {
    request.metrics[n] = nvmlGpmMetric_t{};
    request.metrics[n++].metricId = id;
  };
  for (unsigned id : wanted_.gpm_metrics) ask(id);
  const bool ask_cycles = wanted_.cycles && (!device.cycles_probed || device.has_cycles);
  if (ask_cycles) {
    ask(NVML_GPM_METRIC_SM_CYCLES_ELAPSED);
    ask(NVML_GPM_METRIC_MMA_CYCLES_ACTIVE);
  }
  request.numMetrics = n;
  if (n == 0) return true;  // the sample still opens the next window
  const nvmlReturn_t got = fn().GpmMetricsGet(&request);
  switch (ClassifyNvml(got)) {
    case NvmlOutcome::kOk: break;
    case NvmlOutcome::kLibraryGone: faults_.LibraryGone(got); return false;
    case NvmlOutcome::kLost: faults_.MarkLost(device.handle); return true;
    default: return true;  // no GPM values this window; absent
  }

  std::optional<double> elapsed;
  std::optional<double> mma;
  for (unsigned i = 0; i < n; ++i) {
    const nvmlGpmMetric_t& metric = request.metrics[i];
    if (metric.nvmlReturn != NVML_SUCCESS || !std::isfinite(metric.value)) continue;
    if (metric.metricId == NVML_GPM_METRIC_SM_CYCLES_ELAPSED) {
      elapsed = metric.value;
    } else if (metric.metricId == NVML_GPM_METRIC_MMA_CYCLES_ACTIVE) {
      mma = metric.value;
    } else {
      for (const CounterFieldInfo& field : AllCounterFields()) {
        if (field.gpm_metric_id == static_cast<int>(metric.metricId)) {
          SetField(reading.sample, field.field, metric.value / 100.0);  // GPM gives percent
        }
      }
    }
  }
  if (ask_cycles && !device.cycles_probed) {
    device.cycles_probed = true;
    device.has_cycles = elapsed.has_value() && mma.has_value();
  }
  if (device.has_cycles && elapsed && mma) ApplyExactCycles(device, now - before_time, *elapsed, *mma, reading);
  return true;
}

void NvmlGpm::ApplyExactCycles(NvmlDevice& device, double dt_s, double elapsed, double mma, GpuReading& reading) {
  // Per-interval counts (see nvml_source.h's assumption): the "before"
  // reading of a cumulative counter is zero.
  auto exact = DeriveExactCycles(CycleCounters{}, CycleCounters{elapsed, mma}, dt_s, device.sm_count.value_or(0),
                                 reading.sample.sm_clock_mhz);
  if (!exact.ok()) {
    if (!device.cycles_note_given) {
      notes_.push_back(
          fmt::format("{}: GPM cycle counters not used, keeping the sampled clock and tensor "
                      "utilization: {}",
                      device.identity.key, exact.error().message));
      device.cycles_note_given = true;
    }
    return;
  }
  reading.sample.tensor_active = exact->tensor_active;
  reading.sample.sm_clock_mhz = exact->sm_clock_mhz;
  reading.clock_basis = ClockBasis::kExactCycles;
}

}  // namespace ofu::sources
