# Sourced by the fleet benches that run a server beside ofu
# (fleet_month.sh, fleet_hourly_exactness.sh): their work directory, the
# background processes they start, and VictoriaMetrics.
#
# bench_work_dir: $work is $WORK (kept) or a temporary directory (removed at
# exit); every pid appended to `pids` is killed at exit.
bench_work_dir() {
  work=${WORK:-$(mktemp -d)}
  mkdir -p "$work"
  pids=()
  trap 'for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done; [[ -n "${WORK:-}" ]] || rm -rf "$work"' EXIT
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_victoria_metrics [FLAG ...]: VictoriaMetrics on $VM_DIR/vmdata
# ($VM_DIR: $work unless set; log appended to $VM_DIR/vm.log) on a free
# loopback port, with a retention long enough for data of any date and no
# result cache (each query measured whole), plus FLAGs; sets `port` and
# returns once it answers /health.
start_victoria_metrics() {
  local dir=${VM_DIR:-$work}
  mkdir -p "$dir"
  port=$(free_port)
  victoria-metrics -storageDataPath="$dir/vmdata" -httpListenAddr=127.0.0.1:$port -retentionPeriod=100y \
    -search.disableCache "$@" >>"$dir/vm.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && return 0; sleep 0.2; done
  echo "victoria-metrics did not answer on port $port: $dir/vm.log" >&2
  return 1
}
