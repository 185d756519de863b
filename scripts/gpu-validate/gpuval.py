#!/usr/bin/env python3
"""The arithmetic and the summaries of the GPU validation (docs/gpu-validation.md).

Pure Python (standard library only): no torch, no GPU. The stage scripts call
it on the GPU machine; tests/gpu_validate/gpuval_test.py runs it here on
synthetic inputs.

  true MFU       FLOPs done / (elapsed x dense peak of that precision), the
                 peak from data/gpu_specs.json for the detected SKU
  OFU            tensor activity x SM clock / f_spec x k_arch, per window
  exact-cycle    from GPM 248 (SM cycles elapsed) and 250 (MMA cycles active)
  OFU            read raw by ofu-gpm-probe, once their meaning is decided
                 against the sampled clock (classify_cycles)
  SMs' clock     the clock the SMs ran over each timed loop, from ofu's clock
                 probe (workload.py's "sm_clock"), beside NVML's mean clock
                 over the same phase: their ratio, and OFU with the SMs'
                 clock (the same tensor activity), against true MFU
  phase join     a phase is [t_start, t_end] in wall-clock seconds, written by
                 the workload; the windows of a recording or probe log that lie
                 wholly inside it give its OFU, time-weighted; its MFU is taken
                 over the same span, from the workload's FLOP checkpoints

Command line (the stages call these):
  gpuval.py summary A|B|C|K WORKDIR      print the stage's summary and write
                                         WORKDIR/summary.txt (+ CSV tables)
  gpuval.py phase-ofu --recording R --phases P --phase NAME [--window S]
                                         print one phase's OFU (for ofu correct --ofu)
  gpuval.py with-phases --recording R --phases P
                                         print the recording with the phases added, so that
                                         `ofu report --input` gives ofu's own OFU per phase
"""

import argparse
import csv
import io
import json
import math
import os
import re
import statistics
import sys

import agent_cost  # the /metrics reader and the agent figures; beside this file

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_SPEC_DB = os.path.join(REPO, "data", "gpu_specs.json")

# --------------------------------------------------------------------------
# The spec database (data/gpu_specs.json), read the way ofu reads it.


def normalize_model_name(name):
    """As ofu's NormalizeModelName: lower case, single spaces, no 'nvidia '."""
    out = " ".join(name.split()).lower()
    return out[len("nvidia "):] if out.startswith("nvidia ") else out


def load_specs(path=DEFAULT_SPEC_DB):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def lookup_sku(specs, model_or_id):
    """The SKU entry whose id or alias matches, else None."""
    wanted = normalize_model_name(model_or_id)
    for sku in specs["skus"]:
        if normalize_model_name(sku["id"]) == wanted:
            return sku
        if any(normalize_model_name(a) == wanted for a in sku.get("aliases", [])):
            return sku
    return None


def peak_tflops(sku, precision):
    p = sku["precisions"].get(precision)
    return None if p is None else float(p["peak_tflops"])


def f_spec_mhz(sku):
    """The clock behind the quoted dense peak: peak / (N_SM x F_p)."""
    basis = sku["precisions"][sku["basis_precision"]]
    return basis["peak_tflops"] * 1e12 / (sku["sm_count"] * basis["flops_per_clock_per_sm"]) / 1e6


def k_arch(specs, sku):
    return float(specs["architectures"].get(sku["architecture"], {}).get("k_arch", 1.0))


# --------------------------------------------------------------------------
# FLOPs and MFU.


def gemm_flops(m, n, k, iterations=1):
    """2MNK per GEMM, exactly (Python integers)."""
    return 2 * m * n * k * iterations


def mfu(flops, seconds, peak):
    """FLOPs / (seconds x peak TFLOP/s); None without a peak or a time."""
    if peak is None or not seconds or seconds <= 0:
        return None
    return flops / seconds / (peak * 1e12)


def flops_between(checkpoints, a, b):
    """FLOPs done in [a, b] from cumulative (wall time, FLOPs) checkpoints,
    linear between checkpoints and clamped to the first and last."""
    if not checkpoints or b <= a:
        return 0.0

    def at(t):
        if t <= checkpoints[0][0]:
            return float(checkpoints[0][1])
        for (t0, f0), (t1, f1) in zip(checkpoints, checkpoints[1:]):
            if t <= t1:
                return f0 + (f1 - f0) * (t - t0) / (t1 - t0) if t1 > t0 else float(f1)
        return float(checkpoints[-1][1])

    return at(b) - at(a)


def phase_peak(sku, phase):
    precision = phase.get("precision")
    if sku and precision == "fp32":  # CUDA cores: the FP32 pipe's peak (non_tensor)
        pipe = sku.get("non_tensor", {}).get("fp32")
        return float(pipe["peak_tflops"]) if pipe else None
    return peak_tflops(sku, precision) if (sku and precision) else None


def phase_mfu(sku, phase, span=None):
    """True MFU of a phase: over its whole timed loop, or over span=(a, b)
    from its checkpoints. Phases without tensor work (idle, copy) are 0."""
    if phase.get("kind") in ("idle", "copy"):
        return 0.0
    peak = phase_peak(sku, phase)
    if span is None:
        return mfu(phase["flops"], phase.get("elapsed_s") or (phase["t_end"] - phase["t_start"]), peak)
    checkpoints = phase.get("checkpoints")
    if not checkpoints:
        return None
    a, b = span
    return mfu(flops_between(checkpoints, a, b), b - a, peak)


# --------------------------------------------------------------------------
# Recordings (ofu record's OpenMetrics) and probe logs (ofu-gpm-probe log).

def parse_openmetrics(text):
    """{(name, frozenset(labels)): [(t, value), ...]} of the samples with a
    timestamp; # lines are skipped."""
    series = {}
    for name, labels, value, t in agent_cost.parse_exposition(text):
        if t is not None:
            series.setdefault((name, frozenset(labels.items())), []).append((t, value))
    return series


TENSOR_NAMES = ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_TENSOR_UTIL_RATIO")
CLOCK_NAME = "DCGM_FI_DEV_SM_CLOCK"


def recording_windows(text, window_s=None, gpu=None):
    """Per-window tensor activity and SM clock of one GPU of a recording
    (the first by gpu label, or gpu='0'), as dicts with t_start, t_end,
    tensor_active, sm_clock_mhz and model. window_s: the recorder's window;
    default the median spacing of the samples."""
    series = parse_openmetrics(text)
    by_gpu = {}
    for (name, labels), points in series.items():
        if name not in TENSOR_NAMES and name != CLOCK_NAME:
            continue
        d = dict(labels)
        key = d.get("gpu", "") + "/" + d.get("GPU_I_ID", "")
        entry = by_gpu.setdefault(key, {"model": d.get("modelName"), "tensor": {}, "clock": {}})
        if name in TENSOR_NAMES:
            entry["tensor"].update(points)
        elif name == CLOCK_NAME:
            entry["clock"].update(points)
    if not by_gpu:
        return []
    key = sorted(by_gpu)[0] if gpu is None else next((k for k in sorted(by_gpu) if k.split("/")[0] == str(gpu)), None)
    if key is None:
        return []
    entry = by_gpu[key]
    times = sorted(set(entry["tensor"]) & set(entry["clock"]))
    if window_s is None:
        gaps = [b - a for a, b in zip(times, times[1:]) if b > a]
        window_s = statistics.median(gaps) if gaps else 1.0
    return [{"t_start": t - window_s, "t_end": t, "tensor_active": entry["tensor"][t],
             "sm_clock_mhz": entry["clock"][t], "model": entry["model"]} for t in times]


