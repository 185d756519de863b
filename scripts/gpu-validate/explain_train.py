#!/usr/bin/env python3
"""Where stage C's training step reads OFU above HFU: the kernels behind it.

  explain_train.py [RESULTS_DIR] [--kernels STAGE_K_CSV]

RESULTS_DIR is one GPU run's results as committed (default
docs/results/2026-11-26-h100-sxm5); the script reads, from it,
stage-C/train/{trace.json.gz, phases.jsonl, rec.om}, stage-C/stage-c-train.csv
(MFU, HFU, OFU and ofu correct's tile factor, as the stage summary computed
them) and stage-A/stage-a-phases.csv, and prints:

  1. kernel time per family over the profiled steps (trace), the GPU-busy
     fraction, and each family's useful FLOPs (GEMMs from the ops' shapes,
     attention from its ops' shapes, both checked against workload.py's
     analytic count, which is the one MFU and HFU were computed from);
  2. the recording over the phase: tensor activity, SM clock, OFU;
  3. the split of the tensor-active work. OFU / MFU x the model FLOPs of a
     step is the step's tensor-active time expressed as FLOPs at the native
     (dense-peak) rate. GEMMs are assumed native, as stage A's 8192^3 loops
     measured (OFU / MFU there is the sensitivity range), and executed with
     ofu correct's tile padding; what is left is attention's, since no other
     kernel issues tensor instructions. Attention's useful FLOPs divided by
     that remainder is its FLOPs per tensor-active cycle relative to native;
  4. bounds on the forward / backward split, from two constraints: a kernel
     cannot beat native per active cycle, and its tensor-active time cannot
     exceed its duration in the trace.
  5. with --kernels (stage K's stage-k-kernels.csv): which kernel families
     hold the gap between (corrected) OFU and HFU, from each family's FLOPs
     per tensor-active cycle measured by Nsight Compute (family_gap_lines;
     stage K's summary prints the same lines, or that its CSV is absent).

Python standard library only (gzip, json, csv) plus gpuval.py beside it,
whose recording join and FLOP formula are the ones the stage summary used.
The pure functions are tested on synthetic inputs in
tests/gpu_validate/explain_train_test.py.
"""

import csv
import gzip
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpuval_core  # noqa: E402  (recording join, spec lookup, transformer FLOPs)

DEFAULT_RESULTS = os.path.join(gpuval_core.REPO, "docs", "results", "2026-11-26-h100-sxm5")

# --------------------------------------------------------------------------
# Kernel families, from the kernel's name (the order matters: first match).

FAMILIES = (
    ("GEMM (nvjet)", ("nvjet",)),
    ("attention fwd (cuDNN SDPA)", ("sdpa_sm90_flash_fprop", "flash_fprop")),
    ("attention bwd (cuDNN SDPA)", ("sdpa_sm90_flash_bprop", "flash_bprop")),
    ("attention bwd helpers (cuDNN)", ("cudnn::fusion::",)),
    ("optimizer (fused AdamW)", ("FusedAdam", "multi_tensor_apply")),
    ("copies and casts", ("copy_kernel", "CatArrayBatchedCopy", "Memset", "Memcpy", "FillFunctor")),
    ("layer norm (fwd, bwd)", ("layer_norm", "GammaBetaBackward")),
    ("softmax, cross-entropy", ("SoftMax", "nll_loss")),
    ("GELU, residual adds", ("Gelu", "CUDAFunctor_add")),
    # PyTorch's other SDPA backends (stage K profiles each): FlashAttention-2
    # (flash_fwd_kernel, flash_bwd_*) and the memory-efficient CUTLASS kernels.
    ("attention fwd (flash)", ("flash_fwd",)),
    ("attention bwd (flash)", ("flash_bwd",)),
    ("attention fwd (efficient)", ("fmha_cutlassF",)),
    ("attention bwd (efficient)", ("fmha_cutlassB",)),
    # cuBLAS's other GEMM kernels: CUTLASS (cutlass_80_tensorop_*_s16816gemm_*,
    # cutlass_75_*_s1688gemm_*, *_i161616gemm_*) and Hopper's sm90_xmma_gemm_*,
    # seen in stage K's unaligned and tf32 cases on the H200 (2026-11-27).
    # Last, so that the attention kernels' names (fmha_cutlass*) match first.
    ("GEMM (CUTLASS, xmma)", ("gemm", "xmma")),
)
OTHER = "other (embedding, sort, ...)"
ATTENTION_FAMILIES = ("attention fwd (cuDNN SDPA)", "attention bwd (cuDNN SDPA)")


def kernel_family(name):
    """The family of a kernel name (FAMILIES), else OTHER."""
    for family, needles in FAMILIES:
        if any(n in name for n in needles):
            return family
    return OTHER


