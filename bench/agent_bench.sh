#!/usr/bin/env bash
# The agent's cost and latency on the in-tree NVML double (synthetic GPUs):
#   1. CPU and peak RSS of `ofu agent` at 10 Hz x 8 GPUs over SECONDS (default 60),
#      with and without the history store;
#   2. /metrics latency at 100 requests/s (bench/metrics_probe);
#   3. how long after a window's end its values are on /metrics;
#   4. hostile clients: /metrics latency (10 requests/s, a new connection each),
#      first for 10 s without attackers, then while 1,000 slowloris connections
#      from 50 loopback addresses trickle or idle and reconnect once a second
#      when closed (`metrics_probe hostile`), with the agent's CPU over the
#      attack and its peak RSS; over plain HTTP and over TLS (stalled handshakes).
# Usage: bench/agent_bench.sh BUILD [SECONDS] [idle]. Record the output in docs/BENCHMARKS.md.
# With `idle`, only the two idle runs of 1. (bench/compare_builds.sh uses it).
set -euo pipefail
build=${1:-build}
seconds=${2:-60}
only_idle=${3:-}
ofu=${OFU:-$build/apps/ofu/ofu}  # OFU=...: another agent binary (e.g. an older build) with this build's double and probe
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

# For the TLS run: a self-signed certificate and a web config naming it.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -keyout "$work/server.key" -out "$work/server.crt" 2>/dev/null
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n' > "$work/web.yml"
ulimit -n 4096 2>/dev/null || true  # the attacker's 1,000 sockets

echo "== machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"

run_agent() {  # label, probe (no|load|hostile|hostile-tls), extra args...
  local label=$1 probe_it=$2; shift 2
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  OFU_FAKE_NVML_SCENARIO=$work/nvml.json /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" \
    "$ofu" agent --source nvml --nvml-library "$nvml" --window 0.1 --listen "127.0.0.1:$port" \
    --duration "$seconds" "$@" 2>"$work/agent.log" &
  local pid=$!
  sleep 2
  case $probe_it in
    load)
      "$probe" load 127.0.0.1 "$port" 100 20
      "$probe" freshness 127.0.0.1 "$port" 10 ;;
    hostile|hostile-tls)
      local tls=; [ "$probe_it" = hostile-tls ] && tls=tls
      # The same measurement without attackers first, then under attack, with
      # the agent's CPU over the attack alone (from /proc, in clock ticks).
      "$probe" hostile 127.0.0.1 "$port" 0 1 10 10 $tls | sed -n 's/^requests/no attack: requests/p'
      local agent_pid ticks0 ticks1 start end
      agent_pid=$(pgrep -P "$pid" -x ofu)
      ticks0=$(awk '{print $14 + $15}' "/proc/$agent_pid/stat"); start=$(date +%s.%N)
      "$probe" hostile 127.0.0.1 "$port" 1000 50 $((seconds - 18)) 10 $tls || true
      ticks1=$(awk '{print $14 + $15}' "/proc/$agent_pid/stat"); end=$(date +%s.%N)
      python3 -c "print(f'agent CPU during the attack: {100*($ticks1-$ticks0)/$(getconf CLK_TCK)/($end-$start):.2f} % of one core')" ;;
  esac
  wait "$pid"
  read -r wall user sys rss_kb < "$work/time.txt"
  python3 -c "
wall,user,sys,rss=$wall,$user,$sys,$rss_kb
print(f'agent {\"$label\"}: {wall:.1f} s wall, CPU {user+sys:.2f} s = {100*(user+sys)/wall:.2f} % of one core, peak RSS {rss/1024:.1f} MiB')"
}

run_agent "with store, idle" no --store "$work/history.sqlite"
run_agent "without store, idle" no --no-store
[ "$only_idle" = idle ] && exit 0
run_agent "with store, 100 requests/s for 20 s" load --store "$work/history2.sqlite"
run_agent "with store, 1,000 slow connections" hostile --store "$work/history3.sqlite"
run_agent "with store, 1,000 slow connections, TLS" hostile-tls --store "$work/history4.sqlite" \
  --web-config "$work/web.yml"
