#!/usr/bin/env python3
"""A SYNTHETIC fleet as dcgm-exporter's series, for ofu's zero-deploy path (issue 55).

Two forms:

  dcgm_fleet.py raw OUT.om --gpus N --hours H [--interval S] [--start T] [--seed K]
                [--jobs slurm|kubernetes]
      every scrape, as Prometheus keeps dcgm-exporter's gauges
      (DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, DCGM_FI_DEV_SM_CLOCK), OpenMetrics for
      `promtool tsdb create-blocks-from openmetrics`. Each GPU runs jobs back
      to back (20 to 150 minutes, some minutes idle between), labelled as
      dcgm-exporter labels them: hpc_job (Slurm) or namespace/pod/container
      (Kubernetes); no job label while idle. Tensor activity is drawn per job
      over idle, burst, mixed and steady levels with noise per scrape; the
      clock per scrape. Models: H100 SXM5 (a measured clock model), H200 (one)
      and A100 (none: the reported clock).

  dcgm_fleet.py rollups OUT_DIR --gpus N --hours H [--interval S] [--start T] [--seed K]
      the series `ofu rules hourly --series dcgm-exporter` records, written as
      if the rules had run over such a fleet (one job label per GPU and hour),
      one OpenMetrics file per day: for the month-scale read benchmark, where
      backfilling the rules themselves would take days on a small machine.

Nothing here is measured on a GPU: every value is made up, and the files
say SYNTHETIC. Python 3 standard library only.
"""
import argparse
import os
import random

MODELS = [("NVIDIA H100 80GB HBM3", 1980), ("NVIDIA H200", 1980), ("NVIDIA A100-SXM4-80GB", 1410)]
LEVELS = [0.004, 0.2, 0.4, 0.6, 0.9]  # idle, burst, burst, between, steady
HEADER = "# HELP {0} SYNTHETIC dcgm-exporter series from bench/dcgm_fleet.py, not measured on a GPU\n" \
         "# TYPE {0} gauge\n"


def gpu_labels(i, model, job, jobs):
    host = f"node-{i // 8:04d}"
    labels = (f'gpu="{i % 8}",UUID="GPU-dcgm-{i:06d}",device="nvidia{i % 8}",modelName="{model}",'
              f'Hostname="{host}",instance="{host}:9400",job="dcgm-exporter"')
    if job is not None:
        if jobs == "slurm":
            labels += f',hpc_job="{job}"'
        else:
            labels += f',namespace="team-{job % 3}",pod="train-{job}",container="worker"'
    return labels


def plan_gpu(rng, seconds):
    """[(start, end, job or None, level)] covering [0, seconds)."""
    out, t = [], 0.0
    while t < seconds:
        length = rng.uniform(20, 150) * 60
        out.append((t, min(seconds, t + length), rng.randrange(1000, 9999), rng.choice(LEVELS)))
        t += length
        idle = rng.choice([0, 0, 5, 17]) * 60
        if idle:
            out.append((t, min(seconds, t + idle), None, 0.0))
            t += idle
    return out


def write_raw(args):
    rng = random.Random(args.seed)
    seconds = args.hours * 3600
    tensor, clock = [], []
    for i in range(args.gpus):
        model, top = MODELS[i % len(MODELS)]
        stretches = plan_gpu(rng, seconds)
        by_labels = {}
        t = args.interval
        k = 0
        while t <= seconds:
            while stretches[k][1] < t:
                k += 1
            _, _, job, level = stretches[k]
            a = min(1.0, max(0.0, level + rng.uniform(-0.05, 0.05))) if level > 0 else rng.uniform(0, 0.008)
            f = rng.choice([top, top - 15, top - 90, 1755, 1530])
            labels = gpu_labels(i, model, job, args.jobs)
            ts = args.start + t
            by_labels.setdefault(labels, []).append((ts, round(a, 6), f))
            t += args.interval
        for labels, points in by_labels.items():
            tensor.extend(f"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{labels}}} {a} {ts:.3f}" for ts, a, _ in points)
            clock.extend(f"DCGM_FI_DEV_SM_CLOCK{{{labels}}} {f} {ts:.3f}" for ts, _, f in points)
    with open(args.out, "w") as out:
        out.write(HEADER.format("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"))
        out.write("\n".join(tensor) + "\n")
        out.write(HEADER.format("DCGM_FI_DEV_SM_CLOCK"))
        out.write("\n".join(clock) + "\n")
        out.write("# EOF\n")


def write_rollups(args):
    rng = random.Random(args.seed)
    step = max(s for s in range(1, int(0.9 * args.interval + 1e-9) + 1) if 3600 % s == 0)
    per_hour = 3600 / args.interval
    os.makedirs(args.out, exist_ok=True)
    names = ["samples", "tensor_active", "tensor_active_x_ofu_clock_mhz", "sm_clock_mhz"]
    for day in range((args.hours + 23) // 24):
        fams = {n: [] for n in ["marker", "interval", "first", "last"] + names}
        for h in range(day * 24, min(args.hours, day * 24 + 24)):
            t = args.start + 3600 * (h + 1)
            fams["marker"].append(f"ofu:dcgm_hourly_rollup:step_seconds {step} {t:.3f}")
            fams["interval"].append(f"ofu:dcgm_hourly_rollup:scrape_interval_seconds {args.interval} {t:.3f}")
            for i in range(args.gpus):
                model, top = MODELS[i % len(MODELS)]
                job = 1000 + (i // 8) * 100 + h // 24
                labels = (f'gpu="{i % 8}",UUID="GPU-dcgm-{i:06d}",modelName="{model}",Hostname="node-{i // 8:04d}",'
                          f'hpc_job="{job}"')
                a = rng.uniform(0.1, 0.9)
                f = top - rng.uniform(0, 200)
                values = {"samples": per_hour, "tensor_active": a * per_hour,
                          "tensor_active_x_ofu_clock_mhz": a * f * 0.95 * per_hour, "sm_clock_mhz": f * per_hour}
                for n in names:
                    fams[n].append(f"gpu_job:dcgm_{n}:sum1h{{{labels}}} {values[n]:.6f} {t:.3f}")
                fams["first"].append(f"gpu_job:dcgm_scrape_time:first_seen1h{{{labels}}} "
                                     f"{t - 3600 + args.interval:.3f} {t:.3f}")
                fams["last"].append(f"gpu_job:dcgm_scrape_time:last_seen1h{{{labels}}} {t:.3f} {t:.3f}")
        path = os.path.join(args.out, f"day-{day:03d}.om")
        with open(path + ".tmp", "w") as out:
            out.write("# HELP ofu:dcgm_hourly_rollup:step_seconds SYNTHETIC dcgm-exporter rollups from "
                      "bench/dcgm_fleet.py, not measured on a GPU\n")
            for lines in fams.values():
                out.write("\n".join(lines) + "\n")
            out.write("# EOF\n")
        os.rename(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("form", choices=["raw", "rollups"])
    ap.add_argument("out")
    ap.add_argument("--gpus", type=int, required=True)
    ap.add_argument("--hours", type=int, required=True)
    ap.add_argument("--interval", type=float, default=30)
    ap.add_argument("--start", type=float, default=1790002800.0)  # on the hour
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--jobs", choices=["slurm", "kubernetes"], default="slurm")
    args = ap.parse_args()
    (write_raw if args.form == "raw" else write_rollups)(args)


if __name__ == "__main__":
    main()
