#!/usr/bin/env python3
"""The Grafana dashboards (deploy/grafana/): their JSON structure, then every
panel's PromQL evaluated through the HTTP API of a real Prometheus (the
Debian package) that holds a simulated fleet and the recording rules.

    grafana_test.py PROMETHEUS PROMTOOL OFU_FLEET_SIM SOURCE_DIR

Data, all SYNTHETIC:
  - ofu-fleet-sim's fleet (4 H100 GPUs on 2 nodes, 12 jobs, 4 hours, a
    planted regression and precision switch), backfilled with promtool, plus
    the agent's gauges the simulator does not write (ofu_gpu_up,
    ofu_window_seconds, ofu_last_window_timestamp_seconds), made here from
    its samples;
  - for the zero-deploy dashboard, the bundled dcgm-exporter recording
    (data/recordings/), given an instance label, a Slurm job on GPU 0
    (hpc_job) and a pod on GPU 1, as dcgm-exporter labels them.
The recording rules (deploy/prometheus/ofu-recording-rules.yml,
ofu-regression-rules.yml, dcgm-exporter-rules.yml) are backfilled one pass
per level of rules that read other rules: Prometheus evaluates each rule over
the span (query_range, one step a minute from the data's first sample), the
answers are written as OpenMetrics and loaded with `promtool tsdb
create-blocks-from openmetrics`, and Prometheus restarts between passes.
Not `promtool tsdb create-blocks-from rules`: it evaluates a group at a
phase within the minute hashed from the rule file's path, here a temporary
directory, so one run in about sixty put every rule sample of a level just
outside the 59 s lookback of the next level or of the dashboard's steps and
the panel read nothing (CI, 2026-11-23). Evaluating on the data's own
minute makes the samples of every level fall on the dashboard's steps.

Every panel must return data for every query, at the end of its data (stat
and table panels) or over its span (time series); every template variable
must have values. Exit 77 (skipped) without prometheus or promtool.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import yaml

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message, file=sys.stderr)
    return condition


# --- 1. Structure -----------------------------------------------------------

BUILTINS = {"__rate_interval", "__range", "__interval", "datasource"}
# A recording rule's name, level:metric:operations (not "$__range:1m").
RULE_NAME = r"(?<![\w$])[a-zA-Z][a-zA-Z_0-9]*:[a-zA-Z_0-9:]+"


def check_structure(name, d, recorded):
    check(isinstance(d.get("schemaVersion"), int) and d["schemaVersion"] >= 36, f"{name}: schemaVersion")
    check(bool(d.get("uid")) and bool(d.get("title")), f"{name}: uid and title")
    variables = d["templating"]["list"]
    ds = [v for v in variables if v["type"] == "datasource"]
    check(len(ds) == 1 and ds[0]["name"] == "datasource" and ds[0]["query"] == "prometheus",
          f"{name}: one datasource variable of type prometheus")
    names = {v["name"] for v in variables}
    for v in variables:
        if v["type"] == "query":
            check(v["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, f"{name}: ${v['name']} datasource")
            check(re.fullmatch(r"label_values\(\w+(:\w+)*, \w+\)", v["query"]["query"]) is not None,
                  f"{name}: ${v['name']} is not label_values(metric, label)")
    ids = [p["id"] for p in d["panels"]]
    check(len(ids) == len(set(ids)) and all(isinstance(i, int) and i > 0 for i in ids), f"{name}: panel ids {ids}")
    cells = set()
    for p in d["panels"]:
        g = p["gridPos"]
        check(g["x"] >= 0 and g["w"] > 0 and g["x"] + g["w"] <= 24, f"{name}: panel {p['id']} outside the grid")
        mine = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
        check(not (cells & mine), f"{name}: panel {p['id']} overlaps another")
        cells |= mine
        if p["type"] == "row":
            continue
        check(p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, f"{name}: panel {p['id']} datasource")
        check(len(p["targets"]) > 0, f"{name}: panel {p['id']} has no query")
        refs = [t["refId"] for t in p["targets"]]
        check(len(refs) == len(set(refs)), f"{name}: panel {p['id']} refIds {refs}")
        for t in p["targets"]:
            check(t["datasource"] == p["datasource"], f"{name}: panel {p['id']} target datasource")
            for var in re.findall(r"\$(\w+)", t["expr"]):
                check(var in names or var in BUILTINS, f"{name}: panel {p['id']} uses undefined ${var}")
            # A recording rule's name (level:metric:operations) must be one the rules record.
            for rule in re.findall(RULE_NAME, t["expr"]):
                check(rule in recorded, f"{name}: panel {p['id']} reads {rule}, which no rule records")


# --- 2. Data ------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Prometheus:
    def __init__(self, binary, tsdb, scratch):
        self.binary, self.tsdb, self.scratch = binary, tsdb, scratch
        self.proc = self.log = None

    def start(self):
        # A free port can be taken by another program between our probe and
        # Prometheus' bind; then the server answering is not ours. Ours is
        # the one whose flags name our TSDB.
        for _ in range(5):
            if self._start_once():
                return
            self.stop()
        raise RuntimeError("prometheus did not start: see " + os.path.join(self.scratch, "prometheus.log"))

    def _start_once(self):
        self.port = free_port()
        config = os.path.join(self.scratch, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1m\n")
        self.log = open(os.path.join(self.scratch, "prometheus.log"), "a")
        # The data is from 2026-09: a long retention keeps the blocks.
        # Backfilled data has no staleness markers, so a job's info series
        # would linger for the default 5 m lookback after the job ended and
        # meet the next job's on the same GPU in the rules' joins; with the
        # simulator's one sample a minute, a 59 s lookback sees each series
        # exactly while it is being written, as scrapes with staleness do.
        self.proc = subprocess.Popen([self.binary, f"--config.file={config}", f"--storage.tsdb.path={self.tsdb}",
                                      "--storage.tsdb.retention.time=36500d", "--query.lookback-delta=59s",
                                      f"--web.listen-address=127.0.0.1:{self.port}"],
                                     stdout=self.log, stderr=self.log)
        for _ in range(300):
            if self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=1) as r:
                    if r.status == 200:
                        return self.proc.poll() is None and \
                            self.api("status/flags")["data"]["storage.tsdb.path"] == self.tsdb
            except OSError:
                time.sleep(0.1)
        return False

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def stop(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait(timeout=30)
            self.proc = None
        if self.log:
            self.log.close()
            self.log = None

    def api(self, path, **params):
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(params, doseq=True)}",
                                    timeout=60) as r:
            return json.load(r)


def agent_gauges(metrics_om, window_s):
    """OpenMetrics of ofu_gpu_up, ofu_window_seconds and
    ofu_last_window_timestamp_seconds for every sample time of the fleet's
    ofu_observed_seconds_total, as the agent exports them."""
    samples = re.findall(r"^ofu_observed_seconds_total(\{[^}]*\}) \S+ (\S+)$", metrics_om, re.M)
    out = []
    for family, value in [("ofu_gpu_up", lambda ts: "1"), ("ofu_window_seconds", lambda ts: str(window_s)),
                          ("ofu_last_window_timestamp_seconds", lambda ts: ts)]:
        out.append(f"# TYPE {family} gauge\n# HELP {family} {family} (SYNTHETIC, made by grafana_test.py)\n")
        out += [f"{family}{labels} {value(ts)} {ts}\n" for labels, ts in samples]
    return "".join(out) + "# EOF\n"


def dcgm_fleet(recording):
    """The bundled recording as a dcgm-exporter with job and pod attribution
    would label it."""
    out = []
    for line in recording.splitlines(keepends=True):
        if line.startswith("ofu_recording") or line.startswith("# TYPE ofu_recording") or \
                line.startswith("# HELP ofu_recording"):
            continue
        if line.startswith("DCGM_"):
            gpu0 = 'gpu="0"' in line
            extra = ('instance="synthetic-node-0:9400",hpc_job="4242",pod="",namespace="",container=""' if gpu0 else
                     'instance="synthetic-node-0:9400",hpc_job="",pod="trainer-0",namespace="ml",container="main"')
            line = line.replace("{", "{" + extra + ",", 1)
        out.append(line)
    return "".join(out)


def rule_levels(rule_files):
    """The recording rules grouped so that a rule only reads rules of earlier
    groups (promtool backfills each rule from the data already there)."""
    rules = []
    for path in rule_files:
        with open(path) as f:
            for group in yaml.safe_load(f)["groups"]:
                rules += [r for r in group["rules"] if "record" in r]
    recorded = {r["record"] for r in rules}
    level, done = [], set()
    while len(done) < len(rules):
        ready = [r for r in rules if id(r) not in done and
                 all(n in {x["record"] for x in rules if id(x) in done} or n not in recorded
                     for n in re.findall(RULE_NAME, r["expr"]) if n != r["record"])]
        if not ready:
            raise RuntimeError("recording rules depend on each other in a cycle")
        level.append(ready)
        done |= {id(r) for r in ready}
    return level, recorded


def om_labels(labels):
    def escape(v):
        return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return "{" + ",".join(f'{k}="{escape(v)}"' for k, v in sorted(labels.items())) + "}"


def evaluate_rules(prom, level, begin, end):
    """OpenMetrics of every recording rule of `level`, evaluated by Prometheus
    once a minute from `begin` to `end` (Unix seconds), as the rule manager
    would record them: the rule's name, the answer's labels and the rule's
    own labels."""
    families = {}  # One OpenMetrics family per name, though several rules record it.
    for rule in level:
        answer = prom.api("query_range", query=rule["expr"], start=begin, end=end, step=60)
        if answer.get("status") != "success":
            raise RuntimeError(f"rule {rule['record']}: {json.dumps(answer)[:300]}")
        name = rule["record"]
        lines = families.setdefault(name, [f"# TYPE {name} gauge\n"])
        for series in answer["data"]["result"]:
            labels = {k: v for k, v in series["metric"].items() if k != "__name__"}
            labels.update(rule.get("labels", {}))
            lines += [f"{name}{om_labels(labels)} {value} {t}\n" for t, value in series["values"]]
    out = [line for lines in families.values() for line in lines]
    return "".join(out) + "# EOF\n"


def expand(expr, range_s):
    expr = expr.replace("$__rate_interval", "5m").replace("$__interval", "1m").replace("$__range", f"{range_s}s")
    return re.sub(r"\$\w+", ".*", expr)


def has_data(answer):
    if answer.get("status") != "success":
        return False
    result = answer["data"]["result"]
    if answer["data"]["resultType"] == "matrix":
        return any(v[1] != "NaN" for series in result for v in series["values"])
    if answer["data"]["resultType"] == "vector":
        return any(series["value"][1] != "NaN" for series in result)
    return False


def evaluate(prom, name, d, start, end):
    for p in d["panels"]:
        for t in p.get("targets", []):
            expr = expand(t["expr"], end - start)
            if t["instant"]:
                answer = prom.api("query", query=expr, time=end)
            else:
                answer = prom.api("query_range", query=expr, start=start, end=end, step=60)
            check(has_data(answer), f"{name}: panel {p['id']} '{p['title']}' {t['refId']}: no data for {expr}: "
                                    f"{json.dumps(answer)[:300]}")
    for v in d["templating"]["list"]:
        if v["type"] != "query":
            continue
        metric, label = re.fullmatch(r"label_values\((\S+), (\w+)\)", v["query"]["query"]).groups()
        answer = prom.api("series", **{"match[]": metric, "start": start, "end": end})
        values = {s.get(label) for s in answer.get("data", [])} - {None, ""}
        check(len(values) > 0, f"{name}: variable ${v['name']} has no values ({v['query']['query']})")


def main():
    prometheus, promtool, fleet_sim, source = sys.argv[1:5]
    dashboards = {}
    for name in ["ofu-fleet.json", "ofu-dcgm-exporter.json"]:
        with open(os.path.join(source, "deploy", "grafana", name)) as f:
            dashboards[name] = json.load(f)
    rules_dir = os.path.join(source, "deploy", "prometheus")
    ofu_levels, ofu_recorded = rule_levels(
        [os.path.join(rules_dir, f) for f in ["ofu-recording-rules.yml", "ofu-regression-rules.yml"]])
    dcgm_levels, dcgm_recorded = rule_levels([os.path.join(rules_dir, "dcgm-exporter-rules.yml")])
    recorded = ofu_recorded | dcgm_recorded
    for name, d in dashboards.items():
        check_structure(name, d, recorded)

    if not (shutil.which(prometheus) and shutil.which(promtool)):
        print("skipped: no prometheus or promtool binary (scripts/install-deps.sh installs the Debian package)")
        return 1 if failures else 77

    scratch = tempfile.mkdtemp(prefix="ofu-grafana-test-")
    tsdb = os.path.join(scratch, "tsdb")
    prom = Prometheus(prometheus, tsdb, scratch)
    try:
        fleet = os.path.join(scratch, "fleet")
        subprocess.run([fleet_sim, "--out", fleet, "--gpus", "4", "--gpus-per-job", "2", "--jobs", "12",
                        "--windows-per-job", "40", "--seed", "3"], check=True, capture_output=True)
        with open(os.path.join(fleet, "ground_truth.json")) as f:
            truth = json.load(f)
        fleet_start, fleet_end = int(truth["options"]["start_s"]), int(truth["end_s"])
        with open(os.path.join(fleet, "metrics.om")) as f:
            metrics = f.read()
        with open(os.path.join(scratch, "gauges.om"), "w") as f:
            f.write(agent_gauges(metrics, int(truth["options"]["window_s"])))
        with open(os.path.join(source, "data", "recordings", "synthetic-2xh100-bf16-matmul.om")) as f:
            recording = dcgm_fleet(f.read())
        times = [int(float(x)) for x in re.findall(r"^DCGM_.* (\S+)$", recording, re.M)]
        dcgm_start, dcgm_end = min(times), max(times)
        with open(os.path.join(scratch, "dcgm.om"), "w") as f:
            f.write(recording)
        for om in [os.path.join(fleet, "metrics.om"), os.path.join(scratch, "gauges.om"),
                   os.path.join(scratch, "dcgm.om")]:
            subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", om, tsdb], check=True,
                           capture_output=True)

        # Each rule set over its own data's span (the zero-deploy rules'
        # 196 constant series over 4 hours would take minutes).
        passes = [(level, fleet_start - 60, fleet_end + 60) for level in ofu_levels] + \
                 [(level, dcgm_start - 60, dcgm_end + 360) for level in dcgm_levels]
        for i, (level, begin, finish) in enumerate(passes):
            prom.start()
            om = os.path.join(scratch, f"rules-{i}.om")
            with open(om, "w") as f:
                f.write(evaluate_rules(prom, level, begin, finish))
            prom.stop()
            made = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", om, tsdb],
                                  capture_output=True, text=True)
            if not check(made.returncode == 0, f"rule backfill, level {i}: {made.stdout}{made.stderr}"):
                return 1

        prom.start()
        # The fleet dashboard over the fleet's 4 hours; the zero-deploy one over
        # the recording's 10 minutes.
        evaluate(prom, "ofu-fleet.json", dashboards["ofu-fleet.json"], fleet_start, fleet_end)
        evaluate(prom, "ofu-dcgm-exporter.json", dashboards["ofu-dcgm-exporter.json"], dcgm_start, dcgm_end)
        panels = sum(1 for d in dashboards.values() for p in d["panels"] if p["type"] != "row")
        print(f"{panels} panels, {len(passes)} rule passes backfilled: "
              f"{'every panel returned data' if not failures else f'{len(failures)} failures'}")
    finally:
        prom.stop()
        shutil.rmtree(scratch)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
