#!/usr/bin/env python3
"""Stage K of the GPU validation (docs/gpu-validation.md): per-kernel tensor
throughput from Nsight Compute. Pure Python (standard library only); the
stage script and gpuval.py's summary call it, tests/gpu_validate/stage_k_test.py
runs it on SYNTHETIC inputs.

  stage_k.py select-metrics --query FILE [--missing FILE]
        print the metric list for ncu --metrics: the wanted ones whose base
        name `ncu --query-metrics` lists (all of them, unchecked, when the
        list cannot be read); the wanted ones it lacks go to --missing
  stage_k.py summary WORKDIR        (what gpuval.py summary K runs)

Per kernel (stage-k-kernels.csv): FLOPs from the case's shapes (GEMM
2 M N K; attention 4 b h s_q s_kv d forward, 2.5 x that backward), the
tensor pipes' active cycles summed over SMs, and

  relative throughput = FLOPs / (tensor-active cycles x F_p)

where F_p is the GPU's dense FLOPs per clock per SM for that precision
(data/gpu_specs.json's flops_per_clock_per_sm = dense peak / (N_SM x
f_spec), f_spec being the clock the quoted peak is stated at): 1 for a
kernel that does native work in every tensor-active cycle. rel_to_aligned
divides by the same precision's aligned GEMM (cuBLAS's own Hopper kernel), which
also cancels the counter's unit should ncu count the pipe per sub-partition.
"""

import argparse
import csv
import io
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpuval_core  # noqa: E402
import explain_train  # noqa: E402

# --------------------------------------------------------------------------
# The metrics. Names from public ncu usage on Hopper (docs/gpu-validation.md,
# Stage K, lists the sources); `ncu --query-metrics` on the device decides
# which exist, and the stage keeps that list.

METRIC_GROUPS = (
    ("time", ("gpu__time_duration.sum", "sm__cycles_elapsed.max", "sm__cycles_elapsed.sum",
              "smsp__cycles_active.avg")),
    ("clock", ("gpc__cycles_elapsed.avg.per_second", "sm__cycles_elapsed.avg.per_second")),
    ("tensor", ("sm__pipe_tensor_cycles_active.sum", "sm__pipe_tensor_op_hmma_cycles_active.sum",
                "sm__pipe_tensor_op_gmma_cycles_active.sum", "sm__pipe_tensor_op_imma_cycles_active.sum")),
    ("instructions", ("sm__inst_executed_pipe_tensor_op_hmma.sum", "sm__inst_executed_pipe_tensor_op_gmma.sum",
                      "sm__inst_executed_pipe_tensor_op_imma.sum")),
    ("throughput", ("sm__throughput.avg.pct_of_peak_sustained_elapsed",)),
)
WANTED = tuple(m for _, group in METRIC_GROUPS for m in group)
# What the stage falls back to when a run with the selected list fails: the
# names in use since the first Nsight Compute releases for Volta and later.
CORE_METRICS = ("gpu__time_duration.sum", "sm__cycles_elapsed.max", "sm__cycles_elapsed.sum",
                "gpc__cycles_elapsed.avg.per_second", "sm__pipe_tensor_cycles_active.sum")
TENSOR_PIPES = ("hmma", "gmma", "imma")
SENTINEL = "spin_kernel"  # torch.cuda._sleep's kernel: kernels_workload.py's case marker


def metric_base(name):
    return name.split(".", 1)[0]


def query_metric_names(text):
    """The base metric names `ncu --query-metrics` lists: the first word of
    each line that looks like unit__counter (table rules and headers are not)."""
    names = set()
    for line in text.splitlines():
        word = line.strip().split(" ", 1)[0] if line.strip() else ""
        if re.fullmatch(r"[a-z0-9]+__[a-z0-9_]+", word):
            names.add(word)
    return names


def select_metrics(query_text, wanted=WANTED):
    """(selected, missing, checked): the wanted metrics whose base name the
    query lists; without a readable list all are selected, unchecked."""
    names = query_metric_names(query_text or "")
    if not names:
        return list(wanted), [], False
    selected = [m for m in wanted if metric_base(m) in names]
    missing = [m for m in wanted if metric_base(m) not in names]
    return selected, missing, True


