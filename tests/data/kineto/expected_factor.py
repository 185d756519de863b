#!/usr/bin/env python3
"""Independent check of `ofu correct` on a real Kineto trace whose GEMMs are
all Ampere CUTLASS 2.x tensor-op kernels (cutlass_80_tensorop_s1688gemm_...).

Written apart from the C++ code, from the trace format and CUTLASS's kernel
names: links each kernel to the innermost GEMM op around its launch (same
pid/tid, by correlation), reads the tile from the name, pads the GEMM in the
cuBLAS orientation (kernel M = the framework's N) and prints the counts and
useful / executed FLOPs. Given several traces (the ranks of one job) it
sums over all of them, as `ofu correct --trace DIR` does.
Usage: expected_factor.py TRACE.json.gz [TRACE.json.gz ...]
"""
import gzip, json, math, re, sys
from collections import defaultdict

GEMM_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::linear", "aten::matmul"}
TILE = re.compile(r"cutlass_80_tensorop_s1688gemm_(\d+)x(\d+)_(\d+)x\d+_[nt]{2}_align\d+")

def problem(op, dims):
    if op in ("aten::mm", "aten::matmul") and len(dims[0]) == 2 and len(dims[1]) == 2:
        (m, k), (_, n) = dims[0], dims[1]; return 1, m, n, k
    if op == "aten::addmm": (m, k), (_, n) = dims[1], dims[2]; return 1, m, n, k
    if op == "aten::bmm": (b, m, k), (_, _, n) = dims[0], dims[1]; return b, m, n, k
    raise ValueError((op, dims))

def pad(x, t): return math.ceil(x / t) * t

def read(path):
    """(linked, tensor-op GEMMs, useful FLOPs, executed FLOPs) of one trace."""
    trace = json.load(gzip.open(path))
    events = trace["traceEvents"]
    launch = {e["args"]["correlation"]: e for e in events
              if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    ops_by_thread = defaultdict(list)
    for e in events:
        if e.get("cat") == "cpu_op" and e.get("name") in GEMM_OPS:
            ops_by_thread[(e["pid"], e["tid"])].append(e)

    def innermost(l):
        around = [o for o in ops_by_thread[(l["pid"], l["tid"])] if o["ts"] <= l["ts"] <= o["ts"] + o["dur"]]
        return max(around, key=lambda o: (o["ts"], -o["dur"])) if around else None  # latest start; on a tie the shorter

    tensor = linked = 0
    useful = executed = 0.0
    for k in (e for e in events if e.get("cat") == "kernel"):
        l = launch.get(k["args"].get("correlation"))
        op = innermost(l) if l else None
        if op is None: continue
        linked += 1
        t = TILE.search(k["name"])
        if not t: continue
        tile_m, tile_n, tile_k = map(int, t.groups())
        b, m, n, kk = problem(op["name"], op["args"]["Input Dims"])
        tensor += 1
        useful += 2.0 * b * m * n * kk
        executed += 2.0 * b * pad(n, tile_m) * pad(m, tile_n) * pad(kk, tile_k)  # kernel M = framework N
    return linked, tensor, useful, executed

totals = [0, 0, 0.0, 0.0]
for path in sys.argv[1:]:
    totals = [a + b for a, b in zip(totals, read(path))]
linked, tensor, useful, executed = totals
print(f"linked {linked} tensor_op_gemms {tensor} factor {useful / executed!r}")
