#!/usr/bin/env python3
"""The PyTorch workloads of the GPU validation (docs/gpu-validation.md).

  workload.py phases --out FILE         Stage A: fixed loops whose FLOPs are
        known exactly (bf16, fp16, tf32 and fp8 _scaled_mm at 8192^3, a
        ragged bf16 4097^3, a memory-bound copy, an idle phase, GEMM bursts
        after idle gaps, GEMMs alternating with copies)
  workload.py ragged --out DIR          Stage C: bf16 GEMMs over the six
        orders of (4097, 1000, 8191), each a timed loop then a profiler
        trace (record_shapes=True) of a few iterations
  workload.py train --out DIR           Stage C: a small transformer's
        training step in plain PyTorch on random tokens, its MFU counted
        analytically, then a profiler trace of two steps

Every phase is one JSON line, written as soon as it ends: {"phase", "kind",
"precision", "m", "n", "k", "iterations", "flops", "t_start", "t_end"
(wall-clock seconds, the same clock as ofu record's timestamps),
"elapsed_s" (CUDA events), "checkpoints": [[wall time, cumulative FLOPs],
...], "sm_clock": the SMs' own clock over the timed loop} or {"phase",
"error"}; a first line {"meta": {...}} names the device and says whether
the clock probe ran ("clock_probe").

The SMs' own clock: NVML's SM clock is not the clock the SMs run under
tensor load (docs/metrics.md#the-sm-clock), so every timed loop is
bracketed by ofu's clock probe (gpu/clock_probe_lib.h, loaded from
$GPUVAL_CLOCK_PROBE with ctypes) launched on torch's own stream: "sm_clock"
is {"median_mhz", "min_mhz", "max_mhz", "sms", "span_s"} over the SMs, or
{"absent": why} when the library is missing or a launch failed. The phase
runs either way.
A phase that fails is recorded and the next one runs.

torch is imported inside the run functions only: the plan and the FLOP
arithmetic here are tested without it (tests/gpu_validate).
"""

import argparse
import gzip
import itertools
import json
import os
import shutil
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpuval_core  # noqa: E402  (the FLOP arithmetic, shared with the analysis)

CHECKPOINT_SPACING_S = 0.05  # FLOP checkpoints this far apart within a loop
WARM_SECONDS = 1.0           # steady loop before the timed one, so clocks settle

STAGE_A_PHASES = [
    {"phase": "bf16-8192", "kind": "gemm", "precision": "bf16", "m": 8192, "n": 8192, "k": 8192},
    {"phase": "fp16-8192", "kind": "gemm", "precision": "fp16", "m": 8192, "n": 8192, "k": 8192},
    {"phase": "tf32-8192", "kind": "gemm", "precision": "tf32", "m": 8192, "n": 8192, "k": 8192},
    {"phase": "fp8-8192", "kind": "gemm", "precision": "fp8", "m": 8192, "n": 8192, "k": 8192},
    {"phase": "bf16-4097", "kind": "gemm", "precision": "bf16", "m": 4097, "n": 4097, "k": 4097},
    {"phase": "copy", "kind": "copy", "bytes": 2 << 30},
    {"phase": "idle", "kind": "idle"},
    # The states where NVML's clock read high on 2026-11-27 (clock-truth README): GEMM bursts
    # of about 7 ms (four bf16 8192^3) after 12 ms idle gaps, and four GEMMs alternating with
    # six 2 GiB copies. MFU is over the whole loop, gaps and copies included.
    {"phase": "duty-8192", "kind": "duty", "precision": "bf16", "m": 8192, "n": 8192, "k": 8192, "gemms": 4,
     "idle_ms": 12},
    {"phase": "mixed", "kind": "mixed", "precision": "bf16", "m": 8192, "n": 8192, "k": 8192, "gemms": 4,
     "copies": 6, "bytes": 2 << 30},
]

