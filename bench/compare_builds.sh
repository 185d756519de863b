#!/usr/bin/env bash
# Two builds side by side in one run, for "no regression" checks of a change:
#   1. the Prometheus/OpenMetrics reader (bench_prometheus_text), MiB/s;
#   2. the Kineto trace reader (bench_kineto_trace), MiB/s;
#   3. `ofu agent` at 10 Hz x 8 synthetic GPUs (the NVML double), idle, with
#      and without the history store: CPU % of one core and peak RSS.
# The two builds alternate, ROUNDS times, so that the machine's noise falls on
# both alike; compare medians. Both builds must have the bench targets and ofu
# (ninja -C B bench_prometheus_text bench_kineto_trace metrics_probe ofu).
# Usage: bench/compare_builds.sh OLD_BUILD NEW_BUILD [ROUNDS=3] [AGENT_SECONDS=30]
set -euo pipefail
old=$1 new=$2 rounds=${3:-3} seconds=${4:-30}
echo "== machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
for build in "$old" "$new"; do
  echo "== $build: $(git -C "$build/.." rev-parse --short HEAD 2>/dev/null || echo '?')"
done

reader() {  # build, benchmark, filter
  "$1/bench/$2" --benchmark_min_time=1 --benchmark_filter="$3" --benchmark_format=csv 2>/dev/null |
    awk -F, -v b="$1" -v n="$2" 'NR > 1 && $6 != "" { printf "%s %s %s %.1f MiB/s\n", n, b, $1, $6 / 1048576 }'
}

for round in $(seq "$rounds"); do
  echo "== round $round"
  for build in "$old" "$new"; do
    reader "$build" bench_prometheus_text 'BM_ReadStringView'
    reader "$build" bench_kineto_trace '.'
  done
  for build in "$old" "$new"; do
    OFU="$build/apps/ofu/ofu" bash bench/agent_bench.sh "$new" "$seconds" idle | sed -n "s|^agent|agent $build|p"
  done
done
