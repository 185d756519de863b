#!/usr/bin/env bash
# The agent's cost and latency on the in-tree NVML double (synthetic GPUs):
#   1. CPU and peak RSS of `ofu agent` at 10 Hz x 8 GPUs over SECONDS (default 60),
#      with and without the history store;
#   2. /metrics latency at 100 requests/s (bench/metrics_probe);
#   3. how long after a window's end its values are on /metrics.
# Usage: bench/agent_bench.sh BUILD [SECONDS]. Record the output in docs/BENCHMARKS.md.
set -euo pipefail
build=${1:-build}
seconds=${2:-60}
ofu=$build/apps/ofu/ofu
nvml=$(ls "$build"/doubles/libnvidia-ml.so.1)
probe=$build/bench/metrics_probe
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work/nvml.json" <<'PY'
import json, sys
devices = [{"name": "NVIDIA H100 80GB HBM3", "uuid": f"GPU-bench-{i}", "architecture": 9, "sm_count": 132,
            "max_sm_clock_mhz": 1980, "clocks": [1830], "power_mw": [650000], "energy_mj": [1000],
            "gpm": [{"1": 90, "5": 50}], "processes": [{"pid": 1, "used_memory": 1048576}]} for i in range(8)]
json.dump({"devices": devices}, open(sys.argv[1], "w"))
PY

echo "== machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC')"

run_agent() {  # label, probe (yes|no), extra args...
  local label=$1 probe_it=$2; shift 2
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  OFU_FAKE_NVML_SCENARIO=$work/nvml.json /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" \
    "$ofu" agent --source nvml --nvml-library "$nvml" --window 0.1 --listen "127.0.0.1:$port" \
    --duration "$seconds" "$@" 2>"$work/agent.log" &
  local pid=$!
  sleep 2
  if [ "$probe_it" = yes ]; then
    "$probe" load 127.0.0.1 "$port" 100 20
    "$probe" freshness 127.0.0.1 "$port" 10
  fi
  wait "$pid"
  read -r wall user sys rss_kb < "$work/time.txt"
  python3 -c "
wall,user,sys,rss=$wall,$user,$sys,$rss_kb
print(f'agent {\"$label\"}: {wall:.1f} s wall, CPU {user+sys:.2f} s = {100*(user+sys)/wall:.2f} % of one core, peak RSS {rss/1024:.1f} MiB')"
}

run_agent "with store, idle" no --store "$work/history.sqlite"
run_agent "without store, idle" no --no-store
run_agent "with store, 100 requests/s for 20 s" yes --store "$work/history2.sqlite"