# FP32 matmuls on the CUDA cores (allow_tf32 off): the case OFU cannot see.
# Its true FLOPs check the non-tensor bound of `ofu report` (docs/metrics.md,
# "Non-tensor work"): the bound must be at least the FLOPs done.
STAGE_A_CUDA_CORE_PHASES = [
    {"phase": "fp32-simt-8192", "kind": "gemm", "precision": "fp32", "m": 8192, "n": 8192, "k": 8192},
]

RAGGED_SIZES = (4097, 1000, 8191)


def ragged_phases():
    """The six orders of RAGGED_SIZES as torch (M, N, K): M != N in each, so
    that padding the kernel's M and N differently tells the orientations apart."""
    out = []
    for m, n, k in itertools.permutations(RAGGED_SIZES):
        out.append({"phase": f"bf16-{m}x{n}x{k}", "kind": "gemm", "precision": "bf16", "m": m, "n": n, "k": k})
    return out


def iterations_for(seconds, per_iteration_s):
    """Iterations to fill `seconds`, at least 1."""
    return max(1, int(round(seconds / max(per_iteration_s, 1e-7))))


def checkpoint_every(per_iteration_s, spacing_s=CHECKPOINT_SPACING_S):
    return max(1, int(round(spacing_s / max(per_iteration_s, 1e-7))))


# The training step's model: small enough to build in seconds, large enough
# that GEMMs dominate. Non-causal attention, so that the analytic count
# (12 x layers x d x T per token) is what the attention kernel does.
TRAIN_CONFIG = {"layers": 8, "d_model": 2048, "heads": 16, "vocab": 32768, "seq_len": 2048, "batch": 8,
                "causal": False}


def train_flops(config):
    """(model FLOPs, hardware FLOPs) per step, analytically
    (gpuval_core.transformer_flops_per_token x tokens)."""
    tokens = config["batch"] * config["seq_len"]
    args = (config["layers"], config["d_model"], config["vocab"], config["seq_len"], config["causal"])
    return (gpuval_core.transformer_flops_per_token(*args) * tokens,
            gpuval_core.transformer_flops_per_token(*args, flash_recompute=True) * tokens)


class Log:
    """JSON lines, flushed one by one so that a killed run keeps its phases."""

    def __init__(self, path):
        self.file = open(path, "a", encoding="utf-8")

    def write(self, record):
        self.file.write(json.dumps(record) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())


class ClockProbe:
    """ofu's clock probe through libofu-clock-probe.so (gpu/clock_probe_lib.h):
    mark() enqueues one probe launch on torch's current stream into its own
    slot of a device buffer; span(a, b) reads both slots back (after the
    stream has passed them) and gives the SMs' clock between them. Build it
    with load(); it is None-safe: ClockProbe.load returns (None, why) when
    the library cannot be used, and the phases run without it."""

    VERSION = 1

    def __init__(self, lib, torch, sm_count, slots=2):
        self.lib, self.torch = lib, torch
        self.blocks = 2 * sm_count  # more blocks than SMs, so that every SM runs one
        self.buffer = torch.zeros((slots, self.blocks, 3), dtype=torch.int64, device="cuda")
        self.next_slot = 0

    @staticmethod
    def open_library(path):
        """(ctypes library, None) or (None, why)."""
        import ctypes
        if not path:
            return None, "GPUVAL_CLOCK_PROBE is not set"
        if not os.path.exists(path):
            return None, f"{path} does not exist (scripts/gpu-validate/build.sh builds it where nvcc is)"
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            return None, f"{path}: {e}"
        lib.ofu_clock_probe_version.restype = ctypes.c_int
        version = lib.ofu_clock_probe_version()
        if version != ClockProbe.VERSION:
            return None, f"{path}: interface version {version}, this script knows {ClockProbe.VERSION}"
        lib.ofu_clock_probe_launch.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
        lib.ofu_clock_probe_launch.restype = ctypes.c_int
        lib.ofu_clock_probe_span.argtypes = [ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64),
                                             ctypes.c_int, ctypes.POINTER(ctypes.c_double), ctypes.c_char_p,
                                             ctypes.c_int]
        lib.ofu_clock_probe_span.restype = ctypes.c_int
        return lib, None

    @staticmethod
    def load(torch, path=None):
        lib, why = ClockProbe.open_library(path if path is not None else os.environ.get("GPUVAL_CLOCK_PROBE"))
        if lib is None:
            return None, why
        try:
            return ClockProbe(lib, torch, torch.cuda.get_device_properties(0).multi_processor_count), None
        except Exception as e:  # no device memory, no CUDA: the phases still run
            return None, f"{type(e).__name__}: {e}"

    def mark(self):
        """Enqueues a launch; returns its slot, or raises RuntimeError."""
        slot = self.next_slot % self.buffer.shape[0]
        self.next_slot += 1
        stream = self.torch.cuda.current_stream().cuda_stream
        rc = self.lib.ofu_clock_probe_launch(self.buffer[slot].data_ptr(), self.blocks, stream)
        if rc != 0:
            raise RuntimeError(f"clock probe launch failed: cudaError {rc}")
        return slot

    def span(self, a, b):
        """{"median_mhz", "min_mhz", "max_mhz", "sms", "span_s"} between the
        launches in slots a and b, or {"absent": why}. Synchronizes."""
        self.torch.cuda.synchronize()
        host = self.buffer.cpu().tolist()
        return span_of_records(self.lib, host[a], host[b])