def family_times(kernels):
    """{family: [launches, microseconds]} over kernels (dicts with name, dur)."""
    out = {}
    for k in kernels:
        entry = out.setdefault(kernel_family(k["name"]), [0, 0.0])
        entry[0] += 1
        entry[1] += k["dur"]
    return out


def busy_us(kernels):
    """(busy, span) in microseconds: the union of the kernels' intervals, and
    first start to last end. Overlapping kernels count once."""
    if not kernels:
        return 0.0, 0.0
    spans = sorted((k["ts"], k["ts"] + k["dur"]) for k in kernels)
    busy, (start, end) = 0.0, spans[0]
    for s, e in spans[1:]:
        if s > end:
            busy += end - start
            start, end = s, e
        else:
            end = max(end, e)
    busy += end - start
    return busy, spans[-1][1] - spans[0][0]


# --------------------------------------------------------------------------
# Useful FLOPs from the ops' shapes (kineto "Input Dims").

GEMM_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")
ATTENTION_FORWARD_OPS = ("aten::_cudnn_attention_forward", "aten::_scaled_dot_product_cudnn_attention",
                         "aten::_flash_attention_forward", "aten::_efficient_attention_forward")


def gemm_op_flops(op, dims):
    """2 x M x N x K (x batch) of one GEMM op from its Input Dims, or None."""
    if op in ("aten::addmm", "aten::baddbmm"):
        dims = dims[1:]  # the bias comes first
    if len(dims) < 2 or not dims[0] or not dims[1]:
        return None
    a, b = dims[0], dims[1]
    if len(a) == 2 and len(b) == 2 and a[1] == b[0]:
        return 2 * a[0] * b[1] * a[1]
    if len(a) == 3 and len(b) == 3 and a[0] == b[0] and a[2] == b[1]:
        return 2 * a[0] * a[1] * b[2] * a[2]
    return None


def attention_forward_flops(dims, causal=False):
    """4 x b x h x s_q x s_kv x d_head: QK^T and PV, each 2 s_q s_kv d_head
    per head, from the forward op's (q, k, v) dims [b, h, s, d_head]. Causal
    halves it (the count workload.py uses when the kernel skips the masked
    half)."""
    q, k = dims[0], dims[1]
    b, h, sq, d = q
    flops = 4 * b * h * sq * k[2] * d
    return flops // 2 if causal else flops


def attention_flops(forward, backward_factor):
    """Attention FLOPs of a step from its forward FLOPs: model (backward 2x
    forward: dQ, dK, dV, dP) and hardware (backward 2.5x: flash attention
    also recomputes S = QK^T), as gpuval_core.transformer_flops_per_token counts
    them. Returns {forward, backward, total}."""
    backward = forward * backward_factor
    return {"forward": forward, "backward": backward, "total": forward + backward}


def trace_flops(events, steps):
    """Per step: the useful FLOPs of the ops that launched the GEMM and the
    attention forward kernels, and how many ops each, from a kineto trace's
    events. Ops are joined to kernels by External id, as ofu correct joins
    them; an op nested in another with the same id (torch's SDPA dispatch)
    is counted once, by the first that has a formula."""
    ops = {}
    for e in events:
        if e.get("cat") == "cpu_op" and "External id" in e.get("args", {}):
            ops.setdefault(e["args"]["External id"], []).append(e)
    out = {"gemm": 0, "gemm_ops": 0, "attention_forward": 0, "attention_forward_ops": 0}
    seen = set()
    for e in events:
        if e.get("cat") != "kernel":
            continue
        family = kernel_family(e["name"])
        ext = e["args"].get("External id")
        if family not in ("GEMM (nvjet)", "attention fwd (cuDNN SDPA)") or ext in seen:
            continue
        for op in ops.get(ext, []):
            dims = op["args"].get("Input Dims", [])
            if family == "GEMM (nvjet)" and op["name"] in GEMM_OPS:
                f, key = gemm_op_flops(op["name"], dims), "gemm"
            elif family != "GEMM (nvjet)" and op["name"] in ATTENTION_FORWARD_OPS:
                f, key = attention_forward_flops(dims), "attention_forward"
            else:
                continue
            if f is not None:
                out[key] += f
                out[key + "_ops"] += 1
                seen.add(ext)
                break
    return {k: v / steps for k, v in out.items()}


# Where is_causal sits in the op's arguments (torch's native_functions.yaml).
IS_CAUSAL_ARGUMENT = {"aten::_cudnn_attention_forward": 10, "aten::_cudnn_attention_backward": 14}


def attention_causal_flags(events):
    """{op name: sorted distinct is_causal values} from the ops' Concrete
    Inputs, for the ops in IS_CAUSAL_ARGUMENT; absent ops are left out."""
    out = {}
    for e in events:
        i = IS_CAUSAL_ARGUMENT.get(e.get("name")) if e.get("cat") == "cpu_op" else None
        inputs = e.get("args", {}).get("Concrete Inputs", []) if i is not None else []
        if i is not None and i < len(inputs):
            out.setdefault(e["name"], set()).add(inputs[i])
    return {k: sorted(v) for k, v in out.items()}


