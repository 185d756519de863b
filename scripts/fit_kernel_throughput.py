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
                                                    equal the fit (3 decimals)

Standard library only. Inputs (committed, measured on one H100 80GB HBM3,
driver 580.159.04, 2026-11-26):
  docs/results/2026-11-26-h100-sxm5/stage-B/all.csv          (ofu-gemm rows)
  docs/results/2026-11-26-h100-sxm5/stage-C/stage-c-ragged.csv (torch.mm phases)
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


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--check", metavar="FILE", help="compare FILE's fitted figures with the fit")
    args = parser.parse_args()
    cases = stage_b_cases(args.repo) + stage_c_cases(args.repo)
    figures = fit(cases)
    text, worst = report(cases, figures)
    print(text)
    if args.check:
        problems = check(args.check, figures)
        for p in problems:
            print(p, file=sys.stderr)
        if problems:
            return 1
        print(f"{args.check}: figures agree with the fit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