def span_of_records(lib, before, after):
    """The library's span of two launches' records ([[sm, cycles, ns], ...]
    each, host lists of equal length)."""
    import ctypes
    blocks = len(before)
    flat = ctypes.c_int64 * (3 * blocks)
    out = (ctypes.c_double * 6)()
    why = ctypes.create_string_buffer(256)
    rc = lib.ofu_clock_probe_span(flat(*[v for r in before for v in r]), flat(*[v for r in after for v in r]),
                                  blocks, out, why, len(why))
    if rc != 0:
        return {"absent": why.value.decode(errors="replace")}
    return {"median_mhz": out[3], "min_mhz": out[4], "max_mhz": out[5], "sms": int(out[2]),
            "span_s": (out[1] - out[0]) / 1e9}


def meta(torch, clock_probe="not used"):
    props = torch.cuda.get_device_properties(0)
    return {"meta": {"device_name": torch.cuda.get_device_name(0), "sm_count": props.multi_processor_count,
                     "torch": torch.__version__, "cuda": torch.version.cuda,
                     "cublas_tf32": torch.backends.cuda.matmul.allow_tf32, "time": time.time(),
                     "clock_probe": clock_probe}}


def gemm_operands(torch, phase):
    """The operands and the call of one GEMM phase, on random data."""
    m, n, k, precision = phase["m"], phase["n"], phase["k"], phase["precision"]
    dev = "cuda"
    if precision in ("bf16", "fp16", "tf32", "fp32"):
        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32,
                 "fp32": torch.float32}[precision]
        a = torch.randn(m, k, device=dev, dtype=dtype)
        b = torch.randn(k, n, device=dev, dtype=dtype)
        return lambda: torch.mm(a, b)
    if precision == "fp8":
        a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm wants
        one = torch.tensor(1.0, device=dev)
        return lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16)
    raise ValueError(f"unknown precision {precision}")


