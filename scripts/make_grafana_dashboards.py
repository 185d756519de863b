#!/usr/bin/env python3
"""Writes the Grafana dashboards in deploy/grafana/ (docs/deploy.md, "Grafana").

    scripts/make_grafana_dashboards.py --write deploy/grafana    # after editing this file
    scripts/make_grafana_dashboards.py --check deploy/grafana    # what ctest runs

The panels are declared below, once, as title + PromQL; this script lays
them out and writes the JSON Grafana imports (schemaVersion 39: Grafana 10
and later). Every query names its data source through the dashboard's
`datasource` variable, so the files import into any Grafana with a
Prometheus data source. The test Deploy.GrafanaDashboards evaluates every
query against a real Prometheus holding a simulated fleet and the rules.

Two dashboards:
  ofu-fleet.json          from the agent's metrics and deploy/prometheus/ofu-*-rules.yml
  ofu-dcgm-exporter.json  zero-deploy: from dcgm-exporter's metrics and
                          deploy/prometheus/dcgm-exporter-rules.yml alone
"""
import argparse
import json
import os
import sys

DS = {"type": "prometheus", "uid": "${datasource}"}


def target(expr, legend="", instant=False):
    return {"expr": expr, "legendFormat": legend, "instant": instant, "range": not instant}


def panel(kind, title, description, targets, unit="percentunit", width=12, height=8, thresholds=None, base="green",
          extra=None):
    """A panel; `thresholds` is a list of (value, colour) above the `base` colour."""
    steps = [{"color": base, "value": None}] + [{"color": c, "value": v} for v, c in (thresholds or [])]
    p = {
        "type": kind,
        "title": title,
        "description": description,
        "datasource": DS,
        "targets": targets,
        "fieldConfig": {"defaults": {"unit": unit, "thresholds": {"mode": "absolute", "steps": steps}},
                        "overrides": []},
        "options": {},
        "_size": (width, height),
    }
    if kind == "timeseries":
        p["fieldConfig"]["defaults"]["custom"] = {"drawStyle": "line", "lineWidth": 1, "fillOpacity": 10,
                                                  "showPoints": "never",
                                                  "thresholdsStyle": {"mode": "line" if thresholds else "off"}}
        p["options"] = {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                        "tooltip": {"mode": "multi", "sort": "desc"}}
    if kind == "stat":
        p["options"] = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                        "colorMode": "value", "graphMode": "area", "textMode": "auto"}
    if kind == "table":
        p["options"] = {"showHeader": True, "sortBy": [{"displayName": "OFU (1 h)", "desc": True}]}
    for i, t in enumerate(targets):
        t["refId"] = chr(ord("A") + i)
        t["datasource"] = DS
    if extra:
        p.update(extra)
    return p


def row(title):
    return {"type": "row", "title": title, "collapsed": False, "panels": [], "_size": (24, 1)}


def variable(name, label, query):
    return {
        "type": "query", "name": name, "label": label, "datasource": DS,
        "query": {"query": query, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
        "definition": query, "refresh": 2, "includeAll": True, "allValue": ".*", "multi": True,
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]}, "sort": 1, "hide": 0,
    }


def dashboard(uid, title, description, tags, variables, panels, annotations):
    # Lay the panels out left to right, top to bottom, on Grafana's 24-wide grid.
    x = y = row_height = 0
    for i, p in enumerate(panels, start=1):
        w, h = p.pop("_size")
        if x + w > 24 or p["type"] == "row":
            x, y, row_height = 0, y + row_height, 0
        p["id"] = i
        p["gridPos"] = {"x": x, "y": y, "w": w, "h": h}
        x += w
        row_height = max(row_height, h)
    return {
        "uid": uid,
        "title": title,
        "description": description,
        "tags": tags,
        "schemaVersion": 39,
        "version": 1,
        "editable": True,
        "graphTooltip": 1,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "1m",
        "timezone": "",
        "templating": {"list": [{"type": "datasource", "name": "datasource", "label": "Prometheus",
                                 "query": "prometheus", "current": {}, "hide": 0, "refresh": 1}] + variables},
        "annotations": {"list": annotations},
        "panels": panels,
        "links": [],
    }


