#!/usr/bin/env python3
"""What every GPU validation script shares (docs/gpu-validation.md): the spec
database, FLOPs and MFU, recordings and probe logs, the join of windows with
phases, the stages' files and the summaries' formatting.

Pure Python (standard library only). It imports no other script of this
folder but agent_cost.py (the /metrics reader, which imports none), so that
gpuval.py, stage_k.py, explain_train.py, workload.py and kernels_workload.py
can all use it without an import cycle (tests/gpu_validate/import_graph_test.py
checks there is none).
"""

import csv
import io
import json
import math
import os
import statistics

import agent_cost  # the /metrics reader; beside this file

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
# The stages' files and FLOP counts.


def write_csv(path, columns, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in columns})


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


# --------------------------------------------------------------------------
# Stage K's kernel table (stage-k-kernels.csv): written by stage_k.py, read
# again by explain_train.py for the training step's per-family split.

def parse_number(text):
    """A float from ncu's text ("1,234.5"), or None for "", "n/a" and the like."""
    return _number((text or "").strip().replace(",", ""))


KERNEL_COLUMNS = ["case", "group", "kind", "precision", "backend", "m", "n", "k", "ncu_id", "kernel", "family",
                  "grid", "block", "flops", "tensor_cycles", "hmma_cycles", "gmma_cycles", "imma_cycles",
                  "hmma_inst", "gmma_inst", "imma_inst", "elapsed_cycles_max", "elapsed_cycles_sum",
                  "smsp_active_cycles_avg", "sm_clock_mhz", "duration_us", "sm_throughput_pct",
                  "tensor_active_frac", "native_flops_per_cycle_per_sm", "rel_throughput", "rel_to_aligned"]


def read_kernel_csv(path):
    """stage-k-kernels.csv's rows, numbers as floats (None where empty)."""
    numeric = set(KERNEL_COLUMNS) - {"case", "group", "kind", "precision", "backend", "ncu_id", "kernel", "family",
                                     "grid", "block"}
    with open(path, newline="", encoding="utf-8") as f:
        return [{k: (parse_number(v) if k in numeric else (v or None)) for k, v in r.items()}
                for r in csv.DictReader(f)]