def _number(text):
    if text is None or text == "":
        return None
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def read_probe_log(text):
    """Rows of an ofu-gpm-probe log as dicts of floats (None where empty),
    each with t_start = t_end - dt_s."""
    rows = []
    for raw in csv.DictReader(io.StringIO(text)):
        row = {k: _number(v) for k, v in raw.items()}
        if row.get("t_end_s") is None or row.get("dt_s") is None:
            continue
        row["t_end"] = row["t_end_s"]
        row["t_start"] = row["t_end_s"] - row["dt_s"]
        rows.append(row)
    return rows


def ofu_of(tensor_active, sm_clock_mhz, fspec, karch=1.0):
    if tensor_active is None or sm_clock_mhz is None:
        return None
    return tensor_active * sm_clock_mhz / fspec * karch


# --------------------------------------------------------------------------
# GPM cycle counters: counts or rates, summed over SMs or per SM.

CYCLE_HYPOTHESES = (
    ("count", "summed over SMs"),
    ("count", "per SM"),
    ("rate", "summed over SMs"),
    ("rate", "per SM"),
)


def cycles_divisor(hypothesis, sm_count, dt_s):
    """What GPM 248 is divided by to give the mean SM clock in Hz."""
    kind, basis = hypothesis
    n = sm_count if basis == "summed over SMs" else 1
    return n * dt_s if kind == "count" else n