def fleet_dashboard():
    gpu = '{instance=~"$instance"}'
    rate = lambda m: f"rate({m}{gpu}[$__rate_interval])"
    job = '* on (uuid) group_left (job_id) ofu_gpu_job_info{job_id=~"$job_id"}'
    panels = [
        row("Fleet"),
        panel("stat", "Fleet OFU (1 h)", "Time-weighted OFU of every GPU over the last hour (fleet:ofu:ratio_rate1h).",
              [target("fleet:ofu:ratio_rate1h", instant=True)], width=6, height=5),
        panel("stat", "Active OFU (5 m)", "OFU over the busy windows only (fleet:ofu_active:ratio_rate5m).",
              [target("fleet:ofu_active:ratio_rate5m", instant=True)], width=6, height=5),
        panel("stat", "Idle GPU-hours", "GPU-hours of valid data in the dashboard's range in which the GPU was not "
              "busy (tensor activity under the agent's busy_threshold).",
              [target("sum(increase(ofu_observed_seconds_total[$__range]) - increase(ofu_busy_seconds_total[$__range]))"
                      " / 3600", instant=True)], unit="h", width=6, height=5),
        panel("stat", "GPUs answering", "GPUs whose agent reports them up, of the GPUs known.",
              [target("fleet:ofu_gpus_up:sum", "up", instant=True),
               target("fleet:ofu_gpus:count", "known", instant=True)], unit="short", width=6, height=5),
        panel("timeseries", "Fleet OFU", "OFU and active OFU of the whole fleet, 5 m rates; every GPU-second weighs "
              "the same.", [target("fleet:ofu:ratio_rate5m", "OFU"), target("fleet:ofu_active:ratio_rate5m",
                                                                            "active OFU")], width=24),
        row("By SKU, job and node"),
        panel("timeseries", "OFU by SKU", "sku:ofu:ratio_rate5m: OFU per GPU model (spec-database id).",
              [target('sku:ofu:ratio_rate5m{sku=~"$sku"}', "{{sku}}")]),
        panel("timeseries", "OFU by node", "OFU per node: its GPUs' utilized over observed seconds.",
              [target(f"sum by (instance) ({rate('ofu_utilized_seconds_total')})"
                      f" / (sum by (instance) ({rate('ofu_observed_seconds_total')}) > 0)", "{{instance}}")]),
        panel("timeseries", "OFU by job", "job_id:ofu:ratio_rate5m: GPU-time-weighted over the job's GPUs; job "
              "identity joined from ofu_gpu_job_info.", [target('job_id:ofu:ratio_rate5m{job_id=~"$job_id"}',
                                                                 "{{job_id}}")]),
        panel("table", "Jobs", "Running jobs: OFU over the last hour and GPU count.",
              [target('job_id:ofu:ratio_avg1h{job_id=~"$job_id"}', "OFU (1 h)", instant=True),
               target('job_id:ofu_gpus:count{job_id=~"$job_id"}', "GPUs", instant=True)],
              unit="percentunit",
              extra={"transformations": [{"id": "merge", "options": {}},
                                         {"id": "organize", "options": {
                                             "excludeByName": {"Time": True},
                                             "renameByName": {"Value #A": "OFU (1 h)", "Value #B": "GPUs"}}}]}),
        row("Why: idle time, tensor activity and clock"),
        panel("timeseries", "Idle GPUs", "GPUs not busy, in GPU-hours per hour (the area is idle GPU-hours).",
              [target(f"sum({rate('ofu_observed_seconds_total')} - {rate('ofu_busy_seconds_total')})", "idle GPUs")],
              unit="short"),
        panel("timeseries", "Tensor activity vs clock", "OFU = tensor activity x effective clock ratio "
              "(f_SM / f_spec x k_arch). A falling clock ratio at steady activity is throttling.",
              [target(f"sum({rate('ofu_tensor_active_seconds_total')}) / (sum({rate('ofu_observed_seconds_total')}) > 0)",
                      "tensor activity"),
               target(f"sum({rate('ofu_utilized_seconds_total')}) / (sum({rate('ofu_tensor_active_seconds_total')}) > 0)",
                      "clock ratio f_SM / f_spec")]),
        panel("timeseries", "CUDA-core FP32 pipe vs OFU", "Work outside the tensor cores: FP32 pipe activity of the "
              "CUDA cores beside OFU, fleet-wide and per job. A busy FP32 pipe with OFU near 0 is FP32 math that "
              "TF32 or bf16/fp16 autocast would move to the tensor cores (docs/metrics.md, Non-tensor work). "
              "Only GPUs whose agent exports the pipe count.",
              [target(f"sum({rate('ofu_fp32_active_seconds_total')}) / (sum({rate('ofu_observed_seconds_total')}) > 0)",
                      "fleet FP32 pipe"),
               target(f"sum({rate('ofu_utilized_seconds_total')}) / (sum({rate('ofu_observed_seconds_total')}) > 0)",
                      "fleet OFU"),
               target(f"sum by (job_id) ({rate('ofu_fp32_active_seconds_total')} {job}) / "
                      f"(sum by (job_id) ({rate('ofu_observed_seconds_total')} {job}) > 0)", "{{job_id}} FP32 pipe")]),
        panel("timeseries", "Non-tensor FLOP/s, upper bound", "Sum over the CUDA-core pipes of activity x SMs x "
              "lanes x 2 x f_SM (ofu_non_tensor_flop_upper_bound_total): an upper bound, since a pipe's activity "
              "counts issue cycles, not useful FLOPs.",
              [target(f"sum({rate('ofu_non_tensor_flop_upper_bound_total')})", "fleet")], unit="flops"),
        row("Regressions and precision shifts"),
        panel("timeseries", "GPU OFU drop against its baseline", "Input of the OFUGPUChangePoint alert: baseline "
              "(1.5-3.5 h ago) over the last 30 m; the alert needs 1.25 or more (and a significant change).",
              [target(f"gpu:ofu:ratio_baseline2h_offset1h / gpu:ofu:ratio_mean30m {job}", "{{job_id}} GPU {{gpu}}")],
              unit="short", thresholds=[(1.25, "red")]),
        panel("timeseries", "Job OFU against its own day", "Input of the OFUJobRegression alert: the job's last 30 m "
              "over its previous day; the alert fires under 0.5.",
              [target('job_id:ofu:ratio_avg30m{job_id=~"$job_id"} / (job_id:ofu:ratio_avg1d{job_id=~"$job_id"} '
                      'offset 30m > 0)', "{{job_id}}")], unit="short", thresholds=[(0.5, "green")],
              base="red"),
        panel("timeseries", "Tensor-pipe shares (precision)", "Share of tensor-busy time per pipe (30 m); a step of "
              "0.2 within an hour fires OFUGPUPrecisionShift. HMMA: fp16/bf16/tf32/fp8, IMMA: integer, DFMA: fp64.",
              [target(f"gpu:ofu_hmma_share:ratio_rate30m {job}", "{{job_id}} GPU {{gpu}} HMMA"),
               target(f"gpu:ofu_imma_share:ratio_rate30m {job}", "{{job_id}} GPU {{gpu}} IMMA"),
               target(f"gpu:ofu_dfma_share:ratio_rate30m {job}", "{{job_id}} GPU {{gpu}} DFMA")], width=24),
        row("Data freshness"),
        panel("timeseries", "Age of the newest window", "Seconds since each node's newest valid window; "
              "OFUGPUDataStale fires past 3 windows.",
              [target(f"time() - max by (instance) (ofu_last_window_timestamp_seconds{gpu})", "{{instance}}")],
              unit="s", thresholds=[(180, "red")]),
        panel("stat", "GPUs lost", "GPUs the agent reports down (fallen off the bus, reset required).",
              [target("count(ofu_gpu_up == 0) or vector(0)", instant=True)], unit="short", width=6,
              thresholds=[(1, "red")]),
        panel("stat", "Window", "The agents' window length.",
              [target(f"max(ofu_window_seconds{gpu})", instant=True)], unit="s", width=6),
    ]
    variables = [variable("instance", "Node", "label_values(ofu_gpu_info, instance)"),
                 variable("sku", "SKU", "label_values(ofu_gpu_info, sku)"),
                 variable("job_id", "Job", "label_values(ofu_gpu_job_info, job_id)")]
    annotations = [{"name": "OFU alerts", "datasource": DS, "enable": True, "iconColor": "red",
                    "expr": 'ALERTS{alertname=~"OFU.*", alertstate="firing"}', "step": "1m",
                    "titleFormat": "{{alertname}}", "textFormat": "{{job_id}} {{uuid}}"}]
    return dashboard("ofu-fleet", "ofu: fleet OFU", "OFU (Overall FLOP Utilization) from the ofu agents' metrics "
                     "and the ofu recording rules (docs/deploy.md, docs/prometheus.md).", ["ofu", "gpu"],
                     variables, panels, annotations)


