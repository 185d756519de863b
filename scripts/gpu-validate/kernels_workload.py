#!/usr/bin/env python3
"""Stage K's PyTorch workload: kernels for Nsight Compute (docs/gpu-validation.md).

  kernels_workload.py plan [--group G]        print the cases (JSON lines; no torch)
  kernels_workload.py run --group G --out F   run one group's cases under ncu

Groups: gemm (bf16, fp16, tf32, fp8, int8 at M = N = K = 8192 and with N
8192 + 1, + 2, + 4: alignments 1, 2 and 4 elements of one dimension),
sdpa (scaled_dot_product_attention forward and backward with each backend
torch has: cuDNN, flash, efficient), train (one training step of stage C's
model, workload.TRAIN_CONFIG, with its layers cut to K_TRAIN_LAYERS: every
layer's kernels have the same shapes, so fewer layers give the same kernels
in fewer launches).

Each case is set up and warmed up (cuBLAS heuristics, handles, cuDNN plans)
with the CUDA profiler stopped; then cudaProfilerStart, one launch of
torch.cuda._sleep (the `spin_kernel` sentinel that tells ncu's rows of one
case from the next), one call of the case, synchronize, cudaProfilerStop.
ncu runs with --profile-from-start off, so it profiles those kernels only.
Every case is one JSON line in --out, in order, written as soon as it ends:
{"case", "group", "kind", "precision", shapes, "flops", "sentinel": true}
or with "error" (a case torch refuses, such as an unaligned fp8 or int8
GEMM, is recorded and the next one runs); a first line {"meta": {...}}
names the device as torch sees it.

torch is imported inside run only: the plan and the FLOP counts are tested
without it (tests/gpu_validate/stage_k_test.py).
"""

import argparse
import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpuval_core  # noqa: E402  (the FLOP arithmetic)
import workload  # noqa: E402  (stage C's model and its configuration)

GEMM_SIZE = 8192
GEMM_PRECISIONS = ("bf16", "fp16", "tf32", "fp8", "int8")
# Extra elements on N: 0 is aligned (16 bytes for every precision here);
# 1, 2 and 4 give the alignments cuBLAS's align1/2/4 kernels are built for.
GEMM_N_OFFSETS = (0, 1, 2, 4)
SDPA_BACKENDS = ("cudnn", "flash", "efficient")
K_TRAIN_LAYERS = 2


def attention_shape(config=None):
    """(batch, heads, seq, head_dim) of stage C's attention."""
    c = config or workload.TRAIN_CONFIG
    return c["batch"], c["heads"], c["seq_len"], c["d_model"] // c["heads"]


def attention_forward_flops(b, h, sq, skv, d, causal=False):
    """QK^T and PV: 2 x 2 b h s_q s_kv d; causal halves it."""
    f = 4 * b * h * sq * skv * d
    return f // 2 if causal else f


def attention_backward_flops(b, h, sq, skv, d, causal=False):
    """Flash-style backward, 2.5 x forward: S = QK^T recomputed, dP = dO V^T,
    dV = P^T dO, dQ = dS K, dK = dS^T Q (five matmuls of 2 b h s_q s_kv d),
    the hardware count that gpuval_core.transformer_flops_per_token's HFU uses."""
    f = 10 * b * h * sq * skv * d
    return f // 2 if causal else f


def train_config(layers=K_TRAIN_LAYERS):
    c = dict(workload.TRAIN_CONFIG)
    c["layers"] = layers
    return c


