#!/usr/bin/env python3
"""A SYNTHETIC stand-in for scripts/gpu-validate/workload.py, for the dry run
on the NVML double (tests/gpu_validate/dry_run_test.sh, GPUVAL_WORKLOAD): no
torch, no GPU. It writes the phases file workload.py would, with the same
plan (workload.STAGE_A_PHASES ...), made-up timings (each phase a sleep
of --seconds), FLOPs at a made-up 400 TFLOP/s (40 for fp32) and a made-up "sm_clock" of 1600 MHz
from a clock probe that did not run, so that the stages' joins, verdicts
and `ofu report` steps run end to end. Its first line says it is SYNTHETIC.

  fake_workload.py phases --out FILE --seconds S [--idle-seconds S]
  fake_workload.py ragged --out DIR --seconds S
  fake_workload.py train --out DIR --seconds S
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "gpu-validate"))
import gpuval_core  # noqa: E402
import workload  # noqa: E402  (the plan only; torch is never imported)

RATE_FLOPS = {"fp32": 40e12}  # SYNTHETIC, per precision; 400e12 for the others
SM_CLOCK = {"median_mhz": 1600.0, "min_mhz": 1595.0, "max_mhz": 1605.0, "sms": 132}  # SYNTHETIC


def meta():
    # No device name: the stage takes the GPU from the device (the NVML double's), as it would torch's.
    return {"meta": {"sm_count": 132, "torch": "none (SYNTHETIC)",
                     "synthetic": True, "clock_probe": "ran (SYNTHETIC: fake_workload.py)", "time": time.time()}}


def fake_phase(phase, seconds, work_per_iteration):
    record = dict(phase)
    t_start = time.time()
    time.sleep(seconds)
    t_end = time.time()
    elapsed = t_end - t_start
    rate = RATE_FLOPS.get(phase.get("precision"), 400e12)
    iterations = max(1, int(elapsed * rate / work_per_iteration)) if work_per_iteration else 1
    flops = iterations * work_per_iteration
    record.update({"iterations": iterations, "t_start": t_start, "t_end": t_end, "elapsed_s": elapsed,
                   "flops": flops, "checkpoints": [[t_start, 0], [t_end, flops]],
                   "sm_clock": dict(SM_CLOCK, span_s=elapsed) if phase.get("kind") != "idle"
                   else {"absent": "no clock probe in an idle phase (SYNTHETIC)"}})
    return record


def work_of(phase):
    if phase.get("kind") in ("gemm", "duty", "mixed", "train"):
        return phase.get("gemms", 1) * gpuval_core.gemm_flops(phase.get("m", 1024), phase.get("n", 1024),
                                                         phase.get("k", 1024))
    return 0


def write(path, records):
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["phases", "ragged", "train"])
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--idle-seconds", type=float, default=1.0)
    args = parser.parse_args(argv)
    seconds = args.seconds  # the dry run's 1 s: a 0.1 s pass has whole windows inside each phase
    if args.command == "phases":
        plan = workload.STAGE_A_PHASES + workload.STAGE_A_CUDA_CORE_PHASES
        write(args.out, [meta()] + [fake_phase(p, args.idle_seconds if p["kind"] == "idle" else seconds,
                                               work_of(p)) for p in plan])
        return 0
    os.makedirs(args.out, exist_ok=True)
    if args.command == "ragged":
        write(os.path.join(args.out, "phases.jsonl"),
              [meta()] + [fake_phase(p, seconds, work_of(p)) for p in workload.ragged_phases()])
        return 0
    phase = {"phase": "train-steady", "kind": "train", "precision": "bf16"}
    record = fake_phase(phase, seconds, work_of(phase))
    record.update({"steps": record.pop("iterations"), "tokens_per_step": 16384,
                   "hardware_flops": record["flops"] * 1.1})
    # The lines workload.py prints as the steps complete (its own format
    # function), from the SYNTHETIC phase's exact figures, for `ofu run`.
    steps, lines = record["steps"], min(record["steps"], 10)
    for i in range(1, lines + 1):
        done = steps * i // lines
        chunk = done - steps * (i - 1) // lines
        print(workload.throughput_line(done, steps, chunk, record["elapsed_s"] * chunk / steps,
                                       record["flops"] / steps), flush=True)
    write(os.path.join(args.out, "phases.jsonl"), [meta(), record])
    return 0


if __name__ == "__main__":
    sys.exit(main())
