#!/usr/bin/env bash
# A fleet month from hourly rollups (issue 40; docs/BENCHMARKS.md "A fleet
# month from hourly rollups"): bench/month_fleet.py writes a SYNTHETIC fleet
# directly at hourly resolution (the series `ofu rules hourly` records), one
# day per file; VictoriaMetrics imports it and, with ENGINES including
# prometheus, promtool backfills it into Prometheus; then the wall time and
# peak RSS of `ofu report` (fleet and per job) and `ofu regress` at
# --resolution hourly on each engine, one after the other in this run.
#
#   bench/fleet_month.sh BUILD [GPUS] [HOURS]
#
# Defaults: 1,000 GPUs × 720 hours. ENGINES="vm prometheus" (default) or one
# of them. WORK=dir keeps the data there (deleted otherwise).
set -euo pipefail
build=${1:-build}
gpus=${2:-1000}
hours=${3:-720}
engines=${ENGINES:-vm prometheus}
ofu=$build/apps/ofu/ofu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/vm_lib.sh
. "$here/vm_lib.sh"
bench_work_dir
start=1790002800
until_s=$((start + hours * 3600))

t0=$(date +%s)
python3 "$here/month_fleet.py" "$work/fleet" "$gpus" "$hours" 7 "$start"
echo "fleet_month: generated $gpus GPUs x $hours h in $(($(date +%s) - t0)) s ($(du -sh "$work/fleet" | cut -f1))"

measure() {  # engine url
  local engine=$1 url=$2 range="--since $start --until $until_s"
  for what in "report" "regress"; do
    /usr/bin/time -f "%e %M" -o "$work/time" "$ofu" $what --prometheus "$url" $range --resolution hourly \
      --format json --timeout 600 >"$work/$engine-$what.json"
    read -r wall rss <"$work/time"
    echo "fleet_month: $engine $what: ${wall} s, $((rss / 1024)) MiB peak RSS"
  done
  python3 - "$work/$engine-report.json" "$work/$engine-regress.json" <<'EOF'
import json, sys
report, regress = (json.load(open(p)) for p in sys.argv[1:3])
print(f"fleet_month:   report: {len(report['gpus'])} GPUs, {len(report['jobs'])} jobs, OFU "
      f"{report['overall']['ofu']:.6f}; {report['notes'][0]}")
print(f"fleet_month:   regress: {regress['windows']} windows, {len(regress['changes'])} changes")
EOF
}

for engine in $engines; do
  case $engine in
    vm)
      start_victoria_metrics -search.maxSamplesPerQuery=2000000000
      t0=$(date +%s)
      for f in "$work"/fleet/day-*.prom; do
        curl -sf -X POST --data-binary @"$f" "http://127.0.0.1:$port/api/v1/import/prometheus"
      done
      curl -sf "http://127.0.0.1:$port/internal/force_flush"
      echo "fleet_month: VictoriaMetrics imported in $(($(date +%s) - t0)) s"
      measure vm "http://127.0.0.1:$port"
      ;;
    prometheus)
      t0=$(date +%s)
      for f in "$work"/fleet/day-*.om; do
        promtool tsdb create-blocks-from openmetrics --max-block-duration=24h "$f" "$work/tsdb" >/dev/null
      done
      echo "fleet_month: promtool backfilled in $(($(date +%s) - t0)) s"
      port=$(free_port)
      printf 'global:\n  scrape_interval: 1m\n' >"$work/prometheus.yml"
      prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
        --storage.tsdb.retention.time=36500d --web.listen-address=127.0.0.1:$port >"$work/prometheus.log" 2>&1 &
      pids+=($!)
      for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null && break; sleep 0.5; done
      measure prometheus "http://127.0.0.1:$port"
      ;;
  esac
done
python3 -c "import json,sys; t=json.load(open(sys.argv[1])); print('fleet_month: planted', len(t['regressions']), 'regressions in', t['jobs'], 'jobs')" "$work/fleet/ground_truth.json"