def timed_loop(torch, fn, seconds, work_per_iteration, probe=None, progress=None):
    """Calibrates, warms for WARM_SECONDS, then runs a fixed number of
    iterations filling `seconds`, with CUDA events every ~50 ms. Returns the
    phase's timing fields; FLOPs (or bytes) are iterations x work exactly.
    With a ClockProbe, a probe launch just before and just after the timed
    iterations gives "sm_clock" (without one: {"absent": ...}).
    progress(step, steps, iterations, seconds), when given, is called for
    each stretch between events as soon as its end event has completed
    (asked with Event.query(), which does not wait for the GPU), and for
    the rest after the loop: what a training framework prints as it goes."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        fn()
    stop.record()
    stop.synchronize()
    per_iteration = start.elapsed_time(stop) / 1e3 / 10
    for _ in range(iterations_for(WARM_SECONDS, per_iteration)):
        fn()
    n = iterations_for(seconds, per_iteration)
    every = checkpoint_every(per_iteration)
    marks = [torch.cuda.Event(enable_timing=True) for _ in range(n // every)]
    torch.cuda.synchronize()
    slots, probe_error = None, None
    t_start = time.time()
    if probe is not None:
        try:
            slots = [probe.mark()]
        except Exception as e:
            probe_error = f"{type(e).__name__}: {e}"
    start.record()
    j = reported = 0

    def report_completed(wait):
        nonlocal reported
        while progress is not None and reported < j and (wait or marks[reported].query()):
            begin = start if reported == 0 else marks[reported - 1]
            progress((reported + 1) * every, n, every, begin.elapsed_time(marks[reported]) / 1e3)
            reported += 1

    for i in range(n):
        fn()
        if (i + 1) % every == 0 and j < len(marks):
            marks[j].record()
            j += 1
            report_completed(False)
    stop.record()
    if slots:
        try:
            slots.append(probe.mark())
        except Exception as e:
            probe_error = f"{type(e).__name__}: {e}"
    stop.synchronize()
    t_end = time.time()
    report_completed(True)
    if probe is None:
        sm_clock = {"absent": "no clock probe"}
    elif probe_error or len(slots or []) != 2:
        sm_clock = {"absent": probe_error or "a probe launch failed"}
    else:
        try:
            sm_clock = probe.span(*slots)
        except Exception as e:
            sm_clock = {"absent": f"{type(e).__name__}: {e}"}
    elapsed = start.elapsed_time(stop) / 1e3
    checkpoints = [[t_start, 0]]
    for idx, mark in enumerate(marks):
        checkpoints.append([t_start + start.elapsed_time(mark) / 1e3, (idx + 1) * every * work_per_iteration])
    checkpoints.append([t_start + elapsed, n * work_per_iteration])
    return {"iterations": n, "t_start": t_start, "t_end": t_end, "elapsed_s": elapsed,
            "per_iteration_us": elapsed / n * 1e6, "checkpoints": checkpoints, "sm_clock": sm_clock}


def flops_record(torch, phase, fn, seconds, work, probe):
    """The phase's record for a timed loop of `fn`, each call `work` FLOPs."""
    record = dict(phase)
    record.update(timed_loop(torch, fn, seconds, work, probe))
    record["flops"] = record["iterations"] * work
    record["achieved_tflops"] = record["flops"] / record["elapsed_s"] / 1e12
    return record


def run_gemm(torch, phase, seconds, probe=None):
    fn = gemm_operands(torch, phase)
    return flops_record(torch, phase, fn, seconds, gpuval_core.gemm_flops(phase["m"], phase["n"], phase["k"]), probe), fn


