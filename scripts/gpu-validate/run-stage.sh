#!/usr/bin/env bash
# The one command a session passes to the device tool (docs/gpu-validation.md):
#
#   bash scripts/gpu-validate/run-stage.sh A|B|C|K      (carry: [".gpuval"])
#
# Runs one stage of the GPU validation with the programs that
# scripts/gpu-validate/build.sh packaged into .gpuval/, within a time budget
# (GPUVAL_BUDGET_S; by default A 270 s, C 240 s, B 240 s and K 240 s, so
# that A and C follow one machine start inside the 15 minutes of device time
# a task is lent), and leaves in $OUT:
#
#   stage-X-summary.txt   the one-screen summary, also printed last
#   stage-X.tar.gz        everything the stage wrote: logs, step table,
#                         recordings, probe logs, CSVs, traces (split into
#                         stage-X.tar.gz.part-aa, -ab, ... when over 15 MiB)
#
# Every step has its own timeout; a step that fails is recorded and the
# stage goes on. Environment (all optional):
#   GPUVAL_PKG        the packaged folder (default: .gpuval in the repo root)
#   GPUVAL_BUDGET_S   seconds for the whole stage (default: A 270, B 240, C 240, K 240)
#   GPUVAL_NCU        Nsight Compute's ncu for stage K (default: found on the machine)
#   GPUVAL_NVML       libnvidia-ml.so.1 to use (default: found on the machine)
#   GPUVAL_CLOCK_PROBE  libofu-clock-probe.so, the SMs' own clock for the
#                     PyTorch workloads (default: the package's; without it
#                     their phases say "sm_clock": {"absent": ...})
#   GPUVAL_SYNTHETIC  1 when the run reads a test double: every output says so
#   GPUVAL_WORKLOAD   the PyTorch workloads' script (default: workload.py beside this
#                     one; the dry run gives tests/gpu_validate/fake_workload.py)
#   GPUVAL_KEEP_WORK  1 to keep the scratch folder (default: removed once archived)
#   GPUVAL_PHASE_SECONDS, GPUVAL_IDLE_SECONDS, GPUVAL_RAGGED_SECONDS,
#   GPUVAL_TRAIN_SECONDS, GPUVAL_AGENT_SECONDS, GPUVAL_IDLE_LOG_SECONDS,
#   GPUVAL_SETTLE_SECONDS   workload lengths and the pauses that let
#                     recorders start and close their last window (defaults
#                     6, 10, 5, 20, 30, 4, 2); shorter only for dry runs
#                     on the NVML double (tests/gpu_validate)
#   OUT               where results go (the device tool sets it; here the
#                     default is .gpuval-out in the repo root)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
stage=${1:-}
case $stage in
  A|B|C|K) ;;
  *) echo "usage: $0 A|B|C|K   (see docs/gpu-validation.md)" >&2; exit 1 ;;
esac

PKG=${GPUVAL_PKG:-$repo/.gpuval}
OUT=${OUT:-$repo/.gpuval-out}
# The defaults fit docs/gpu-validation.md's plan: a start (1-2 min), A, C,
# and B only where the session still has the time.
case $stage in
  A) default_budget=270 ;;
  K) default_budget=240 ;;  # Nsight Compute over three groups of kernels (stage-k.sh)
  *) default_budget=240 ;;
esac
BUDGET=${GPUVAL_BUDGET_S:-$default_budget}
START=$(date +%s)
DEADLINE=$((START + BUDGET))
RESERVE=25
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpuval-$stage.XXXXXX")
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
# shellcheck source=lib.sh
. "$here/lib.sh"

OFU=$PKG/ofu
GEMM=$PKG/ofu-gemm
PROBE=$PKG/ofu-gpm-probe
export GPUVAL_CLOCK_PROBE=${GPUVAL_CLOCK_PROBE:-$PKG/libofu-clock-probe.so}
WORKLOAD=${GPUVAL_WORKLOAD:-$here/workload.py}
NVML_LIB=${GPUVAL_NVML:-$(find_library libnvidia-ml.so.1 || true)}
NVML_FLAG=()
[ -n "$NVML_LIB" ] && NVML_FLAG=(--nvml-library "$NVML_LIB")

# The machine, the driver, the toolkit and the package, once per stage.
capture_env() {
  {
    echo "== date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), stage $stage, budget ${BUDGET} s"
    echo "== host: $(uname -a)"
    echo "== glibc: $(ldd --version 2>&1 | head -n 1)"
    echo "== cpu: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
    echo "== package: $PKG"
    cat "$PKG/MANIFEST.txt" 2>/dev/null || echo "(no MANIFEST.txt: was scripts/gpu-validate/build.sh run and .gpuval carried?)"
    echo "== libraries: NVML ${NVML_LIB:-not found}; cuBLASLt ${CUBLASLT_LIB:-not found}; CUPTI ${CUPTI_LIB:-not found}"
    echo "== LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
    for p in "$OFU" "$GEMM" "$PROBE"; do
      echo "== ldd $p"
      ldd "$p" 2>&1
    done
    echo "== nvidia-smi"
    timeout 30 nvidia-smi 2>&1 || echo "(nvidia-smi failed or absent)"
    echo "== nvidia-smi -q (clocks, power, performance)"
    timeout 30 nvidia-smi -q -d CLOCK,POWER,PERFORMANCE,TEMPERATURE 2>&1 || true
    echo "== nvcc"
    timeout 10 nvcc --version 2>&1 || echo "(no nvcc on PATH)"
    echo "== python"
    timeout 60 python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())' 2>&1
  } >"$WORK/env.txt" 2>&1
  local q
  q=$(timeout 30 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,power.draw,temperature.gpu,pstate --format=csv,noheader 2>/dev/null | head -n 1)
  GPUVAL_QUERY=$q GPUVAL_STAGE=$stage python3 - "$WORK/env.json" <<'PY' 2>>"$WORK/env.txt"
