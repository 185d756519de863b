#!/usr/bin/env python3
"""The SM clock model of data/gpu_specs.json, from the clock-truth measurement.

docs/results/2026-11-27-clock-truth/ holds four runs (an H100 and an H200, steady
loops and bursty/mixed work) in which a probe kernel measured the clock the SMs
ran (clock64 over %globaltimer) beside NVML's reported SM clock. This script

  1. derives each SKU's ratios (reported / run) from the runs' analysis.json:
       steady_ratio                 median over the steady phases of Hopper's own
                                    kernels (8192^3 bf16/fp16/tf32/fp8, 2048^3 bf16)
       burst_ratio_at_power_cap     median over the GEMM segments of `mixed`
                                    (sw_power_cap held the clock throughout)
       burst_ratio_below_power_cap  the GEMM segments of `duty-8192` (below the cap)
     and the tensor-activity bands: burst_tensor_at_most is the highest phase
     mean of GPM 5 in bursty or mixed work rounded up to 0.05, and
     steady_tensor_at_least the lowest in steady work rounded down to 0.05;
  2. replays every phase as ofu reads it live (one window per 100 ms GPM row of
     gpm.csv, its clock the mean of nvml-clock.csv's readings in the window)
     and prints OFU - MFU with the reported clock, with the SMs' own clock
     (analysis.json's ofu_clk64) and with the model: the error table of
     docs/results/2026-11-27-clock-truth/clock-model.md;
  3. with --check, fails (exit 1) when data/gpu_specs.json does not hold the
     figures derived here.

The rule applied here is the one of src/ofu/core/clock_model.h; the C++ test
ClockTruth.* pins ofu's own answers on the same runs.

Usage: scripts/fit_clock_model.py [--runs DIR] [--specs FILE] [--check]
"""

import argparse
import bisect
import csv
import json
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = ["h100-plan1", "h100-plan2", "h200-plan1", "h200-plan2"]
SKU_OF_DEVICE = {"NVIDIA H100 80GB HBM3": "h100-sxm5", "NVIDIA H200": "h200-sxm"}
STEADY = ["bf16-8192", "fp16-8192", "tf32-8192", "fp8-8192", "bf16-8192-again", "bf16-2048"]
F_SPEC_MHZ = 1830.0  # both SKUs: 989.4 TFLOPS / (132 x 4096)
SW_POWER_CAP = 0x4
DROP_S = 2.0  # analysis.json drops the first 2 s of each phase


def load(run_dir):
    run = json.loads((run_dir / "run.json").read_text())
    rows = {r["phase"]: r for r in json.loads((run_dir / "analysis.json").read_text())["rows"]}
    return run, rows


def derive(runs_dir):
    """Per SKU: the ratios and bands, each with the figures it came from."""
    by_sku = {}
    for name in RUNS:
        run, rows = load(runs_dir / name)
        sku = SKU_OF_DEVICE[run["device"]]
        d = by_sku.setdefault(sku, {"device": run["device"], "steady": [], "cap": [], "below": [],
                                    "burst_a": [], "steady_a": []})
        for phase, r in rows.items():
            ratio = r["nvml_mhz"] / r["clk64_mhz"]
            if phase in STEADY:
                d["steady"].append((ratio, f"{name}/{phase}"))
                d["steady_a"].append(r["gpm"]["5"] / 100)
            elif phase == "mixed":
                g = r["segments"]["g"]
                d["cap"].append((g["nvml_mhz"] / g["clk64_mhz"], f"{name}/mixed GEMM segments"))
                d["burst_a"].append(r["gpm"]["5"] / 100)
            elif phase == "duty-8192":
                g = r["segments"]["g"]
                d["below"].append((g["nvml_mhz"] / g["clk64_mhz"], f"{name}/duty-8192 GEMM segments"))
                d["burst_a"].append(r["gpm"]["5"] / 100)
    models = {}
    for sku, d in sorted(by_sku.items()):
        models[sku] = {
            "measured_on": [d["device"]],
            "steady_ratio": round(statistics.median(r for r, _ in d["steady"]), 3),
            "burst_ratio_at_power_cap": round(statistics.median(r for r, _ in d["cap"]), 3),
            "burst_ratio_below_power_cap": round(statistics.median(r for r, _ in d["below"]), 3),
            "idle_tensor_below": 0.01,
            "burst_tensor_at_most": math.ceil(max(d["burst_a"]) * 20) / 20,
            "steady_tensor_at_least": math.floor(min(d["steady_a"]) * 20) / 20,
            "_from": d,
        }
    # One pair of bands for both SKUs: the widest measured states of either.
    lo = max(m["burst_tensor_at_most"] for m in models.values())
    hi = min(m["steady_tensor_at_least"] for m in models.values())
    for m in models.values():
        m["burst_tensor_at_most"], m["steady_tensor_at_least"] = lo, hi
    return models


def run_clock(m, a, f, reasons):
    """(estimate, low, high) of the clock the SMs ran: clock_model.h's rule."""
    a = min(max(a, 0.0), 1.0)
    if a < m["idle_tensor_below"]:
        return f, f, f

    def burst(r):
        return f / ((1 - a) + a * r)

    if reasons is not None:
        b = burst(m["burst_ratio_at_power_cap"] if reasons & SW_POWER_CAP else m["burst_ratio_below_power_cap"])
        b_lo = b_hi = b
    else:
        x, y = burst(m["burst_ratio_at_power_cap"]), burst(m["burst_ratio_below_power_cap"])
        b, b_lo, b_hi = (x + y) / 2, min(x, y), max(x, y)
    s = f / m["steady_ratio"]
    if a <= m["burst_tensor_at_most"]:
        return b, b_lo, b_hi
    if a >= m["steady_tensor_at_least"]:
        return s, s, s
    t = (a - m["burst_tensor_at_most"]) / (m["steady_tensor_at_least"] - m["burst_tensor_at_most"])
    return b + (s - b) * t, min(b_lo, s), max(b_hi, s)


