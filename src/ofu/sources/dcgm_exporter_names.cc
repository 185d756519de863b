#include "ofu/sources/dcgm_exporter_names.h"

#include "ofu/formats/dcgmi_dmon.h"

#include <array>

namespace ofu::sources {
namespace {

struct NamedMetric {
  std::string_view name;
  KnownMetric metric;
};

// The first name listed for a field is the one ofu writes.
constexpr std::array kMetrics = {
    NamedMetric{"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", {CounterField::kTensorActive, ValueScale::kRatio, 1004}},
    NamedMetric{"DCGM_FI_PROF_TENSOR_UTIL_RATIO", {CounterField::kTensorActive, ValueScale::kRatio, 1004}},
    NamedMetric{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", {CounterField::kGrEngineActive, ValueScale::kRatio, 1001}},
    NamedMetric{"DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", {CounterField::kGrEngineActive, ValueScale::kRatio, 1001}},
    NamedMetric{"DCGM_FI_PROF_SM_ACTIVE", {CounterField::kSmActive, ValueScale::kRatio, 1002}},
    NamedMetric{"DCGM_FI_PROF_SM_OCCUPANCY", {CounterField::kSmOccupancy, ValueScale::kRatio, 1003}},
    NamedMetric{"DCGM_FI_PROF_DRAM_ACTIVE", {CounterField::kDramActive, ValueScale::kRatio, 1005}},
    NamedMetric{"DCGM_FI_PROF_PIPE_FP64_ACTIVE", {CounterField::kFp64Active, ValueScale::kRatio, 1006}},
    NamedMetric{"DCGM_FI_PROF_PIPE_FP32_ACTIVE", {CounterField::kFp32Active, ValueScale::kRatio, 1007}},
    NamedMetric{"DCGM_FI_PROF_PIPE_FP16_ACTIVE", {CounterField::kFp16Active, ValueScale::kRatio, 1008}},
    NamedMetric{"DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE", {CounterField::kImmaActive, ValueScale::kRatio, 1013}},
    NamedMetric{"DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", {CounterField::kHmmaActive, ValueScale::kRatio, 1014}},
    NamedMetric{"DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE", {CounterField::kDfmaActive, ValueScale::kRatio, 1015}},
    NamedMetric{"DCGM_FI_DEV_SM_CLOCK", {CounterField::kSmClockMhz, ValueScale::kAbsolute, 100}},
    NamedMetric{"DCGM_FI_DEV_MAX_SM_CLOCK", {CounterField::kMaxSmClockMhz, ValueScale::kAbsolute, 113}},
    NamedMetric{"DCGM_FI_DEV_POWER_USAGE", {CounterField::kPowerW, ValueScale::kAbsolute, 155}},
    NamedMetric{"DCGM_FI_DEV_BOARD_POWER_WATTS", {CounterField::kPowerW, ValueScale::kAbsolute, 155}},
    NamedMetric{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", {CounterField::kEnergyMj, ValueScale::kAbsolute, 156}},
    NamedMetric{"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", {CounterField::kClockEventReasons, ValueScale::kAbsolute, 112}},
    NamedMetric{"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", {CounterField::kClockEventReasons, ValueScale::kAbsolute, 112}},
    // dcgm-exporter 1.x (the script in NVIDIA/gpu-monitoring-tools, branch
    // v1) and later exporters run with --use-old-namespace and
    // etc/1.x-compatibility-metrics.csv: lower-case "dcgm_" names and a
    // "uuid" label. The 1.x HELP of the profiling fields says "(in %)", but
    // their values are DCGM's own, 0..1 ratios.
    NamedMetric{"dcgm_fi_prof_pipe_tensor_active", {CounterField::kTensorActive, ValueScale::kRatio, 1004}},
    NamedMetric{"dcgm_fi_prof_gr_engine_active", {CounterField::kGrEngineActive, ValueScale::kRatio, 1001}},
    NamedMetric{"dcgm_fi_prof_sm_active", {CounterField::kSmActive, ValueScale::kRatio, 1002}},
    NamedMetric{"dcgm_fi_prof_sm_occupancy", {CounterField::kSmOccupancy, ValueScale::kRatio, 1003}},
    NamedMetric{"dcgm_fi_prof_dram_active", {CounterField::kDramActive, ValueScale::kRatio, 1005}},
    NamedMetric{"dcgm_sm_clock", {CounterField::kSmClockMhz, ValueScale::kAbsolute, 100}},
    NamedMetric{"dcgm_power_usage", {CounterField::kPowerW, ValueScale::kAbsolute, 155}},
    NamedMetric{"dcgm_total_energy_consumption", {CounterField::kEnergyMj, ValueScale::kAbsolute, 156}},
};

}  // namespace

std::optional<KnownMetric> LookupDcgmExporterMetric(std::string_view name) {
  for (const auto& m : kMetrics) {
    if (m.name == name) return m.metric;
  }
  if (name.size() < 8 || !formats::EqualsIgnoringAsciiCase(name.substr(0, 8), "DCGM_FI_")) return std::nullopt;
  for (const auto& m : kMetrics) {
    if (m.name.starts_with("DCGM_FI_") && formats::EqualsIgnoringAsciiCase(m.name, name)) return m.metric;
  }
  return std::nullopt;
}

std::optional<KnownMetric> LookupDcgmField(int dcgm_field_id) {
  for (const auto& m : kMetrics) {
    if (m.metric.dcgm_field_id == dcgm_field_id) return m.metric;
  }
  return std::nullopt;
}

// dmon's column names: the short names of DCGM's field table
// (dcgmlib/src/dcgm_fields.cpp in NVIDIA/DCGM, commit 72fa3fe).
std::optional<int> DcgmFieldOfDmonColumn(std::string_view short_name) {
  struct Column {
    std::string_view name;
    int field;
  };
  static constexpr std::array kColumns = {
      Column{"SMCLK", 100},  Column{"SMMAX", 113},  Column{"DVCCTR", 112}, Column{"POWER", 155},  Column{"TOTEC", 156},
      Column{"GPUTL", 203},  Column{"MCUTL", 204},  Column{"GRACT", 1001}, Column{"SMACT", 1002}, Column{"SMOCC", 1003},
      Column{"TENSO", 1004}, Column{"DRAMA", 1005}, Column{"FP64A", 1006}, Column{"FP32A", 1007}, Column{"FP16A", 1008},
      Column{"PCITX", 1009}, Column{"PCIRX", 1010}, Column{"NVLTX", 1011}, Column{"NVLRX", 1012}, Column{"TIMMA", 1013},
      Column{"THMMA", 1014}, Column{"TDFMA", 1015},
  };
  for (const auto& c : kColumns) {
    if (formats::EqualsIgnoringAsciiCase(c.name, short_name)) return c.field;
  }
  return std::nullopt;
}

std::vector<std::string_view> DcgmExporterMetricNames() {
  std::vector<std::string_view> names;
  names.reserve(kMetrics.size());
  for (const auto& m : kMetrics) names.push_back(m.name);
  return names;
}

// Copied from NVIDIA/dcgm-exporter etc/default-counters.csv (commit d5e5f51,
// lines 6 and 92; the same lines are in etc/dcp-metrics-included.csv).
std::optional<std::string_view> DcgmExporterCountersLine(CounterField field) {
  switch (field) {
    case CounterField::kTensorActive:
      return "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, gauge, Ratio of cycles the tensor (HMMA) pipe is active.";
    case CounterField::kSmClockMhz: return "DCGM_FI_DEV_SM_CLOCK,  gauge, SM clock frequency (in MHz).";
    default: return std::nullopt;
  }
}

std::optional<ExporterName> DcgmExporterNameFor(CounterField field) {
  for (const auto& m : kMetrics) {
    if (m.metric.field == field) return ExporterName{m.name, m.metric.scale};
  }
  return std::nullopt;
}

}  // namespace ofu::sources
