#!/usr/bin/env python3
"""Fits data/kernel_throughput.json's measured figures from the committed
GPU results, and checks the file against them.

A kernel built for an older architecture than the GPU it runs on issues
that architecture's MMA instructions, which do fewer FLOPs per
tensor-active cycle than the GPU's own (docs/kernels.md). The figure for
such a family is

    relative throughput = true MFU / (OFU x padding factor)

per case: what the tile-corrected OFU would predict if the kernel were
native, against what the GPU delivered. Hopper-native kernels read 1 within
about 1 pp on the same machine (docs/results/2026-11-26-h100-sxm5/README.md).

The cases are split by shape, so that no figure is tested on a case it was
fitted on: every other stage-C shape (1st, 3rd, 5th row) and stage B's
4097 and 12289 sizes fit; the other stage-C shapes and stage B's 8191 size
test. The clock-truth runs' 4097^3 loops (below) are 4097-sized, so they
fit too. The fit is the mean of the fitting cases' ratios.

The SM clock in each case's OFU is the clock the SMs ran, as well as the
runs tell it (issue 38; docs/results/2026-11-27-clock-truth/): NVML's
reported clock is high while tensor kernels run, except in steady work held
at the power cap.
  - Clock-truth loops (docs/results/2026-11-27-clock-truth/{h100,h200}-plan1,
    every phase whose kernel is built for an older architecture: the bf16
    4097^3 loop): the SMs' own clock (clk64_mhz in analysis.json), OFU =
    GPM 5 x that clock / f_spec, padding from the kernel name's tile.
  - The 2026-11-26 H100 rows carry NVML's clock only. Their state is told
    from their own columns: a reported clock below the board's maximum
    (env.json max_sm_clock) means the power controller lowered it, i.e.
    steady work at the power cap (the only clock event reason these runs
    ever showed): clock / steady_ratio of the SKU's clock_model in
    data/gpu_specs.json. A reported clock at the maximum (within 5 MHz) with,
    where the run recorded them (stage C's rec.om), no sw_power_cap reason and
    power under the limit is a loop below the cap: clock / the ratio NVML /
    SMs measured for the same kernel family in that state (the clock-truth
    H100 loop, analysis.json). A family with no such measurement keeps its
    reported clock and is held out of the fit (shown, not fitted).
The old figures (every case on NVML's clock, no clock-truth cases) are
printed beside the new ones, and each case's error also on the clock ofu's
own clock model (src/ofu/core/clock_model.h, as scripts/fit_clock_model.py
implements it) estimates from its tensor activity, NVML clock and reasons:
what `ofu correct --input` multiplies.

  scripts/fit_kernel_throughput.py                  print fit and test tables
  scripts/fit_kernel_throughput.py --check FILE     exit 1 unless FILE's figures
                                                    equal the fit (3 decimals) and its
                                                    Nsight Compute rows equal what
                                                    their stage_k_csv gives
  scripts/fit_kernel_throughput.py --stage-k CSV    candidate rows from stage K's
                                                    per-kernel CSV (printed, not merged)

Standard library only. Inputs (committed, measured on one H100 80GB HBM3,
driver 580.159.04, 2026-11-26):
  docs/results/2026-11-26-h100-sxm5/stage-B/all.csv          (ofu-gemm rows)
  docs/results/2026-11-26-h100-sxm5/stage-C/stage-c-ragged.csv (torch.mm phases)
  docs/results/2026-11-26-h100-sxm5/stage-{B,C}/env.json     (max SM clock, power limit)
  docs/results/2026-11-26-h100-sxm5/stage-C/ragged/rec.om, phases.jsonl
                                             (stage C's clock, power, reasons per phase)
and (one H100 80GB HBM3 and one H200, driver 580.159.04, 2026-11-27):
  docs/results/2026-11-27-clock-truth/{h100,h200}-plan1/analysis.json, run.json
  data/gpu_specs.json (clock_model, f_spec of each SKU)

The table's Nsight Compute rows (a figure with measured_by "ncu", the
ncu_measurements inside a fitted figure, and attention_figures) each name
the stage K CSV they come from (stage_k_csv; the first:
docs/results/2026-11-27-h200/stage-K/stage-k-kernels.csv, an H200,
2026-11-27). --check recomputes that CSV's candidates (as --stage-k prints
them) and wants each row equal to its family's candidate (figure to 3
decimals, cases and kernels) and every candidate family in the table once.
"""