def dcgm_dashboard():
    sel = '{instance=~"$instance"}'
    tensor = f"(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{sel} or DCGM_FI_PROF_TENSOR_UTIL_RATIO{sel})"
    panels = [
        row("Fleet"),
        panel("stat", "Fleet OFU (5 m)", "fleet:dcgm_ofu:ratio_avg5m: mean over whole GPUs of tensor activity x SM "
              "clock / f_spec.", [target("fleet:dcgm_ofu:ratio_avg5m", instant=True)], width=8, height=5),
        panel("stat", "Idle GPU-hours", "GPU-hours in the range with the graphics engine under 1 % active "
              "(1 m resolution).", [target(f"sum(sum_over_time((DCGM_FI_PROF_GR_ENGINE_ACTIVE{sel} < bool 0.01)"
                                           "[$__range:1m])) / 60", instant=True)], unit="h", width=8, height=5),
        panel("stat", "GPUs reporting", "GPUs with an OFU now.",
              [target(f"count(gpu:dcgm_ofu:ratio{sel})", instant=True)], unit="short", width=8, height=5),
        panel("timeseries", "Fleet OFU", "fleet:dcgm_ofu:ratio_avg5m.",
              [target("fleet:dcgm_ofu:ratio_avg5m", "OFU")], width=24),
        row("By SKU, job and node"),
        panel("timeseries", "OFU by SKU", "sku:dcgm_ofu:ratio_avg5m.",
              [target("sku:dcgm_ofu:ratio_avg5m", "{{sku}}")]),
        panel("timeseries", "OFU by node", "Mean of the node's GPUs (gpu:dcgm_ofu:ratio_avg5m).",
              [target(f"avg by (instance) (gpu:dcgm_ofu:ratio_avg5m{sel})", "{{instance}}")]),
        panel("timeseries", "OFU by Slurm job", "hpc_job:dcgm_ofu:ratio_avg5m (dcgm-exporter's --hpc-job-mapping-dir).",
              [target('hpc_job:dcgm_ofu:ratio_avg5m{hpc_job=~"$hpc_job"}', "{{hpc_job}}")]),
        panel("timeseries", "OFU by pod", "namespace_pod:dcgm_ofu:ratio_avg5m (dcgm-exporter's pod attribution).",
              [target("namespace_pod:dcgm_ofu:ratio_avg5m", "{{namespace}}/{{pod}}")]),
        row("Why: idle time, tensor activity and clock"),
        panel("timeseries", "Idle GPUs", "GPUs whose graphics engine is under 1 % active.",
              [target(f"sum(DCGM_FI_PROF_GR_ENGINE_ACTIVE{sel} < bool 0.01)", "idle GPUs")], unit="short"),
        panel("timeseries", "Tensor activity vs clock", "Mean tensor activity (left) and mean SM clock in MHz "
              "(right); OFU is their product over f_spec.",
              [target(f"avg({tensor})", "tensor activity"),
               target(f"avg(DCGM_FI_DEV_SM_CLOCK{sel})", "SM clock MHz")],
              extra={"fieldConfig": {"defaults": {"unit": "percentunit", "custom": {
                  "drawStyle": "line", "lineWidth": 1, "fillOpacity": 10, "showPoints": "never"}}, "overrides": [
                  {"matcher": {"id": "byName", "options": "SM clock MHz"}, "properties": [
                      {"id": "unit", "value": "rotmhz"}, {"id": "custom.axisPlacement", "value": "right"}]}]}}),
        row("Data freshness"),
        panel("timeseries", "Age of the newest sample", "Seconds since each node's newest SM clock sample "
              "(dcgm-exporter's default interval is 30 s).",
              [target(f"time() - max by (instance) (timestamp(DCGM_FI_DEV_SM_CLOCK{sel}))", "{{instance}}")],
              unit="s", thresholds=[(120, "red")], width=24),
    ]
    variables = [variable("instance", "Node", "label_values(DCGM_FI_DEV_SM_CLOCK, instance)"),
                 variable("hpc_job", "Slurm job", "label_values(hpc_job:dcgm_ofu:ratio_avg5m, hpc_job)")]
    return dashboard("ofu-dcgm-exporter", "ofu: OFU from dcgm-exporter (zero deploy)",
                     "OFU from dcgm-exporter's metrics and deploy/prometheus/dcgm-exporter-rules.yml alone; no "
                     "active OFU, regressions or precision shifts without the agent (docs/deploy.md).",
                     ["ofu", "gpu", "dcgm-exporter"], variables, panels, [])


def render(d):
    return json.dumps(d, indent=2, ensure_ascii=False) + "\n"


DASHBOARDS = {"ofu-fleet.json": fleet_dashboard, "ofu-dcgm-exporter.json": dcgm_dashboard}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", metavar="DIR")
    mode.add_argument("--check", metavar="DIR")
    args = parser.parse_args()
    stale = []
    for name, make in DASHBOARDS.items():
        text = render(make())
        path = os.path.join(args.write or args.check, name)
        if args.write:
            with open(path, "w") as f:
                f.write(text)
        else:
            try:
                with open(path) as f:
                    current = f.read()
            except FileNotFoundError:
                current = None
            if current != text:
                stale.append(path)
    for path in stale:
        print(f"{path} is not what scripts/make_grafana_dashboards.py writes; run it with --write", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