def classify_cycles(rows, sm_count, tolerance=0.15, min_clock_mhz=100):
    """Decides what GPM 248 (SM cycles elapsed) is, against the clock read
    every 10 ms over the same windows. For each window and hypothesis, the
    clock it implies (248 / divisor) must lie within `tolerance` of the
    sampled clock. A count grows with the window and a rate does not, so the
    two are told apart only by windows of different lengths (0.1 s and 1 s):
    with windows of about 1 s only, they read the same.

    Returns a dict: verdict (a (kind, basis) pair or None), text, windows
    (usable), matches (per hypothesis), ratios (median 248 / (dt x clock) and
    248 / clock per window length)."""
    usable = [r for r in rows if r.get("gpm248_sm_cycles_elapsed") is not None and r.get("dt_s")
              and (r.get("clock_mean_mhz") or 0) >= min_clock_mhz]
    matches = {h: 0 for h in CYCLE_HYPOTHESES}
    by_dt = {}
    for r in usable:
        v, dt, f_hz = r["gpm248_sm_cycles_elapsed"], r["dt_s"], r["clock_mean_mhz"] * 1e6
        for h in CYCLE_HYPOTHESES:
            implied = v / cycles_divisor(h, sm_count, dt)
            if abs(implied / f_hz - 1) <= tolerance:
                matches[h] += 1
        group = by_dt.setdefault(round(dt, 1), {"count_ratio": [], "rate_ratio": []})
        group["count_ratio"].append(v / (dt * f_hz))
        group["rate_ratio"].append(v / f_hz)
    ratios = {dt: {k: statistics.median(v) for k, v in g.items()} for dt, g in sorted(by_dt.items())}
    result = {"verdict": None, "windows": len(usable), "matches": matches, "ratios": ratios}
    if not usable:
        result["text"] = "undecided: no window with GPM 248 and a clock"
        return result
    best = max(CYCLE_HYPOTHESES, key=lambda h: matches[h])
    tied = [h for h in CYCLE_HYPOTHESES if matches[h] == matches[best]]
    if matches[best] < max(1, len(usable) // 2):
        result["text"] = "undecided: no reading fits most windows (ratios below)"
    elif len(tied) > 1:
        lengths = sorted(ratios)
        result["text"] = "undecided between {} ({} windows each; window lengths {} s: a count and a rate " \
                         "need windows of different lengths to tell apart)".format(
                             " and ".join(f"{k} {b}" for k, b in tied), matches[best],
                             ", ".join(f"{d:g}" for d in lengths))
    else:
        result["verdict"] = best
        result["text"] = f"{best[0]} {best[1]} ({matches[best]} of {len(usable)} windows within " \
                         f"{tolerance:.0%} of the sampled clock)"
    return result


def ctxsw_verdict(passes, tolerance=0.02):
    """Is GPM 170 (GR0_CTXSW_CYCLES_ELAPSED, a count) an exact clock on a
    driver that refuses 248? Per phase of each pass, the median over the probe
    rows wholly inside it of 170 / dt in MHz, beside NVML's sampled clock
    (clock_mean_mhz) and the SMs' own clock (workload.py's "sm_clock"). The
    verdict compares 170 with the SMs' clock over the phases that ran work:
    every ratio within `tolerance` of their median, and that median within
    `tolerance` of 1: equal; of another number: a fixed multiple; else
    unrelated (and whether it follows NVML's reading instead).

    `passes`: {name: {"phases": [...], "probe": [rows]}}. Returns dict:
    verdict ("equal", "multiple", "unrelated" or None), text, phases (rows
    for stage-a-gpm170.csv)."""
    rows_out = []
    for name, p in passes.items():
        for ph in p["phases"]:
            if ph.get("error") or "t_start" not in ph:
                continue
            inside = [r for r in windows_inside(p["probe"], ph["t_start"], ph["t_end"])
                      if r.get("gpm170_ctxsw_cycles_elapsed") is not None and r.get("dt_s")]
            if not inside:
                continue
            mhz = statistics.median(r["gpm170_ctxsw_cycles_elapsed"] / r["dt_s"] / 1e6 for r in inside)
            clocks = [r["clock_mean_mhz"] for r in inside if r.get("clock_mean_mhz")]
            nvml = statistics.median(clocks) if clocks else None
            sm = (ph.get("sm_clock") or {}).get("median_mhz")
            rows_out.append({"pass": name, "phase": ph["phase"], "kind": ph.get("kind"), "windows": len(inside),
                             "gpm170_mhz": mhz, "nvml_mhz": nvml, "sm_clock_mhz": sm,
                             "over_sm": mhz / sm if sm else None, "over_nvml": mhz / nvml if nvml else None,
                             "gpm171_per_s": statistics.median(
                                 r["gpm171_ctxsw_cycles_active"] / r["dt_s"] for r in inside
                                 if r.get("gpm171_ctxsw_cycles_active") is not None) if any(
                                 r.get("gpm171_ctxsw_cycles_active") is not None for r in inside) else None})
    result = {"verdict": None, "phases": rows_out}
    if not rows_out:
        result["text"] = "undecided: no phase with GPM 170 readings (refused, or no probe log)"
        return result
    worked = [r for r in rows_out if r["kind"] not in ("idle", "copy") and r["over_sm"] is not None
              and r["gpm170_mhz"] > 0]

    def constant(ratios):
        mid = statistics.median(ratios)
        return mid, all(abs(x / mid - 1) <= tolerance for x in ratios)

    nvml_ratios = [r["over_nvml"] for r in rows_out if r["kind"] not in ("idle", "copy") and r["over_nvml"]
                   and r["gpm170_mhz"] > 0]
    nvml_text = (f"; 170/dt over NVML's clock {min(nvml_ratios):.4g} to {max(nvml_ratios):.4g}" if nvml_ratios
                 else "")
    if not worked:
        result["text"] = "undecided: no phase with work, GPM 170 above 0 and the SMs' own clock" + nvml_text
        return result
    ratios = [r["over_sm"] for r in worked]
    mid, steady = constant(ratios)
    where = f"over {len(worked)} phases: 170/dt over the SMs' clock {min(ratios):.4g} to {max(ratios):.4g}"
    if steady and abs(mid - 1) <= tolerance:
        result["verdict"], result["text"] = "equal", f"equal to the SMs' clock ({where})"
    elif steady:
        result["verdict"], result["text"] = "multiple", f"a fixed multiple, {mid:.4g} x the SMs' clock ({where})"
    else:
        follows = nvml_ratios and constant(nvml_ratios)[1]
        result["verdict"] = "unrelated"
        result["text"] = f"not the SMs' clock ({where})" + (
            "; it follows NVML's reported clock instead" if follows else "") + nvml_text
    return result


def mma_basis(rows, sm_count, min_util_pct=20):
    """GPM 250 against 248 and tensor utilization (5): the median of
    (250 / 248) / (util5 / 100) over busy windows. About 1: 250 has 248's
    basis; about N_SM or 1/N_SM: one is summed over SMs and the other not.
    Returns (median factor, the factor rounded to 1, N or 1/N, windows)."""
    q = []
    for r in rows:
        v248, v250, u = r.get("gpm248_sm_cycles_elapsed"), r.get("gpm250_mma_cycles_active"), \
            r.get("gpm5_any_tensor_pct")
        if v248 and v250 is not None and u is not None and u >= min_util_pct:
            q.append((v250 / v248) / (u / 100))
    if not q:
        return None, None, 0
    median = statistics.median(q)
    candidates = (1.0, float(sm_count), 1.0 / sm_count)
    nearest = min(candidates, key=lambda c: abs(math.log(median / c)) if median > 0 else float("inf"))
    return median, nearest, len(q)


def exact_cycle_windows(rows, hypothesis, mma_factor, sm_count, fspec, karch=1.0):
    """Per probe-log row: the exact-cycle tensor activity, mean clock and
    OFU under the decided reading of 248 and 250 (mma_factor from mma_basis)."""
    out = []
    for r in rows:
        v248, v250 = r.get("gpm248_sm_cycles_elapsed"), r.get("gpm250_mma_cycles_active")
        window = {"t_start": r["t_start"], "t_end": r["t_end"], "tensor_active": None, "sm_clock_mhz": None}
        if hypothesis and v248 and v250 is not None and r.get("dt_s"):
            window["sm_clock_mhz"] = v248 / cycles_divisor(hypothesis, sm_count, r["dt_s"]) / 1e6
            window["tensor_active"] = v250 / v248 / (mma_factor or 1.0)
        window["ofu"] = ofu_of(window["tensor_active"], window["sm_clock_mhz"], fspec, karch)
        out.append(window)
    return out


def raw_probe_windows(rows, fspec, karch=1.0):
    """Per probe-log row: OFU from GPM 5 and the clock read every 10 ms."""
    out = []
    for r in rows:
        u = r.get("gpm5_any_tensor_pct")
        tensor = None if u is None else u / 100
        out.append({"t_start": r["t_start"], "t_end": r["t_end"], "tensor_active": tensor,
                    "sm_clock_mhz": r.get("clock_mean_mhz"),
                    "ofu": ofu_of(tensor, r.get("clock_mean_mhz"), fspec, karch)})
    return out


# --------------------------------------------------------------------------
# Joining windows with phases.


def windows_inside(windows, t0, t1, slack=1e-6):
    return [w for w in windows if w["t_start"] >= t0 - slack and w["t_end"] <= t1 + slack]


def phase_ofu(windows, phase, fspec=None, karch=1.0):
    """Time-weighted OFU of the windows wholly inside the phase. Windows give
    'ofu' directly, or tensor_active and sm_clock_mhz (then fspec is needed).
    Returns dict: ofu, clock_mhz (weighted mean), windows, seconds, span
    (first window start, last window end), or ofu None when none fits."""
    inside = []
    for w in windows_inside(windows, phase["t_start"], phase["t_end"]):
        value = w.get("ofu")
        if value is None and fspec is not None:
            value = ofu_of(w.get("tensor_active"), w.get("sm_clock_mhz"), fspec, karch)
        if value is not None:
            inside.append((w, value))
    if not inside:
        return {"ofu": None, "clock_mhz": None, "windows": 0, "seconds": 0.0, "span": None}
    weights = [w["t_end"] - w["t_start"] for w, _ in inside]
    total = sum(weights)
    ofu = sum(v * wt for (_, v), wt in zip(inside, weights)) / total
    clocks = [(w["sm_clock_mhz"], wt) for (w, _), wt in zip(inside, weights) if w.get("sm_clock_mhz") is not None]
    clock = sum(c * wt for c, wt in clocks) / sum(wt for _, wt in clocks) if clocks else None
    span = (min(w["t_start"] for w, _ in inside), max(w["t_end"] for w, _ in inside))
    return {"ofu": ofu, "clock_mhz": clock, "windows": len(inside), "seconds": total, "span": span}


def sm_clock_fields(windows, phase, fspec, karch, mfu_value):
    """The SMs' own clock of a phase (workload.py's "sm_clock") beside what
    the windows (NVML's clock) say over it: sm_clock_run (median over the
    SMs), sm_clock_min/max, clock_nvml (NVML's time-weighted mean clock over
    the windows inside), nvml_over_run, ofu_run (the windows' tensor
    activity with the SMs' clock in place of NVML's) and err_run_pp against
    mfu_value. Fields absent (None) where either side is missing; sm_clock_why
    says why the probe gave nothing."""
    out = {"sm_clock_run": None, "sm_clock_min": None, "sm_clock_max": None, "clock_nvml": None,
           "nvml_over_run": None, "ofu_run": None, "err_run_pp": None, "sm_clock_why": None}
    probe = phase.get("sm_clock") or {"absent": "not recorded"}
    if probe.get("median_mhz"):
        out.update(sm_clock_run=probe["median_mhz"], sm_clock_min=probe.get("min_mhz"),
                   sm_clock_max=probe.get("max_mhz"))
    else:
        out["sm_clock_why"] = probe.get("absent") or "no clock"
    nvml = phase_ofu(windows, phase, fspec, karch)
    out["clock_nvml"] = nvml["clock_mhz"]
    if out["sm_clock_run"] is None:
        return out
    if out["clock_nvml"]:
        out["nvml_over_run"] = out["clock_nvml"] / out["sm_clock_run"]
    run = [dict(w, sm_clock_mhz=out["sm_clock_run"], ofu=None) for w in windows]
    out["ofu_run"] = phase_ofu(run, phase, fspec, karch)["ofu"]
    out["err_run_pp"] = error_pp(out["ofu_run"], mfu_value)
    return out


def sm_clock_line(metas, rows):
    """The summary's line on the SMs' own clock: how many phases the probe
    measured and NVML's clock over the SMs' in them, or why it did not run."""
    measured = [r for r in rows if r.get("sm_clock_run") is not None]
    if measured:
        ratios = [r["nvml_over_run"] for r in measured if r.get("nvml_over_run") is not None]
        text = f"SMs' clock (ofu's clock probe): {len(measured)} of {len(rows)} phases measured"
        if ratios:
            text += f"; NVML / SMs {min(ratios):.3f} to {max(ratios):.3f} (median {statistics.median(ratios):.3f})"
        return text
    said = sorted({m.get("clock_probe") for m in metas if m and m.get("clock_probe")})
    why = "; ".join(said) if said else next((r["sm_clock_why"] for r in rows if r.get("sm_clock_why")), None)
    return f"SMs' clock (ofu's clock probe): not measured ({why or 'no phase ran'})"


def read_jsonl(path):
    """Records of a JSON-lines file; a line that does not parse is skipped
    (a workload killed mid-write leaves at most one)."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    return out


def split_phases(records):
    """(meta or {}, [phase records]) of a workload's JSON lines."""
    meta = next((r["meta"] for r in records if "meta" in r), {})
    return meta, [r for r in records if "phase" in r]


# --------------------------------------------------------------------------
# Formatting.


def pct(x, width=6, digits=1):
    return f"{'-':>{width}}" if x is None else f"{100 * x:>{width}.{digits}f}"


def mhz(x, width=5):
    return f"{'-':>{width}}" if x is None else f"{x:>{width}.0f}"


def signed_pp(error, width=6):
    """An error already in pp, signed, or '-'."""
    return f"{'-':>{width}}" if error is None else f"{error:>+{width}.1f}"


def pp(ofu, mfu_value, width=6):
    """Signed error (OFU - MFU) in percentage points, or '-'."""
    if ofu is None or mfu_value is None:
        return f"{'-':>{width}}"
    return f"{100 * (ofu - mfu_value):>+{width}.1f}"


def error_pp(ofu, mfu_value):
    return None if ofu is None or mfu_value is None else 100 * (ofu - mfu_value)


def id_ranges(ids):
    """[1, 2, 3, 5, 7, 8] -> '1-3,5,7-8'."""
    ids = sorted(set(ids))
    parts, start = [], None
    for i, v in enumerate(ids):
        if start is None:
            start = v
        if i + 1 == len(ids) or ids[i + 1] != v + 1:
            parts.append(f"{start}" if start == v else f"{start}-{v}")
            start = None
    return ",".join(parts)


def read_text(path, default=None):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return default


def read_json(path):
    text = read_text(path)
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def read_steps(workdir):
    """The stage's step log (lib.sh): name, status, rc, seconds, note."""
    steps = []
    text = read_text(os.path.join(workdir, "steps.tsv"), "")
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) >= 4:
            steps.append({"name": parts[0], "status": parts[1], "rc": parts[2], "seconds": parts[3],
                          "note": parts[4] if len(parts) > 4 else ""})
    return steps


