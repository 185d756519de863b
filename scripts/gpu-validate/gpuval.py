#!/usr/bin/env python3
"""The summaries of the GPU validation (docs/gpu-validation.md) and their
command line; the arithmetic they share with the other scripts (spec lookup,
FLOPs and MFU, readers, the phase join, formatting) is gpuval_core.py's.

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

from gpuval_core import (  # beside this file: what every stage's script shares
    DEFAULT_SPEC_DB, _number, environment_line, error_pp, f_spec_mhz, id_ranges, k_arch, load_specs,
    lookup_sku, mhz, ofu_of, pct, phase_mfu, phase_ofu, phase_peak, pp, read_json, read_jsonl,
    read_probe_log, read_steps, read_text, recording_windows, resolve_sku, signed_pp,
    sm_clock_fields, sm_clock_line, split_phases, steps_line, synthetic_banner, windows_inside,
    write_csv)


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
            row.update(ofu_run_fields(read_json(os.path.join(workdir, "train", "run.json"))))
        result["train"].append(row)
    result["metas"] = [meta_r, meta_t]
    return result


def ofu_run_fields(report):
    """What `ofu run` said of the training step (its --report JSON, "run"):
    the MFU it read from the step's lines, the OFU of the steady phases it
    set beside it, and how many lines it read; all None without a report."""
    run = (report or {}).get("run") or {}
    mfu = run.get("mfu") or {}
    return {"run_mfu_read": mfu.get("mfu"), "run_ofu": mfu.get("ofu"), "run_ofu_basis": mfu.get("ofu_basis"),
            "run_steps_read": mfu.get("steps"), "run_framework": mfu.get("framework"),
            "run_mfu_missing": run.get("mfu_missing") or None}


def ofu_run_line(row):
    """The stage summary's line for `ofu run` on the training step."""
    if row.get("run_mfu_read") is None:
        why = row.get("run_mfu_missing") or ("no report" if row.get("run_ofu") is None else "no MFU read")
        return f"  ofu run: OFU {pct(row.get('run_ofu'), 0)} %; no MFU read: {str(why)[:90]}"
    return (f"  ofu run: read {row['run_steps_read']} {row['run_framework']} lines, MFU {pct(row['run_mfu_read'], 0)} % "
            f"(measured {pct(row['mfu'], 0)} %), beside OFU {pct(row['run_ofu'], 0)} % over its "
            f"{row['run_ofu_basis']} ({pp(row['run_ofu'], row['run_mfu_read'], 0).strip()} pp)")


STAGE_C_RAGGED_COLUMNS = ["phase", "m", "n", "k", "mfu", "ofu", "windows", "factor_swapped", "corrected_swapped",
                          "err_swapped_pp", "factor_direct", "corrected_direct", "err_direct_pp", "kernel",
                          *SM_CLOCK_COLUMNS, "error"]
STAGE_C_TRAIN_COLUMNS = ["phase", "steps", "tokens_per_step", "mfu", "hfu", "ofu", "windows", "factor", "corrected",
                         "predicted_mfu", "err_corrected_pp", "err_predicted_pp", *SM_CLOCK_COLUMNS,
                         "run_mfu_read", "run_ofu", "run_ofu_basis", "run_steps_read", "run_framework",
                         "run_mfu_missing", "error"]


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
        out.append(ofu_run_line(r))
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