def run_bursts(torch, phase, seconds, probe=None):
    """duty: `gemms` GEMMs, then the host waits for them and idles `idle_ms`;
    mixed: `gemms` GEMMs, then `copies` copies of `bytes`. One iteration is
    one such round; its work is the GEMMs' FLOPs exactly."""
    gemm = gemm_operands(torch, phase)
    if phase["kind"] == "mixed":
        src = torch.randn(phase["bytes"] // 2, device="cuda", dtype=torch.bfloat16)
        dst = torch.empty_like(src)

    def one_round():
        for _ in range(phase["gemms"]):
            gemm()
        if phase["kind"] == "duty":
            torch.cuda.synchronize()
            time.sleep(phase["idle_ms"] / 1e3)
        else:
            for _ in range(phase["copies"]):
                dst.copy_(src)

    work = phase["gemms"] * gpuval_core.gemm_flops(phase["m"], phase["n"], phase["k"])
    return flops_record(torch, phase, one_round, seconds, work, probe)


def run_copy(torch, phase, seconds, probe=None):
    elements = phase["bytes"] // 2
    src = torch.randn(elements, device="cuda", dtype=torch.bfloat16)
    dst = torch.empty_like(src)
    moved = 2 * phase["bytes"]  # read and written
    record = dict(phase)
    record.update(timed_loop(torch, lambda: dst.copy_(src), seconds, 0, probe))
    record["flops"] = 0
    record["bytes_moved"] = record["iterations"] * moved
    record["gb_per_s"] = record["bytes_moved"] / record["elapsed_s"] / 1e9
    return record


def run_idle(phase, seconds):
    record = dict(phase)
    record["t_start"] = time.time()
    time.sleep(seconds)
    record["t_end"] = time.time()
    record["elapsed_s"] = record["t_end"] - record["t_start"]
    record["flops"] = 0
    return record


def failed(phase, error):
    record = {"phase": phase["phase"], "kind": phase.get("kind"), "precision": phase.get("precision"),
              "m": phase.get("m"), "n": phase.get("n"), "k": phase.get("k")}
    record["error"] = f"{type(error).__name__}: {error}".strip()[:500]
    record["traceback"] = traceback.format_exc()[-2000:]
    return record


def release(torch):
    import gc
    gc.collect()
    torch.cuda.empty_cache()


def profile_trace(torch, fn, iterations, path):
    """A PyTorch profiler trace (record_shapes=True) of `iterations` calls, gzipped."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        for _ in range(iterations):
            fn()
        torch.cuda.synchronize()
    plain = path[:-3] if path.endswith(".gz") else path
    prof.export_chrome_trace(plain)
    if plain != path:
        with open(plain, "rb") as src, gzip.open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.remove(plain)


def cmd_phases(args):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = True  # tf32 phase; the others are 16/8-bit
    log = Log(args.out)
    probe, why = ClockProbe.load(torch)
    log.write(meta(torch, "ran" if probe else f"absent: {why}"))
    only = set(args.only.split(",")) if args.only else None
    for phase in STAGE_A_PHASES + STAGE_A_CUDA_CORE_PHASES:
        if only and phase["phase"] not in only:
            continue
        print(f"workload: {phase['phase']}", file=sys.stderr, flush=True)
        # fp32 runs on the CUDA cores only with TF32 off (the field's most
        # common efficiency bug); every other phase keeps it on.
        torch.backends.cuda.matmul.allow_tf32 = phase.get("precision") != "fp32"
        try:
            if phase["kind"] == "gemm":
                record, _ = run_gemm(torch, phase, args.seconds, probe)
                record["allow_tf32"] = torch.backends.cuda.matmul.allow_tf32
            elif phase["kind"] == "copy":
                record = run_copy(torch, phase, args.seconds, probe)
            elif phase["kind"] in ("duty", "mixed"):
                record = run_bursts(torch, phase, args.seconds, probe)
            else:
                record = run_idle(phase, args.idle_seconds)
        except Exception as e:  # recorded; the next phase runs
            record = failed(phase, e)
        log.write(record)
        release(torch)
    return 0


def cmd_ragged(args):
    import torch
    os.makedirs(args.out, exist_ok=True)
    log = Log(os.path.join(args.out, "phases.jsonl"))
    probe, why = ClockProbe.load(torch)
    log.write(meta(torch, "ran" if probe else f"absent: {why}"))
    for phase in ragged_phases():
        print(f"workload: {phase['phase']}", file=sys.stderr, flush=True)
        try:
            record, fn = run_gemm(torch, phase, args.seconds, probe)
            log.write(record)
        except Exception as e:
            log.write(failed(phase, e))
            release(torch)
            continue
        try:
            profile_trace(torch, fn, args.trace_iterations, os.path.join(args.out, f"trace-{phase['phase']}.json.gz"))
        except Exception as e:
            log.write({"phase": phase["phase"] + "-trace", "kind": "trace", "error": f"{type(e).__name__}: {e}"})
        release(torch)
    return 0


def build_model(torch, config):
    nn, F = torch.nn, torch.nn.functional
    d, h = config["d_model"], config["heads"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d, bias=False)
            self.proj = nn.Linear(d, d, bias=False)
            self.fc1 = nn.Linear(d, 4 * d, bias=False)
            self.fc2 = nn.Linear(4 * d, d, bias=False)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (z.view(b, t, h, d // h).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=config["causal"])
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(config["vocab"], d)
            self.blocks = nn.ModuleList(Block() for _ in range(config["layers"]))
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, config["vocab"], bias=False)

        def forward(self, tokens, targets):
            x = self.embed(tokens)
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.ln(x))
            return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))

    return Model().cuda()


def train_step(torch, config):
    """One training step of the model on random tokens (bf16 autocast, fused
    AdamW), as a function; stage K (kernels_workload.py) profiles the same."""
    model = build_model(torch, config)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    tokens = torch.randint(config["vocab"], (config["batch"], config["seq_len"]), device="cuda")
    targets = torch.randint(config["vocab"], (config["batch"], config["seq_len"]), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(tokens, targets)
        loss.backward()
        opt.step()
    step.model = model  # cmd_train counts its parameters
    return step


def throughput_line(step, steps, iterations, seconds, flops_per_iteration):
    """Megatron-LM's training_log line, whose model TFLOP/s per GPU ofu's
    training-log table reads (data/training_log_patterns.json): the exact
    model FLOPs of `iterations` steps over the `seconds` they took."""
    tflops = iterations * flops_per_iteration / seconds / 1e12
    return (f" iteration {step:>8}/{steps:>8} | elapsed time per iteration (ms): {seconds / iterations * 1e3:.1f} | "
            f"throughput per GPU (TFLOP/s/GPU): {tflops:.1f} |")


def cmd_train(args):
    import torch
    os.makedirs(args.out, exist_ok=True)
    log = Log(os.path.join(args.out, "phases.jsonl"))
    probe, why = ClockProbe.load(torch)
    log.write(meta(torch, "ran" if probe else f"absent: {why}"))
    config = dict(TRAIN_CONFIG)
    phase = {"phase": "train-steady", "kind": "train", "precision": "bf16", "config": config}
    try:
        step = train_step(torch, config)
        model_flops, hardware_flops = train_flops(config)
        record = dict(phase)
        # The steps' throughput as Megatron-LM prints it, as they complete, so
        # that `ofu run` reads the job's own MFU from its output (stage C).
        def progress(done, steps, iterations, seconds):
            print(throughput_line(done, steps, iterations, seconds, model_flops), flush=True)

        record.update(timed_loop(torch, step, args.seconds, model_flops, probe, progress))
        record["steps"] = record.pop("iterations")
        record["tokens_per_step"] = config["batch"] * config["seq_len"]
        record["flops_per_step"] = model_flops
        record["flops"] = record["steps"] * model_flops
        record["hardware_flops"] = record["steps"] * hardware_flops
        record["matmul_params"] = 12 * config["layers"] * config["d_model"] ** 2 + config["d_model"] * config["vocab"]
        record["parameters"] = sum(p.numel() for p in step.model.parameters())
        record["achieved_tflops"] = record["flops"] / record["elapsed_s"] / 1e12
        log.write(record)
        try:
            profile_trace(torch, step, 2, os.path.join(args.out, "trace.json.gz"))
        except Exception as e:
            log.write({"phase": "train-trace", "kind": "trace", "error": f"{type(e).__name__}: {e}"})
    except Exception as e:
        log.write(failed(phase, e))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("phases")
    p.add_argument("--out", required=True)
    p.add_argument("--seconds", type=float, default=10.0, help="timed loop per GEMM/copy phase")
    p.add_argument("--idle-seconds", type=float, default=20.0)
    p.add_argument("--only", help="comma-separated phase names")
    r = sub.add_parser("ragged")
    r.add_argument("--out", required=True)
    r.add_argument("--seconds", type=float, default=8.0)
    r.add_argument("--trace-iterations", type=int, default=5)
    t = sub.add_parser("train")
    t.add_argument("--out", required=True)
    t.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args(argv)
    return {"phases": cmd_phases, "ragged": cmd_ragged, "train": cmd_train}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