import argparse
import csv
import json
import os
import re
import sys

RESULTS = "docs/results/2026-11-26-h100-sxm5"
CLOCK_TRUTH = "docs/results/2026-11-27-clock-truth"
CLOCK_TRUTH_RUNS = ("h100-plan1", "h200-plan1")
FIT_STAGE_B_SIZES = {4097, 12289}
TEST_STAGE_B_SIZES = {8191}
# Sizes of the clock-truth loops that fit or test, by the same shape rule.
FIT_SIZES = FIT_STAGE_B_SIZES
TEST_SIZES = TEST_STAGE_B_SIZES
SW_POWER_CAP = 0x4  # clock event reason bit (NVML, DCGM field 112)
AT_MAX_MHZ = 5  # a reported clock this close to the maximum was not lowered

# The kernel families measured, as (kernel_sm, mma_shape, precisions):
# read from the kernel name of each case.
FAMILY_RE = re.compile(r"cutlass_(\d+)_tensorop_(?:[a-z0-9]+_)?s(\d+)gemm")
TILE_RE = re.compile(r"_(\d+)x(\d+)_(?:\d+x\d+_)?[tn]{2}_align")


def family_of(kernel_name, precision):
    m = FAMILY_RE.search(kernel_name)
    if not m:
        return None
    group = "16-bit" if precision in ("bf16", "fp16") else precision
    return (int(m.group(1)), m.group(2), group)