import json, os, re, subprocess, sys
q = [x.strip() for x in os.environ.get("GPUVAL_QUERY", "").split(",")]
keys = ["gpu", "driver", "sm_clock", "max_sm_clock", "mem_clock", "power_limit", "power_draw", "temperature", "pstate"]
env = {k: (q[i] if i < len(q) and q[i] else None) for i, k in enumerate(keys)}
text = open(os.path.join(os.path.dirname(sys.argv[1]), "env.txt"), errors="replace").read()
m = re.search(r"release ([0-9.]+)", text)
env["cuda"] = m.group(1) if m else None
m = re.search(r"torch (\S+) cuda (\S+)", text)
if m:
    env["torch"] = m.group(1)
    env["cuda"] = env["cuda"] or m.group(2)
env["stage"] = os.environ.get("GPUVAL_STAGE")
env["synthetic"] = os.environ.get("GPUVAL_SYNTHETIC") == "1"
json.dump(env, open(sys.argv[1], "w"), indent=2)
PY
  if [ "${GPUVAL_SYNTHETIC:-0}" = 1 ]; then
    # A test-double run has no nvidia-smi: take the GPU's name from the double.
    python3 - "$WORK/env.json" "$("$PROBE" "${NVML_FLAG[@]}" info 2>/dev/null)" <<'PY' || true
import json, sys
env = json.load(open(sys.argv[1]))
try:
    info = json.loads(sys.argv[2])
    env["gpu"] = env.get("gpu") or info["devices"][0]["name"]
    env["driver"] = env.get("driver") or info.get("driver_version")
except Exception:
    pass
json.dump(env, open(sys.argv[1], "w"), indent=2)
PY
  fi
}

# cuBLASLt and CUPTI for ofu-gemm: its RPATH has $ORIGIN and this build
# machine's toolkit folder; elsewhere they are found here and named.
CUBLASLT_LIB=""
CUPTI_LIB=""
find_cuda_libraries() {
  if ldd "$GEMM" 2>/dev/null | grep -q 'libcublasLt.so.13 => not found'; then
    CUBLASLT_LIB=$(find_library libcublasLt.so.13 || true)
    if [ -n "$CUBLASLT_LIB" ]; then
      export LD_LIBRARY_PATH="$(dirname "$CUBLASLT_LIB")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    fi
  else
    CUBLASLT_LIB=$(ldd "$GEMM" 2>/dev/null | awk '$1 == "libcublasLt.so.13" { print $3 }')
  fi
  CUPTI_LIB=$(find_library libcupti.so.13 || true)
}

SUMMARY_DONE=0
finish() {
  [ "$SUMMARY_DONE" = 1 ] && return
  SUMMARY_DONE=1
  bg_stop_all
  local summary="$WORK/summary.txt"
  if ! timeout 45 python3 "$here/gpuval.py" summary "$stage" "$WORK" >"$WORK/logs/summary.out" 2>"$WORK/logs/summary.err"; then
    {
      echo "== Stage $stage: the summary could not be made (gpuval.py failed; see logs/summary.err) =="
      tail -n 5 "$WORK/logs/summary.err" 2>/dev/null
    } >"$summary"
  fi
  {
    echo
    awk -F'\t' '$2 != "ok" && $2 != "expected" { printf "  %s: %s (exit %s, %s s) %s\n", $1, $2, $3, $4, substr($5, 1, 70) }' \
      "$WORK/steps.tsv" 2>/dev/null
    echo "stage time: $(( $(date +%s) - START )) s of ${BUDGET} s; files: $OUT/stage-$stage.tar.gz"
  } >>"$summary"
  cp "$summary" "$OUT/stage-$stage-summary.txt"
  local archive="$OUT/stage-$stage.tar.gz"
  rm -f "$archive" "$archive".part-*
  tar -czf "$archive" -C "$WORK" --exclude=./pids . 2>>"$OUT/stage-$stage-summary.txt"
  local size
  size=$(stat -c %s "$archive" 2>/dev/null || echo 0)
  if [ "$size" -gt $((15 * 1024 * 1024)) ]; then
    # The device tool returns files of at most 16 MiB: split, rejoin with cat.
    split -b 15m "$archive" "$archive.part-" && rm -f "$archive"
    echo "archive split into $(ls "$archive".part-* | wc -l) parts: cat stage-$stage.tar.gz.part-* > stage-$stage.tar.gz" \
      >>"$OUT/stage-$stage-summary.txt"
  fi
  cat "$OUT/stage-$stage-summary.txt"
  if [ "${GPUVAL_KEEP_WORK:-0}" = 1 ]; then log "work folder kept: $WORK"; else rm -rf "$WORK"; fi
}
trap finish EXIT
trap 'log "stopped by a signal"; exit 143' TERM INT HUP

log "stage $stage: package $PKG, work $WORK, out $OUT, budget ${BUDGET} s"
for p in "$OFU" "$GEMM" "$PROBE"; do
  [ "$stage" = K ] && break  # stage K runs ncu and torch only
  # A transfer that drops the executable bit must not cost the stage.
  if [ -f "$p" ] && [ ! -x "$p" ]; then chmod +x "$p" 2>/dev/null; fi
  if [ ! -x "$p" ]; then
    printf 'package\tfailed\t-\t0\t%s missing: run scripts/gpu-validate/build.sh and carry .gpuval\n' "$p" >>"$WORK/steps.tsv"
    log "$p missing"
  fi
done
find_cuda_libraries
capture_env

lower=$(echo "$stage" | tr 'ABCK' 'abck')
# shellcheck source=stage-a.sh
. "$here/stage-$lower.sh"
stage_main
