#!/usr/bin/env python3
"""Writes deploy/prometheus/dcgm-exporter-rules.yml from data/gpu_specs.json.

Zero-deploy mode: Prometheus recording rules that compute OFU from the metrics a
plain dcgm-exporter already exports,

    OFU = DCGM_FI_PROF_PIPE_TENSOR_ACTIVE x DCGM_FI_DEV_SM_CLOCK / f_spec x k_arch

with f_spec and k_arch per model looked up by dcgm-exporter's `modelName` label.
The per-model constants are generated here from the spec database so that they
never drift from what `ofu` itself uses:

    f_spec = peak_tflops(basis_precision) * 1e6 / (sm_count * flops_per_clock_per_sm)   [MHz]

computed with the same double arithmetic as GpuSpec::ImpliedClockMhz
(src/ofu/core/gpu_spec.cc) and printed as the shortest decimal that reads back
as that double. Each alias is emitted as listed and, when it starts with
"NVIDIA ", also without that prefix (older drivers omit it); ofu's own lookup
also folds case and white space, which a PromQL label match cannot.

Usage (stdlib only; deterministic, so the committed file can be checked
byte for byte):

  scripts/make_dcgm_exporter_rules.py > deploy/prometheus/dcgm-exporter-rules.yml
  scripts/make_dcgm_exporter_rules.py --spec-db other.json > rules.yml
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SPEC_DB = os.path.join(HERE, os.pardir, "data", "gpu_specs.json")


def spec_clock_mhz(sku):
    p = sku["precisions"][sku["basis_precision"]]
    # Same order of operations as GpuSpec::ImpliedClockMhz:
    #   peak_tflops * 1e6 / (sm_count * flops_per_clock_per_sm)
    return float(p["peak_tflops"]) * 1e6 / (int(sku["sm_count"]) * float(p["flops_per_clock_per_sm"]))


def num(x):
    """Shortest decimal that parses back to the same double (PromQL reads it as Go's ParseFloat does)."""
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


def yaml_str(s):
    # Model names are plain text; quote them as YAML double-quoted scalars.
    return json.dumps(s, ensure_ascii=False)


def model_names(sku):
    names = []
    for alias in sku.get("aliases", []):
        for name in (alias, alias[len("NVIDIA "):] if alias.startswith("NVIDIA ") else None):
            if name and name not in names:
                names.append(name)
    return names


HEADER = """\
# GENERATED FILE - DO NOT EDIT.
# Written by scripts/make_dcgm_exporter_rules.py from data/gpu_specs.json
# (schema_version {schema}). To change a figure or add a GPU, edit that file
# and regenerate:
#
#   scripts/make_dcgm_exporter_rules.py > deploy/prometheus/dcgm-exporter-rules.yml
#
# ctest PromRules.DcgmExporterRulesRegenerate fails while this file differs
# from what the script writes.
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
# other board keeps the reported clock: clock_source="reported".
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
"""

COMMON_RULES = """\
      # Per GPU (or MIG instance), per scrape. Keeps every dcgm-exporter label
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
"""


TENSOR = "gpu:dcgm_tensor_active:ratio{sel}"
CLOCK = "max by (instance, gpu) (DCGM_FI_DEV_SM_CLOCK < 1e12)"


def measured_names(db):
    """{model name: (sku, clock_model)} for every board a clock model was measured on."""
    out = {}
    for sku in db["skus"]:
        model = sku.get("clock_model")
        if model is None:
            continue
        for measured in model["measured_on"]:
            for name in (measured, measured[len("NVIDIA "):] if measured.startswith("NVIDIA ") else None):
                if name:
                    if any(c in name for c in '\\"|.*+?()[]{}^$'):
                        raise SystemExit(f"model name {name!r} needs regex escaping, which this generator does not do")
                    out[name] = (sku, model)
    return out


def clock_rules(db):
    """gpu:dcgm_ofu_clock:mhz, per tensor series: the measured model where there is one."""
    out = ["  - name: ofu-dcgm-exporter\n", "    rules:\n"]
    out.append("      # Tensor activity per GPU (or MIG instance), either spelling, DCGM blanks dropped.\n")
    out.append("      - record: gpu:dcgm_tensor_active:ratio\n")
    out.append("        expr: DCGM_FI_PROF_PIPE_TENSOR_ACTIVE < 1e12 or DCGM_FI_PROF_TENSOR_UTIL_RATIO < 1e12\n")
    measured = measured_names(db)
    # One rule for every measured board (promtool's lint wants one rule per
    # name and label set): the boards' expressions joined with "or".
    terms = []
    for name, (sku, m) in measured.items():
        t = TENSOR.format(sel="{modelName=" + yaml_str(name) + "}")
        lo, hi, idle = num(m["burst_tensor_at_most"]), num(m["steady_tensor_at_least"]), num(m["idle_tensor_below"])
        x = f"clamp(({t} - {lo}) / ({hi} - {lo}), 0, 1)"
        burst = (f"(1 / (1 - {t} + {t} * {num(m['burst_ratio_at_power_cap'])})"
                 f" + 1 / (1 - {t} + {t} * {num(m['burst_ratio_below_power_cap'])})) / 2")
        out.append(f"      # {name} ({sku['id']}): below {idle} tensor activity the reported clock; bursts\n"
                   f"      # (<= {lo}) the mean of the two power states' f / ((1 - A) + A r), r =\n"
                   f"      # {num(m['burst_ratio_at_power_cap'])} and {num(m['burst_ratio_below_power_cap'])}; "
                   f"steady work (>= {hi}) f / {num(m['steady_ratio'])}; linear in A between.\n")
        terms.append(
            f"          (\n"
            f"            ({t} * 0 + on (instance, gpu) group_left () {CLOCK})\n"
            f"            * (\n"
            f"                ({t} < bool {idle})\n"
            f"              + ({t} >= bool {idle}) * (\n"
            f"                    (1 - {x}) * {burst}\n"
            f"                  + {x} / {num(m['steady_ratio'])}\n"
            f"                )\n"
            f"            )\n"
            f"          )\n")
    if terms:
        out.append("      - record: gpu:dcgm_ofu_clock:mhz\n")
        out.append("        expr: |\n")
        out.append("          or\n".join(terms))
        out.append("        labels:\n")
        out.append("          clock_source: measured-model\n")
    others = "{modelName!~" + yaml_str("|".join(measured)) + "}" if measured else ""
    out.append("      # Every other board (and a series without modelName): the reported clock.\n")
    out.append("      - record: gpu:dcgm_ofu_clock:mhz\n")
    out.append("        expr: |\n")
    out.append(f"          {TENSOR.format(sel=others)} * 0 + on (instance, gpu) group_left () {CLOCK}\n")
    out.append("        labels:\n")
    out.append("          clock_source: reported\n")
    return "".join(out)


def generate(db):
    out = [HEADER.format(schema=db.get("schema_version", "?"))]
    out.append("groups:\n")
    out.append("  # One constant series per model name: f_spec (MHz) and k_arch.\n")
    out.append("  - name: ofu-dcgm-exporter-spec\n")
    out.append("    rules:\n")
    seen = {}
    archs = db["architectures"]
    for sku in db["skus"]:
        f_spec = spec_clock_mhz(sku)
        k_arch = float(archs[sku["architecture"]]["k_arch"])
        p = sku["precisions"][sku["basis_precision"]]
        for name in model_names(sku):
            if name in seen:
                raise SystemExit(f"model name {name!r} is listed for both {seen[name]} and {sku['id']}")
            seen[name] = sku["id"]
            out.append(
                f"      # {sku['name']}: {num(p['peak_tflops'])} TFLOPS {sku['basis_precision']} / "
                f"({sku['sm_count']} SMs x {num(p['flops_per_clock_per_sm'])} FLOP/clk)\n")
            for record, value in (("modelName:ofu_spec_clock_mhz:const", f_spec),
                                  ("modelName:ofu_k_arch:const", k_arch)):
                out.append(f"      - record: {record}\n")
                out.append(f"        expr: vector({num(value)})\n")
                out.append("        labels:\n")
                out.append(f"          modelName: {yaml_str(name)}\n")
                out.append(f"          sku: {yaml_str(sku['id'])}\n")
                out.append(f"          architecture: {yaml_str(sku['architecture'])}\n")
    out.append("\n")
    out.append(clock_rules(db))
    out.append(COMMON_RULES)
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spec-db", default=DEFAULT_SPEC_DB, help="GPU spec database (default: data/gpu_specs.json)")
    args = ap.parse_args()
    with open(args.spec_db, encoding="utf-8") as f:
        db = json.load(f)
    sys.stdout.write(generate(db))


if __name__ == "__main__":
    main()