# --------------------------------------------------------------------------
# ncu's raw page as CSV (`ncu --import R --page raw --csv`).
#
# Its layout, as public parsers and their fixtures take it (e.g.
# github.com/search "Device\",\"CC\",\"dram__bytes_read.sum" in test fixtures of
# ncu CSV parsers, and the Nsight Compute CLI's --page raw, --csv and
# --print-units options, docs.nvidia.com/nsight-compute/NsightComputeCli):
# one header row, "ID","Process ID","Process Name","Host Name","Kernel Name",
# "Context","Stream","Block Size","Grid Size","Device","CC", then one column
# per metric; a second row with the metrics' units (empty under the fixed
# columns); then one row per profiled kernel launch. Numbers may carry
# thousands separators ("1,234,567"); a value ncu could not collect is "n/a".
# Lines before the header (==PROF== and the program's own output) are skipped.

FIXED_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
                 "Block Size", "Grid Size", "Device", "CC")
_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_TIME = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0}


class NcuCsvError(ValueError):
    pass


def to_base_unit(value, unit):
    """(value, unit) in base units: cycles and instructions as counts, time in
    seconds, rates and frequencies per second (Hz); "%" and unknown units as
    they are. ncu scales units for reading (Kcycle, msecond, Ghz) unless told
    --print-units base."""
    if value is None:
        return None, unit
    u = (unit or "").strip()
    m = re.fullmatch(r"([KMGT]?)hz", u, re.IGNORECASE)
    if m:
        return value * _PREFIX[m.group(1).upper()], "hz"
    if u in _TIME:
        return value * _TIME[u], "second"
    m = re.fullmatch(r"([KMGT]?)([a-z]+)/([a-z]+)", u)
    if m and m.group(3) in _TIME:
        return value * _PREFIX[m.group(1)] / _TIME[m.group(3)], f"{m.group(2)}/second"
    m = re.fullmatch(r"([KMGT])([a-z]+)", u)
    if m and m.group(2) in ("cycle", "inst", "byte", "warp", "thread", "sector", "request", "block"):
        return value * _PREFIX[m.group(1)], m.group(2)
    return value, u


