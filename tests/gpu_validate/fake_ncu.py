#!/usr/bin/env python3
"""A SYNTHETIC stand-in for Nsight Compute's `ncu`, for stage K's plumbing on
the NVML double (tests/gpu_validate/dry_run_test.sh). Nothing it prints was
measured: every kernel, name and count below is made up.

  fake_ncu.py --version
  fake_ncu.py --query-metrics             a base-name list without the gmma names
  fake_ncu.py ... --metrics LIST ... -o R APP...
        refuses (exit 1, as ncu does for an unknown name) a list with
        smsp__cycles_active in it, which its query lists: stage K must then
        run the core set; otherwise writes the group's cases to the app's
        --out (what kernels_workload.py would, without running it: there is
        no torch here; its meta names no device, so that the SKU comes from
        the NVML double) and a raw-page CSV into R.ncu-rep
  fake_ncu.py --import R.ncu-rep --page raw --csv --print-units base
        prints that CSV
With FAKE_NCU_BROKEN=1 every profiling run fails, as ncu does where it
cannot read the counters.

The CSV: for each case a spin_kernel sentinel and one kernel whose tensor
cycles make its relative throughput 1 for aligned GEMMs (nvjet) and 0.5 for
the others (a CUTLASS sm75 name for bf16 and fp16 GEMMs)."""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOAD = os.path.join(HERE, "..", "..", "scripts", "gpu-validate", "kernels_workload.py")
METRICS = ("gpc__cycles_elapsed", "gpu__time_duration", "sm__cycles_elapsed", "smsp__cycles_active",
           "sm__pipe_tensor_cycles_active", "sm__pipe_tensor_op_hmma_cycles_active",
           "sm__inst_executed_pipe_tensor_op_hmma", "sm__throughput")
F_P = 4096  # bf16 FLOPs per clock per SM of the H100 in data/gpu_specs.json


def arg(argv, name):
    return argv[argv.index(name) + 1] if name in argv else None


def kernel_for(case):
    if case["kind"] == "gemm":
        aligned = case["case"].endswith("-aligned")
        name = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT" if aligned else \
            "cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_32x2_nn_align1"
        return name, (1.0 if aligned else 0.5)
    if case["kind"] == "attention_fwd":
        return f"flash_fwd_kernel_SYNTHETIC_{case['backend']}", 0.7
    if case["kind"] == "attention_bwd":
        return f"flash_bwd_dq_dk_dv_loop_SYNTHETIC_{case['backend']}", 0.6
    return None, None


def raw_csv(metrics, cases):
    names = metrics.split(",")
    units = {"gpc__cycles_elapsed.avg.per_second": "hz", "gpu__time_duration.sum": "nsecond"}
    lines = ['"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
             '"Device","CC",' + ",".join(f'"{n}"' for n in names),
             ",".join(['""'] * 11 + [f'"{units.get(n, "cycle")}"' for n in names])]
    rows = []
    for case in cases:
        rows.append(("at::cuda::(anonymous namespace)::spin_kernel(long)", 0.0))
        if case["kind"] == "train":
            rows += [("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", 4.0e8),
                     ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_SYNTHETIC", 1.0e7),
                     ("cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_SYNTHETIC", 3.0e7),
                     ("vectorized_elementwise_kernel_SYNTHETIC", 0.0)]
            continue
        name, rate = kernel_for(case)
        if name and case.get("flops") and case["precision"] in ("bf16", "fp16"):
            rows.append((name, case["flops"] / (F_P * rate)))
    for i, (name, tensor) in enumerate(rows):
        values = {"gpc__cycles_elapsed.avg.per_second": "1,755,000,000", "gpu__time_duration.sum": "1,000",
                  "sm__pipe_tensor_cycles_active.sum": f"{tensor:,.0f}", "sm__cycles_elapsed.sum": "1,000,000,000"}
        lines.append(f'"{i}","4242","python3","synthetic","{name}","1","7","(128, 1, 1)","(132, 1, 1)","0","9.0",'
                     + ",".join(f'"{values.get(n, "0")}"' for n in names))
    return "\n".join(lines) + "\n"


def main(argv):
    if "--version" in argv:
        print("NVIDIA (R) Nsight Compute Command Line Profiler\nVersion SYNTHETIC (tests/gpu_validate/fake_ncu.py)")
        return 0
    if "--query-metrics" in argv:
        print("Device SYNTHETIC (fake_ncu.py)\n---- ----\nMetric Name   Metric Description\n---- ----")
        for m in METRICS:
            print(f"{m}    SYNTHETIC description")
        return 0
    if "--import" in argv:
        with open(arg(argv, "--import"), encoding="utf-8") as f:
            sys.stdout.write(f.read())
        return 0
    metrics, report = arg(argv, "--metrics"), arg(argv, "-o")
    if os.environ.get("FAKE_NCU_BROKEN") == "1":  # as ncu where it cannot read the counters
        print("==ERROR== Failed to initialize the profiler (SYNTHETIC: FAKE_NCU_BROKEN)", file=sys.stderr)
        return 1
    if "smsp__cycles_active" in metrics:
        print("==ERROR== Failed to find metric smsp__cycles_active.avg (SYNTHETIC refusal)", file=sys.stderr)
        return 1
    group, out = arg(argv, "--group"), arg(argv, "--out")
    plan = subprocess.run([sys.executable, WORKLOAD, "plan", "--group", group], check=True, capture_output=True,
                          text=True).stdout
    cases = [json.loads(line) for line in plan.splitlines()]
    with open(out, "w", encoding="utf-8") as f:
        f.write(json.dumps({"meta": {"synthetic": True}}) + "\n")
        for c in cases:
            f.write(json.dumps(dict(c, sentinel=True)) + "\n")
    with open(report + ".ncu-rep", "w", encoding="utf-8") as f:
        f.write(raw_csv(metrics, cases))
    print("==PROF== Disconnected from process 4242 (SYNTHETIC)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