def steps_line(steps):
    counts = {}
    for s in steps:
        counts[s["status"]] = counts.get(s["status"], 0) + 1
    text = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "none recorded"
    bad = [f"{s['name']} ({s['status']}, rc {s['rc']})" for s in steps if s["status"] not in ("ok", "expected")]
    return f"steps: {text}" + (f"; not ok: {', '.join(bad)}" if bad else "")


def environment_line(workdir):
    env = read_json(os.path.join(workdir, "env.json")) or {}
    parts = [env.get("gpu") or "GPU ?", "driver " + (env.get("driver") or "?"),
             "CUDA " + (env.get("cuda") or "?"), "torch " + (env.get("torch") or "?")]
    return ", ".join(parts), env


def resolve_sku(specs, env, meta=None):
    for name in ((meta or {}).get("device_name"), env.get("gpu")):
        if name:
            sku = lookup_sku(specs, name)
            if sku:
                return sku
    return None


def synthetic_banner(*flags):
    return "SYNTHETIC INPUT (test double or made-up data): no figure below was measured on a GPU\n" \
        if any(flags) else ""


# --------------------------------------------------------------------------
# Stage A.

PASSES = (("1s", 1.0), ("0.1s", 0.1))


def stage_a_tables(workdir, specs):
    """Per pass, per phase: MFU (whole loop and over each estimate's span),
    OFU from ofu record, from the probe's GPM 5 x clock and exact-cycle."""
    _, env = environment_line(workdir)
    info = read_json(os.path.join(workdir, "probe-info.json")) or {}
    device = (info.get("devices") or [{}])[0]
    sm_count = device.get("sm_count")
    all_rows = []
    passes = {}
    for name, window in PASSES:
        d = os.path.join(workdir, f"pass-{name}")
        meta, phases = split_phases(read_jsonl(os.path.join(d, "phases.jsonl")))
        rec_text = read_text(os.path.join(d, "rec.om"), "")
        ofu_phases = phase_report_fields(read_text(os.path.join(d, "report-phases.json"), ""))
        probe_rows = read_probe_log(read_text(os.path.join(d, "probe.csv"), ""))
        passes[name] = {"meta": meta, "phases": phases, "rec": rec_text, "probe": probe_rows, "window": window,
                        "ofu_phases": ofu_phases}
        all_rows += probe_rows
    for name in ("idle-0.1s", "idle-1s"):
        all_rows += read_probe_log(read_text(os.path.join(workdir, f"probe-{name}.csv"), ""))
    meta_any = next((p["meta"] for p in passes.values() if p["meta"]), {})
    sku = resolve_sku(specs, env, meta_any) or (lookup_sku(specs, device["name"]) if device.get("name") else None)
    sm_count = sm_count or (sku or {}).get("sm_count") or meta_any.get("sm_count")
    if sm_count:
        verdict = classify_cycles(all_rows, sm_count)
    else:
        verdict = {"verdict": None, "text": "undecided: SM count unknown", "windows": 0, "matches": {}, "ratios": {}}
    mma = mma_basis(all_rows, sm_count) if sm_count else (None, None, 0)
    table = []
    if sku:
        fspec, karch = f_spec_mhz(sku), k_arch(specs, sku)
        for name, p in passes.items():
            rec_windows = recording_windows(p["rec"], p["window"]) if p["rec"] else []
            raw = raw_probe_windows(p["probe"], fspec, karch)
            exact = exact_cycle_windows(p["probe"], verdict["verdict"], mma[1], sm_count, fspec, karch)
            for ph in p["phases"]:
                row = {"pass": name, "phase": ph["phase"], "kind": ph.get("kind"), "precision": ph.get("precision"),
                       "error": ph.get("error")}
                if ph.get("error") or "t_start" not in ph:
                    table.append(row)
                    continue
                row["seconds"] = ph["t_end"] - ph["t_start"]
                row["mfu_loop"] = phase_mfu(sku, ph)
                for key, windows in (("rec", rec_windows), ("raw", raw), ("exact", exact)):
                    j = phase_ofu(windows, ph, fspec, karch)
                    row[f"ofu_{key}"] = j["ofu"]
                    row[f"windows_{key}"] = j["windows"]
                    row[f"clock_{key}"] = j["clock_mhz"]
                    row[f"mfu_{key}"] = phase_mfu(sku, ph, j["span"]) if j["span"] else None
                    if row[f"mfu_{key}"] is None:
                        row[f"mfu_{key}"] = row["mfu_loop"]
                    row[f"err_{key}_pp"] = error_pp(j["ofu"], row[f"mfu_{key}"])
                row.update(sm_clock_fields(rec_windows, ph, fspec, karch, row["mfu_rec"]))
                # ofu's own figure, clock model as shipped (`ofu report` on the recording with the phases).
                ofu_value, ofu_mfu, ofu_clock = p["ofu_phases"].get(ph["phase"], (None, None, None))
                row["ofu_report"], row["ofu_report_clock"] = ofu_value, ofu_clock
                row["err_report_pp"] = error_pp(ofu_value, ofu_mfu)
                table.append(row)
    return {"sku": sku, "env": env, "sm_count": sm_count, "cycles": verdict, "mma": mma, "table": table,
            "passes": passes, "info": info, "ctxsw": ctxsw_verdict(passes)}


# GPM 170 against the clocks, per phase (ctxsw_verdict).
CTXSW_COLUMNS = ["pass", "phase", "kind", "windows", "gpm170_mhz", "nvml_mhz", "sm_clock_mhz", "over_sm", "over_nvml",
                 "gpm171_per_s"]
# The SMs' own clock beside NVML's, per phase (sm_clock_fields), in stage A's and C's tables.
SM_CLOCK_COLUMNS = ["clock_nvml", "sm_clock_run", "sm_clock_min", "sm_clock_max", "nvml_over_run", "ofu_run",
                    "err_run_pp", "sm_clock_why"]