def analytic_flops(config):
    """Per step, exactly as workload.train_flops counts MFU and HFU (one
    formula: gpuval_core.transformer_flops_per_token): GEMMs (6 x matmul
    parameters; seq_len 0 drops the attention term), attention model FLOPs,
    and the flash recompute that HFU adds."""
    tokens = config["batch"] * config["seq_len"]
    tf = gpuval_core.transformer_flops_per_token
    args = (config["layers"], config["d_model"], config["vocab"])
    model = tf(*args, config["seq_len"], config["causal"]) * tokens
    hardware = tf(*args, config["seq_len"], config["causal"], flash_recompute=True) * tokens
    gemm = tf(*args, 0) * tokens
    return {"model": model, "hardware": hardware, "gemm": gemm, "attention_model": model - gemm,
            "attention_hardware": hardware - gemm}


# --------------------------------------------------------------------------
# The split of the tensor-active work.


def split_tensor_work(model_flops, mfu, ofu, gemm_flops, gemm_factor, gemm_ratio, attention_hw, attention_model):
    """Per step, in FLOPs at the native rate (FLOP-equivalents):
      tensor   = model_flops x OFU / MFU (all tensor-active time of a step)
      gemm     = gemm_flops / gemm_factor x gemm_ratio (GEMMs' tensor-active
                 time: useful FLOPs, the padded tiles' work, and stage A's
                 OFU / MFU for native GEMMs)
      attention = tensor - gemm
    and attention's useful FLOPs per tensor-active cycle relative to native
    (hardware and model counts). pp: a FLOP-equivalent per step in
    percentage points of the peak, model_flops being MFU of it."""
    tensor = model_flops * ofu / mfu
    gemm = gemm_flops / gemm_factor * gemm_ratio
    attention = tensor - gemm
    pp = mfu * 100 / model_flops
    return {
        "tensor": tensor, "gemm": gemm, "attention": attention,
        "attention_rate_hw": attention_hw / attention if attention > 0 else None,
        "attention_rate_model": attention_model / attention if attention > 0 else None,
        "pp_per_flop": pp,
        "pp_gemm_padding": gemm_flops * (1 / gemm_factor - 1) * pp,
        "pp_gemm_ratio": gemm_flops / gemm_factor * (gemm_ratio - 1) * pp,
        "pp_attention": (attention - attention_hw) * pp,
    }


def forward_backward_bounds(attention, fwd_flops, bwd_flops, fwd_s, bwd_s, native_rate):
    """Bounds on the forward kernel's share W_f of attention's tensor-active
    work W (FLOP-equivalents), W_b = W - W_f, from: W_f >= fwd_flops and
    W_b >= bwd_flops (no kernel beats native per active cycle), and
    W_f <= fwd_s x rate, W_b <= bwd_s x rate (tensor-active time within the
    kernel's duration). Returns {fwd_work, bwd_work, fwd_rate, bwd_rate}
    as (low, high) pairs, or None when the constraints contradict."""
    low = max(fwd_flops, attention - bwd_s * native_rate)
    high = min(fwd_s * native_rate, attention - bwd_flops)
    if low > high:
        return None
    return {"fwd_work": (low, high), "bwd_work": (attention - high, attention - low),
            "fwd_rate": (fwd_flops / high, fwd_flops / low),
            "bwd_rate": (bwd_flops / (attention - low), bwd_flops / (attention - high))}


def stage_a_ratios(rows):
    """OFU / MFU of stage A's 8192^3 tensor loops (recording), as
    [(pass, phase, ratio)]: how far OFU reads from MFU on GEMMs alone."""
    out = []
    for r in rows:
        if r.get("kind") != "gemm" or not r["phase"].endswith("-8192") or r.get("precision") == "fp32":
            continue
        try:
            mfu, ofu = float(r["mfu_rec"]), float(r["ofu_rec"])
        except (KeyError, ValueError):
            continue
        if mfu > 0:
            out.append((r["pass"], r["phase"], ofu / mfu))
    return out


# --------------------------------------------------------------------------
# Stage K's per-kernel figures (stage-k-kernels.csv) joined to the step.

JOIN_FAMILIES = ("GEMM", "attention fwd", "attention bwd")


def join_family(name):
    """The family stage K's rates are joined by: attention fwd / bwd (any
    backend; cuDNN's bwd helpers stay apart), GEMM (nvjet, CUTLASS, xmma and
    other *gemm* kernels), else kernel_family's name."""
    family = kernel_family(name)
    if family.startswith("attention fwd"):
        return "attention fwd"
    if family.startswith("attention bwd") and "helpers" not in family:
        return "attention bwd"
    if family.startswith("GEMM") or (family == OTHER and any(w in name.lower() for w in ("gemm", "xmma", "cutlass"))):
        return "GEMM"
    return family


