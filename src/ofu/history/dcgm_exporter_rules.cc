#include "ofu/history/dcgm_exporter_rules.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ofu/history/prometheus_client.h"

namespace ofu::history {
namespace {

// A YAML double-quoted scalar (a JSON string is one).
std::string YamlQuoted(const std::string& text) { return nlohmann::json(text).dump(); }

// The model names of a SKU as dcgm-exporter may label them: each alias, and
// each without "NVIDIA ", once.
std::vector<std::string> ModelNames(const GpuSpec& spec) {
  std::vector<std::string> names;
  const auto add = [&names](const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const std::string& alias : spec.aliases) {
    add(alias);
    if (alias.starts_with("NVIDIA ")) add(alias.substr(7));
  }
  return names;
}

constexpr const char* kTensor = "gpu:dcgm_tensor_active:ratio";
constexpr const char* kClock = "max by (instance, gpu) (DCGM_FI_DEV_SM_CLOCK < 1e12)";

constexpr const char* kHeader = R"(# GENERATED FILE - DO NOT EDIT.
# Written by `ofu rules dcgm-exporter` from the spec database
# (data/gpu_specs.json). To change a figure or add a GPU, edit that file,
# rebuild, and regenerate:
#
#   ofu rules dcgm-exporter > deploy/prometheus/dcgm-exporter-rules.yml
#
# ctest PromRules.DcgmExporterRulesRegenerate fails while this file differs
# from what ofu writes.
#
# Zero-deploy mode: OFU from plain dcgm-exporter metrics, no ofu agent needed.
#
#   OFU = tensor activity (DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, DCGM 4.6 spelling
#         DCGM_FI_PROF_TENSOR_UTIL_RATIO; 0..1)
#       x the SM clock the SMs ran (gpu:dcgm_ofu_clock:mhz)
#       / f_spec (modelName:ofu_spec_clock_mhz:const, from the spec database)
#       x k_arch (modelName:ofu_k_arch:const)
#
# The clock: DCGM_FI_DEV_SM_CLOCK is the clock the driver reports, which is
# 5-22 % above the clock the SMs run while tensor cores work. For a board whose
# clock was measured (clock_model in the spec database) the rules apply that
# model, per scrape, as ofu does (src/ofu/core/clock_model.h,
# docs/metrics.md#the-sm-clock), with no clock event reasons (dcgm-exporter
# does not export them by default): label clock_source="measured-model". Any
# other board keeps the reported clock: clock_source="reported". The hourly
# rollups of `ofu rules hourly --series dcgm-exporter` apply the same PromQL
# (src/ofu/history/dcgm_exporter_rules.h).
#
# Matching: tensor and clock on (instance, gpu) -- the GPU index is present in
# every dcgm-exporter version, whatever the spelling of UUID/uuid and
# Hostname/hostname; the clock is taken as max by (instance, gpu) because MIG
# instances and hpc_job labels can split one GPU into several series. The spec
# constants join on modelName: a GPU whose model is not listed below (or a
# series without a modelName label, as older exporters write) gets no OFU
# series at all -- absent, never 0. DCGM blank sentinels (>= 1.4e14) are
# dropped by the "< 1e12" filters.
#
# Caveats: dcgm-exporter's tensor value is its own average over the collection
# interval (default 30 s) but the SM clock is a point reading, so per-scrape
# OFU is noisier than the ofu agent's; the *_avg5m / *_avg1h rules average the
# per-scrape values. A MIG instance's OFU is relative to its own SMs; the SKU
# and fleet aggregates use whole GPUs only (GPU_I_ID absent).
)";

constexpr const char* kCommonRules = R"(      # Per GPU (or MIG instance), per scrape. Keeps every dcgm-exporter label
      # (UUID, Hostname, modelName, pod/namespace, hpc_job, ...) and adds sku
      # and architecture from the spec series and clock_source from the clock.
      - record: gpu:dcgm_ofu:ratio
        expr: |
          (
              gpu:dcgm_tensor_active:ratio
            * ignoring (clock_source) group_left (clock_source)
              gpu:dcgm_ofu_clock:mhz
            / on (modelName) group_left (sku, architecture)
              modelName:ofu_spec_clock_mhz:const
          )
          * on (modelName) group_left ()
            modelName:ofu_k_arch:const
      - record: gpu:dcgm_ofu:ratio_avg5m
        expr: avg_over_time(gpu:dcgm_ofu:ratio[5m])
      - record: gpu:dcgm_ofu:ratio_avg1h
        expr: avg_over_time(gpu:dcgm_ofu:ratio[1h])

