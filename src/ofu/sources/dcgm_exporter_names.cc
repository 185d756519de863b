#include "ofu/sources/dcgm_exporter_names.h"

#include "ofu/formats/dcgmi_dmon.h"

#include <array>

namespace ofu::sources {
namespace {

struct NamedMetric {
  std::string_view name;
  KnownMetric metric;
};

// Every spelling of every built-in row (core/sample.h), the row's own
// first: the one ofu writes. An activity is a 0..1 ratio, a reading as it
// is; the DCGM field id is the row's.
constexpr std::size_t CountSpellings() {
  std::size_t n = 0;
  for (const CounterFieldInfo& row : kBuiltinCounterRows) {
    n += row.exporter_name.empty() ? 0 : 1;
    for (const std::string_view alias : row.exporter_aliases) n += alias.empty() ? 0 : 1;
  }
  return n;
}

constexpr auto kMetrics = [] {
  std::array<NamedMetric, CountSpellings()> metrics{};
  std::size_t i = 0;
  for (const CounterFieldInfo& row : kBuiltinCounterRows) {
    const KnownMetric metric{row.field, row.is_activity ? ValueScale::kRatio : ValueScale::kAbsolute,
                             row.dcgm_field_id};
    if (!row.exporter_name.empty()) metrics[i++] = NamedMetric{row.exporter_name, metric};
    for (const std::string_view alias : row.exporter_aliases) {
      if (!alias.empty()) metrics[i++] = NamedMetric{alias, metric};
    }
  }
  return metrics;
}();

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