def parse_ncu_raw_csv(text, source="ncu raw CSV"):
    """[{id, kernel, block, grid, device, cc, metrics: {name: value in base
    units or None}}] in the order ncu lists them. Raises NcuCsvError naming
    the line when there is no header or a row is cut short."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID","Process ID"')), None)
    if start is None:
        raise NcuCsvError(f"{source}: no header row (\"ID\",\"Process ID\",...): not ncu --csv --page raw output")
    # ncu's own messages (==PROF==, ==WARNING==) may come between the rows too;
    # each row keeps its line number in the file for the errors.
    kept = [(i + 1, line) for i, line in enumerate(lines) if i >= start and not line.startswith("==")]
    rows = list(csv.reader(line for _, line in kept))
    header = rows[0]
    missing = [c for c in ("ID", "Kernel Name") if c not in header]
    if missing:
        raise NcuCsvError(f"{source}: line {start + 1}: header lacks {', '.join(missing)}")
    metric_cols = [i for i, c in enumerate(header) if c not in FIXED_COLUMNS]
    units = [""] * len(header)
    body = list(zip((n for n, _ in kept[1:]), rows[1:]))
    if body and body[0][1] and body[0][1][header.index("ID")] == "":
        units = body[0][1] + [""] * (len(header) - len(body[0][1]))
        body = body[1:]
    col = {c: header.index(c) for c in FIXED_COLUMNS if c in header}
    out = []
    for line_no, row in body:
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) < len(header):
            raise NcuCsvError(f"{source}: line {line_no}: {len(row)} fields, the header has {len(header)}")
        metrics = {}
        for i in metric_cols:
            metrics[header[i]] = to_base_unit(gpuval_core.parse_number(row[i]), units[i])[0]
        get = lambda c: row[col[c]] if c in col else None  # noqa: E731
        out.append({"id": get("ID"), "kernel": get("Kernel Name"), "block": get("Block Size"),
                    "grid": get("Grid Size"), "device": get("Device"), "cc": get("CC"), "metrics": metrics})
    return out


# --------------------------------------------------------------------------
# Kernels to cases, FLOPs and throughput.


def tensor_cycles(metrics):
    """All tensor pipes' active cycles (summed over SMs): the all-pipe counter
    where ncu has it, else the sum of the per-pipe ones it has, else None."""
    total = metrics.get("sm__pipe_tensor_cycles_active.sum")
    if total is not None:
        return total
    parts = [metrics.get(f"sm__pipe_tensor_op_{p}_cycles_active.sum") for p in TENSOR_PIPES]
    parts = [p for p in parts if p is not None]
    return sum(parts) if parts else None


def assign_cases(kernels, cases):
    """Splits ncu's kernels at the sentinel rows: the k-th sentinel starts the
    k-th case that ran (cases without an error, in order). Returns
    [(case or None, kernel)] without the sentinels; kernels before the first
    sentinel or after more sentinels than cases get None."""
    ran = [c for c in cases if not c.get("error")]
    out, current, seen = [], None, 0
    for k in kernels:
        if SENTINEL in (k.get("kernel") or ""):
            current = ran[seen] if seen < len(ran) else None
            seen += 1
            continue
        out.append((current, k))
    return out


def relative_throughput(flops, cycles, flops_per_cycle):
    """FLOPs / (tensor-active cycles x native FLOPs per cycle per SM), or None."""
    if not flops or not cycles or not flops_per_cycle:
        return None
    return flops / (cycles * flops_per_cycle)


def native_flops_per_cycle(sku, precision):
    p = (sku or {}).get("precisions", {}).get(precision)
    return None if p is None else float(p["flops_per_clock_per_sm"])


def kernel_rows(groups, sku):
    """One row per profiled kernel over the groups [(cases, kernels)]: the
    case's FLOPs go to its kernel with the most tensor-active cycles (the
    others, such as split-K reductions or softmax statistics, do none of the
    case's matmuls); the training step's kernels get none (ncu's rows
    cannot be joined to torch's ops)."""
    rows = []
    for cases, kernels in groups:
        pairs = assign_cases(kernels, cases)
        main = {}
        for case, k in pairs:
            if case is None or case.get("flops") is None:
                continue
            t = tensor_cycles(k["metrics"]) or 0
            if t > 0 and t > main.get(case["case"], (None, 0))[1]:
                main[case["case"]] = (k["id"], t)
        for case, k in pairs:
            m = k["metrics"]
            case = case or {}
            precision = case.get("precision")
            flops = case.get("flops") if main.get(case.get("case"), (None,))[0] == k["id"] else None
            t = tensor_cycles(m)
            clock = m.get("gpc__cycles_elapsed.avg.per_second") or m.get("sm__cycles_elapsed.avg.per_second")
            duration = m.get("gpu__time_duration.sum")
            elapsed_sum = m.get("sm__cycles_elapsed.sum")
            fpc = native_flops_per_cycle(sku, precision)
            row = {"case": case.get("case", "unassigned"), "group": case.get("group"), "kind": case.get("kind"),
                   "precision": precision, "backend": case.get("backend"), "m": case.get("m"), "n": case.get("n"),
                   "k": case.get("k"), "ncu_id": k["id"], "kernel": k["kernel"],
                   "family": explain_train.kernel_family(k["kernel"] or ""), "grid": k["grid"], "block": k["block"],
                   "flops": flops, "tensor_cycles": t,
                   "elapsed_cycles_max": m.get("sm__cycles_elapsed.max"), "elapsed_cycles_sum": elapsed_sum,
                   "smsp_active_cycles_avg": m.get("smsp__cycles_active.avg"),
                   "sm_clock_mhz": None if clock is None else clock / 1e6,
                   "duration_us": None if duration is None else duration * 1e6,
                   "sm_throughput_pct": m.get("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
                   "tensor_active_frac": t / elapsed_sum if t is not None and elapsed_sum else None,
                   "native_flops_per_cycle_per_sm": fpc,
                   "rel_throughput": relative_throughput(flops, t, fpc)}
            for p in TENSOR_PIPES:
                row[f"{p}_cycles"] = m.get(f"sm__pipe_tensor_op_{p}_cycles_active.sum")
                row[f"{p}_inst"] = m.get(f"sm__inst_executed_pipe_tensor_op_{p}.sum")
            rows.append(row)
    aligned = {r["precision"]: r["rel_throughput"] for r in rows
               if r["kind"] == "gemm" and r["case"].endswith("-aligned") and r["rel_throughput"]}
    for r in rows:
        ref = aligned.get(r["precision"])
        r["rel_to_aligned"] = r["rel_throughput"] / ref if r["rel_throughput"] and ref else None
    return rows


# --------------------------------------------------------------------------
# The summary.

GROUPS = ("gemm", "sdpa", "train")


def ncu_absent(steps):
    """The note of the step that found no ncu, or None."""
    return next((s["note"] for s in steps if s["name"] == "ncu" and s["note"].startswith("ncu absent")), None)


def short_kernel(name, width=58):
    name = name or "?"
    return name if len(name) <= width else name[:width - 3] + "..."


def fmt(x, spec, empty="-"):
    return empty if x is None else format(x, spec)


def stage_k_tables(workdir, specs):
    _, env = gpuval_core.environment_line(workdir)
    groups, metas, errors = [], {}, []
    for g in GROUPS:
        d = os.path.join(workdir, "kernels", g)
        records = gpuval_core.read_jsonl(os.path.join(d, "cases.jsonl"))
        meta = next((r["meta"] for r in records if "meta" in r), None)
        if meta:
            metas[g] = meta
        cases = [r for r in records if "case" in r]
        errors += [c for c in cases if c.get("error")]
        raw = gpuval_core.read_text(os.path.join(d, "raw.csv"))
        if raw is None:
            continue
        try:
            groups.append((cases, parse_ncu_raw_csv(raw, os.path.join("kernels", g, "raw.csv"))))
        except NcuCsvError as e:
            errors.append({"case": g, "error": str(e)})
    meta = next(iter(metas.values()), None)
    sku = gpuval_core.resolve_sku(specs, env, meta)
    rows = kernel_rows(groups, sku) if groups else []
    return {"env": env, "sku": sku, "rows": rows, "errors": errors, "meta": meta}


def candidates(rows, sku, env):
    """data/kernel_throughput.json candidate rows from the kernel rows
    (scripts/fit_kernel_throughput.py's stage_k_candidates)."""
    sys.path.insert(0, os.path.join(gpuval_core.REPO, "scripts"))
    import fit_kernel_throughput  # noqa: E402
    return fit_kernel_throughput.stage_k_candidates(rows, (sku or {}).get("architecture"), env.get("gpu"))


def format_stage_k(workdir, result, explained):
    env_text, env = gpuval_core.environment_line(workdir)
    steps = gpuval_core.read_steps(workdir)
    sku = result["sku"]
    out = [gpuval_core.synthetic_banner(bool(env.get("synthetic"))) +
           "== Stage K: per-kernel tensor throughput (Nsight Compute) ==", env_text, gpuval_core.steps_line(steps)]
    names = [n for n in ((result["meta"] or {}).get("device_name"), env.get("gpu")) if n]
    used = next((n for n in names if gpuval_core.lookup_sku({"skus": [sku]}, n)), None) if sku else None
    out.append(f"SKU: {sku['id']} (from the device's name {used!r})" if sku else
               f"SKU: none in data/gpu_specs.json for {' / '.join(map(repr, names)) or 'an unnamed device'}: "
               "no relative throughput")
    absent = ncu_absent(steps)
    if absent:
        out.append(f"ncu absent: skipped ({absent[len('ncu absent'):].lstrip(': ')})")
    version = (gpuval_core.read_text(os.path.join(workdir, "ncu-version.txt"), "") or "").strip().splitlines()
    if version:
        out.append(f"ncu: {version[-1]}")
    missing = (gpuval_core.read_text(os.path.join(workdir, "ncu-metrics-missing.txt"), "") or "").split()
    selected = (gpuval_core.read_text(os.path.join(workdir, "ncu-metrics.txt"), "") or "").strip()
    if selected:
        out.append(f"metrics: {len(selected.split(','))} asked; not on this device/ncu: "
                   f"{', '.join(missing) if missing else 'none'}")
    core = (gpuval_core.read_text(os.path.join(workdir, "ncu-metrics-core.txt"), "") or "").strip()
    if core:
        out.append(f"metrics: ncu failed with the selected list; the core set ({core}) was tried from then on")
    for e in result["errors"]:
        out.append(f"case {e.get('case')}: failed: {(e.get('error') or '')[:80]}")
    rows = result["rows"]
    out.append("")
    if not rows:
        out.append("kernels: none profiled" + (" (ncu absent)" if absent else " (see steps and logs)"))
    else:
        out.append("kernels with a case's FLOPs: relative throughput = FLOPs / (tensor-active cycles x F_p); "
                   "rel/aligned against the same precision's aligned GEMM")
        out.append(f"{'case':<22} {'kernel':<58} {'tensor %':>8} {'rel':>6} {'rel/al':>6} {'MHz':>5}")
        for r in rows:
            if r["flops"] is None:
                continue
            out.append(f"{r['case']:<22} {short_kernel(r['kernel']):<58} {fmt(r['tensor_active_frac'] and 100 * r['tensor_active_frac'], '8.1f'):>8} "
                       f"{fmt(r['rel_throughput'], '6.3f'):>6} {fmt(r['rel_to_aligned'], '6.3f'):>6} "
                       f"{fmt(r['sm_clock_mhz'], '5.0f'):>5}")
        n_train = sum(1 for r in rows if r["group"] == "train")
        out.append(f"kernels profiled: {len(rows)} ({n_train} of the training step); all in stage-k-kernels.csv")
    out.append("")
    out.extend(explained)
    cands = candidates(rows, sku, env) if rows else []
    out.append("")
    out.append(f"candidate rows for data/kernel_throughput.json: {len(cands)} (stage-k-candidates.json; "
               "not merged: scripts/fit_kernel_throughput.py --stage-k)")
    for c in cands:
        out.append(f"  {c['label']}: {c['relative_throughput']:.3f} over {len(c['cases'])} case(s)")
    return "\n".join(out) + "\n", cands


def summarize(workdir, specs):
    result = stage_k_tables(workdir, specs)
    csv_path = os.path.join(workdir, "stage-k-kernels.csv")
    if result["rows"]:
        gpuval_core.write_csv(csv_path, gpuval_core.KERNEL_COLUMNS, result["rows"])
    results = os.environ.get("GPUVAL_STAGE_C_RESULTS", explain_train.DEFAULT_RESULTS)
    try:
        explained = explain_train.family_gap_lines(result["rows"] if result["rows"] else None, results)
    except Exception as e:  # the stage's summary must come out whatever the committed files hold
        explained = [f"training step explained: failed ({type(e).__name__}: {e})"]
    text, cands = format_stage_k(workdir, result, explained)
    with open(os.path.join(workdir, "stage-k-candidates.json"), "w", encoding="utf-8") as f:
        json.dump({"about": "candidate rows for data/kernel_throughput.json from this stage K run; "
                            "not merged (scripts/fit_kernel_throughput.py --stage-k)", "candidates": cands}, f,
                  indent=2)
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("select-metrics")
    s.add_argument("--query", required=True)
    s.add_argument("--missing")
    m = sub.add_parser("summary")
    m.add_argument("workdir")
    m.add_argument("--spec-db", default=gpuval_core.DEFAULT_SPEC_DB)
    sub.add_parser("core-metrics")
    args = parser.parse_args(argv)
    if args.command == "select-metrics":
        selected, missing, checked = select_metrics(gpuval_core.read_text(args.query, ""))
        if args.missing:
            with open(args.missing, "w", encoding="utf-8") as f:
                f.write("\n".join(missing) + ("\n" if missing else "") if checked else "unchecked\n")
        print(",".join(selected))
        return 0
    if args.command == "core-metrics":
        print(",".join(CORE_METRICS))
        return 0
    sys.stdout.write(summarize(args.workdir, gpuval_core.load_specs(args.spec_db)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
