#!/usr/bin/env python3
"""A SYNTHETIC fleet month written directly at hourly resolution (issue 40).

Writes the series the hourly rollups' rules record (docs/prometheus.md §8,
`ofu rules hourly`) for GPUS GPUs over HOURS hours, as if the rules had run:
per GPU and hour the sums of the agent's counters, split by the job scraped
with them, the GPU's info and each job's first and last scrape in the hour.
Nothing is measured: every value is made up here, and the files say so.

Fleet: GPUs in groups of 8 to 512 (powers of two); each group runs jobs back
to back (24 to 120 hours each, with idle gaps of 0 to 6 hours, when its GPUs
are observed with no job); a job's OFU is 0.20 to 0.55 with ±3 % noise per
GPU-hour; one job in REGRESS_EVERY (default 40) of at least 30 hours drops
to 0.4 × its OFU from a planted hour on (10 hours or more from either end).
ground_truth.json lists the jobs and the planted regressions.

Output, one file per day in OUT (so that promtool backfills a day at a time):
  day-NNN.om    OpenMetrics (timestamps in s), for promtool
  day-NNN.prom  Prometheus text (timestamps in ms), for VictoriaMetrics's
                /api/v1/import/prometheus
Usage: month_fleet.py OUT GPUS HOURS [SEED] [START_S]
With SHARD=name in the environment, the GPUs and jobs carry that name
(GPU-month-<name>-000000, month-<name>-00001), so that the shards of one
fleet (bench/fleet_shards.sh) name different GPUs and jobs. With PROM_ONLY=1
only the .prom files are written (for VictoriaMetrics; half the disk).
"""
import json
import os
import random
import sys

COUNTERS = ["observed_seconds", "busy_seconds", "utilized_seconds", "busy_utilized_seconds",
            "tensor_active_seconds"]
STEP_S = 12  # the sum step of 15 s scrapes (ofu rules hourly)
SHARD = os.environ["SHARD"] + "-" if os.environ.get("SHARD") else ""
SCRAPE_S = 15
PROM_ONLY = os.environ.get("PROM_ONLY") == "1"


def plan(gpus, hours, rng, regress_every):
    """Groups, and per group the jobs: (job id, first hour, last hour, ofu, planted hour or None)."""
    sizes = [8, 16, 32, 64, 128, 256, 512]
    groups, first = [], 0
    while first < gpus:
        size = min(rng.choice(sizes), gpus - first)
        groups.append((first, size))
        first += size
    jobs, regressions, n = [], [], 0
    for g, (first_gpu, size) in enumerate(groups):
        hour = rng.randint(0, 6)
        while hour < hours:
            length = rng.randint(24, 120)
            last = min(hours - 1, hour + length - 1)
            n += 1
            job_id = f"month-{SHARD}{n:05d}"
            planted = None
            if n % regress_every == 0 and last - hour + 1 >= 30:
                planted = rng.randint(hour + 10, last - 10)
                regressions.append({"job_id": job_id, "hour": planted, "gpus": size, "ratio": 0.4})
            jobs.append({"job_id": job_id, "group": g, "first_gpu": first_gpu, "gpus": size, "first_hour": hour,
                         "last_hour": last, "ofu": round(rng.uniform(0.20, 0.55), 4), "planted_hour": planted})
            hour = last + 1 + rng.randint(0, 6)
    return groups, jobs, regressions


