#!/usr/bin/env bash
# dcgm-exporter's series from hourly rollups against every sample (issue 55;
# docs/BENCHMARKS.md "dcgm-exporter's series from hourly rollups").
#
#   bench/dcgm_month.sh BUILD [GPUS] [HOURS] [INTERVAL] [PAIRS] [MONTH_GPUS] [MONTH_HOURS]
#
# Part 1, side by side: bench/dcgm_fleet.py writes a SYNTHETIC fleet of GPUS
# (default 32) × HOURS (6) of dcgm-exporter scrapes every INTERVAL s (30),
# with Slurm jobs; promtool backfills it into Prometheus, then the rules of
# `ofu rules hourly --series dcgm-exporter` over it (timed); the server is
# restarted on them. Then PAIRS (3) pairs, in turn: `ofu report --series
# dcgm-exporter --resolution raw` (every sample, as a recording) and
# `--resolution hourly --job-labels slurm` (the rollups, the partial hours
# raw), each with /usr/bin/time (wall seconds, peak RSS), and their overall
# OFU side by side.
#
# Part 2, the month: MONTH_GPUS (1000) × MONTH_HOURS (720) written directly
# as the rollups' series (`dcgm_fleet.py rollups`: backfilling the rules
# over a raw month would take days here), and an hour of raw scrapes of the
# same GPUs before and after it, backfilled by promtool; then `ofu report
# --series dcgm-exporter --resolution hourly --job-labels slurm` over the
# month (rollups only), twice, and over the month and half an hour of raw
# scrapes at each end (the partial hours a real range has), twice, with
# /usr/bin/time. MONTH_GPUS=0 skips it; PAIRS=0 skips part 1.
#
# WORK=dir keeps the data there (deleted otherwise). Needs prometheus and
# promtool (the Debian packages) and python3.
set -euo pipefail
build=${1:-build}
gpus=${2:-32}
hours=${3:-6}
interval=${4:-30}
pairs=${5:-3}
month_gpus=${6:-1000}
month_hours=${7:-720}
ofu=$build/apps/ofu/ofu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/vm_lib.sh
. "$here/vm_lib.sh"
bench_work_dir
start=1790002800

start_prometheus() {  # TSDB_DIR: sets port; the server's pid is the last of pids
  port=$(free_port)
  printf 'global:\n  scrape_interval: 1m\n' >"$work/prometheus.yml"
  prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$1" \
    --storage.tsdb.retention.time=36500d --web.listen-address=127.0.0.1:$port >>"$work/prometheus.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null && return 0; sleep 0.5; done
  echo "prometheus did not become ready: $work/prometheus.log" >&2
  return 1
}

wait_for() {  # SERIES AT: until the server answers with a sample of SERIES
  for _ in $(seq 240); do
    curl -sf "http://127.0.0.1:$port/api/v1/query" --data-urlencode "query=count_over_time($1[100d])" \
      --data-urlencode "time=$2" | grep -q '"value"' && return 0
    sleep 0.5
  done
  echo "no $1 on the server" >&2
  return 1
}

timed() {  # NAME ARGS...: one report, its wall time and peak RSS
  local name=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$ofu" report --format json --timeout 600 "$@" >"$work/$name.json"
  read -r wall rss <"$work/time"
  python3 - "$work/$name.json" "$name" "$wall" "$rss" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"dcgm_month: {sys.argv[2]}: {float(sys.argv[3]):.2f} s, {int(sys.argv[4]) // 1024} MiB peak RSS; "
      f"{len(r['gpus'])} GPUs, {len(r.get('jobs') or [])} jobs, OFU {r['overall']['ofu']:.12f}; "
      f"{(r.get('notes') or [''])[0]}")
EOF
}

echo "dcgm_month: $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), ofu $(git -C "$here" rev-parse --short HEAD)"
# Part 1.
end=$((start + hours * 3600))
if [[ $pairs -gt 0 ]]; then
python3 "$here/dcgm_fleet.py" raw "$work/fleet.om" --gpus "$gpus" --hours "$hours" --interval "$interval" \
  --start "$start" --seed 5
echo "dcgm_month: SYNTHETIC $gpus GPUs x $hours h at $interval s: $(grep -vc '^#' "$work/fleet.om") samples"
promtool tsdb create-blocks-from openmetrics "$work/fleet.om" "$work/tsdb" >/dev/null
start_prometheus "$work/tsdb"
"$ofu" rules hourly --series dcgm-exporter --scrape-interval "$interval" >"$work/rules.yml"
t0=$(date +%s.%N)
# Whole 2-hour blocks: promtool 2.42 drops a rule whose first block holds no evaluation (docs/prometheus.md §8).
promtool tsdb create-blocks-from rules --url "http://127.0.0.1:$port" --start "$((start / 7200 * 7200))" \
  --end "$(((end + 3600) / 7200 * 7200 + 7199))" \
  --output-dir "$work/tsdb" "$work/rules.yml" >/dev/null 2>&1
echo "dcgm_month: promtool backfilled the rules in $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)") s"
kill "${pids[-1]}" && wait "${pids[-1]}" 2>/dev/null || true
start_prometheus "$work/tsdb"
wait_for ofu:dcgm_hourly_rollup:step_seconds "$((end + 7200))"
# 10 minutes into the first hour to 10 minutes before the end: partial hours at both ends.
range=(--prometheus "http://127.0.0.1:$port" --series dcgm-exporter --since "$((start + 600))" --until "$((end - 600))")
for i in $(seq "$pairs"); do
  timed "raw-$i" "${range[@]}" --resolution raw
  timed "hourly-$i" "${range[@]}" --resolution hourly --job-labels slurm
done
kill "${pids[-1]}" && wait "${pids[-1]}" 2>/dev/null || true
fi

# Part 2.
[[ $month_gpus -gt 0 ]] || exit 0
t0=$(date +%s)
python3 "$here/dcgm_fleet.py" rollups "$work/month" --gpus "$month_gpus" --hours "$month_hours" \
  --interval "$interval" --start "$start" --seed 7
for f in "$work"/month/day-*.om; do
  promtool tsdb create-blocks-from openmetrics --max-block-duration=24h "$f" "$work/month-tsdb" >/dev/null
done
month_end=$((start + month_hours * 3600))
for at in $((start - 3600)) "$month_end"; do
  python3 "$here/dcgm_fleet.py" raw "$work/month/raw-$at.om" --gpus "$month_gpus" --hours 1 --interval "$interval" \
    --start "$at" --seed 9
  promtool tsdb create-blocks-from openmetrics "$work/month/raw-$at.om" "$work/month-tsdb" >/dev/null
done
echo "dcgm_month: SYNTHETIC rollups of $month_gpus GPUs x $month_hours h and 2 raw hours written and backfilled in $(($(date +%s) - t0)) s"
start_prometheus "$work/month-tsdb"
wait_for ofu:dcgm_hourly_rollup:step_seconds "$month_end"
wait_for DCGM_FI_PROF_PIPE_TENSOR_ACTIVE "$((month_end + 3600))"
for i in 1 2; do
  timed "month-$i" --prometheus "http://127.0.0.1:$port" --series dcgm-exporter --since "$start" \
    --until "$month_end" --resolution hourly --job-labels slurm
done
for i in 1 2; do
  timed "month-ends-$i" --prometheus "http://127.0.0.1:$port" --series dcgm-exporter --since "$((start - 1800))" \
    --until "$((month_end + 1800))" --resolution hourly --job-labels slurm
done
