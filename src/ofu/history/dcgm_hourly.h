// dcgm-exporter's series summed for a report (`ofu report --prometheus URL
// --series dcgm-exporter`): per GPU (or MIG instance), per job named by
// dcgm-exporter's labels, and per hour, the exact sums the report needs, so
// that a month of a fleet that runs no ofu agent is read from a few values
// per GPU-hour (the hourly rollups, written by DcgmHourlyRulesYaml) and the
// partial hours at the ends from the raw series, by the same PromQL.
//
// Per scrape with tensor activity A (DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, or
// DCGM_FI_PROF_TENSOR_UTIL_RATIO; 0..1) and an SM clock reading f
// (DCGM_FI_DEV_SM_CLOCK, MHz, joined on (instance, gpu) as
// deploy/prometheus/dcgm-exporter-rules.yml joins it), DCGM blanks
// (>= 1e12) dropped, the sums add:
//   samples       1
//   tensor        A
//   tensor_clock  A × f_run, MHz: f_run the clock the SMs ran, the board's
//                 measured clock model applied to f and A without clock
//                 event reasons (core/clock_model.h; the reported f for a
//                 board without one), as dcgm-exporter-rules.yml applies it
//   sm_clock      f, MHz (the reported clock)
// A scrape counts in the step of S seconds it falls in; S divides 3600 and
// is at most 0.9 × the scrape interval, so a step holds at most one scrape
// and consecutive hours share none: the hours add up exactly to the sums of
// the raw series over their span.
//
// The report's figures (ReadDcgmTotals): a GPU's seconds are samples × the
// scrape interval I (the rules' --scrape-interval where rollups are read,
// else the densest 10 minutes of the range), its OFU tensor_clock / samples
// / f_spec × k_arch (OfuScaleOf). That is the every-sample path's OFU
// (analysis/prometheus_recording.h) wherever scrapes come at a steady
// interval: that path weighs each sample by the time since the one before,
// this one weighs every sample alike. No busy split: active OFU is absent.
//
// Jobs come from the labels dcgm-exporter puts on every series: hpc_job
// (Slurm, from its --hpc-job-mapping-dir) or namespace/pod (Kubernetes; the
// job id "namespace/pod", container its name). The rollups keep all four
// labels; the reader picks. A GPU whose series are split by two jobs at once
// (dcgm-exporter gives each job the GPU's whole signal) counts its scrapes
// once per job in the GPU's sums too.
//
// Errors: those of prometheus_client.h; kInvalidArgument for a scrape
// interval below 2 s (DcgmHourlyRulesYaml), for --job without job labels
// and for a Kubernetes job id without its '/'; kNoData for kHourly without
// rollups. Thread-safety: no shared state; `specs` is only read.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ofu/core/gpu_spec.h"
#include "ofu/core/result.h"
#include "ofu/history/prometheus_hourly.h"
#include "ofu/history/prometheus_totals.h"

namespace ofu::history {

// Which labels name a job.
enum class DcgmJobLabels { kNone, kSlurm, kKubernetes };
// "none", "slurm", "kubernetes"; and back (nullopt for another word).
const char* DcgmJobLabelsName(DcgmJobLabels jobs);
std::optional<DcgmJobLabels> DcgmJobLabelsOfName(const std::string& name);

inline constexpr const char* kDcgmHourlyMarkerName = "ofu:dcgm_hourly_rollup:step_seconds";
inline constexpr const char* kDcgmHourlyIntervalName = "ofu:dcgm_hourly_rollup:scrape_interval_seconds";

// The sums, in the order above, and their rollups' names
// ("gpu_job:dcgm_samples:sum1h", ...).
enum class DcgmSum { kSamples, kTensor, kTensorClock, kSmClock };
inline constexpr DcgmSum kDcgmSums[] = {DcgmSum::kSamples, DcgmSum::kTensor, DcgmSum::kTensorClock, DcgmSum::kSmClock};
std::string DcgmHourlyName(DcgmSum sum);
// The first and last scrape time of a GPU's series (by job) in the hour.
std::string DcgmHourlySeenName(bool last);

// What one step's expressions select: extra label matchers on the tensor
// series (a job's: `hpc_job="4242"`) and, at the range's ends, the scrapes
// in (after_s, until_s] only. A reader that knows what the server holds may
// narrow the expression: the tensor metric names present (empty: both
// spellings) and the model names present (nullopt: every measured board's
// clock-model term; a board not listed keeps no term of its own, and its
// series, if any, would get none: list every model present).
struct DcgmStepScope {
  double step_s = 0;
  std::string matchers;
  std::optional<double> after_s, until_s;
  std::vector<std::string> tensor_names;
  std::optional<std::vector<std::string>> models;
};

// The PromQL of `sum` for the scrape in each step (one series per tensor
// series), and of that scrape's time: what the rules and the raw reader sum.
std::string DcgmStepExpr(DcgmSum sum, const GpuSpecDatabase& specs, const DcgmStepScope& scope);
std::string DcgmStepTimeExpr(const DcgmStepScope& scope);

// The rule file for dcgm-exporter scraped every `scrape_interval_s` seconds.
Result<std::string> DcgmHourlyRulesYaml(double scrape_interval_s, const GpuSpecDatabase& specs);

struct DcgmTotalsOptions {
  PrometheusQueryOptions query;            // timeout_s and progress are used
  const GpuSpecDatabase* specs = nullptr;  // required
  DcgmJobLabels jobs = DcgmJobLabels::kNone;
};

// The sums over query's range at `resolution` as the agent's totals
// (observed_s, utilized_s, tensor_active_s; SKU and clock source per GPU),
// for analysis::BuildTotalsReport. query.job_id needs jobs != kNone.
Result<HistoryTotals> ReadDcgmTotals(const std::string& url, const HistoryQuery& query,
                                     const DcgmTotalsOptions& options, Resolution resolution);

// Whether dcgm-exporter rollups cover a whole hour of (since_s, until_s].
Result<bool> DcgmRollupsIn(const std::string& url, double since_s, double until_s, double timeout_s);

}  // namespace ofu::history
