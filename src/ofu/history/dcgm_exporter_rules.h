// The zero-deploy rules: Prometheus recording rules that compute OFU per
// scrape from the series a plain dcgm-exporter exports, for a fleet that runs
// no ofu agent (docs/prometheus.md §4). deploy/prometheus/dcgm-exporter-rules.yml
// is DcgmExporterRulesYaml of the built-in spec database; `ofu rules
// dcgm-exporter` prints it.
//
//   OFU = A (DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, or DCGM 4.6's
//            DCGM_FI_PROF_TENSOR_UTIL_RATIO; 0..1)
//       × f_run (MHz: the clock the SMs ran)
//       / f_spec (MHz: GpuSpec::SpecClockMhz of the board's modelName)
//       × k_arch
//
// f_run is the board's measured clock model (core/clock_model.h) applied to
// the reported clock f (DCGM_FI_DEV_SM_CLOCK) and A, with no clock event
// reasons (dcgm-exporter does not export them by default), for the boards the
// model was measured on; any other board keeps f. The clock model as PromQL
// is written once, here (DcgmRunClockExpr), and the hourly rollups of
// dcgm_hourly.h apply the same expression to each scrape.
//
// Thread-safety: pure functions; `specs` is only read.
#pragma once

#include <map>
#include <string>

#include "ofu/core/clock_model.h"
#include "ofu/core/gpu_spec.h"

namespace ofu::history {

// The boards with a measured clock model, by the model name the driver (and
// dcgm-exporter's modelName label) gives them, each also without its
// "NVIDIA " prefix (older drivers omit it).
std::map<std::string, ClockModel> DcgmMeasuredBoards(const GpuSpecDatabase& specs);

// f_run of one board as PromQL, for each series of `tensor` (its activity
// A, 0..1) and `reported_clock` (f, MHz, with the tensor series' labels):
//   A < idle_tensor_below:            f
//   A <= burst_tensor_at_most:        f × the mean over the two power states
//                                     of 1 / ((1 - A) + A r)
//   A >= steady_tensor_at_least:      f / steady_ratio
//   between:                          linear in A between the two
// Both arguments are PromQL expressions, used as given (parenthesise them).
std::string DcgmRunClockExpr(const ClockModel& model, const std::string& tensor, const std::string& reported_clock);

// The zero-deploy rules' YAML: per model name (each alias of `specs`, also
// without "NVIDIA ") the constants f_spec and k_arch; the tensor activity
// and f_run per GPU (or MIG instance); OFU per scrape and its 5-minute and
// 1-hour means; and the means per Slurm job, Kubernetes pod, SKU and fleet.
// Each model name joins one SKU: GpuSpecDatabase::Parse refuses a name that
// two SKUs list (with "NVIDIA " and case folded).
std::string DcgmExporterRulesYaml(const GpuSpecDatabase& specs);

}  // namespace ofu::history
