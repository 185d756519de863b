#include "ofu/sources/dcgm/dcgm_values.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "ofu/sources/exact_cycles.h"

namespace ofu::sources {
namespace {

const CounterFieldInfo* InfoForDcgmField(unsigned short id) {
  for (const auto& info : AllCounterFields()) {
    if (info.dcgm_field_id == id) return &info;
  }
  return nullptr;
}

void ApplyExactCycles(DcgmGpu& gpu, GpuReading& reading, std::optional<double> elapsed, std::optional<double> tensor,
                      double end_s, std::vector<std::string>& notes) {
  if (!elapsed || !tensor) {
    gpu.last_cycles.reset();  // a difference across a gap would not be this window's
    return;
  }
  const CycleCounters now{*elapsed, *tensor};
  if (gpu.last_cycles) {
    auto exact = DeriveExactCycles(*gpu.last_cycles, now, end_s - gpu.last_cycles_time_s, gpu.sm_count.value_or(0),
                                   reading.sample.sm_clock_mhz);
    if (exact.ok()) {
      reading.sample.tensor_active = exact->tensor_active;
      reading.sample.sm_clock_mhz = exact->sm_clock_mhz;
      reading.clock_basis = ClockBasis::kExactCycles;
      reading.clock_readings = 1;
      gpu.cycle_problem_noted = false;
    } else if (!gpu.cycle_problem_noted) {
      notes.push_back(fmt::format("GPU {}: exact-cycle mode off ({}); using the point SM clock", gpu.identity.key,
                                  exact.error().message));
      gpu.cycle_problem_noted = true;
    }
  }
  gpu.last_cycles = now;
  gpu.last_cycles_time_s = end_s;
}

}  // namespace

std::optional<double> DcgmNumber(const dcgm::FieldValueV2& v) {
  if (v.status != dcgm::kOk) return std::nullopt;
  if (v.fieldType == dcgm::kFieldTypeDouble) {
    if (std::isnan(v.value.dbl) || v.value.dbl >= dcgm::kFp64Blank) return std::nullopt;
    return v.value.dbl;
  }
  if (v.fieldType == dcgm::kFieldTypeInt64) {
    if (v.value.i64 >= dcgm::kInt64Blank) return std::nullopt;
    return static_cast<double>(v.value.i64);
  }
  return std::nullopt;
}

std::string DcgmText(const dcgm::FieldValueV2& v) {
  if (v.status != dcgm::kOk || v.fieldType != dcgm::kFieldTypeString) return "";
  const std::string text(v.value.str, strnlen(v.value.str, sizeof v.value.str));
  return text.starts_with("<<<") ? "" : text;
}

dcgm::Return ReadLatestDcgmValues(DcgmLibrary& lib, dcgm::Handle handle, std::vector<dcgm::GroupEntityPair>& entities,
                                  std::vector<unsigned short>& fields, std::vector<dcgm::FieldValueV2>& values) {
  values.assign(entities.size() * fields.size(), dcgm::FieldValueV2{});
  for (auto& v : values) v.version = dcgm::kFieldValueVersion2;
  return lib.entities_get_latest_values(handle, entities.data(), static_cast<unsigned>(entities.size()), fields.data(),
                                        static_cast<unsigned>(fields.size()), 0, values.data());
}

GpuReading DcgmUnavailableReading(const DcgmGpu& gpu, double end_s, const std::string& reason) {
  GpuReading reading;
  reading.identity = gpu.identity;
  reading.health = GpuHealth::kUnavailable;
  reading.problem = reason;
  reading.sample.time_s = end_s;
  reading.sm_count = gpu.sm_count;
  return reading;
}

GpuReading DcgmReadingFor(DcgmGpu& gpu, double end_s, const std::vector<dcgm::FieldValueV2>& values,
                          const std::vector<dcgm::FieldValueV2>& instance_values, const DcgmWatches& watches,
                          std::vector<std::string>& notes) {
  GpuReading reading;
  reading.identity = gpu.identity;
  reading.sm_count = gpu.sm_count;
  reading.sample.time_s = end_s;

  // A whole GPU takes every field of its GPU entity; a MIG instance takes
  // its activity from its GPU_I entity and the clock fields from its
  // parent's GPU entity; a MIG-mode GPU that stayed whole takes only its
  // device fields.
  const bool instance = gpu.instance_entity.has_value();
  const bool whole_mig = gpu.mig_health != GpuHealth::kOk;
  bool lost = false;
  bool any_profiling = false;
  std::optional<double> cycles_elapsed;
  std::optional<double> cycles_tensor;
  auto take = [&](const dcgm::FieldValueV2& v) {
    if (v.status == dcgm::kGpuIsLost) lost = true;
    const std::optional<double> number = DcgmNumber(v);
    if (IsDcgmProfilingField(v.fieldId) && number) any_profiling = true;
    if (v.fieldId == dcgm::kFieldSmCyclesElapsedTotal) cycles_elapsed = number;
    if (v.fieldId == dcgm::kFieldMmaCyclesActiveTotal) cycles_tensor = number;
    if (const CounterFieldInfo* info = InfoForDcgmField(v.fieldId)) SetField(reading.sample, info->field, number);
  };
  for (const auto& v : values) {
    if (v.entityGroupId != dcgm::kEntityGpu || v.entityId != gpu.id) continue;
    if (instance && !IsLentToDcgmInstances(v.fieldId)) {
      if (v.status == dcgm::kGpuIsLost) lost = true;
      continue;
    }
    if (whole_mig && !IsDcgmDeviceField(v.fieldId)) continue;
    take(v);
  }
  if (instance) {
    for (const auto& v : instance_values) {
      if (v.entityGroupId == dcgm::kEntityGpuInstance && v.entityId == *gpu.instance_entity) take(v);
    }
  }

  if (lost) {
    reading.sample = CounterSample{};
    reading.sample.time_s = end_s;
    reading.health = GpuHealth::kLost;
    reading.problem =
        "DCGM reports the GPU lost (GPU_IS_LOST: it fell off the bus); check dmesg for Xid errors, "
        "then reset or reseat it";
    gpu.paused = false;
    gpu.last_cycles.reset();
    return reading;
  }
  const GpuHealth profiling_health = watches.profiling_health(instance);
  if (whole_mig) {
    reading.health = gpu.mig_health;
    reading.problem = gpu.mig_problem;
  } else if (profiling_health != GpuHealth::kOk) {
    reading.health = profiling_health;
    reading.problem = watches.profiling_problem(instance);
  }

  const bool profiling_watched = !whole_mig && profiling_health == GpuHealth::kOk;
  if (profiling_watched && !any_profiling && reading.sample.sm_clock_mhz) {
    // The device answers but every profiling counter is blank: another
    // profiler holds them. A gap, not idle tensor cores.
    if (!gpu.paused) {
      notes.push_back(
          fmt::format("profiling paused on GPU {}: another profiler (such as Nsight) holds the "
                      "counters; tensor activity is absent until it lets go",
                      gpu.identity.key));
    }
    gpu.paused = true;
    gpu.last_cycles.reset();
  } else if (gpu.paused && any_profiling) {
    notes.push_back(fmt::format("profiling resumed on GPU {}", gpu.identity.key));
    gpu.paused = false;
  }

  if (reading.sample.sm_clock_mhz) {
    reading.clock_basis = ClockBasis::kPointReading;
    reading.clock_readings = 1;
  }
  ApplyExactCycles(gpu, reading, cycles_elapsed, cycles_tensor, end_s, notes);
  return reading;
}

}  // namespace ofu::sources
