# Helpers of the GPU validation's stages (docs/gpu-validation.md); sourced
# by run-stage.sh, never run on its own.
#
# Globals the driver sets before sourcing:
#   WORK      the stage's scratch folder (archived into $OUT at the end)
#   DEADLINE  epoch second by which the stage's steps must be over
#   RESERVE   seconds kept back for the summary and the archive
#
# Every step runs with its own timeout, cut to the time the stage has left;
# its exit status, duration and outcome go to $WORK/steps.tsv, and a step
# that fails or times out never stops the stage.

log() { printf '[gpuval %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# Seconds left for steps (may be negative).
remaining() { echo $((DEADLINE - $(date +%s) - RESERVE)); }

# The last non-empty line of a file, tabs made spaces, at most 200 characters:
# for a failed step, usually the error itself.
last_line() { grep -v '^[[:space:]]*$' "$1" 2>/dev/null | tail -n 1 | tr '\t' ' ' | cut -c1-200; }

# step NAME SECONDS [--expect RCS] [--stdout FILE] [--stderr FILE] -- CMD...
#   Runs CMD under `timeout` (SECONDS, or less when the stage has less
#   left), stdout to $WORK/logs/NAME.out unless --stdout FILE (relative to
#   $WORK), stderr to $WORK/logs/NAME.err unless --stderr FILE. RCS is a
#   comma-separated list of non-zero exit statuses that are documented
#   outcomes rather than failures (say 5 for `ofu sources` without a GPU).
#   Status: ok, expected, failed, timeout, skipped (no time left).
#   Returns CMD's status (0 for expected), so that callers may branch on it.
step() {
  local name=$1 seconds=$2
  shift 2
  local expect="" stdout="logs/$name.out" stderr="logs/$name.err"
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case $1 in
      --expect) expect=$2; shift 2 ;;
      --stdout) stdout=$2; shift 2 ;;
      --stderr) stderr=$2; shift 2 ;;
      *) log "step $name: unknown option $1"; return 2 ;;
    esac
  done
  [ "${1:-}" = "--" ] && shift
  mkdir -p "$WORK/logs" "$(dirname "$WORK/$stdout")" "$(dirname "$WORK/$stderr")"
  local left
  left=$(remaining)
  if [ "$left" -lt "$seconds" ]; then seconds=$left; fi
  if [ "$seconds" -lt 3 ]; then
    printf '%s\tskipped\t-\t0\tno stage time left\n' "$name" >>"$WORK/steps.tsv"
    log "$name: skipped (no stage time left)"
    return 125
  fi
  log "$name (at most ${seconds} s): $*"
  local t0 rc status
  t0=$(date +%s.%N)
  timeout --kill-after=5 "$seconds" "$@" >"$WORK/$stdout" 2>"$WORK/$stderr" </dev/null
  rc=$?
  case $rc in
    0) status=ok ;;
    124|137) status=timeout ;;
    *) status=failed
       case ",$expect," in *",$rc,"*) status=expected ;; esac ;;
  esac
  local took
  took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  local note=""
  if [ "$status" != ok ] && [ "$status" != expected ]; then
    note=$(last_line "$WORK/$stderr")
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$status" "$rc" "$took" "$note" >>"$WORK/steps.tsv"
  log "$name: $status (exit $rc, ${took} s)"
  [ "$status" = expected ] && return 0
  return "$rc"
}

# step_status NAME: the recorded status of a step ("" when none).
step_status() { awk -F'\t' -v n="$1" '$1 == n { s = $2 } END { print s }' "$WORK/steps.tsv" 2>/dev/null; }

# bg_start NAME SECONDS -- CMD...: CMD in the background under
# `timeout --signal=INT SECONDS` (so it ends by itself), stdout and stderr to
# $WORK/logs/NAME.{out,err}. bg_stop NAME sends it SIGINT (ofu record and
# ofu-gpm-probe log write what they have and exit), waits up to 20 s, then
# kills it, and records the outcome as a step.
bg_start() {
  local name=$1 seconds=$2
  shift 2
  [ "${1:-}" = "--" ] && shift
  mkdir -p "$WORK/logs" "$WORK/pids"
  log "$name (background, at most ${seconds} s): $*"
  timeout --signal=INT --kill-after=20 "$seconds" "$@" >"$WORK/logs/$name.out" 2>"$WORK/logs/$name.err" </dev/null &
  echo "$!" >"$WORK/pids/$name"
  date +%s.%N >"$WORK/pids/$name.start"
}

bg_stop() {
  local name=$1 pid rc=0 status
  [ -f "$WORK/pids/$name" ] || return 0
  pid=$(cat "$WORK/pids/$name")
  if kill -0 "$pid" 2>/dev/null; then
    kill -INT "$pid" 2>/dev/null
    local i
    for i in $(seq 1 40); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null
      log "$name: killed after 20 s"
    fi
  fi
  wait "$pid" 2>/dev/null
  rc=$?
  case $rc in
    0|130) status=ok ;;  # 130: stopped by SIGINT as asked
    124|137) status=timeout ;;
    *) status=failed ;;
  esac
  local took note=""
  took=$(awk -v a="$(cat "$WORK/pids/$name.start")" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  [ "$status" = ok ] || note=$(last_line "$WORK/logs/$name.err")
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$status" "$rc" "$took" "$note" >>"$WORK/steps.tsv"
  log "$name: stopped, $status (exit $rc, ${took} s)"
  rm -f "$WORK/pids/$name" "$WORK/pids/$name.start"
}

# Stops whatever background step is still running (at the end, or on a signal).
bg_stop_all() {
  local f
  for f in "$WORK"/pids/*; do
    case $f in *.start|*'*') continue ;; esac
    bg_stop "$(basename "$f")"
  done
}

# The first existing file among the arguments (globs expanded by the caller).
first_file() {
  local f
  for f in "$@"; do
    if [ -f "$f" ]; then
      echo "$f"
      return 0
    fi
  done
  return 1
}

# Python's site-packages folders, where pip's nvidia-* wheels keep CUDA libraries.
python_site_dirs() {
  python3 -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null
}

# find_library NAME: a path to NAME from the loader cache, the driver's and
# the CUDA toolkit's usual folders, or pip's nvidia wheels.
find_library() {
  local name=$1 found
  found=$(ldconfig -p 2>/dev/null | awk -v n="$name" '$1 == n && $NF ~ /^\// { print $NF; exit }')
  if [ -n "$found" ] && [ -f "$found" ]; then
    echo "$found"
    return 0
  fi
  local dirs="/usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib
    /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib
    /usr/local/cuda/extras/CUPTI/lib64"
  local d
  for d in $dirs /usr/local/cuda-*/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib /usr/local/cuda-*/extras/CUPTI/lib64; do
    if [ -f "$d/$name" ]; then
      echo "$d/$name"
      return 0
    fi
  done
  local site
  for site in $(python_site_dirs); do
    [ -d "$site/nvidia" ] || continue
    found=$(find "$site/nvidia" -maxdepth 4 -name "$name" 2>/dev/null | head -n 1)
    if [ -n "$found" ]; then
      echo "$found"
      return 0
    fi
  done
  # Last: anywhere under /usr, /opt and the driver's mount, for at most 20 s.
  found=$(timeout 20 find /usr /opt /usr/local/nvidia -name "$name" 2>/dev/null | head -n 1)
  if [ -n "$found" ]; then
    echo "$found"
    return 0
  fi
  return 1
}