def windows(run_dir):
    """The 100 ms GPM windows with GPM 5 and NVML's mean clock in each."""
    clocks = []
    with open(run_dir / "nvml-clock.csv") as f:
        for r in csv.DictReader(f):
            reasons = int(r["reasons"]) if r["rc_reasons"] == "0" else None
            clocks.append((int(r["t_ns"]), float(r["sm_mhz"]), reasons))
    times = [c[0] for c in clocks]
    out = []
    with open(run_dir / "gpm.csv") as f:
        for r in csv.DictReader(f):
            if r["rc5"] != "0":
                continue
            t0, t1 = int(r["t0_ns"]), int(r["t1_ns"])
            i, j = bisect.bisect_right(times, t0), bisect.bisect_right(times, t1)
            if j <= i:
                continue
            inside = clocks[i:j]
            reasons = None
            for c in inside:
                if c[2] is not None:
                    reasons = (reasons or 0) | c[2]
            out.append((t0 / 1e9, t1 / 1e9, float(r["m5"]) / 100, sum(c[1] for c in inside) / len(inside), reasons))
    return out


def error_table(runs_dir, models):
    lines = ["| run | phase | GPM 5 % | MFU % | reported MHz | run MHz (model) | SMs' MHz | "
             "OFU − MFU, reported clock | with the SMs' clock | with the model | model's range |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    worst = 0.0
    for name in RUNS:
        run, rows = load(runs_dir / name)
        m = models[SKU_OF_DEVICE[run["device"]]]
        ws = windows(runs_dir / name)
        for phase in run["phases"]:
            r = rows.get(phase["name"])
            if r is None or r["mfu"] == 0:
                continue
            inside = [w for w in ws if w[0] >= phase["host_start"] + DROP_S and w[1] <= phase["host_end"]]
            if not inside:
                continue
            n = len(inside)
            est = [run_clock(m, a, f, reasons) for _, _, a, f, reasons in inside]
            rep = sum(w[2] * w[3] for w in inside) / n / F_SPEC_MHZ
            ofu = [sum(w[2] * e[k] for w, e in zip(inside, est)) / n / F_SPEC_MHZ for k in range(3)]
            act = sum(w[2] for w in inside) / n
            native = "4097" not in phase["name"] and phase["prec"] != "fp32"
            err = 100 * (ofu[0] - r["mfu"])
            if native:
                worst = max(worst, abs(err))
            lines.append(
                f"| {name} | {phase['name']}{'' if native else ' †'} | {100 * act:.1f} | {100 * r['mfu']:.1f} | "
                f"{sum(w[3] for w in inside) / n:.0f} | {ofu[0] * F_SPEC_MHZ / act if act else 0:.0f} | "
                f"{r['clk64_mhz']:.0f} | {100 * (rep - r['mfu']):+.1f} | {100 * (r['ofu_clk64'] - r['mfu']):+.1f} | "
                f"**{err:+.1f}** | {100 * (ofu[1] - r['mfu']):+.1f} … {100 * (ofu[2] - r['mfu']):+.1f} |")
    return lines, worst


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=Path, default=ROOT / "docs/results/2026-11-27-clock-truth")
    p.add_argument("--specs", type=Path, default=ROOT / "data/gpu_specs.json")
    p.add_argument("--check", action="store_true", help="fail when the spec file's clock_model differs")
    args = p.parse_args()

    models = derive(args.runs)
    for sku, m in models.items():
        print(f"## {sku} ({', '.join(m['measured_on'])})")
        for key, label in [("steady", "steady_ratio"), ("cap", "burst_ratio_at_power_cap"),
                           ("below", "burst_ratio_below_power_cap")]:
            figures = ", ".join(f"{r:.4f} ({src})" for r, src in m["_from"][key])
            print(f"- {label} = {m[label]}: median of {figures}")
        print(f"- burst_tensor_at_most = {m['burst_tensor_at_most']}, steady_tensor_at_least = "
              f"{m['steady_tensor_at_least']}, idle_tensor_below = {m['idle_tensor_below']}\n")
    lines, worst = error_table(args.runs, models)
    print("\n".join(lines))
    print(f"\n† a kernel built for an older architecture (the kernel-family table covers it) or no tensor work.\n"
          f"Largest |OFU − MFU| with the model over the phases of Hopper's own kernels: {worst:.2f} pp")

    if args.check:
        specs = {s["id"]: s for s in json.loads(args.specs.read_text())["skus"]}
        bad = []
        for sku, m in models.items():
            have = specs[sku].get("clock_model")
            if have is None:
                bad.append(f"{sku}: no clock_model")
                continue
            for key, value in m.items():
                if key.startswith("_"):
                    continue
                if have.get(key) != value:
                    bad.append(f"{sku}: clock_model.{key} is {have.get(key)!r}, the measurement gives {value!r}")
        for line in bad:
            print(f"{args.specs}: {line}", file=sys.stderr)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
