#!/usr/bin/env bash
# Issue 40, "Done when" 1 at the issue's size: the raw and the hourly paths
# on one SYNTHETIC fleet (ofu-fleet-sim, 1,024 GPUs x 7 days at 15 s by
# default) give the same overall, per-GPU and per-job OFU to 1e-9 relative
# and the same regressions. The engine is VictoriaMetrics, with vmalert
# evaluating `ofu rules hourly`: promtool would take hours for the rules of
# a fleet this size (docs/BENCHMARKS.md, "Hourly rollups").
#
#   bench/fleet_hourly_exactness.sh BUILD [GPUS] [WINDOWS_PER_JOB] [WINDOW_S]
#
# WORK=dir keeps the server's data and the answers there (and reuses the
# data when run again); otherwise a temporary directory is removed at exit.
# Exit status: 0 the paths agree, 1 they differ, 2 a step failed.
set -euo pipefail
build=${1:-build}
gpus=${2:-1024}
windows_per_job=${3:-6720}
window_s=${4:-15}
ofu=$build/apps/ofu/ofu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/vm_lib.sh
. "$here/vm_lib.sh"
bench_work_dir
for program in victoria-metrics vmalert; do
  command -v $program >/dev/null || { echo "fleet_hourly_exactness: needs $program (scripts/install-deps.sh)"; exit 2; }
done
log() { echo "fleet_hourly_exactness: $(date -u +%H:%M:%S) $*"; }

# -search.maxQueryLen is left at its default (16 KiB): ofu splits a GPU
# list into regexes of at most 4 KiB (SplitAlternatives); before that the
# counters path's query for one span of 1,024 GPUs was 26,793 bytes.
# -dedup.minScrapeInterval: vmalert's replay in day-long requests (below)
# evaluates the hour where two requests meet in both, writing the same
# value twice at the same time; without deduplication the reader sums both
# (seen: 630,000 s instead of 604,800 for every GPU, 7 hours too many).
# A fleet not wholly imported is written again, into an empty server.
[[ -e "$work/imported" ]] || rm -rf "$work/fleet" "$work/vmdata" "$work/ready"
start_victoria_metrics -search.maxSamplesPerQuery=2000000000 -dedup.minScrapeInterval=1s
url=http://127.0.0.1:$port

# OpenMetrics slices (timestamps in seconds, written as N.000) as the
# Prometheus text VictoriaMetrics imports (milliseconds); each slice is
# imported once whole (the simulator renames it into place) and deleted.
import_slices() {
  local slice
  for slice in "$work"/fleet/metrics-*.om; do
    [[ -e "$slice" ]] || continue
    sed -e '/^#/d' -e 's/\.\([0-9][0-9][0-9]\)$/\1/' "$slice" |
      curl -sf -X POST --data-binary @- "$url/api/v1/import/prometheus"
    rm "$slice"
  done
}
if [[ ! -e "$work/imported" ]]; then
  t0=$(date +%s)
  "$build/apps/ofu-fleet-sim/ofu-fleet-sim" --out "$work/fleet" --gpus "$gpus" --gpus-per-job 8 \
    --jobs $((gpus / 8 * 6)) --windows-per-job "$windows_per_job" --window "$window_s" --seed 7 \
    --openmetrics-slice 7200 >/dev/null &
  sim_pid=$!
  while kill -0 "$sim_pid" 2>/dev/null; do import_slices; sleep 5; done
  wait "$sim_pid"
  import_slices
  curl -sf "$url/internal/force_flush"
  rm -f "$work/fleet/history.sqlite"  # the store is not read here
  log "fleet written and imported in $(($(date +%s) - t0)) s"
  touch "$work/imported"
fi
if [[ ! -e "$work/ready" ]]; then
  start=$(python3 -c "import json,sys; print(int(json.load(open(sys.argv[1]))['options']['start_s']))" \
    "$work/fleet/ground_truth.json")
  end=$(python3 -c "import json,sys; print(int(json.load(open(sys.argv[1]))['end_s']))" "$work/fleet/ground_truth.json")
  "$ofu" rules hourly --scrape-interval "$window_s" >"$work/hourly.yml"
  t0=$(date +%s)
  vmalert -rule="$work/hourly.yml" -datasource.url="$url" -remoteWrite.url="$url" -datasource.queryStep=0s \
    -replay.rulesDelay=0s -replay.disableProgressBar -replay.maxDatapointsPerQuery=24 \
    -replay.timeFrom="$(date -u -d @"$start" +%Y-%m-%dT%H:%M:%SZ)" \
    -replay.timeTo="$(date -u -d @$((end + 3600)) +%Y-%m-%dT%H:%M:%SZ)" >"$work/vmalert.log" 2>&1 ||
    { log "vmalert failed: $(tail -c 600 "$work/vmalert.log")"; exit 2; }
  curl -sf "$url/internal/force_flush"
  log "vmalert evaluated the hourly rules in $(($(date +%s) - t0)) s"
  touch "$work/ready"
fi
start=$(python3 -c "import json,sys; print(int(json.load(open(sys.argv[1]))['options']['start_s']))" \
  "$work/fleet/ground_truth.json")
end=$(python3 -c "import json,sys; print(int(json.load(open(sys.argv[1]))['end_s']))" "$work/fleet/ground_truth.json")
range="--since $((start - 1)) --until $((end + 1))"
for resolution in raw hourly; do
  for what in report regress; do
    /usr/bin/time -f "%e %M" -o "$work/time" "$ofu" $what --prometheus "$url" $range --resolution $resolution \
      --format json --timeout 900 >"$work/$what-$resolution.json" || { log "$what $resolution failed"; exit 2; }
    read -r wall rss <"$work/time"
    log "$what --resolution $resolution: $wall s, $((rss / 1024)) MiB peak RSS"
  done
done
python3 "$here/compare_resolutions.py" "$work" "$work/fleet/ground_truth.json"