def padding_factor(m, n, kernel_name):
    """Useful over executed output tiles of an M x N GEMM with the kernel
    name's tile (the tile-padding part of stage B's padding_factor; these
    names give no tile K, so K is not padded): M N / (ceil(M/tm) tm ceil(N/tn) tn).
    Square shapes only, where the orientation cannot matter."""
    t = TILE_RE.search(kernel_name)
    tm, tn = int(t.group(1)), int(t.group(2))
    return m * n / (-(-m // tm) * tm * -(-n // tn) * tn)


def load_json(repo, path):
    with open(os.path.join(repo, path)) as f:
        return json.load(f)


def sku_of(specs, device):
    for sku in specs["skus"]:
        if device in sku.get("aliases", []):
            return sku
    raise SystemExit(f"data/gpu_specs.json has no SKU named {device!r}")


def f_spec_mhz(sku):
    p = sku["precisions"][sku["basis_precision"]]
    return p["peak_tflops"] * 1e6 / (sku["sm_count"] * p["flops_per_clock_per_sm"])


def mhz(text):
    return float(text.split()[0])


class ClockContext:
    """What the clock of a case is decided from: the SKU's clock model and
    the ratio NVML / SMs measured, per kernel family, for legacy loops below
    the power cap (the clock-truth H100 run)."""

    def __init__(self, repo):
        self.specs = load_json(repo, "data/gpu_specs.json")
        self.h100 = sku_of(self.specs, "NVIDIA H100 80GB HBM3")
        self.model = self.h100["clock_model"]
        self.below_cap = {}  # family -> (ratio, where)
        for run in CLOCK_TRUTH_RUNS:
            info = load_json(repo, f"{CLOCK_TRUTH}/{run}/run.json")
            if sku_of(self.specs, info["device"]) is not self.h100:
                continue
            for row, phase, fam, _ in clock_truth_phases(repo, run):
                if row["reasons"] or row["nvml_mhz"] < self.max_mhz(repo, "B") - AT_MAX_MHZ:
                    continue  # not below the cap: not this state
                self.below_cap[fam] = (row["nvml_mhz"] / row["clk64_mhz"],
                                       f"{CLOCK_TRUTH}/{run} {phase['name']}: NVML {row['nvml_mhz']:.0f} / "
                                       f"SMs {row['clk64_mhz']:.1f} MHz")

    @staticmethod
    def max_mhz(repo, stage):
        return mhz(load_json(repo, f"{RESULTS}/stage-{stage}/env.json")["max_sm_clock"])

    def run_clock(self, fam, reported, at_max, reasons, power_w, limit_w):
        """(clock the SMs ran or None, state, how) for a 2026-11-26 row."""
        if not at_max:
            r = self.model["steady_ratio"]
            return reported / r, "at cap", f"steady at the power cap: / steady_ratio {r}"
        capped = reasons is not None and reasons & SW_POWER_CAP
        if capped or (power_w is not None and power_w >= limit_w):
            return None, "cap?", "at the maximum clock yet at the cap: no measured state"
        if fam not in self.below_cap:
            return None, "below cap", "below the cap: no measurement of this family in this state"
        r, _ = self.below_cap[fam]
        return reported / r, "below cap", f"below the cap: / {r:.4f} (clock-truth loop)"


def case_of(ctx, name, fam, half, mfu, corrected, reported, at_max, tensor, reasons=None, power_w=None,
            limit_w=None):
    run, state, how = ctx.run_clock(fam, reported, at_max, reasons, power_w, limit_w)
    c = {"case": name, "family": fam, "mfu": mfu, "corrected_reported": corrected, "shape_half": half,
         "reported_mhz": reported, "state": state, "how": how, "tensor": tensor, "reasons": reasons}
    if run is None:
        # the clock the SMs ran is not known: shown on the reported clock, not fitted
        c.update(half="held out", corrected=corrected, run_mhz=reported)
    else:
        c.update(half=half, corrected=corrected * run / reported, run_mhz=run)
    return c


def stage_b_cases(repo, ctx):
    path = os.path.join(repo, RESULTS, "stage-B", "all.csv")
    max_mhz = ctx.max_mhz(repo, "B")
    cases = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if not row["mfu"] or not row["ofu_corrected"]:
                continue
            fam = family_of(row["kernel_name"], row["precision"])
            if fam is None:
                continue
            size = int(row["m"])
            half = "fit" if size in FIT_STAGE_B_SIZES else "test" if size in TEST_STAGE_B_SIZES else None
            if half is None:
                continue
            # ofu_corrected = tensor_active x sm_clock_mhz / f_spec x padding_factor
            reported = float(row["sm_clock_mhz"])
            cases.append(case_of(ctx, f"B {row['m']}x{row['n']}x{row['k']} {row['precision']} {row['layout']}",
                                 fam, half, float(row["mfu"]), float(row["ofu_corrected"]), reported,
                                 reported >= max_mhz - AT_MAX_MHZ, float(row["tensor_active"])))
    return cases


def recording_series(path, names):
    """{metric: [(t, value)]} of the recording's samples of `names`."""
    out = {n: [] for n in names}
    line_re = re.compile(r"^(\w+)\{[^}]*\} (\S+) (\S+)$")
    with open(path) as f:
        for line in f:
            m = line_re.match(line.strip())
            if m and m.group(1) in out:
                out[m.group(1)].append((float(m.group(3)), float(m.group(2))))
    return out


def stage_c_cases(repo, ctx):
    base = os.path.join(repo, RESULTS, "stage-C")
    env = load_json(repo, f"{RESULTS}/stage-C/env.json")
    max_mhz, limit_w = mhz(env["max_sm_clock"]), mhz(env["power_limit"])
    series = recording_series(os.path.join(base, "ragged", "rec.om"),
                              ("DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
                               "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"))
    spans = {}
    with open(os.path.join(base, "ragged", "phases.jsonl")) as f:
        for line in f:
            p = json.loads(line)
            if "phase" in p:
                spans[p["phase"]] = (p["t_start"], p["t_end"])

    def inside(metric, span):
        return [v for t, v in series[metric] if span[0] < t <= span[1]]

    cases = []
    with open(os.path.join(base, "stage-c-ragged.csv"), newline="") as f:
        for i, row in enumerate(csv.DictReader(f)):
            fam = family_of(row["kernel"], "bf16")
            if fam is None or row["error"]:
                continue
            span = spans[row["phase"]]
            clocks = inside("DCGM_FI_DEV_SM_CLOCK", span)
            reasons = 0
            for r in inside("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", span):
                reasons |= int(r)
            reported = sum(clocks) / len(clocks)
            tensor = inside("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", span)
            cases.append(case_of(ctx, f"C {row['phase']}", fam, "fit" if i % 2 == 0 else "test",
                                 float(row["mfu"]),
                                 # ofu correct's default orientation (swapped), as the product runs it
                                 float(row["corrected_swapped"]), reported,
                                 min(clocks) >= max_mhz - AT_MAX_MHZ, sum(tensor) / len(tensor), reasons,
                                 max(inside("DCGM_FI_DEV_POWER_USAGE", span)), limit_w))
    return cases


def clock_truth_phases(repo, run):
    """(analysis row, run.json phase, family, kernel) of each phase of a
    clock-truth run whose kernel is built for an older architecture."""
    info = load_json(repo, f"{CLOCK_TRUTH}/{run}/run.json")
    rows = {r["phase"]: r for r in load_json(repo, f"{CLOCK_TRUTH}/{run}/analysis.json")["rows"]}
    out = []
    for phase in info["phases"]:
        for kernel in info["kernels"].get(phase["name"], []):
            fam = family_of(kernel, phase["prec"])
            if fam is not None and phase["name"] in rows:
                out.append((rows[phase["name"]], phase, fam, kernel))
    return out


def clock_truth_cases(repo, ctx):
    """The clock-truth loops of older-architecture kernels, on the SMs' own
    clock: OFU = GPM 5 x clk64 / f_spec."""
    cases = []
    for run in CLOCK_TRUTH_RUNS:
        info = load_json(repo, f"{CLOCK_TRUTH}/{run}/run.json")
        sku = sku_of(ctx.specs, info["device"])
        f_spec = f_spec_mhz(sku)
        for row, phase, fam, kernel in clock_truth_phases(repo, run):
            n = phase["n"]
            half = "fit" if n in FIT_SIZES else "test" if n in TEST_SIZES else None
            if half is None:
                continue
            pad = padding_factor(n, n, kernel)
            tensor = row["gpm"]["5"] / 100
            cases.append({
                "case": f"T {run.split('-')[0].upper()} {n}^3 {phase['prec']}",
                "family": fam, "half": half, "mfu": row["mfu"],
                "corrected": tensor * row["clk64_mhz"] / f_spec * pad,
                "corrected_reported": tensor * row["nvml_mhz"] / f_spec * pad,
                "reported_mhz": row["nvml_mhz"], "run_mhz": row["clk64_mhz"],
                "state": "measured", "how": f"SMs' own clock (clk64), padding {pad:.4f}",
                "tensor": tensor, "reasons": SW_POWER_CAP if row["reasons"].get("sw_power_cap") else 0,
                "model": sku["clock_model"],
            })
    return cases


def fit(cases, key="corrected", halves=("fit",)):
    """{family: mean ratio over its fitting cases}"""
    sums = {}
    for c in cases:
        if c["half"] not in halves:
            continue
        total, n = sums.get(c["family"], (0.0, 0))
        sums[c["family"]] = (total + c["mfu"] / c[key], n + 1)
    return {fam: total / n for fam, (total, n) in sums.items()}


def old_fit(cases):
    """The figures as fitted before issue 38: the 2026-11-26 rows only, all
    on NVML's reported clock, by the same shape split."""
    return fit([dict(c, half=c["shape_half"]) for c in cases if "shape_half" in c], key="corrected_reported")


def live_clock(case, model):
    """The clock ofu itself estimates for the case from what a sample shows
    (src/ofu/core/clock_model.h's rule, as scripts/fit_clock_model.py
    implements it): tensor activity, NVML's clock, clock event reasons."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from fit_clock_model import run_clock
    return run_clock(case.get("model", model), case["tensor"], case["reported_mhz"], case["reasons"])[0]


def report(cases, figures, old=None, model=None):
    lines = ["family (sm, mma, precisions)  half      case                                    state      "
             "NVML MHz  run MHz   MFU %   pred %   err pp   ofu's MHz  err pp"]
    worst = {"fit": 0.0, "test": 0.0, "held out": 0.0}
    order = {"fit": 0, "test": 1, "held out": 2}
    for c in sorted(cases, key=lambda c: (c["family"], order[c["half"]], c["case"])):
        t = figures[c["family"]]
        predicted = c["corrected"] * t
        err = (predicted - c["mfu"]) * 100
        worst[c["half"]] = max(worst[c["half"]], abs(err))
        per = worst.setdefault(c["family"], {})
        per[c["half"]] = max(per.get(c["half"], 0.0), abs(err))
        fam = f"sm{c['family'][0]} s{c['family'][1]} {c['family'][2]}"
        live = live_clock(c, model)
        live_err = (c["corrected_reported"] * live / c["reported_mhz"] * t - c["mfu"]) * 100
        worst["live"] = max(worst.get("live", 0.0), abs(live_err))
        lines.append(f"{fam:<29} {c['half']:<9} {c['case']:<39} {c['state']:<10} {c['reported_mhz']:8.1f} "
                     f"{c['run_mhz']:8.1f}  {c['mfu'] * 100:6.2f}  {predicted * 100:6.2f}  {err:+6.2f}"
                     f"   {live:8.1f}  {live_err:+6.2f}")
    lines.append("")
    lines.append("state: measured = the SMs' own clock; at cap = NVML's clock / the SKU's steady_ratio; below cap = "
                 "NVML's / the ratio measured for the family below the cap; held out = no measured clock, reported one shown.\n"
                 "ofu's MHz, err pp: the same prediction on the clock ofu's clock model estimates from the case's tensor "
                 "activity, NVML clock and reasons (stage B: none recorded), as `ofu correct --input` would use")
    for fam, t in sorted(figures.items()):
        was = f" (was {old[fam]:.3f} on NVML's clock, {t - old[fam]:+.3f})" if old and fam in old else ""
        per = ", ".join(f"{h} {e:.2f} pp" for h, e in sorted(worst[fam].items(), key=lambda x: order[x[0]]))
        lines.append(f"figure sm{fam[0]} s{fam[1]} {fam[2]}: {t:.3f}{was}; largest |error| {per}")
    held = f", held out {worst['held out']:.2f} pp" if any(c["half"] == "held out" for c in cases) else ""
    lines.append(f"largest |error|: fit {worst['fit']:.2f} pp, test {worst['test']:.2f} pp{held}; "
                 f"on ofu's clock model {worst.get('live', 0.0):.2f} pp")
    return "\n".join(lines), worst


def check(path, figures, worst=None):
    """Problems with FILE's fitted figures: each must equal the fit to 3
    decimals and, given the report's errors, carry its family's largest fit
    and test |error| (fit_error_pp, test_error_pp) to 2 decimals."""
    with open(path) as f:
        table = json.load(f)
    problems = []
    seen = set()
    for entry in table["figures"]:
        if entry.get("fit_script") != "scripts/fit_kernel_throughput.py":
            continue
        group = "16-bit" if set(entry["precisions"]) == {"bf16", "fp16"} else entry["precisions"][0]
        fam = (entry["kernel_sm"], entry["mma_shape"], group)
        seen.add(fam)
        if fam not in figures:
            problems.append(f"{path}: figure {fam} has no measured case")
        elif round(entry["relative_throughput"], 3) != round(figures[fam], 3):
            problems.append(f"{path}: figure {fam} is {entry['relative_throughput']}, the fit gives {figures[fam]:.3f}")
        if worst and fam in worst:
            for half in ("fit", "test"):
                want = round(worst[fam].get(half, 0.0), 2)
                if round(entry.get(f"{half}_error_pp", -1), 2) != want:
                    problems.append(f"{path}: figure {fam} has {half}_error_pp {entry.get(f'{half}_error_pp')}, "
                                    f"the fit gives {want:.2f}")
    for fam in figures:
        if fam not in seen:
            problems.append(f"{path}: no figure for measured family {fam}")
    return problems


# --------------------------------------------------------------------------
# Stage K (scripts/gpu-validate/stage-k.sh): per-kernel figures from Nsight
# Compute, turned into candidate rows. They are printed, never written into
# data/kernel_throughput.json: a person merges them with the run's results.

# cuBLAS's own names for pre-Hopper tensor-op kernels, beside CUTLASS's.
LEGACY_RE = re.compile(r"(volta|turing|ampere)_\w*?_?s(\d+)gemm")
LEGACY_SM = {"volta": 70, "turing": 75, "ampere": 80}
XMMA_RE = re.compile(r"sm(\d+)_xmma_gemm")
NATIVE_RE = re.compile(r"nvjet|sm90_xmma|_sm90_|cutlass3x_sm90|gemm_sm90")


def stage_k_family(kernel_name, precision):
    """(kernel_sm, mma_shape, precision group) of a GEMM kernel built for an
    older architecture, ("attention", family) of an attention kernel, or
    None (Hopper's own GEMMs, the reference; kernels with no case FLOPs)."""
    name = kernel_name or ""
    if NATIVE_RE.search(name):
        return None
    fam = family_of(name, precision)
    group = "16-bit" if precision in ("bf16", "fp16") else precision
    if fam is None:
        m = LEGACY_RE.search(name)
        if m:
            fam = (LEGACY_SM[m.group(1)], m.group(2), group)
    if fam is None:
        m = XMMA_RE.search(name)
        if m:
            fam = (int(m.group(1)), "xmma", group)
    return fam


def _number(text):
    try:
        return float(text) if text not in (None, "") else None
    except (TypeError, ValueError):
        return None


def read_stage_k_csv(path):
    with open(path, newline="") as f:
        return [dict(r, flops=_number(r.get("flops")), rel_throughput=_number(r.get("rel_throughput")),
                     rel_to_aligned=_number(r.get("rel_to_aligned"))) for r in csv.DictReader(f)]


def stage_k_candidates(rows, architecture=None, measured_on=None):
    """Candidate rows for data/kernel_throughput.json from stage K's kernel
    rows (stage-k-kernels.csv): per family, the mean over its cases of the
    kernel's FLOPs per tensor-active cycle relative to the aligned GEMM of
    the same precision (rel_to_aligned), each case named as its source.
    Only kernels that carry their case's FLOPs count; GEMM families by
    stage_k_family, attention kernels by their family in the CSV."""
    groups = {}
    for r in rows:
        value = r.get("rel_to_aligned")
        if not r.get("flops") or value is None:
            continue
        kind = r.get("kind") or ""
        if kind == "gemm":
            fam = stage_k_family(r.get("kernel"), r.get("precision"))
        elif kind.startswith("attention"):
            fam = ("attention", r.get("family") or "attention (other)")
        else:
            fam = None
        if fam is None:
            continue
        g = groups.setdefault(fam, {"values": [], "cases": [], "kernels": [], "precisions": set()})
        g["values"].append(value)
        g["cases"].append(r["case"])
        g["precisions"].add(r.get("precision"))
        if r.get("kernel") not in g["kernels"]:
            g["kernels"].append(r.get("kernel"))
    out = []
    for fam, g in sorted(groups.items(), key=lambda x: str(x[0])):
        row = {"architecture": architecture, "precisions": sorted(p for p in g["precisions"] if p),
               "relative_throughput": round(sum(g["values"]) / len(g["values"]), 3),
               "cases": [f"stage K {c}" for c in g["cases"]], "kernels": g["kernels"][:3],
               "measured_on": measured_on,
               "source": "stage K (Nsight Compute): case FLOPs / (tensor-active cycles x dense FLOPs per clock per SM), "
                         "over the aligned GEMM of the same precision",
               "fit_script": "scripts/fit_kernel_throughput.py --stage-k", "candidate": True}
        if fam[0] == "attention":
            row.update({"kind": "attention", "label": fam[1]})
        else:
            row.update({"kernel_sm": fam[0], "mma_shape": fam[1],
                        "label": f"sm{fam[0]} {'s' + fam[1] if fam[1] != 'xmma' else 'xmma'} {fam[2]}"})
        out.append(row)
    return out


# --------------------------------------------------------------------------
# Checking the table's Nsight Compute rows against the committed stage K CSV
# they name (stage_k_csv): the same candidates --stage-k prints, merged.

NCU_FIT_SCRIPT = "scripts/fit_kernel_throughput.py --stage-k"


def candidate_key(row):
    """The family a candidate or a table row stands for: (kernel_sm,
    mma_shape, precision group) for GEMMs, ("attention", label) otherwise."""
    if row.get("kind") == "attention" or "kernel_sm" not in row:
        return ("attention", row.get("label"))
    precisions = set(row.get("precisions") or [])
    group = "16-bit" if precisions and precisions <= {"bf16", "fp16"} else ",".join(sorted(precisions))
    return (row["kernel_sm"], row.get("mma_shape"), group)


def ncu_rows(table):
    """Every Nsight Compute row of the table, as (where, family key, row):
    figures measured by ncu, the ncu_measurements inside fitted figures,
    and attention_figures."""
    out = []
    for i, entry in enumerate(table.get("figures", [])):
        if entry.get("measured_by") == "ncu":
            out.append((f"figures[{i}]", candidate_key(entry), entry))
        for j, m in enumerate(entry.get("ncu_measurements", [])):
            out.append((f"figures[{i}].ncu_measurements[{j}]", candidate_key(entry), m))
    for i, entry in enumerate(table.get("attention_figures", [])):
        out.append((f"attention_figures[{i}]", ("attention", entry.get("label")), entry))
    return out


def check_stage_k(path, table, repo):
    """Problems with the table's ncu rows: each must equal the candidate its
    stage K CSV gives for its family (figure to 3 decimals, cases, kernels),
    and every candidate of a CSV the table names must be in the table once."""
    problems = []
    by_csv = {}
    for where, key, row in ncu_rows(table):
        csv_path = row.get("stage_k_csv")
        if not csv_path:
            problems.append(f"{path}: {where}: measured by ncu but names no stage_k_csv")
            continue
        if csv_path not in by_csv:
            full = os.path.join(repo, csv_path)
            if not os.path.exists(full):
                problems.append(f"{path}: {where}: stage_k_csv {csv_path} does not exist")
                by_csv[csv_path] = None
                continue
            cands = stage_k_candidates(read_stage_k_csv(full), table.get("architecture"))
            by_csv[csv_path] = {"candidates": {candidate_key(c): c for c in cands}, "seen": {}}
        known = by_csv[csv_path]
        if known is None:
            continue
        cand = known["candidates"].get(key)
        if cand is None:
            problems.append(f"{path}: {where}: family {key} has no case in {csv_path}")
            continue
        if key in known["seen"]:
            problems.append(f"{path}: {where}: family {key} is also {known['seen'][key]}")
        known["seen"][key] = where
        if round(row.get("relative_throughput", -1), 3) != cand["relative_throughput"]:
            problems.append(f"{path}: {where}: {key} is {row.get('relative_throughput')}, "
                            f"{csv_path} gives {cand['relative_throughput']:.3f}")
        for field in ("cases", "kernels"):
            if row.get(field) != cand[field]:
                problems.append(f"{path}: {where}: {field} {row.get(field)} are not {csv_path}'s {cand[field]}")
    for csv_path, known in by_csv.items():
        if known is None:
            continue
        for key in known["candidates"]:
            if key not in known["seen"]:
                problems.append(f"{path}: no row for family {key} measured in {csv_path}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--check", metavar="FILE", help="compare FILE's fitted figures with the fit")
    parser.add_argument("--stage-k", metavar="CSV", help="print candidate rows from stage K's stage-k-kernels.csv "
                        "(JSON; data/kernel_throughput.json is not changed) and exit")
    parser.add_argument("--architecture", help="with --stage-k: the GPU's architecture (e.g. hopper)")
    parser.add_argument("--measured-on", help="with --stage-k: the GPU, driver and date, for the rows")
    args = parser.parse_args()
    if args.stage_k:
        cands = stage_k_candidates(read_stage_k_csv(args.stage_k), args.architecture, args.measured_on)
        print(json.dumps({"candidates": cands}, indent=2))
        return 0
    ctx = ClockContext(args.repo)
    cases = stage_b_cases(args.repo, ctx) + stage_c_cases(args.repo, ctx) + clock_truth_cases(args.repo, ctx)
    figures = fit(cases)
    text, worst = report(cases, figures, old_fit(cases), ctx.model)
    print(text)
    if args.check:
        problems = check(args.check, figures, worst)
        with open(args.check) as f:
            problems += check_stage_k(args.check, json.load(f), args.repo)
        for p in problems:
            print(p, file=sys.stderr)
        if problems:
            return 1
        print(f"{args.check}: figures agree with the fit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