STAGE_A_COLUMNS = ["pass", "phase", "kind", "precision", "seconds", "mfu_loop",
                   "mfu_rec", "ofu_rec", "err_rec_pp", "windows_rec", "clock_rec",
                   "mfu_raw", "ofu_raw", "err_raw_pp", "windows_raw", "clock_raw",
                   "mfu_exact", "ofu_exact", "err_exact_pp", "windows_exact", "clock_exact",
                   *SM_CLOCK_COLUMNS, "ofu_report", "ofu_report_clock", "err_report_pp", "error"]


def write_csv(path, columns, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in columns})


def probe_cost_lines(cost):
    """The summary's lines for probe-cost.json (ofu-gpm-probe cost): the
    three calls the first run timed, then, where the probe timed them, the
    source's other calls per window. A call the library lacks says
    "absent"; one the driver refused names its code."""
    def c_(k):
        s = cost.get(k) or {}
        if s.get("absent"):
            return "absent"
        text = f"{s['mean']:.1f} us (p99 {s['p99']:.1f})" if s.get("mean") is not None else "-"
        return text + (f" [{s['failed_with']}]" if s.get("failed_with") else "")
    lines = [f"cost: SM clock read {c_('sm_clock_read')}; GPM sample {c_('gpm_sample')}; "
             f"metrics get of 14 {c_('gpm_metrics_get_14')}"]
    others = [("metrics get of 12", "gpm_metrics_get_12"), ("of 1", "gpm_metrics_get_1"), ("power", "power_usage"),
              ("energy", "total_energy"), ("clock event reasons", "clock_event_reasons"),
              ("process list", "compute_processes")]
    if any(k in cost for _, k in others):
        lines.append("cost: " + "; ".join(f"{name} {c_(k)}" for name, k in others if k in cost))
    # Issue 39: each metric alone and growing sets, p50 us; a metric whose own return failed is marked "!".
    def entry(e):
        failed = any(m.get("rc") != "SUCCESS (0)" for m in e.get("metrics", []))
        return "-" if e.get("p50") is None else f"{e['p50']:.1f}{'!' if failed else ''}"
    if cost.get("gpm_metrics_get_each"):
        lines.append("cost per GPM metric alone (p50 us; ! its own return failed): " + ", ".join(
            f"{e['ids'][0]} {entry(e)}" for e in cost["gpm_metrics_get_each"]))
    if cost.get("gpm_metrics_get_growing"):
        lines.append("cost of growing sets in the source's order (metrics: p50 us): " + ", ".join(
            f"{len(e['ids'])}: {entry(e)}" for e in cost["gpm_metrics_get_growing"]))
    return lines


def format_stage_a(workdir, result):
    env_text, env = environment_line(workdir)
    steps = read_steps(workdir)
    sku = result["sku"]
    synthetic = bool(env.get("synthetic")) or bool(result["info"].get("test_double"))
    out = [synthetic_banner(synthetic) + "== Stage A: counters and OFU against true MFU ==", env_text]
    if sku:
        out.append(f"spec: {sku['id']} ({sku['sm_count']} SMs, f_spec {f_spec_mhz(sku):.0f} MHz)")
    else:
        out.append("spec: GPU not found in data/gpu_specs.json: no MFU or OFU below")
    out.append(steps_line(steps))
    sources = read_text(os.path.join(workdir, "sources.txt"), "").strip().splitlines()
    src_step = next((s for s in steps if s["name"] == "ofu-sources"), None)
    out.append(f"ofu sources (exit {src_step['rc'] if src_step else '?'}): " +
               ("; ".join(" ".join(line.split())[:90] for line in sources[:2]) if sources else "no output"))
    metrics = read_json(os.path.join(workdir, "probe-metrics.json"))
    if metrics:
        ids = [m["id"] for m in metrics.get("supported", [])]
        flags = " ".join(f"{i}:{'yes' if i in ids else 'no'}" for i in (5, 248, 249, 250))
        out.append(f"GPM metrics answered: {len(ids)} ids ({id_ranges(ids)}); {flags}")
    else:
        out.append("GPM metrics: no list (see logs/probe-metrics.err)")
    c = result["cycles"]
    ratios = "; ".join(f"{dt:g} s: 248/(dt*f) {r['count_ratio']:.3g}, 248/f {r['rate_ratio']:.3g}"
                       for dt, r in c.get("ratios", {}).items())
    out.append(f"GPM 248: {c['text']}" + (f" [{ratios}]" if ratios else ""))
    out.append(f"GPM 170: {result['ctxsw']['text']}")
    m_med, m_near, m_n = result["mma"]
    if m_med is not None:
        basis = {1.0: "same basis as 248"}.get(m_near, "summed vs per-SM differ" if m_near else "?")
        out.append(f"GPM 250: (250/248)/(util5/100) median {m_med:.3g} over {m_n} busy windows: {basis}")
    else:
        out.append("GPM 250: no busy window with 248, 250 and util5")
    cost = read_json(os.path.join(workdir, "probe-cost.json"))
    if cost:
        out.extend(probe_cost_lines(cost))
    table = result["table"]
    if table:
        out.append("")
        out.append("MFU and OFU in %, (OFU - MFU) in pp; MFU over the same windows' span. rec: ofu record;")
        out.append("raw: probe GPM 5 x clock read every 10 ms; exact: probe GPM 250/248 cycles. MHz: exact's clock,")
        out.append("else NVML's; SMs: the SMs' own clock (clock probe); run: rec's tensor activity x the SMs' clock;")
        out.append("ofu: `ofu report` on the recording with the phases (its clock model as shipped), against MFU.")
        out.append(f"{'pass':<5} {'phase':<16} {'s':>5} {'MFU':>6} | {'rec':>6} {'err':>6} | {'raw':>6} {'err':>6}"
                   f" | {'exact':>6} {'err':>6} | {'MHz':>5} {'SMs':>5} | {'run':>6} {'err':>6} | {'ofu':>6} {'err':>6}")
        for r in table:
            if r.get("error") or "seconds" not in r:
                out.append(f"{r['pass']:<5} {r['phase']:<16} failed: {(r.get('error') or 'no timing')[:60]}")
                continue
            clock = r.get("clock_exact") or r.get("clock_raw") or r.get("clock_rec")
            out.append(f"{r['pass']:<5} {r['phase']:<16} {r['seconds']:>5.1f} {pct(r['mfu_rec'] or r['mfu_loop'])} | "
                       f"{pct(r['ofu_rec'])} {pp(r['ofu_rec'], r['mfu_rec'])} | "
                       f"{pct(r['ofu_raw'])} {pp(r['ofu_raw'], r['mfu_raw'])} | "
                       f"{pct(r['ofu_exact'])} {pp(r['ofu_exact'], r['mfu_exact'])} | "
                       f"{'-' if clock is None else f'{clock:.0f}':>5} {mhz(r.get('sm_clock_run'))} | "
                       f"{pct(r.get('ofu_run'))} {pp(r.get('ofu_run'), r['mfu_rec'])} | "
                       f"{pct(r.get('ofu_report'))} {signed_pp(r.get('err_report_pp'))}")
    out.append(sm_clock_line([p["meta"] for p in result["passes"].values()], [r for r in table if "seconds" in r]))
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# Stage B: ofu-gemm result CSVs.


def read_gemm_csv(text):
    rows = []
    for raw in csv.DictReader(io.StringIO(text)):
        rows.append(raw)
    return rows


