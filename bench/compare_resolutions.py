#!/usr/bin/env python3
"""Compares the raw and the hourly answers bench/fleet_hourly_exactness.sh
wrote into WORK (report-raw.json, report-hourly.json, regress-raw.json,
regress-hourly.json): overall, per-GPU and per-job OFU to 1e-9 relative, and
the same regressions (job, GPUs, within the hour). Prints what it compared
and the largest differences; exits 1 on any difference past the bounds.

    compare_resolutions.py WORK GROUND_TRUTH_JSON
"""
import json
import sys

RELATIVE = 1e-9


def load(work, name):
    with open(f"{work}/{name}.json") as f:
        return json.load(f)


def relative(a, b):
    return abs(a - b) / abs(b) if b else abs(a - b)


def main():
    work, truth_path = sys.argv[1], sys.argv[2]
    with open(truth_path) as f:
        truth = json.load(f)
    raw, hourly = load(work, "report-raw"), load(work, "report-hourly")
    failures = []
    print(f"compare: hourly note: {hourly['notes'][0]}")
    print(f"compare: raw note:    {raw['notes'][0]}")
    if not hourly["notes"][0].startswith("resolution: hourly rollups for "):
        failures.append("the hourly report did not read hourly rollups")

    def compare(kind, key, raw_rows, hourly_rows, field="ofu"):
        raw_by = {row[key]: row for row in raw_rows}
        hourly_by = {row[key]: row for row in hourly_rows}
        if raw_by.keys() != hourly_by.keys():
            failures.append(f"{kind}: {len(raw_by)} raw, {len(hourly_by)} hourly, "
                            f"{len(raw_by.keys() ^ hourly_by.keys())} not in both")
        worst, worst_key = 0.0, None
        for k in raw_by.keys() & hourly_by.keys():
            a, b = hourly_by[k][field], raw_by[k][field]
            if (a is None) != (b is None):
                failures.append(f"{kind} {k}: {field} {a} hourly, {b} raw")
                continue
            if a is None:
                continue
            d = relative(a, b)
            if d > worst:
                worst, worst_key = d, k
        print(f"compare: {kind}: {len(raw_by)} compared, largest relative difference of {field} "
              f"{worst:.3g} ({worst_key})")
        if worst > RELATIVE:
            failures.append(f"{kind}: {field} differs by {worst:.3g} relative at {worst_key}")

    compare("overall", "k", [dict(raw["overall"], k=0)], [dict(hourly["overall"], k=0)])
    compare("GPUs", "key", raw["gpus"], hourly["gpus"])
    compare("jobs", "job_id", raw["jobs"], hourly["jobs"])
    # Not bounded: a job's interval opens a scrape interval or the sum step
    # before its first scrape (docs/prometheus.md §8).
    compare_hours = [(j["job_id"], j["gpu_hours"]) for j in raw["jobs"]]
    hourly_hours = {j["job_id"]: j["gpu_hours"] for j in hourly["jobs"]}
    worst = max((abs(hourly_hours[k] - v) for k, v in compare_hours if k in hourly_hours), default=0.0)
    print(f"compare: jobs' gpu_hours: largest absolute difference {worst:.4g} GPU-hours (not bounded)")

    raw_regress, hourly_regress = load(work, "regress-raw"), load(work, "regress-hourly")
    print(f"compare: regress windows: {raw_regress['windows']} raw, {hourly_regress['windows']} hourly")
    for kind in ("changes", "precision_shifts", "run_changes"):
        a, b = raw_regress.get(kind, []), hourly_regress.get(kind, [])
        print(f"compare: {kind}: {len(a)} raw, {len(b)} hourly")
        if len(a) != len(b):
            failures.append(f"{kind}: {len(a)} raw, {len(b)} hourly")
            continue
        for x, y in zip(a, b):
            same = all(x.get(f) == y.get(f) for f in ("job_id", "job_name", "gpus"))
            if "time_s" in x and "time_s" in y:
                same = same and abs(x["time_s"] - y["time_s"]) <= 3600
            if not same:
                failures.append(f"{kind}: raw {json.dumps(x)} vs hourly {json.dumps(y)}")
    planted = {r["job_id"] for r in truth.get("regressions", [])}
    found = {c["job_id"] for c in hourly_regress.get("changes", [])}
    print(f"compare: planted regressions {sorted(planted)}, found from hourly {sorted(found)}")
    for failure in failures:
        print(f"compare: DIFFERS: {failure}")
    print("compare: " + ("the paths differ" if failures else "same answers"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
