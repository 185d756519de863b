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
# day). 1,024 GPUs × 7 days is GPUS=1024 WINDOWS_PER_JOB=6720: about 560M
# raw samples and a 50 GB OpenMetrics file; give it the disk and the hours.
set -euo pipefail
build=${1:-build}
gpus=${2:-64}
windows_per_job=${3:-960}
window_s=${4:-15}
new=${NEW_OFU:-$build/apps/ofu/ofu}
work=$(mktemp -d)
trap 'kill "${prometheus_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
command -v prometheus >/dev/null && command -v promtool >/dev/null || {
  echo "fleet_scale: needs prometheus and promtool (scripts/install-deps.sh)"; exit 0; }

groups=$((gpus / 8))
"$build/apps/ofu-fleet-sim/ofu-fleet-sim" --out "$work/fleet" --gpus "$gpus" --gpus-per-job 8 \
  --jobs $((groups * 6)) --windows-per-job "$windows_per_job" --window "$window_s" --seed 7 >/dev/null
promtool tsdb create-blocks-from openmetrics "$work/fleet/metrics.om" "$work/tsdb" >/dev/null
rm "$work/fleet/metrics.om"
printf 'global: {scrape_interval: %ss}\n' "$window_s" >"$work/prometheus.yml"
port=19199
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --storage.tsdb.retention.time=36500d --web.listen-address=127.0.0.1:$port >"$work/prometheus.log" 2>&1 &
prometheus_pid=$!
until curl -sf http://127.0.0.1:$port/-/ready >/dev/null; do sleep 1; done
read -r since until job < <(python3 -c "import json; t = json.load(open('$work/fleet/ground_truth.json')); \
print(int(t['options']['start_s'] - 1), int(t['end_s'] + 1), t['regressions'][0]['job_id'])")
range="--since $since --until $until"
echo "== fleet: $gpus GPUs, $((windows_per_job * 6)) windows of ${window_s} s each; $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC')"
for binary in "$new" ${OLD_OFU:-}; do
  for args in "report --prometheus http://127.0.0.1:$port" "report --prometheus http://127.0.0.1:$port --job $job" \
              "regress --prometheus http://127.0.0.1:$port" "report --store $work/fleet/history.sqlite" \
              "report --store $work/fleet/history.sqlite --job $job" "regress --store $work/fleet/history.sqlite"; do
    /usr/bin/time -f "$binary ${args/$work\//} : %e s wall, %M KiB peak RSS, exit %x" \
      "$binary" $args $range --format json >/dev/null 2>"$work/err" || true
    tail -1 "$work/err"
  done
done