  - name: ofu-dcgm-exporter-aggregates
    rules:
      # Per HPC job: dcgm-exporter adds the label hpc_job when started with
      # --hpc-job-mapping-dir / DCGM_HPC_JOB_MAPPING_DIR (one file per GPU
      # index listing the job ids on it). Mean over the job's GPUs. A GPU
      # shared by two jobs appears once per job, with its whole signal.
      - record: hpc_job:dcgm_ofu:ratio_avg5m
        expr: avg by (hpc_job) (gpu:dcgm_ofu:ratio_avg5m{hpc_job!=""})
      - record: hpc_job:dcgm_ofu_gpus:count
        expr: count by (hpc_job) (gpu:dcgm_ofu:ratio{hpc_job!=""})
      # Per Kubernetes pod (dcgm-exporter's pod attribution; empty when none).
      - record: namespace_pod:dcgm_ofu:ratio_avg5m
        expr: avg by (namespace, pod) (gpu:dcgm_ofu:ratio_avg5m{pod!=""})
      # Per SKU and fleet: whole GPUs only, each GPU counted once even when
      # hpc_job or pod labels split it into several series.
      - record: sku:dcgm_ofu:ratio_avg5m
        expr: |
          avg by (sku) (
            max by (instance, gpu, sku) (gpu:dcgm_ofu:ratio_avg5m{GPU_I_ID=""})
          )
      - record: fleet:dcgm_ofu:ratio_avg5m
        expr: |
          avg (
            max by (instance, gpu) (gpu:dcgm_ofu:ratio_avg5m{GPU_I_ID=""})
          )
)";

// One constant series per model name: f_spec (MHz) and k_arch.
std::string SpecRules(const GpuSpecDatabase& specs) {
  std::string out =
      "  # One constant series per model name: f_spec (MHz) and k_arch.\n"
      "  - name: ofu-dcgm-exporter-spec\n"
      "    rules:\n";
  for (const GpuSpec& spec : specs.skus()) {
    const auto basis = spec.precisions.find(spec.basis_precision);
    if (basis == spec.precisions.end()) continue;  // the database's parser refuses it; nothing to join
    // Each name once in the file: GpuSpecDatabase::Parse refuses a name on
    // two SKUs, with "NVIDIA " and case folded.
    for (const std::string& name : ModelNames(spec)) {
      out += fmt::format("      # {}: {} TFLOPS {} / ({} SMs x {} FLOP/clk)\n", spec.name,
                         PromNumber(basis->second.peak_tflops), spec.basis_precision, spec.sm_count,
                         PromNumber(basis->second.flops_per_clock_per_sm));
      for (const auto& [record, value] : {std::pair{"modelName:ofu_spec_clock_mhz:const", spec.SpecClockMhz()},
                                          std::pair{"modelName:ofu_k_arch:const", spec.k_arch}}) {
        out += fmt::format(
            "      - record: {}\n"
            "        expr: vector({})\n"
            "        labels:\n"
            "          modelName: {}\n"
            "          sku: {}\n"
            "          architecture: {}\n",
            record, PromNumber(value), YamlQuoted(name), YamlQuoted(spec.id), YamlQuoted(spec.architecture));
      }
    }
  }
  return out;
}

