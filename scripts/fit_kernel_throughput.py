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
test. The fit is the mean of the fitting cases' ratios.

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
FIT_STAGE_B_SIZES = {4097, 12289}
TEST_STAGE_B_SIZES = {8191}

# The kernel families measured, as (kernel_sm, mma_shape, precisions):
# read from the kernel name of each case.
FAMILY_RE = re.compile(r"cutlass_(\d+)_tensorop_(?:[a-z0-9]+_)?s(\d+)gemm")


def family_of(kernel_name, precision):
    m = FAMILY_RE.search(kernel_name)
    if not m:
        return None
    group = "16-bit" if precision in ("bf16", "fp16") else precision
    return (int(m.group(1)), m.group(2), group)


def stage_b_cases(repo):
    path = os.path.join(repo, RESULTS, "stage-B", "all.csv")
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
            cases.append({
                "case": f"B {row['m']}x{row['n']}x{row['k']} {row['precision']} {row['layout']}",
                "family": fam,
                "half": half,
                "mfu": float(row["mfu"]),
                "corrected": float(row["ofu_corrected"]),
            })
    return cases


def stage_c_cases(repo):
    path = os.path.join(repo, RESULTS, "stage-C", "stage-c-ragged.csv")
    cases = []
    with open(path, newline="") as f:
        for i, row in enumerate(csv.DictReader(f)):
            fam = family_of(row["kernel"], "bf16")
            if fam is None or row["error"]:
                continue
            cases.append({
                "case": f"C {row['phase']}",
                "family": fam,
                "half": "fit" if i % 2 == 0 else "test",
                "mfu": float(row["mfu"]),
                # ofu correct's default orientation (swapped), as the product runs it
                "corrected": float(row["corrected_swapped"]),
            })
    return cases


def fit(cases):
    """{family: mean ratio over its fitting cases}"""
    sums = {}
    for c in cases:
        if c["half"] != "fit":
            continue
        total, n = sums.get(c["family"], (0.0, 0))
        sums[c["family"]] = (total + c["mfu"] / c["corrected"], n + 1)
    return {fam: total / n for fam, (total, n) in sums.items()}


def report(cases, figures):
    lines = ["family (sm, mma, precisions)  half  case                                    MFU %   pred %   err pp"]
    worst = {"fit": 0.0, "test": 0.0}
    for c in sorted(cases, key=lambda c: (c["family"], c["half"], c["case"])):
        t = figures[c["family"]]
        predicted = c["corrected"] * t
        err = (predicted - c["mfu"]) * 100
        worst[c["half"]] = max(worst[c["half"]], abs(err))
        fam = f"sm{c['family'][0]} s{c['family'][1]} {c['family'][2]}"
        lines.append(f"{fam:<29} {c['half']:<5} {c['case']:<38} {c['mfu'] * 100:6.2f}  {predicted * 100:6.2f}  {err:+6.2f}")
    lines.append("")
    for fam, t in sorted(figures.items()):
        lines.append(f"figure sm{fam[0]} s{fam[1]} {fam[2]}: {t:.3f}")
    lines.append(f"largest |error|: fit {worst['fit']:.2f} pp, test {worst['test']:.2f} pp")
    return "\n".join(lines), worst


def check(path, figures):
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
    cases = stage_b_cases(args.repo) + stage_c_cases(args.repo)
    figures = fit(cases)
    text, worst = report(cases, figures)
    print(text)
    if args.check:
        problems = check(args.check, figures)
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