def stage_b_table(rows):
    """Per (sweep, precision): cases measured and skipped, mean and max |error|
    of raw, corrected and exact-cycle OFU in pp, median MFU."""
    groups = {}
    for r in rows:
        key = (r.get("sweep", ""), r.get("precision", ""))
        g = groups.setdefault(key, {"measured": 0, "skipped": 0, "raw": [], "corrected": [], "exact": [],
                                    "mfu": []})
        if (r.get("note") or "").startswith("skipped") or _number(r.get("mfu")) is None and \
                _number(r.get("achieved_tflops")) is None:
            g["skipped"] += 1
            continue
        g["measured"] += 1
        for col, key2 in (("err_raw_pp", "raw"), ("err_corrected_pp", "corrected"), ("err_exact_pp", "exact")):
            v = _number(r.get(col))
            if v is not None:
                g[key2].append(abs(v))
        v = _number(r.get("mfu"))
        if v is not None:
            g["mfu"].append(v)
    table = []
    for (sweep, precision), g in sorted(groups.items()):
        row = {"sweep": sweep, "precision": precision, "measured": g["measured"], "skipped": g["skipped"]}
        for key in ("raw", "corrected", "exact"):
            row[f"{key}_mean"] = statistics.mean(g[key]) if g[key] else None
            row[f"{key}_max"] = max(g[key]) if g[key] else None
        row["mfu_median"] = statistics.median(g["mfu"]) if g["mfu"] else None
        table.append(row)
    return table


def format_stage_b(workdir, sweeps=("square", "llm", "clock-study")):
    env_text, env = environment_line(workdir)
    steps = read_steps(workdir)
    rows, counts = [], []
    for name in sweeps:
        text = read_text(os.path.join(workdir, f"{name}.csv"))
        these = read_gemm_csv(text) if text else []
        rows += these
        listed = read_text(os.path.join(workdir, "logs", f"list-{name}.err"), "")
        m = re.search(r"(\d+) cases", listed)
        counts.append(f"{name} {len(these)}/{m.group(1) if m else '?'}")
    synthetic = bool(env.get("synthetic")) or any("SYNTHETIC" in (r.get("gpu") or "") for r in rows)
    out = [synthetic_banner(synthetic) + "== Stage B: ofu-gemm sweeps (corrected OFU against true MFU) ==",
           env_text, steps_line(steps), "rows written / cases listed: " + ", ".join(counts), ""]
    table = stage_b_table(rows)
    out.append("|error| in pp, mean / max; goal: corrected max <= 1 pp")
    out.append(f"{'sweep':<26} {'prec':<5} {'n':>3} {'skip':>4} {'MFU':>6} | {'raw':>11} | {'corrected':>11} |"
               f" {'exact':>11}")

    def mm(r, key):
        a, b = r[f"{key}_mean"], r[f"{key}_max"]
        return f"{'-':>11}" if a is None else f"{a:>5.2f}/{b:<5.2f}"
    for r in table:
        out.append(f"{r['sweep'][:26]:<26} {r['precision']:<5} {r['measured']:>3} {r['skipped']:>4} "
                   f"{pct(r['mfu_median'])} | {mm(r, 'raw')} | {mm(r, 'corrected')} | {mm(r, 'exact')}")
    worst = sorted((r for r in rows if _number(r.get("err_corrected_pp")) is not None),
                   key=lambda r: -abs(_number(r["err_corrected_pp"])))[:5]
    if worst:
        out.append("")
        out.append("largest corrected errors (pp): " + "; ".join(
            f"{r['m']}x{r['n']}x{r['k']} {r['precision']} {_number(r['err_corrected_pp']):+.2f}" for r in worst))
    out.append("full per-precision summary: ofu-gemm-summary.txt in the archive")
    return "\n".join(out) + "\n", table


STAGE_B_COLUMNS = ["sweep", "precision", "measured", "skipped", "mfu_median", "raw_mean", "raw_max",
                   "corrected_mean", "corrected_max", "exact_mean", "exact_max"]


# --------------------------------------------------------------------------
# Stage C: tile orientation, the training step, the agent's cost.


def orientation_verdict(rows, margin_pp=0.5):
    """rows: per shape, err_swapped_pp and err_direct_pp (corrected OFU - MFU).
    The orientation whose mean |error| is lower by more than margin_pp wins;
    shapes where the two paddings agree (both errors equal) say nothing."""
    telling = [r for r in rows if r.get("err_swapped_pp") is not None and r.get("err_direct_pp") is not None
               and abs(r["err_swapped_pp"] - r["err_direct_pp"]) > 1e-9]
    if not telling:
        return None, "undecided: no shape where the two orientations pad differently was measured"
    s = statistics.mean(abs(r["err_swapped_pp"]) for r in telling)
    d = statistics.mean(abs(r["err_direct_pp"]) for r in telling)
    detail = f"mean |error| swapped {s:.2f} pp, direct {d:.2f} pp over {len(telling)} shapes"
    if abs(s - d) <= margin_pp:
        return None, f"undecided ({detail}; they differ by at most {margin_pp} pp)"
    winner = "swapped" if s < d else "direct"
    return winner, f"{winner} ({detail})"