// The tensor activity and f_run per GPU (or MIG instance).
std::string ClockRules(const GpuSpecDatabase& specs) {
  std::string out =
      "  - name: ofu-dcgm-exporter\n"
      "    rules:\n"
      "      # Tensor activity per GPU (or MIG instance), either spelling, DCGM blanks dropped.\n"
      "      - record: gpu:dcgm_tensor_active:ratio\n"
      "        expr: DCGM_FI_PROF_PIPE_TENSOR_ACTIVE < 1e12 or DCGM_FI_PROF_TENSOR_UTIL_RATIO < 1e12\n";
  const std::map<std::string, ClockModel> boards = DcgmMeasuredBoards(specs);
  // One rule for every measured board (promtool's lint wants one rule per
  // name and label set): the boards' expressions joined with "or".
  std::vector<std::string> names;
  std::string terms;
  for (const auto& [name, m] : boards) {
    names.push_back(name);
    const std::string tensor = fmt::format("{}{{modelName={}}}", kTensor, PromQuoted(name));
    const auto spec = specs.Lookup(name);
    out += fmt::format(
        "      # {} ({}): below {} tensor activity the reported clock; bursts (<= {}) the mean\n"
        "      # of the two power states' f / ((1 - A) + A r), r = {} and {}; steady work\n"
        "      # (>= {}) f / {}; linear in A between.\n",
        name, spec.ok() ? (*spec)->id : "?", PromNumber(m.idle_tensor_below), PromNumber(m.burst_tensor_at_most),
        PromNumber(m.burst_ratio_at_power_cap), PromNumber(m.burst_ratio_below_power_cap),
        PromNumber(m.steady_tensor_at_least), PromNumber(m.steady_ratio));
    terms += fmt::format(
        "{}          {}\n", terms.empty() ? "" : "          or\n",
        DcgmRunClockExpr(m, tensor, fmt::format("({} * 0 + on (instance, gpu) group_left () {})", tensor, kClock)));
  }
  if (!terms.empty()) {
    out += fmt::format(
        "      - record: gpu:dcgm_ofu_clock:mhz\n"
        "        expr: |\n"
        "{}"
        "        labels:\n"
        "          clock_source: measured-model\n",
        terms);
  }
  const std::string others = names.empty() ? ""
                                           : fmt::format("{{modelName!~{}}}", PromQuoted(PromExactAlternatives(names)));
  out += fmt::format(
      "      # Every other board (and a series without modelName): the reported clock.\n"
      "      - record: gpu:dcgm_ofu_clock:mhz\n"
      "        expr: |\n"
      "          {}{} * 0 + on (instance, gpu) group_left () {}\n"
      "        labels:\n"
      "          clock_source: reported\n",
      kTensor, others, kClock);
  return out;
}

}  // namespace

std::map<std::string, ClockModel> DcgmMeasuredBoards(const GpuSpecDatabase& specs) {
  std::map<std::string, ClockModel> boards;
  for (const GpuSpec& spec : specs.skus()) {
    for (const std::string& name : spec.clock_model_measured_on) {
      const auto model = spec.ClockModelFor(name);
      if (!model) continue;
      boards[name] = *model;
      if (name.starts_with("NVIDIA ")) boards[name.substr(7)] = *model;
    }
  }
  return boards;
}

std::string DcgmRunClockExpr(const ClockModel& m, const std::string& tensor, const std::string& reported_clock) {
  const std::string& t = tensor;
  const std::string lo = PromNumber(m.burst_tensor_at_most), hi = PromNumber(m.steady_tensor_at_least);
  const std::string idle = PromNumber(m.idle_tensor_below);
  // x: 0 at the bursts' highest activity, 1 from steady work's lowest on.
  const std::string x = fmt::format("clamp(({} - {}) / ({} - {}), 0, 1)", t, lo, hi, lo);
  const std::string burst = fmt::format("(1 / (1 - {0} + {0} * {1}) + 1 / (1 - {0} + {0} * {2})) / 2", t,
                                        PromNumber(m.burst_ratio_at_power_cap),
                                        PromNumber(m.burst_ratio_below_power_cap));
  return fmt::format("({} * (({} < bool {}) + ({} >= bool {}) * ((1 - {}) * {} + {} / {})))", reported_clock, t, idle,
                     t, idle, x, burst, x, PromNumber(m.steady_ratio));
}

std::string DcgmExporterRulesYaml(const GpuSpecDatabase& specs) {
  return fmt::format("{}groups:\n{}\n{}{}", kHeader, SpecRules(specs), ClockRules(specs), kCommonRules);
}

}  // namespace ofu::history
