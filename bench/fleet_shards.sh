#!/usr/bin/env bash
# A fleet sharded over several servers (issue 55; docs/BENCHMARKS.md "A fleet
# over several servers"): SHARDS SYNTHETIC fleets of GPUS GPUs × HOURS hours
# each at hourly resolution (bench/month_fleet.py, SHARD=sN: different GPUs
# and jobs per shard), each imported into a VictoriaMetrics of its own, and
# all of them into one more that holds the whole fleet. Then, one after the
# other in this run, the wall time and peak RSS of `ofu report --resolution
# hourly` (fleet and per job) on each shard alone, on every shard at once
# (--prometheus given once per shard: read in parallel, sums added), and on
# the whole fleet's server; the sharded and the whole answers' OFU must agree.
#
#   bench/fleet_shards.sh BUILD [SHARDS] [GPUS] [HOURS]
#
# Defaults: 4 shards of 1,000 GPUs × 720 hours. WORK=dir keeps the data.
# For a fleet too large to write out shard by shard (the 100,000-GPU month:
# 7.8 GB of text a 10,000-GPU shard):
#   SAME=1   only shard 1 is generated; shard i is shard 1 with its GPUs and
#            jobs renamed (month-s1- -> month-si-) as it is imported, so every
#            shard holds the same values under names of its own
#   WHOLE=0  no server holding the whole fleet: the sharded answer is checked
#            against the shards' own answers (their GPUs and jobs add up; with
#            SAME=1 every shard's OFU and the fleet's are equal)
set -euo pipefail
build=${1:-build}
shards=${2:-4}
gpus=${3:-1000}
hours=${4:-720}
ofu=$build/apps/ofu/ofu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/vm_lib.sh
. "$here/vm_lib.sh"
bench_work_dir
start=1790002800
until_s=$((start + hours * 3600))
range="--since $start --until $until_s --resolution hourly --format json --timeout 600"

same=${SAME:-0}
with_whole=${WHOLE:-1}

# import NAME DIR...: every day file of the fleets in DIRs into the server on
# $port, shard 1's names changed to shard NAME's on the way (SAME=1).
import() {
  local name=$1 d f
  shift
  for d in "$@"; do
    for f in "$d"/day-*.prom; do
      sed "s/month-s1-/month-$name-/g" "$f" |
        curl -sf -X POST --data-binary @- "http://127.0.0.1:$port/api/v1/import/prometheus"
    done
  done
  curl -sf "http://127.0.0.1:$port/internal/force_flush"
}

# measure LABEL FLAGS...: ofu report with FLAGS, its time and peak RSS.
measure() {
  local label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$ofu" report "$@" $range >"$work/$label.json"
  read -r wall rss <"$work/time"
  python3 - "$work/$label.json" "$label" "$wall" "$((rss / 1024))" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"fleet_shards: {sys.argv[2]}: {sys.argv[3]} s, {sys.argv[4]} MiB peak RSS; {len(r['gpus'])} GPUs, "
      f"{len(r['jobs'])} jobs, OFU {r['overall']['ofu']:.9f}")
PY
}

t0=$(date +%s)
dirs=()
for i in $(seq 1 "$shards"); do
  if [[ $same == 1 ]]; then
    ((i > 1)) || PROM_ONLY=1 SHARD=s1 python3 "$here/month_fleet.py" "$work/shard-1" "$gpus" "$hours" 8 "$start"
    dirs+=("$work/shard-1")
  else
    SHARD=s$i python3 "$here/month_fleet.py" "$work/shard-$i" "$gpus" "$hours" $((7 + i)) "$start"
    dirs+=("$work/shard-$i")
  fi
done
echo "fleet_shards: generated $([[ $same == 1 ]] && echo 1 || echo "$shards") shards of $gpus GPUs x $hours h" \
  "in $(($(date +%s) - t0)) s"

urls=()
flags=()
for i in $(seq 1 "$shards"); do
  VM_DIR=$work/vm-$i start_victoria_metrics -search.maxSamplesPerQuery=2000000000
  t0=$(date +%s)
  import "s$i" "${dirs[$((i - 1))]}"
  echo "fleet_shards: shard $i imported in $(($(date +%s) - t0)) s"
  urls+=("http://127.0.0.1:$port")
  flags+=(--prometheus "http://127.0.0.1:$port")
done
if [[ $with_whole == 1 ]]; then
  [[ $same == 0 ]] || { echo "fleet_shards: SAME=1 goes with WHOLE=0" >&2; exit 1; }
  VM_DIR=$work/vm-whole start_victoria_metrics -search.maxSamplesPerQuery=2000000000
  t0=$(date +%s)
  import s1 "${dirs[@]}"
  echo "fleet_shards: the whole fleet imported in $(($(date +%s) - t0)) s"
  whole="http://127.0.0.1:$port"
fi

for i in $(seq 1 "$shards"); do measure "shard-$i" --prometheus "${urls[$((i - 1))]}"; done
measure "sharded" "${flags[@]}"
if [[ $with_whole == 0 ]]; then
  python3 - "$work/sharded.json" "$work"/shard-*.json <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
parts = [json.load(open(p)) for p in sys.argv[2:]]
gpus, jobs = sum(len(p["gpus"]) for p in parts), sum(len(p["jobs"]) for p in parts)
ofus = [p["overall"]["ofu"] for p in parts]
print(f"fleet_shards: sharded vs the shards: {len(a['gpus'])} vs {gpus} GPUs, {len(a['jobs'])} vs {jobs} jobs; "
      f"OFU {a['overall']['ofu']:.12f}, the shards' {min(ofus):.12f} to {max(ofus):.12f}")
PY
  exit 0
fi
measure "whole" --prometheus "$whole"
python3 - "$work/sharded.json" "$work/whole.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
x, y = a["overall"]["ofu"], b["overall"]["ofu"]
jobs = {j["job_id"]: j["ofu"] for j in b["jobs"]}
worst = max((abs(j["ofu"] - jobs[j["job_id"]]) / jobs[j["job_id"]] for j in a["jobs"] if jobs.get(j["job_id"])),
            default=0)
print(f"fleet_shards: sharded vs whole: OFU {x:.12f} vs {y:.12f} (relative {abs(x - y) / y:.1e}); "
      f"{len(a['jobs'])} vs {len(b['jobs'])} jobs, worst job {worst:.1e} relative")
PY
