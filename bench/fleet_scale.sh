#!/usr/bin/env bash
# Fleet scale (issue 15; `make bench` runs it, docs/BENCHMARKS.md "Fleet
# scale" records it): a SYNTHETIC fleet from ofu-fleet-sim, backfilled into
# the Debian Prometheus with promtool, then the wall time and peak RSS of a
# fleet report, a one-job report and a regression scan, from Prometheus and
# from the store, for this build and, with OLD_OFU=path, an older `ofu` on
# the same data.
#
#   bench/fleet_scale.sh BUILD [GPUS] [WINDOWS_PER_JOB] [WINDOW_S]
#
# NEW_OFU=path replaces BUILD/apps/ofu/ofu; OLD_OFU="path ..." adds older ones.
#
# Defaults: 64 GPUs, 8 per job, 6 jobs per group of 960 windows of 15 s (one
# day). 1,024 GPUs × 7 days is GPUS=1024 WINDOWS_PER_JOB=6720: about 475M
# raw samples, 41M store rows (5 GB) and 50 GB of OpenMetrics, which the
# simulator writes in 2 h slices that promtool backfills (and this script
# deletes) while the simulation goes on: 65 minutes on 2 cores (docs/
# BENCHMARKS.md, "The size").
#
# FLEET_DIR=dir keeps the fleet (store, TSDB, ground truth) there and reuses
# it when run again, so the same data can be measured more than once;
# GENERATE_ONLY=1 stops before the measurements.
set -euo pipefail
build=${1:-build}
gpus=${2:-64}
windows_per_job=${3:-960}
window_s=${4:-15}
new=${NEW_OFU:-$build/apps/ofu/ofu}
if [[ -n "${FLEET_DIR:-}" ]]; then
  work=$FLEET_DIR
  mkdir -p "$work"
  trap 'kill "${prometheus_pid:-}" 2>/dev/null || true' EXIT
else
  work=$(mktemp -d)
  trap 'kill "${prometheus_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
fi
command -v prometheus >/dev/null && command -v promtool >/dev/null || {
  echo "fleet_scale: needs prometheus and promtool (scripts/install-deps.sh)"; exit 0; }

groups=$((gpus / 8))
# Each slice is backfilled once whole (the simulator renames it into place)
# and deleted, so the disk holds a few slices at a time.
backfill_slices() {
  local slice
  for slice in "$work"/fleet/metrics-*.om; do
    [[ -e "$slice" ]] || continue
    promtool tsdb create-blocks-from openmetrics "$slice" "$work/tsdb" >/dev/null
    rm "$slice"
  done
}
if [[ ! -e "$work/ready" ]]; then
  rm -rf "$work/fleet" "$work/tsdb"
  started=$(date +%s)
  "$build/apps/ofu-fleet-sim/ofu-fleet-sim" --out "$work/fleet" --gpus "$gpus" --gpus-per-job 8 \
    --jobs $((groups * 6)) --windows-per-job "$windows_per_job" --window "$window_s" --seed 7 \
    --openmetrics-slice 7200 >/dev/null &
  sim_pid=$!
  while kill -0 "$sim_pid" 2>/dev/null; do backfill_slices; sleep 5; done
  wait "$sim_pid"
  backfill_slices
  echo "== fleet written and backfilled in $(($(date +%s) - started)) s"
  touch "$work/ready"
fi
printf 'global: {scrape_interval: %ss}\n' "$window_s" >"$work/prometheus.yml"
port=19199
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --storage.tsdb.retention.time=36500d --web.listen-address=127.0.0.1:$port >"$work/prometheus.log" 2>&1 &
prometheus_pid=$!
until curl -sf http://127.0.0.1:$port/-/ready >/dev/null; do sleep 1; done
# Let Prometheus compact the backfilled 2 h blocks first, as a server that
# has held the data a while would have: wait until the block count holds
# still for a minute (at most 30 minutes).
blocks() { find "$work/tsdb" -maxdepth 1 -name '01*' -type d | wc -l; }
last=$(blocks) still=0
for _ in $(seq 180); do
  sleep 10
  now=$(blocks)
  if [[ "$now" == "$last" ]]; then still=$((still + 1)); else still=0; last=$now; fi
  [[ $still -ge 6 ]] && break
done
# GENERATE_ONLY=1 (with FLEET_DIR): stop once the fleet is written and compacted.
[[ -n "${GENERATE_ONLY:-}" ]] && { echo "== $(blocks) TSDB blocks in $work/tsdb"; exit 0; }
read -r since until job < <(python3 -c "import json; t = json.load(open('$work/fleet/ground_truth.json')); \
print(int(t['options']['start_s'] - 1), int(t['end_s'] + 1), t['regressions'][0]['job_id'])")
range="--since $since --until $until"
echo "== fleet: $gpus GPUs, $((windows_per_job * 6)) windows of ${window_s} s each; $(blocks) TSDB blocks; $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC')"
for binary in "$new" ${OLD_OFU:-}; do
  for args in "report --prometheus http://127.0.0.1:$port" "report --prometheus http://127.0.0.1:$port --job $job" \
              "regress --prometheus http://127.0.0.1:$port" "report --store $work/fleet/history.sqlite" \
              "report --store $work/fleet/history.sqlite --job $job" "regress --store $work/fleet/history.sqlite"; do
    /usr/bin/time -f "$binary ${args/$work\//} : %e s wall, %M KiB peak RSS, exit %x" \
      "$binary" $args $range --format json >/dev/null 2>"$work/err" || true
    tail -1 "$work/err"
  done
done