def plan(group=None, train_layers=K_TRAIN_LAYERS):
    """The cases, in the order they run, with their exact FLOPs."""
    cases = []
    if group in (None, "gemm"):
        for precision in GEMM_PRECISIONS:
            for extra in GEMM_N_OFFSETS:
                m = k = GEMM_SIZE
                n = GEMM_SIZE + extra
                name = f"gemm-{precision}-" + ("aligned" if extra == 0 else f"n+{extra}")
                cases.append({"case": name, "group": "gemm", "kind": "gemm", "precision": precision,
                              "m": m, "n": n, "k": k, "align_elements": extra or None,
                              "flops": gpuval_core.gemm_flops(m, n, k)})
    if group in (None, "sdpa"):
        b, h, s, d = attention_shape()
        for backend in SDPA_BACKENDS:
            for direction in ("fwd", "bwd"):
                flops = (attention_forward_flops if direction == "fwd" else attention_backward_flops)(b, h, s, s, d)
                cases.append({"case": f"sdpa-{backend}-{direction}", "group": "sdpa", "kind": f"attention_{direction}",
                              "precision": "bf16", "backend": backend, "batch": b, "heads": h, "seq": s,
                              "head_dim": d, "causal": False, "flops": flops})
    if group in (None, "train"):
        c = train_config(train_layers)
        model, hardware = workload.train_flops(c)
        # Per kernel the FLOPs are unknown (ncu's rows cannot be joined to
        # torch's ops); the step's totals let the summary check families.
        cases.append({"case": "train-step", "group": "train", "kind": "train", "precision": "bf16", "config": c,
                      "flops": None, "step_model_flops": model, "step_hardware_flops": hardware})
    return cases


# --------------------------------------------------------------------------
# On the GPU (torch imported by cmd_run).


def gemm_call(torch, case):
    """Stage A's GEMM call (workload.gemm_operands) for bf16, fp16, tf32 and
    fp8; int8 through torch._int_mm."""
    if case["precision"] != "int8":
        return workload.gemm_operands(torch, case)
    a = torch.randint(-64, 64, (case["m"], case["k"]), device="cuda", dtype=torch.int8)
    b = torch.randint(-64, 64, (case["k"], case["n"]), device="cuda", dtype=torch.int8)
    return lambda: torch._int_mm(a, b)


def sdpa_call(torch, case):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    F = torch.nn.functional
    backend = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
               "efficient": SDPBackend.EFFICIENT_ATTENTION}[case["backend"]]
    shape = (case["batch"], case["heads"], case["seq"], case["head_dim"])
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    grad = torch.randn(shape, device="cuda", dtype=torch.bfloat16)

    def forward():
        with sdpa_kernel([backend]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=case["causal"])

    if case["kind"] == "attention_fwd":
        # With grad enabled, as in training: the backends pick the kernel that
        # also saves the softmax statistics for the backward.
        return forward, None
    state = {}

    def prepare():  # the forward, outside the profiled range
        state["out"] = forward()

    def backward():
        state["out"].backward(grad)
        q.grad = k.grad = v.grad = None
    return backward, prepare


def train_call(torch, case):
    return workload.train_step(torch, case["config"]), None


def run_case(torch, case, warmups):
    if case["kind"] == "gemm":
        fn, prepare = gemm_call(torch, case), None
    elif case["kind"].startswith("attention"):
        fn, prepare = sdpa_call(torch, case)
    else:
        fn, prepare = train_call(torch, case)
    for _ in range(warmups):
        if prepare:
            prepare()
        fn()
    if prepare:
        prepare()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    try:
        torch.cuda._sleep(1000)  # spin_kernel: the case's first profiled row
        fn()
        torch.cuda.synchronize()
    finally:
        torch.cuda.profiler.stop()
    return dict(case, sentinel=True)


def cmd_run(args):
    import torch
    import gc
    torch.backends.cuda.matmul.allow_tf32 = True  # tf32 cases; the others are 16/8-bit
    log = workload.Log(args.out)
    log.write(workload.meta(torch))
    for case in plan(args.group, args.train_layers):
        print(f"kernels_workload: {case['case']}", file=sys.stderr, flush=True)
        try:
            record = run_case(torch, case, args.warmups)
        except Exception as e:  # recorded; the next case runs
            record = dict(case, error=f"{type(e).__name__}: {e}".strip()[:500], traceback=traceback.format_exc()[-2000:])
        log.write(record)
        gc.collect()
        torch.cuda.empty_cache()
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--group", choices=["gemm", "sdpa", "train"])
    r = sub.add_parser("run")
    r.add_argument("--group", choices=["gemm", "sdpa", "train"], required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--warmups", type=int, default=2)
    for q in (p, r):
        q.add_argument("--train-layers", type=int, default=K_TRAIN_LAYERS)
    args = parser.parse_args(argv)
    if args.command == "plan":
        for case in plan(args.group, args.train_layers):
            print(json.dumps(case))
        return 0
    return cmd_run(args)


if __name__ == "__main__":
    sys.exit(main())
