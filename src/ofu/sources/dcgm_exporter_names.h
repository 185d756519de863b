// Which dcgm-exporter metric names carry which counter, and on what scale:
// the spellings of the counter table's built-in rows (core/sample.h:
// CounterFieldInfo::exporter_name first, then its exporter_aliases), an
// activity as a 0..1 ratio and a reading as it is, with the row's DCGM field.
//
// dcgm-exporter names a metric after its DCGM field. DCGM 4.6 renamed the
// profiling fields (DCGM_FI_PROF_PIPE_TENSOR_ACTIVE became
// DCGM_FI_PROF_TENSOR_UTIL_RATIO, ...) without changing their IDs or units;
// both spellings are listed, and so are the lower-case names of dcgm-exporter
// 1.x ("dcgm_sm_clock", ...). The scale is the metric's own: the profiling
// fields are 0..1 ratios, while some fields whose new names end in _RATIO
// (GPU_UTIL_RATIO) still hold percent, so the scale is never guessed from
// the name.
//
// Thread-safety: constant tables and pure lookups, callable from any thread.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ofu/core/sample.h"

namespace ofu::sources {

enum class ValueScale {
  kRatio,     // 0..1
  kPercent,   // 0..100
  kAbsolute,  // MHz, W, a bitmask: taken as is
};

struct KnownMetric {
  CounterField field;
  ValueScale scale;
  int dcgm_field_id;
};

// `name` as listed, or a DCGM_FI_* name in any case: some set-ups lower-case
// every metric name ("dcgm_fi_dev_sm_clock", "dcgm_fi_prof_gr_engine_active"),
// and those are the same fields.
std::optional<KnownMetric> LookupDcgmExporterMetric(std::string_view name);
// The counter of DCGM field `dcgm_field_id` (1004, 100, ...), as the table
// above maps it; absent for a field ofu does not use.
std::optional<KnownMetric> LookupDcgmField(int dcgm_field_id);
// The DCGM field a `dcgmi dmon` column is, by the short name dmon prints in
// its header ("TENSO" is 1004, "SMCLK" 100: DCGM's dcgm_fields.cpp), for the
// fields ofu uses and the common ones it does not (GPUTL, MCUTL, ...), so
// that a note can name them; absent for a name it does not know.
std::optional<int> DcgmFieldOfDmonColumn(std::string_view short_name);
// Every name LookupDcgmExporterMetric knows, row by row in the counter
// table's order, each row's own name first: what a reader asks a Prometheus
// server for (analysis/prometheus_recording.h).
std::vector<std::string_view> DcgmExporterMetricNames();

// The name ofu writes for a field in recordings: dcgm-exporter's classic
// spelling, which every dashboard knows, and its scale. Absent for a field
// dcgm-exporter has no metric for (DMMA comes from NVML GPM only).
struct ExporterName {
  std::string_view name;
  ValueScale scale;
};
std::optional<ExporterName> DcgmExporterNameFor(CounterField field);

// The line of dcgm-exporter's counters file (CSV: DCGM field, Prometheus type,
// help; the file given with -f or DCGM_EXPORTER_COLLECTORS) that makes it
// export `field`, as dcgm-exporter's own etc/default-counters.csv writes it
// ("DCGM_FI_DEV_SM_CLOCK,  gauge, SM clock frequency (in MHz)."). Absent for
// the fields OFU does not need (only tensor activity and SM clock have one).
std::optional<std::string_view> DcgmExporterCountersLine(CounterField field);

}  // namespace ofu::sources