def main():
    out, gpus, hours = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 7
    start = float(sys.argv[5]) if len(sys.argv) > 5 else 1790002800.0  # on the hour
    regress_every = int(os.environ.get("REGRESS_EVERY", "40"))
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    groups, jobs, regressions = plan(gpus, hours, rng, regress_every)
    # The job of each (group, hour).
    job_at = {}
    for job in jobs:
        for h in range(job["first_hour"], job["last_hour"] + 1):
            job_at[(job["group"], h)] = job
    group_of = []
    for g, (first_gpu, size) in enumerate(groups):
        group_of += [g] * size
    uuids = [f"GPU-month-{SHARD}{i:06d}" for i in range(gpus)]
    with open(os.path.join(out, "ground_truth.json"), "w") as f:
        json.dump({"synthetic": True, "gpus": gpus, "hours": hours, "start_s": start, "seed": seed,
                   "jobs": len(jobs), "regressions": regressions}, f, indent=1)
    noise = random.Random(seed + 1)
    for day in range(0, (hours + 23) // 24):
        om = {name: [] for name in ["marker", "info", "first", "last"] + COUNTERS}
        prom = []
        for h in range(day * 24, min(hours, day * 24 + 24)):
            t = start + 3600 * (h + 1)  # the evaluation closing hour h
            ms = int(t * 1000)
            om["marker"].append(f"ofu:hourly_rollup:step_seconds {STEP_S} {t:.3f}")
            prom.append(f"ofu:hourly_rollup:step_seconds {STEP_S} {ms}")
            for i, uuid in enumerate(uuids):
                g = group_of[i]
                job = job_at.get((g, h))
                info = (f'uuid:ofu_gpu_info:last1h{{uuid="{uuid}",gpu="{i % 8}",instance="node-{i // 8:05d}",'
                        f'model="NVIDIA H100 80GB HBM3",sku="h100-sxm5",architecture="hopper"}}')
                om["info"].append(f"{info} 1 {t:.3f}")
                prom.append(f"{info} 1 {ms}")
                if job is None:
                    ofu, labels = 0.01, f'uuid="{uuid}"'
                else:
                    ofu = job["ofu"] * (0.4 if job["planted_hour"] is not None and h >= job["planted_hour"] else 1)
                    labels = f'uuid="{uuid}",job_id="{job["job_id"]}"'
                    seen = (f'{{uuid="{uuid}",job_id="{job["job_id"]}",user="synthetic",'
                            f'job_name="pretrain-{job["job_id"][6:]}",scheduler="synthetic"}}')
                    for key, value in (("first", t - 3600 + SCRAPE_S), ("last", t)):
                        name = f"uuid_job_id:ofu_gpu_job_info:{key}_seen1h"
                        om[key].append(f"{name}{seen} {value:.3f} {t:.3f}")
                        prom.append(f"{name}{seen} {value:.3f} {ms}")
                utilized = 3600 * ofu * (1 + noise.uniform(-0.03, 0.03))
                values = {"observed_seconds": 3600, "busy_seconds": 3600 if job else 0, "utilized_seconds": utilized,
                          "busy_utilized_seconds": utilized if job else 0, "tensor_active_seconds": utilized / 0.93}
                for c in COUNTERS:
                    name = f"uuid_job_id:ofu_{c}:increase1h{{{labels}}}"
                    om[c].append(f"{name} {values[c]:.6f} {t:.3f}")
                    prom.append(f"{name} {values[c]:.6f} {ms}")
        if not PROM_ONLY:
            with open(os.path.join(out, f"day-{day:03d}.om.tmp"), "w") as f:
                for name, lines in om.items():
                    if name == "marker":
                        f.write("# HELP ofu:hourly_rollup:step_seconds SYNTHETIC hourly rollups from "
                                "bench/month_fleet.py, not measured on a GPU\n")
                    if lines:
                        f.write("\n".join(lines) + "\n")
                f.write("# EOF\n")
            os.rename(os.path.join(out, f"day-{day:03d}.om.tmp"), os.path.join(out, f"day-{day:03d}.om"))
        with open(os.path.join(out, f"day-{day:03d}.prom.tmp"), "w") as f:
            f.write("\n".join(prom) + "\n")
        os.rename(os.path.join(out, f"day-{day:03d}.prom.tmp"), os.path.join(out, f"day-{day:03d}.prom"))


if __name__ == "__main__":
    main()