def transformer_flops_per_token(layers, d_model, vocab, seq_len, causal=False, flash_recompute=False):
    """Model FLOPs per token of a training step (forward + backward), counted
    GEMM by GEMM: 6 x the matmul parameters (per layer QKV 3d^2, output d^2,
    MLP 2 x 4d^2 = 12 d^2; the LM head d x vocab; the embedding lookup is no
    matmul) + 12 x layers x d x T for attention scores and values (PaLM). A
    causal mask halves the attention term when the kernel skips the masked
    half. flash_recompute adds the 2 x d x T per layer that flash attention's
    backward spends recomputing the scores (hardware FLOPs, not model FLOPs)."""
    matmul_params = 12 * layers * d_model * d_model + d_model * vocab
    attention = 12 * layers * d_model * seq_len
    if causal:
        attention //= 2
    recompute = (2 * layers * d_model * seq_len // (2 if causal else 1)) if flash_recompute else 0
    return 6 * matmul_params + attention + recompute


def _mean_call_us(entry, kind="wall"):
    """Mean microseconds per call of one row of agent_cost.source_call_table
    by one kind of time (the agent labels them kind="wall", "cpu", "user",
    "system"); for wall, a row with one unlabelled series uses that. None
    without calls or such a series."""
    seconds = entry.get("seconds") or {}
    if not entry.get("calls"):
        return None
    key = f"kind={kind}" if f"kind={kind}" in seconds else ("" if kind == "wall" and "" in seconds else None)
    return 1e6 * seconds[key] / entry["calls"] if key is not None else None


def agent_run_line(run):
    """One agent run of agent-cost.json (agent_cost.py) on one line. Runs of
    the first GPU run (2026-11-26) lack the steady, thread, PSS and per-call
    figures; their line says what they have."""
    label = run.get("label")
    if run.get("error") and run.get("cpu_percent") is None:
        return f"{label}: {run['error']}"
    parts = [f"CPU {run['cpu_percent']:.2f} % of one core over {run['wall_s']:.0f} s"]
    steady = run.get("steady")
    if steady:
        busiest = [t for t in run.get("threads") or [] if t.get("cpu_percent") is not None][:4]
        shown = ", ".join(f"{t['name']} {t['cpu_percent']:.2f}" for t in busiest)
        parts.append(f"steady {steady['cpu_percent']:.2f} % over {steady['wall_s']:.0f} s"
                     + (f" (busiest threads: {shown})" if shown else ""))
    # wait4's max RSS includes the Python that started the agent (agent_cost.py's docstring).
    if run.get("vm_hwm_mib") is not None:
        parts.append(f"peak RSS {run['vm_hwm_mib']:.1f} MiB (VmHWM; wait4 {run['max_rss_mib']:.1f})")
    else:
        parts.append(f"peak RSS {run['max_rss_mib']:.1f} MiB (wait4, an upper bound)")
    if run.get("pss_mib") is not None:
        parts.append(f"PSS {run['pss_mib']:.1f} MiB")
    memory = run.get("memory")
    if memory and memory.get("categories"):
        parts.append("RSS by kind (MiB): " + ", ".join(
            f"{c['category']} {c['rss_kib'] / 1024.0:.1f}" for c in memory["categories"] if c["rss_kib"] >= 512))
    parts.append(f"exit {run.get('exit_code')}")
    calls = run.get("source_calls")
    if calls is not None:
        if not calls.get("present"):
            parts.append("per-call table absent")
        else:
            # The four that cost the most CPU where the agent says, else the most frequent.
            table = [e for e in calls.get("calls", []) if e.get("calls")]
            if any("kind=cpu" in e["seconds"] for e in table):
                table.sort(key=lambda e: -e["seconds"].get("kind=cpu", 0.0))
            rows = []
            for e in table[:4]:
                per_window = f"{e['per_window']:.3g}/window" if e.get("per_window") is not None else f"{e['calls']:.0f}"
                wall, cpu = _mean_call_us(e), _mean_call_us(e, "cpu")
                rows.append(f"{e['call']} {per_window}" + (f" {wall:.1f} us" if wall is not None else "")
                            + (f" (cpu {cpu:.1f})" if cpu is not None else ""))
            parts.append("calls (us each): " + ", ".join(rows))
    if run.get("error"):
        parts.append(run["error"])
    return f"{label}: " + ", ".join(parts)


def agent_cost_lines(cost):
    """The agent step's lines of the stage C summary: one per run."""
    if not cost:
        return ["agent: no measurement (see logs)"]
    runs = cost.get("runs", [])
    if not runs:
        return ["agent: no run"]
    return ["agent (ofu agent --source nvml), CPU in % of one core:"] + ["  " + agent_run_line(r) for r in runs]


def stage_c_tables(workdir, specs):
    _, env = environment_line(workdir)
    meta_r, ragged = split_phases(read_jsonl(os.path.join(workdir, "ragged", "phases.jsonl")))
    meta_t, train = split_phases(read_jsonl(os.path.join(workdir, "train", "phases.jsonl")))
    sku = resolve_sku(specs, env, meta_r or meta_t)
    result = {"sku": sku, "env": env, "ragged": [], "train": [], "orientation": (None, "no data")}
    if not sku:
        return result
    fspec, karch = f_spec_mhz(sku), k_arch(specs, sku)
    rec = recording_windows(read_text(os.path.join(workdir, "ragged", "rec.om"), ""), 0.5)
    for ph in ragged:
        row = {"phase": ph["phase"], "m": ph.get("m"), "n": ph.get("n"), "k": ph.get("k"), "error": ph.get("error")}
        if not ph.get("error") and "t_start" in ph:
            j = phase_ofu(rec, ph, fspec, karch)
            row["ofu"] = j["ofu"]
            row["windows"] = j["windows"]
            row["mfu"] = phase_mfu(sku, ph, j["span"]) if j["span"] else phase_mfu(sku, ph)
            for orientation in ("swapped", "direct"):
                c = read_json(os.path.join(workdir, "ragged", f"correct-{ph['phase']}-{orientation}.json")) or {}
                f = c.get("factor")
                if c.get("wasteful") and not row.get("kernel"):
                    row["kernel"] = c["wasteful"][0].get("kernel")
                row[f"factor_{orientation}"] = f
                row[f"corrected_{orientation}"] = None if f is None or j["ofu"] is None else j["ofu"] * f
                row[f"err_{orientation}_pp"] = error_pp(row[f"corrected_{orientation}"], row["mfu"])
            row.update(sm_clock_fields(rec, ph, fspec, karch, row["mfu"]))
        result["ragged"].append(row)
    result["orientation"] = orientation_verdict(result["ragged"])
    rec_t = recording_windows(read_text(os.path.join(workdir, "train", "rec.om"), ""), 1.0)
    correct = read_json(os.path.join(workdir, "train", "correct.json")) or {}
    for ph in train:
        row = {"phase": ph["phase"], "error": ph.get("error"), "steps": ph.get("steps"),
               "tokens_per_step": ph.get("tokens_per_step")}
        if not ph.get("error") and "t_start" in ph:
            j = phase_ofu(rec_t, ph, fspec, karch)
            row.update({"ofu": j["ofu"], "windows": j["windows"], "mfu": phase_mfu(sku, ph, j["span"]) if j["span"]
                        else phase_mfu(sku, ph), "hfu": None})
            if ph.get("hardware_flops") and j["span"]:
                hw = dict(ph, flops=ph["hardware_flops"],
                          checkpoints=[[t, f * ph["hardware_flops"] / ph["flops"]] for t, f in ph["checkpoints"]])
                row["hfu"] = phase_mfu(sku, hw, j["span"])
            f = correct.get("factor")
            row["factor"] = f
            row["corrected"] = None if f is None or j["ofu"] is None else j["ofu"] * f
            scale = correct.get("mfu_scale")
            row["predicted_mfu"] = None if row["corrected"] is None or scale is None else row["corrected"] * scale
            row["err_corrected_pp"] = error_pp(row["corrected"], row["mfu"])
            row["err_predicted_pp"] = error_pp(row["predicted_mfu"], row["mfu"])
            row.update(sm_clock_fields(rec_t, ph, fspec, karch, row["mfu"]))
        result["train"].append(row)
    result["metas"] = [meta_r, meta_t]
    return result


STAGE_C_RAGGED_COLUMNS = ["phase", "m", "n", "k", "mfu", "ofu", "windows", "factor_swapped", "corrected_swapped",
                          "err_swapped_pp", "factor_direct", "corrected_direct", "err_direct_pp", "kernel",
                          *SM_CLOCK_COLUMNS, "error"]
STAGE_C_TRAIN_COLUMNS = ["phase", "steps", "tokens_per_step", "mfu", "hfu", "ofu", "windows", "factor", "corrected",
                         "predicted_mfu", "err_corrected_pp", "err_predicted_pp", *SM_CLOCK_COLUMNS, "error"]


def format_stage_c(workdir, result):
    env_text, env = environment_line(workdir)
    steps = read_steps(workdir)
    out = [synthetic_banner(bool(env.get("synthetic"))) + "== Stage C: tile orientation, training step, agent ==",
           env_text, steps_line(steps), ""]
    out.append("ragged bf16 GEMMs (torch M x N x K): MFU, OFU, corrected OFU in %, error in pp")
    out.append(f"{'shape':<18} {'MFU':>6} {'OFU':>6} | {'swapped':>7} {'err':>6} | {'direct':>7} {'err':>6}"
               f" | {'MHz':>5} {'SMs':>5} | {'run':>6} {'err':>6}")
    for r in result["ragged"]:
        shape = f"{r.get('m')}x{r.get('n')}x{r.get('k')}"
        if r.get("error") or "mfu" not in r:
            out.append(f"{shape:<18} failed: {(r.get('error') or 'no timing')[:60]}")
            continue
        out.append(f"{shape:<18} {pct(r['mfu'])} {pct(r['ofu'])} | {pct(r['corrected_swapped'], 7)} "
                   f"{pp(r['corrected_swapped'], r['mfu'])} | {pct(r['corrected_direct'], 7)} "
                   f"{pp(r['corrected_direct'], r['mfu'])} | {mhz(r.get('clock_nvml'))} {mhz(r.get('sm_clock_run'))} | "
                   f"{pct(r.get('ofu_run'))} {pp(r.get('ofu_run'), r['mfu'])}")
    out.append(f"nvjet tile orientation: {result['orientation'][1]}")
    out.append("")
    for r in result["train"]:
        if r.get("error") or "mfu" not in r:
            out.append(f"training step {r['phase']}: failed: {(r.get('error') or 'no timing')[:70]}")
            continue
        out.append(f"training step {r['phase']}: MFU {pct(r['mfu'], 0)} % (HFU {pct(r['hfu'], 0)} %), "
                   f"OFU {pct(r['ofu'], 0)} %, factor {r['factor'] if r['factor'] is None else round(r['factor'], 4)}, "
                   f"corrected {pct(r['corrected'], 0)} % ({pp(r['corrected'], r['mfu'], 0).strip()} pp), "
                   f"predicted MFU {pct(r['predicted_mfu'], 0)} % ({pp(r['predicted_mfu'], r['mfu'], 0).strip()} pp)")
        if r.get("sm_clock_run") is not None:
            out.append(f"  clock: NVML {mhz(r.get('clock_nvml'), 0)} MHz, SMs {mhz(r['sm_clock_run'], 0)} MHz; "
                       f"OFU with the SMs' clock {pct(r['ofu_run'], 0)} % ({pp(r['ofu_run'], r['mfu'], 0).strip()} pp)")
    if not result["train"]:
        out.append("training step: no data")
    out.append(sm_clock_line(result.get("metas", []),
                             [r for r in result["ragged"] + result["train"] if "mfu" in r]))
    out.extend(agent_cost_lines(read_json(os.path.join(workdir, "agent", "agent-cost.json"))))
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# Command line.


def summarize(stage, workdir, spec_db=DEFAULT_SPEC_DB):
    specs = load_specs(spec_db)
    if stage == "A":
        result = stage_a_tables(workdir, specs)
        write_csv(os.path.join(workdir, "stage-a-phases.csv"), STAGE_A_COLUMNS, result["table"])
        write_csv(os.path.join(workdir, "stage-a-gpm170.csv"), CTXSW_COLUMNS, result["ctxsw"]["phases"])
        text = format_stage_a(workdir, result)
    elif stage == "B":
        text, table = format_stage_b(workdir)
        write_csv(os.path.join(workdir, "stage-b-precisions.csv"), STAGE_B_COLUMNS, table)
    elif stage == "C":
        result = stage_c_tables(workdir, specs)
        write_csv(os.path.join(workdir, "stage-c-ragged.csv"), STAGE_C_RAGGED_COLUMNS, result["ragged"])
        write_csv(os.path.join(workdir, "stage-c-train.csv"), STAGE_C_TRAIN_COLUMNS, result["train"])
        text = format_stage_c(workdir, result)
    elif stage == "K":
        import stage_k  # beside this file; it writes stage-k-kernels.csv and stage-k-candidates.json
        text = stage_k.summarize(workdir, specs)
    else:
        raise ValueError(f"unknown stage {stage}")
    with open(os.path.join(workdir, "summary.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    return text


def recording_sku(specs, meta, windows):
    """The SKU of a workload's device (its meta line), else of the recording's
    GPU (recording_windows); None when neither is in the spec database."""
    names = [meta.get("device_name"), windows[0]["model"] if windows else None]
    return next((lookup_sku(specs, n) for n in names if n and lookup_sku(specs, n)), None)


def recording_with_phases(rec_text, phases, sku):
    """An `ofu record` recording (OpenMetrics) with the workload's phases
    added as ofu_recording_phase_info series (sources/replay.h; docs/formats.md,
    "Phases"), each with its true MFU over its whole loop and the peak that MFU
    is against, so that `ofu report --input` gives ofu's own OFU per phase,
    clock model and all. Phases that failed or have no timing are left out."""
    def quoted(v):
        return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'
    lines = ["# TYPE ofu_recording_phase info",
             "# HELP ofu_recording_phase What ran from start to end (epoch s) and its true MFU (workload.py)."]
    for ph in phases:
        if ph.get("error") or "t_start" not in ph or ph["t_end"] <= ph["t_start"]:
            continue
        labels = {"phase": ph["phase"], "kind": ph.get("kind") or "", "start": repr(float(ph["t_start"])),
                  "end": repr(float(ph["t_end"]))}
        if ph.get("precision"):
            labels["precision"] = ph["precision"]
        value = phase_mfu(sku, ph) if sku else None
        if value is not None:
            labels["mfu"] = repr(float(value))
            peak = phase_peak(sku, ph)
            if peak:
                labels["peak_tflops"] = repr(float(peak))
        text = ",".join(f"{k}={quoted(v)}" for k, v in labels.items() if v != "")
        lines.append(f"ofu_recording_phase_info{{{text}}} 1 {float(ph['t_start'])!r}")
    body = rec_text.rstrip("\n")
    eof = body.endswith("# EOF")
    if eof:
        body = body[: -len("# EOF")].rstrip("\n")
    return body + "\n" + "\n".join(lines) + "\n" + ("# EOF\n" if eof else "")


def phase_report_fields(report_json):
    """{phase name: (ofu, mfu, clock_source)} of `ofu report --format json` on
    a recording with phases; {} when absent or unreadable."""
    try:
        report = json.loads(report_json) if report_json else {}
    except json.JSONDecodeError:
        return {}
    return {p["phase"]: (p.get("ofu"), p.get("mfu"), p.get("clock_source")) for p in report.get("phases", [])}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("summary")
    s.add_argument("stage", choices=["A", "B", "C", "K"])
    s.add_argument("workdir")
    s.add_argument("--spec-db", default=DEFAULT_SPEC_DB)
    p = sub.add_parser("phase-ofu")
    p.add_argument("--recording", required=True)
    p.add_argument("--phases", required=True)
    p.add_argument("--phase", required=True)
    p.add_argument("--window", type=float, default=None)
    p.add_argument("--spec-db", default=DEFAULT_SPEC_DB)
    w = sub.add_parser("with-phases", help="print the recording with the workload's phases added (for ofu report)")
    w.add_argument("--recording", required=True)
    w.add_argument("--phases", required=True)
    w.add_argument("--spec-db", default=DEFAULT_SPEC_DB)
    args = parser.parse_args(argv)
    if args.command == "summary":
        sys.stdout.write(summarize(args.stage, args.workdir, args.spec_db))
        return 0
    specs = load_specs(args.spec_db)
    if args.command == "with-phases":
        meta, phases = split_phases(read_jsonl(args.phases))
        text = read_text(args.recording, "")
        windows = recording_windows(text)
        sys.stdout.write(recording_with_phases(text, phases, recording_sku(specs, meta, windows)))
        return 0
    meta, phases = split_phases(read_jsonl(args.phases))
    phase = next((ph for ph in phases if ph["phase"] == args.phase and "t_start" in ph), None)
    windows = recording_windows(read_text(args.recording, ""), args.window)
    sku = recording_sku(specs, meta, windows)
    if phase is None or sku is None:
        print(f"gpuval: no phase {args.phase} or unknown GPU", file=sys.stderr)
        return 4
    j = phase_ofu(windows, phase, f_spec_mhz(sku), k_arch(specs, sku))
    if j["ofu"] is None:
        print(f"gpuval: no recording window lies inside phase {args.phase}", file=sys.stderr)
        return 4
    print(f"{j['ofu']:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