def step_family_flops(config):
    """Hardware FLOPs per step per join family (the HFU count): GEMMs 6 x
    matmul parameters x tokens, attention forward 4 b h s^2 d_head x layers
    (causal halves it), backward 2.5 x forward (flash recompute)."""
    b, h, s, d = config["batch"], config["heads"], config["seq_len"], config["d_model"] // config["heads"]
    fwd = attention_forward_flops([[b, h, s, d], [b, h, s, d]], config["causal"]) * config["layers"]
    return {"GEMM": analytic_flops(config)["gemm"], "attention fwd": fwd, "attention bwd": fwd * 5 // 2}


def family_rates(rows, config):
    """Per join family of stage K's training-step rows (dicts with group,
    kernel, tensor_cycles, duration_us, native_flops_per_cycle_per_sm):
    {family: {kernels, tensor_cycles, duration_us, flops, rate}}. flops is
    the family's hardware FLOPs in a step of `config` (stage K's model);
    rate = flops / (tensor-active cycles x F_p), None where either is unknown."""
    out = {}
    fpc = None
    for r in rows:
        if r.get("group") != "train":
            continue
        e = out.setdefault(join_family(r.get("kernel") or ""), {"kernels": 0, "tensor_cycles": 0.0, "duration_us": 0.0})
        e["kernels"] += 1
        e["tensor_cycles"] += r.get("tensor_cycles") or 0.0
        e["duration_us"] += r.get("duration_us") or 0.0
        fpc = fpc or r.get("native_flops_per_cycle_per_sm")
    flops = step_family_flops(config)
    for family, e in out.items():
        e["flops"] = flops.get(family)
        e["rate"] = (e["flops"] / (e["tensor_cycles"] * fpc)
                     if e["flops"] and e["tensor_cycles"] and fpc else None)
    return out


def family_gap(rates, config, mfu, ofu, factor, flops=None):
    """Splits a training step's OFU, HFU and corrected OFU by join family.
    Each family's tensor-active time in stage C's step is its hardware FLOPs
    there over its rate from stage K (FLOPs per tensor-active cycle: a
    property of the kernels, not of the layer count); a family with tensor
    cycles but no FLOPs keeps its share of stage K's cycles. The shares of
    that time split OFU (and ofu correct's factor scales each alike); HFU's
    part is the family's FLOPs x MFU / model FLOPs, as HFU itself is counted.
    Returns {family: {work, ofu, hfu, corrected, gap, corrected_gap}} in
    percentage points, or None when no family has a rate. flops: the
    step's FLOPs per join family when known otherwise (stage C's trace,
    trace_family_flops); by default the analytic count of `config`."""
    flops = flops or step_family_flops(config)
    model = analytic_flops(config)["model"]
    pp_per_flop = mfu * 100 / model
    known = {f: e for f, e in rates.items() if e.get("rate") and f in flops}
    if not known:
        return None
    work = {f: flops[f] / e["rate"] for f, e in known.items()}
    # Families without FLOPs: scaled from stage K's cycles by the ratio of the
    # known families' stage C work to their stage K cycles.
    k_cycles = sum(known[f]["tensor_cycles"] for f in known)
    scale = sum(work.values()) / k_cycles if k_cycles else 0.0
    for f, e in rates.items():
        if f not in known and e.get("tensor_cycles"):
            work[f] = e["tensor_cycles"] * scale
    total = sum(work.values())
    out = {}
    for f, w in work.items():
        o = ofu * 100 * w / total
        hw = flops.get(f, 0) * pp_per_flop if f in known else 0.0
        out[f] = {"work": w / total, "ofu": o, "hfu": hw, "corrected": o * factor, "gap": o - hw,
                  "corrected_gap": o * factor - hw}
    return out


def read_stage_c(results):
    """(config, {mfu, hfu, ofu, factor, corrected}) of a committed stage C
    training step, or raises OSError / StopIteration when it is not there."""
    train = os.path.join(results, "stage-C", "train")
    _, phases = gpuval_core.split_phases(gpuval_core.read_jsonl(os.path.join(train, "phases.jsonl")))
    phase = next(p for p in phases if p.get("phase") == "train-steady" and "config" in p)
    with open(os.path.join(results, "stage-C", "stage-c-train.csv"), encoding="utf-8") as f:
        summary = next(r for r in csv.DictReader(f) if r["phase"] == "train-steady")
    return phase["config"], {k: float(summary[k]) for k in ("mfu", "hfu", "ofu", "factor", "corrected")}


def trace_family_flops(results):
    """({family: hardware FLOPs per step}, {family: kernel microseconds per
    step}, ops) from stage C's trace at `results` (trace_flops: GEMM and
    attention forward from the ops' shapes, joined to their kernels;
    backward 2.5 x forward), or None without a readable trace."""
    path = os.path.join(results, "stage-C", "train", "trace.json.gz")
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
    except (OSError, ValueError, KeyError):
        return None
    steps = sum(1 for e in events if e.get("cat") == "user_annotation" and e["name"].startswith("Optimizer.step"))
    if not steps:
        return None
    tr = trace_flops(events, steps)
    flops = {"GEMM": tr["gemm"], "attention fwd": tr["attention_forward"],
             "attention bwd": tr["attention_forward"] * 5 / 2}
    times = {}
    for e in events:
        if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy"):
            f = join_family(e["name"])
            times[f] = times.get(f, 0.0) + e["dur"] / steps
    return flops, times, tr["gemm_ops"] + tr["attention_forward_ops"]


def family_gap_lines(rows, results, k_config=None):
    """The summary's lines: which kernel families hold the gap between
    (corrected) OFU and HFU in stage C's step at `results`, from stage K's
    rows (None: stage K's CSV is absent, and the lines say so)."""
    title = (f"training step explained (stage C: {os.path.relpath(results, gpuval_core.REPO)}; "
             "stage K's per-kernel figures)")
    if rows is None:
        return [f"{title}: stage K's CSV (stage-k-kernels.csv) is absent: no per-family figures"]
    if not any(r.get("group") == "train" for r in rows):
        return [f"{title}: stage K profiled no kernel of the training step"]
    try:
        config, c = read_stage_c(results)
    except (OSError, StopIteration, KeyError, ValueError) as e:
        return [f"{title}: stage C's training step is not readable there ({type(e).__name__}: {e})"]
    if k_config is None:
        import kernels_workload  # beside this file; its train case's configuration
        k_config = kernels_workload.train_config()
    rates = family_rates(rows, k_config)
    traced = trace_family_flops(results)
    gap = family_gap(rates, config, c["mfu"], c["ofu"], c["factor"], traced[0] if traced else None)
    ref = next((r.get("rel_throughput") for r in rows if r.get("case") == "gemm-bf16-aligned"
                and r.get("rel_throughput")), None)
    lines = [title + ":",
             f"  stage C: MFU {c['mfu'] * 100:.2f} %, HFU {c['hfu'] * 100:.2f} %, OFU {c['ofu'] * 100:.2f} %, "
             f"corrected {c['corrected'] * 100:.2f} % (factor {c['factor']:.4f}): OFU - HFU "
             f"{(c['ofu'] - c['hfu']) * 100:+.2f} pp, corrected - HFU {(c['corrected'] - c['hfu']) * 100:+.2f} pp",
             "  family FLOPs per step: " + (f"stage C's trace ({traced[2]:.0f} ops per step joined to their kernels)"
                                            if traced else "analytic (stage C's trace not readable)"),
             f"  {'family':<30} {'kernels':>7} {'rate':>6} {'rate/al':>7} {'time %':>6} {'trace ms':>8} {'OFU pp':>7} "
             f"{'HFU pp':>7} {'gap pp':>7} {'corr gap':>8}"]
    if gap is None:
        lines.append("  no family with both FLOPs and tensor-active cycles: no split")
        return lines
    for f, g in sorted(gap.items(), key=lambda x: -abs(x[1]["corrected_gap"])):
        e = rates.get(f, {})
        rate = e.get("rate")
        ms = traced[1].get(f) / 1e3 if traced and f in traced[1] else None
        lines.append(f"  {f:<30} {e.get('kernels', 0):>7} {'-' if rate is None else format(rate, '6.3f'):>6} "
                     f"{'-' if rate is None or not ref else format(rate / ref, '7.3f'):>7} {g['work'] * 100:6.1f} "
                     f"{'-' if ms is None else format(ms, '8.2f'):>8} {g['ofu']:7.2f} {g['hfu']:7.2f} "
                     f"{g['gap']:+7.2f} {g['corrected_gap']:+8.2f}")
    held = sorted(gap.items(), key=lambda x: -x[1]["corrected_gap"])
    lines.append("  corrected OFU - HFU is held by: " + ", ".join(
        f"{f} {g['corrected_gap']:+.2f} pp" for f, g in held if abs(g["corrected_gap"]) >= 0.05) +
        f" (sum {sum(g['corrected_gap'] for g in gap.values()):+.2f} pp; time shares from stage K's rates, "
        f"measured OFU split by them)")
    lines.append("  rate: hardware FLOPs per tensor-active cycle / F_p in stage K's step "
                 f"({k_config['layers']} layers); rate/al: over the aligned bf16 GEMM's; time %: of the step's "
                 "tensor-active time; trace ms: kernel time per step in stage C's trace")
    return lines


# --------------------------------------------------------------------------
# Reading the committed files and printing.


def load(results):
    train = os.path.join(results, "stage-C", "train")
    with gzip.open(os.path.join(train, "trace.json.gz"), "rt", encoding="utf-8") as f:
        trace = json.load(f)
    meta, phases = gpuval_core.split_phases(gpuval_core.read_jsonl(os.path.join(train, "phases.jsonl")))
    phase = next(p for p in phases if p.get("phase") == "train-steady")
    with open(os.path.join(results, "stage-C", "stage-c-train.csv"), encoding="utf-8") as f:
        summary = next(r for r in csv.DictReader(f) if r["phase"] == "train-steady")
    with open(os.path.join(results, "stage-A", "stage-a-phases.csv"), encoding="utf-8") as f:
        stage_a = list(csv.DictReader(f))
    with open(os.path.join(train, "rec.om"), encoding="utf-8") as f:
        rec_text = f.read()
    return {"trace": trace, "phase": phase, "meta": meta or {}, "summary": summary, "stage_a": stage_a,
            "rec": rec_text}


def mean_over_phase(series, name, phase, window_s):
    """Mean of one recorded gauge over the windows wholly inside the phase
    (the windows are equal, so the plain mean is the time-weighted one)."""
    values = [v for (n, _), pts in series.items() if n == name for t, v in pts
              if t - window_s >= phase["t_start"] - 1e-6 and t <= phase["t_end"] + 1e-6]
    return sum(values) / len(values) if values else None


def explain(results):
    d = load(results)
    trace, phase, summary = d["trace"], d["phase"], d["summary"]
    events = trace["traceEvents"]
    specs = gpuval_core.load_specs()
    sku = gpuval_core.lookup_sku(specs, d["meta"].get("device_name", ""))
    if sku is None:
        raise SystemExit(f"explain_train: no SKU in data/gpu_specs.json for {d['meta'].get('device_name')!r}")
    peak = gpuval_core.peak_tflops(sku, "bf16") * 1e12
    fspec = gpuval_core.f_spec_mhz(sku)
    karch = gpuval_core.k_arch(specs, sku)
    lines = []
    p = lines.append

    # 1. The trace.
    kernels = [e for e in events if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")]
    steps = sum(1 for e in events if e.get("cat") == "user_annotation" and e["name"].startswith("Optimizer.step"))
    fams = family_times(kernels)
    total_us = sum(v[1] for v in fams.values())
    busy, span = busy_us(kernels)
    config = phase["config"]
    ana = analytic_flops(config)
    tr = trace_flops(events, steps)
    attn_fwd = tr["attention_forward"]
    attn_hw = attention_flops(attn_fwd, 2.5)
    attn_model = attention_flops(attn_fwd, 2.0)
    per_step_s = phase["per_iteration_us"] / 1e6
    p(f"Training step explained: {os.path.relpath(results, gpuval_core.REPO)} (scripts/gpu-validate/explain_train.py)")
    p(f"model: {json.dumps(config)}; {phase['steps']} steps of {per_step_s * 1e3:.2f} ms in the timed loop")
    p("")
    p(f"1. Trace ({steps} profiled steps, stage-C/train/trace.json.gz)")
    p(f"   kernels and memsets {len(kernels)}, time {total_us / 1e3:.2f} ms, span {span / 1e3:.2f} ms, "
      f"GPU busy {busy / span * 100:.1f} % of the span; per step {total_us / steps / 1e3:.2f} ms of kernels "
      f"(timed loop: {per_step_s * 1e3:.2f} ms per step)")
    useful = {"GEMM (nvjet)": tr["gemm"], "attention fwd (cuDNN SDPA)": attn_fwd,
              "attention bwd (cuDNN SDPA)": attn_hw["backward"]}
    p(f"   {'family':32s} {'launches':>8s} {'ms/step':>8s} {'share':>6s} {'TFLOP/step':>10s} {'TFLOP/s':>8s}")
    for fam, (n, us) in sorted(fams.items(), key=lambda x: -x[1][1]):
        f = useful.get(fam)
        rate = f"{f / (us / steps / 1e6) / 1e12:8.0f}" if f else f"{'':8s}"
        fl = f"{f / 1e12:10.3f}" if f else f"{'':10s}"
        p(f"   {fam:32s} {n / steps:8.0f} {us / steps / 1e3:8.2f} {us / total_us * 100:5.1f}% {fl} {rate}")
    p("   (attention bwd FLOPs: the hardware count, 2.5 x forward; its model count is 2 x)")
    p(f"   GEMM FLOPs from the ops' shapes {tr['gemm']:.6e} per step ({tr['gemm_ops']:.0f} ops), "
      f"analytic 6 x matmul params x tokens {ana['gemm']:.6e}: {'equal' if tr['gemm'] == ana['gemm'] else 'DIFFER'}")
    p(f"   attention forward from the ops' shapes {attn_fwd:.6e} per step ({tr['attention_forward_ops']:.0f} "
      f"ops, causal={config['causal']}); analytic: model "
      f"{ana['attention_model']:.6e} = 3 x fwd {'yes' if ana['attention_model'] == 3 * attn_fwd else 'NO'}, hardware "
      f"{ana['attention_hardware']:.6e} = 3.5 x fwd {'yes' if ana['attention_hardware'] == 3.5 * attn_fwd else 'NO'}")
    causal = attention_causal_flags(events)
    if causal:
        p(f"   is_causal as the attention ops were called: {causal}")
    p("")

    # 2. The recording over the phase.
    windows = gpuval_core.recording_windows(d["rec"], None)
    j = gpuval_core.phase_ofu(windows, phase, fspec, karch)
    series = gpuval_core.parse_openmetrics(d["rec"])
    mfu, hfu, ofu = float(summary["mfu"]), float(summary["hfu"]), float(summary["ofu"])
    factor = float(summary["factor"])
    corrected = float(summary["corrected"])
    window_s = j["seconds"] / j["windows"]
    tensor = mean_over_phase(series, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", phase, window_s)
    p("2. Recording over the phase (stage-C/train/rec.om; figures from stage-C/stage-c-train.csv)")
    p(f"   windows {j['windows']} of {window_s:.2f} s; tensor active {tensor * 100:.2f} %, "
      f"SM clock {j['clock_mhz']:.1f} MHz (f_spec {fspec:.1f}); OFU recomputed {j['ofu'] * 100:.2f} % "
      f"(csv {ofu * 100:.2f} %)")
    for name, label in (("DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", "HMMA active"),
                        ("DCGM_FI_PROF_SM_ACTIVE", "SM active"), ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "GR engine active"),
                        ("DCGM_FI_PROF_PIPE_FP32_ACTIVE", "FP32 pipe active"),
                        ("DCGM_FI_PROF_DRAM_ACTIVE", "DRAM active"), ("DCGM_FI_DEV_POWER_USAGE", "power W")):
        v = mean_over_phase(series, name, phase, window_s)
        if v is not None:
            p(f"   {label:18s} {v * (1 if 'W' in label else 100):8.2f}{'' if 'W' in label else ' %'}")
    p(f"   MFU {mfu * 100:.2f} %, HFU {hfu * 100:.2f} %, OFU {ofu * 100:.2f} %, factor {factor:.4f}, corrected "
      f"{corrected * 100:.2f} %: OFU - HFU {100 * (ofu - hfu):+.2f} pp, corrected - HFU {100 * (corrected - hfu):+.2f} pp")
    p("")

    # 3. The split.
    ratios = stage_a_ratios(d["stage_a"])
    bf16_1s = next((r for ps, ph, r in ratios if ps == "1s" and ph == "bf16-8192"), None)
    cases = [("GEMMs at native (OFU = MFU)", 1.0)]
    if ratios:
        lo, hi = min(ratios, key=lambda x: x[2]), max(ratios, key=lambda x: x[2])
        cases.append((f"stage A low  ({lo[1]} {lo[0]})", lo[2]))
        if bf16_1s is not None:
            cases.append(("stage A bf16-8192 1s", bf16_1s))
        cases.append((f"stage A high ({hi[1]} {hi[0]})", hi[2]))
    p("3. Tensor-active work per step, in TFLOP at the native rate (tensor = model FLOPs x OFU / MFU)")
    p(f"   stage A OFU / MFU on 8192^3 loops: " + ", ".join(f"{ph} {ps} {r:.4f}" for ps, ph, r in ratios))
    p(f"   {'GEMMs read as':36s} {'tensor':>7s} {'GEMM':>7s} {'attn':>7s} {'attn hw':>7s} {'hw/act':>6s} "
      f"{'mdl/act':>7s} | {'pp pad':>6s} {'pp GEMM':>7s} {'pp attn':>7s}")
    base = None
    for label, r in cases:
        s = split_tensor_work(ana["model"], mfu, ofu, tr["gemm"], factor, r, attn_hw["total"], attn_model["total"])
        base = base or s
        p(f"   {label:36s} {s['tensor'] / 1e12:7.3f} {s['gemm'] / 1e12:7.3f} {s['attention'] / 1e12:7.3f} "
          f"{attn_hw['total'] / 1e12:7.3f} {s['attention_rate_hw']:6.3f} {s['attention_rate_model']:7.3f} | "
          f"{s['pp_gemm_padding']:+6.2f} {s['pp_gemm_ratio']:+7.2f} {s['pp_attention']:+7.2f}")
    p("   hw/act, mdl/act: attention's hardware / model FLOPs per tensor-active cycle, relative to native;")
    p("   pp: each part of OFU - HFU (GEMM tile padding, GEMM OFU/MFU above 1, attention above its hardware FLOPs)")
    pp_fac = ofu * (1 - factor) * 100
    p(f"   ofu correct's factor scales all tensor time by {factor:.4f} (-{pp_fac:.2f} pp), attention's too; the GEMMs' "
      f"own padding is {base['pp_gemm_padding']:.2f} pp")
    unit = attention_forward_flops([[config['batch'], config['heads'], config['seq_len'],
                                     config['d_model'] // config['heads']]] * 2) // 2
    unit *= config["layers"]
    p(f"   one attention matmul (2 b h s^2 d_head x layers) = {unit / 1e12:.4f} TFLOP per step; counted: fwd 2, "
      f"bwd 5 (HFU) = 7; at native the tensor-active remainder would be {base['attention'] / unit:.2f} of them")
    p("")

    # 4. Forward / backward bounds.
    fwd_s = fams.get("attention fwd (cuDNN SDPA)", [0, 0])[1] / steps / 1e6
    bwd_s = fams.get("attention bwd (cuDNN SDPA)", [0, 0])[1] / steps / 1e6
    rate = peak * j["clock_mhz"] / fspec * karch
    p(f"4. Forward / backward (kernel time per step from the trace: fwd {fwd_s * 1e3:.2f} ms, bwd {bwd_s * 1e3:.2f} ms; "
      f"native rate at {j['clock_mhz']:.0f} MHz {rate / 1e12:.1f} TFLOP/s)")
    for label, r in cases:
        s = split_tensor_work(ana["model"], mfu, ofu, tr["gemm"], factor, r, attn_hw["total"], attn_model["total"])
        b = forward_backward_bounds(s["attention"], attn_hw["forward"], attn_hw["backward"], fwd_s, bwd_s, rate)
        if b is None:
            p(f"   {label:36s} constraints contradict")
            continue
        pp = s["pp_per_flop"]
        p(f"   {label:36s} fwd hw/act {b['fwd_rate'][0]:.3f}-{b['fwd_rate'][1]:.3f} "
          f"(+{(b['fwd_work'][0] - attn_hw['forward']) * pp:.2f}..+{(b['fwd_work'][1] - attn_hw['forward']) * pp:.2f} pp), "
          f"bwd hw/act {b['bwd_rate'][0]:.3f}-{b['bwd_rate'][1]:.3f} "
          f"(+{(b['bwd_work'][0] - attn_hw['backward']) * pp:.2f}..+{(b['bwd_work'][1] - attn_hw['backward']) * pp:.2f} pp)")
    # The loop's steps were longer than the profiled ones, with the GPU as
    # busy (GR engine active above): if every kernel stretched alike, the
    # attention kernels had this much more time to be tensor-active in.
    stretch = per_step_s / (total_us / steps / 1e6)
    s = split_tensor_work(ana["model"], mfu, ofu, tr["gemm"], factor, 1.0, attn_hw["total"], attn_model["total"])
    b = forward_backward_bounds(s["attention"], attn_hw["forward"], attn_hw["backward"], fwd_s * stretch,
                                bwd_s * stretch, rate)
    if b is not None:
        p(f"   {'GEMMs native, kernels x ' + format(stretch, '.3f'):36s} fwd hw/act {b['fwd_rate'][0]:.3f}-"
          f"{b['fwd_rate'][1]:.3f} (+{(b['fwd_work'][0] - attn_hw['forward']) * s['pp_per_flop']:.2f}.."
          f"+{(b['fwd_work'][1] - attn_hw['forward']) * s['pp_per_flop']:.2f} pp), bwd hw/act {b['bwd_rate'][0]:.3f}-"
          f"{b['bwd_rate'][1]:.3f} (+{(b['bwd_work'][0] - attn_hw['backward']) * s['pp_per_flop']:.2f}.."
          f"+{(b['bwd_work'][1] - attn_hw['backward']) * s['pp_per_flop']:.2f} pp)")
        p(f"   (x {stretch:.3f}: the loop's {per_step_s * 1e3:.2f} ms per step over the trace's "
          f"{total_us / steps / 1e3:.2f} ms of kernels per step)")
    gemm_s = fams.get("GEMM (nvjet)", [0, 0])[1] / steps / 1e6
    p(f"   check: GEMMs' tensor-active time {base['gemm'] / rate * 1e3:.2f} ms of {gemm_s * 1e3:.2f} ms of GEMM kernels "
      f"({base['gemm'] / rate / gemm_s * 100:.0f} %); attention's {base['attention'] / rate * 1e3:.2f} ms of "
      f"{(fwd_s + bwd_s) * 1e3:.2f} ms ({base['attention'] / rate / (fwd_s + bwd_s) * 100:.0f} %)")
    return "\n".join(lines) + "\n"


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    kernels = None
    if "--kernels" in argv:  # stage K's stage-k-kernels.csv: adds the per-family split
        i = argv.index("--kernels")
        kernels = argv[i + 1]
        del argv[i:i + 2]
    results = argv[0] if argv else DEFAULT_RESULTS
    sys.stdout.write(explain(results))
    if kernels is not None:
        rows = gpuval_core.read_kernel_csv(kernels) if os.path.exists(kernels) else None
        sys.stdout.write("\n5. " + "\n".join(family_gap_lines(rows, results)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
